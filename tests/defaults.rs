//! Defaults: advertised in the schema as the value the handler receives, and checked against
//! the field's own constraints.

use serde_json::json;
use tool_core::{Argument, Tool};

/// Lists issues.
#[derive(Tool, Debug, PartialEq)]
struct ListIssues {
    /// How many to return.
    #[serde(default = "twenty")]
    #[tool(range(min = 1, max = 100))]
    limit: u32,
    /// Include closed issues.
    #[serde(default)]
    closed: bool,
    #[serde(default)]
    labels: Vec<String>,
    #[serde(default)]
    order: Order,
}

fn twenty() -> u32 {
    20
}

#[derive(Argument, Debug, PartialEq, Default)]
#[serde(rename_all = "lowercase")]
enum Order {
    #[default]
    Newest,
    Oldest,
}

/// Searches with a container default.
#[derive(Tool, Debug, PartialEq)]
#[serde(default)]
struct Search {
    query: String,
    page: u16,
}

impl Default for Search {
    fn default() -> Self {
        Search {
            query: "*".to_owned(),
            page: 1,
        }
    }
}

#[test]
fn defaults_are_advertised_as_the_values_the_handler_receives() {
    let schema = ListIssues::input_schema();
    assert_eq!(schema["properties"]["limit"]["default"], json!(20));
    assert_eq!(schema["properties"]["closed"]["default"], json!(false));
    assert_eq!(schema["properties"]["labels"]["default"], json!([]));
    assert_eq!(schema["properties"]["order"]["default"], json!("newest"));
    assert_eq!(schema.get("required"), None);
    let parsed = ListIssues::parse_arguments("{}").unwrap();
    assert_eq!(
        parsed,
        ListIssues {
            limit: 20,
            closed: false,
            labels: vec![],
            order: Order::Newest
        }
    );
    assert!(ListIssues::contract_errors().is_empty());
}

#[test]
fn a_container_default_advertises_each_field_of_the_default_value() {
    let schema = Search::input_schema();
    assert_eq!(schema["properties"]["query"]["default"], json!("*"));
    assert_eq!(schema["properties"]["page"]["default"], json!(1));
    assert_eq!(
        Search::parse_arguments(r#"{"page": 3}"#).unwrap(),
        Search {
            query: "*".to_owned(),
            page: 3
        }
    );
}

/// Fetches a page.
#[derive(Tool, Debug)]
#[serde(default)]
#[allow(dead_code)]
struct BrokenDefault {
    #[tool(range(min = 1))]
    limit: u32,
    #[tool(length(min = 1))]
    name: String,
}

impl Default for BrokenDefault {
    fn default() -> Self {
        BrokenDefault {
            limit: 0,
            name: "ok".to_owned(),
        }
    }
}

#[test]
fn a_default_that_breaks_its_constraints_is_a_contract_error_not_a_handler_surprise() {
    let problems = BrokenDefault::contract_errors();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("BrokenDefault.limit") && problems[0].contains("must be >= 1"),
        "{problems:?}"
    );
    // Not advertised either.
    assert_eq!(
        BrokenDefault::input_schema()["properties"]["limit"].get("default"),
        None
    );
    // Every call is refused, even one that gives the field.
    let errors = BrokenDefault::parse_arguments("{}").unwrap_err();
    assert!(
        errors.to_string().contains("cannot accept calls"),
        "{errors}"
    );
    assert!(BrokenDefault::parse_value(&json!({"limit": 5})).is_err());
    // And the registry refuses the tool.
    let mut registry = tool_core::Registry::new();
    let refused = match registry.register(tool_core::ToolDef::new(broken)) {
        Ok(_) => panic!("a tool with an unsound contract was registered"),
        Err(error) => error,
    };
    assert!(
        matches!(refused, tool_core::RegistryError::InvalidContract { .. }),
        "{refused}"
    );
}

async fn broken(_: BrokenDefault, _: &tool_core::Context) -> Result<u8, tool_core::ToolError> {
    Ok(0)
}
