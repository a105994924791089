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
