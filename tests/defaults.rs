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
        matches!(
            refused,
            tool_core::registry::RegistryError::InvalidContract { .. }
        ),
        "{refused}"
    );
}

async fn broken(
    _: BrokenDefault,
    _: &tool_core::Context,
) -> Result<u8, tool_core::registry::ToolError> {
    Ok(0)
}

/// Schedules a reminder, with defaults of other crates' types.
#[derive(Tool, Debug)]
#[allow(dead_code)]
struct Remind {
    #[serde(default = "epoch")]
    at: chrono::DateTime<chrono::Utc>,
    #[serde(default = "noon")]
    time: chrono::NaiveTime,
    #[serde(default = "new_year")]
    day: time::Date,
    #[serde(default = "half_past")]
    clock: time::Time,
    #[serde(default)]
    id: uuid::Uuid,
    #[serde(default = "home")]
    link: url::Url,
    #[serde(default)]
    tags: std::collections::BTreeSet<char>,
    #[serde(default)]
    size: (u8, u16),
}

fn epoch() -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp(1_700_000_000, 250_000_000).unwrap()
}

fn noon() -> chrono::NaiveTime {
    chrono::NaiveTime::from_hms_milli_opt(12, 0, 0, 5).unwrap()
}

fn new_year() -> time::Date {
    time::Date::from_calendar_date(2026, time::Month::January, 1).unwrap()
}

fn half_past() -> time::Time {
    time::Time::from_hms_nano(9, 30, 0, 120_000_000).unwrap()
}

fn home() -> url::Url {
    url::Url::parse("https://example.com/a?b=1").unwrap()
}

#[test]
fn defaults_of_other_crates_types_are_advertised_as_the_strings_they_are_read_from() {
    assert!(
        Remind::contract_errors().is_empty(),
        "{:?}",
        Remind::contract_errors()
    );
    let properties = &Remind::input_schema()["properties"];
    assert_eq!(properties["at"]["default"], "2023-11-14T22:13:20.250Z");
    assert_eq!(properties["time"]["default"], "12:00:00.005");
    assert_eq!(properties["day"]["default"], "2026-01-01");
    assert_eq!(properties["clock"]["default"], "09:30:00.12");
    assert_eq!(
        properties["id"]["default"],
        "00000000-0000-0000-0000-000000000000"
    );
    assert_eq!(properties["link"]["default"], "https://example.com/a?b=1");
    assert_eq!(properties["tags"]["default"], json!([]));
    assert_eq!(properties["size"]["default"], json!([0, 0]));
}
