//! Doc comments become descriptions by one rule: lines of a paragraph are joined with a space,
//! paragraphs (split by blank `///` lines) with a blank line.

use tool_core::{Argument, Tool};

/// Look up a city,
/// by name.
///
/// Answers with its coordinates.
#[derive(Tool)]
#[allow(dead_code, reason = "only the descriptions are read")]
struct FindCity {
    /// The name,
    /// as written locally.
    ///
    /// Case does not matter.
    name: String,
    // No doc comment: the schema describes the field with the enum's own.
    region: Region,
}

/// A region.
///
///
/// Continents only.
#[derive(Argument)]
enum Region {
    Europe,
    Asia,
}

#[test]
fn blank_doc_line_separates_paragraphs_of_a_tool_description() {
    assert_eq!(
        FindCity::description(),
        "Look up a city, by name.\n\nAnswers with its coordinates."
    );
}

#[test]
fn blank_doc_line_separates_paragraphs_of_a_field_description() {
    assert_eq!(
        FindCity::input_schema()["properties"]["name"]["description"],
        "The name, as written locally.\n\nCase does not matter."
    );
}

#[test]
fn consecutive_blank_doc_lines_make_one_paragraph_break() {
    assert_eq!(
        FindCity::input_schema()["properties"]["region"]["description"],
        "A region.\n\nContinents only."
    );
    let _ = (Region::Europe, Region::Asia);
}

/// Lists issues, with most of the standard types.
#[derive(Tool)]
#[allow(dead_code, reason = "only the schemas are read")]
struct ListIssues {
    /// How many.
    #[tool(range(min = 1, max = 100), example = 20)]
    limit: u16,
    #[tool(range(exclusive_min = 0.5))]
    weight: f64,
    #[tool(length(min = 1), pattern = "^[a-z]+$")]
    repo: String,
    #[tool(format = "date-time")]
    since: Option<String>,
    #[serde(default)]
    closed: bool,
    #[serde(default)]
    #[tool(length(max = 3), inner(length(max = 8)))]
    labels: Vec<String>,
    #[tool(inner(range(min = -5)))]
    scores: std::collections::BTreeMap<String, i8>,
    /// Use `repo`.
    #[deprecated]
    #[serde(default)]
    project: Option<Box<u64>>,
    #[serde(skip)]
    internal: u8,
}

#[test]
fn the_schema_in_the_docs_is_the_advertised_one_when_the_derive_sees_every_type() {
    let shown: serde_json::Value =
        serde_json::from_str(ListIssues::DOC_SCHEMA.expect("every type is a standard one"))
            .unwrap();
    let mut advertised = ListIssues::input_schema().clone();
    advertised.as_object_mut().unwrap().shift_remove("$schema");
    assert_eq!(shown, advertised);
    // Order too: the docs show what a model is sent.
    assert_eq!(shown.to_string(), advertised.to_string());
}

#[test]
fn a_type_the_derive_cannot_see_into_leaves_the_docs_schema_partial() {
    assert_eq!(FindCity::DOC_SCHEMA, None);
    // An enum of its own: shown by name in the docs.
    assert_eq!(examples::GetWeather::DOC_SCHEMA, None);
}
