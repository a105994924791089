//! Enums whose variants carry data, in serde's four representations: the schema, the checked
//! parse, and agreement with serde's own derive.

use serde::Deserialize;
use serde_json::{Value, json};
use tool_core::{Argument, Tool};

/// Edits a file.
#[derive(Tool, Deserialize, Debug, PartialEq)]
struct EditFile {
    /// The file to edit.
    path: String,
    /// The edits, applied in order.
    ops: Vec<Op>,
}

/// One edit.
#[derive(Argument, Deserialize, Debug, PartialEq)]
#[serde(tag = "type")]
enum Op {
    /// Inserts a line.
    Insert {
        /// Where: the new line's number.
        #[tool(range(min = 1))]
        line: u32,
        text: String,
    },
    /// Deletes a line.
    Delete { line: u32 },
    /// Removes every line.
    Clear,
}

#[test]
fn an_internally_tagged_union_is_a_one_of_closed_branches_with_the_tag_as_a_const() {
    let schema = EditFile::input_schema();
    let ops = &schema["properties"]["ops"]["items"];
    assert_eq!(ops["description"], "One edit.");
    let branches = ops["oneOf"].as_array().unwrap();
    assert_eq!(branches.len(), 3);
    assert_eq!(
        branches[0],
        json!({
            "type": "object",
            "description": "Inserts a line.",
            "properties": {
                "type": {"const": "Insert"},
                "line": {"type": "integer", "minimum": 1, "maximum": 4294967295u64,
                         "description": "Where: the new line's number."},
                "text": {"type": "string"},
            },
            "required": ["type", "line", "text"],
            "additionalProperties": false,
        })
    );
    assert_eq!(
        branches[2],
        json!({
            "type": "object",
            "properties": {"type": {"const": "Clear"}},
            "required": ["type"],
            "additionalProperties": false,
            "description": "Removes every line.",
        })
    );
}

#[test]
fn the_tag_picks_the_variant_wherever_it_comes_in_the_object() {
    let text = r#"{"path": "a.txt", "ops": [
        {"type": "Insert", "line": 3, "text": "hi"},
        {"line": 4, "type": "Delete"},
        {"type": "Clear"}
    ]}"#;
    let parsed = EditFile::parse_arguments(text).unwrap();
    assert_eq!(
        parsed.ops,
        vec![
            Op::Insert {
                line: 3,
                text: "hi".to_owned()
            },
            Op::Delete { line: 4 },
            Op::Clear
        ]
    );
    assert_eq!(serde_json::from_str::<EditFile>(text).unwrap(), parsed);
    assert_eq!(
        EditFile::parse_value(&serde_json::from_str(text).unwrap()).unwrap(),
        parsed
    );
}

fn messages(errors: &tool_core::ArgumentErrors) -> Vec<String> {
    errors
        .iter()
        .map(|v| format!("{} {} {}", v.pointer(), v.keyword().as_str(), v.message()))
        .collect()
}

#[test]
fn only_the_tagged_variants_violations_are_reported_at_their_real_pointers() {
    let errors = EditFile::parse_arguments(
        r#"{"path": "a", "ops": [
            {"type": "Insert", "line": 0},
            {"text": "x", "type": "Delete", "line": -1},
            {"type": "Move", "line": 1},
            {"line": 2},
            {"type": "Clear", "line": 1}
        ]}"#,
    )
    .unwrap_err();
    assert_eq!(
        messages(&errors),
        vec![
            "/ops/0/line minimum must be >= 1; got 0",
            "/ops/0/text required missing required field",
            "/ops/1/text additionalProperties unknown field; expected one of \"type\", \"line\"",
            "/ops/1/line minimum must be >= 0; got -1",
            "/ops/2/type enum must be one of \"Insert\", \"Delete\", \"Clear\"; got \"Move\"",
            "/ops/3/type required missing required field",
            "/ops/4/line additionalProperties unknown field; expected one of \"type\"",
        ]
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>(),
        "{errors}"
    );
}

/// Moves money.
#[derive(Tool, Deserialize, Debug, PartialEq)]
#[serde(tag = "method", rename_all = "snake_case")]
enum Pay {
    /// By card.
    Card {
        #[tool(length(equal = 16))]
        number: String,
        amount: u64,
    },
    /// By bank transfer.
    BankTransfer { iban: String, amount: u64 },
}

#[test]
fn an_internally_tagged_enum_can_be_a_tool() {
    let schema = Pay::input_schema();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["oneOf"].as_array().unwrap().len(), 2);
    assert_eq!(
        schema["oneOf"][1]["properties"]["method"],
        json!({"const": "bank_transfer"})
    );
    assert_eq!(
        Pay::parse_arguments(r#"{"method": "card", "number": "4242424242424242", "amount": 5}"#)
            .unwrap(),
        Pay::Card {
            number: "4242424242424242".to_owned(),
            amount: 5
        }
    );
    let errors =
        Pay::parse_arguments(r#"{"amount": 5, "method": "card", "number": "42"}"#).unwrap_err();
    assert_eq!(
        messages(&errors),
        vec!["/number minLength must be at least 16 characters long; got 2"]
    );
}

/// Externally tagged (serde's default), with every kind of variant.
#[derive(Argument, Deserialize, Debug, PartialEq)]
enum Shape {
    Dot,
    Circle(f64),
    Rect { w: u32, h: u32 },
    Named(Label),
}

#[derive(Argument, Deserialize, Debug, PartialEq)]
struct Label {
    text: String,
}

/// Adjacently tagged.
#[derive(Argument, Deserialize, Debug, PartialEq)]
#[serde(tag = "t", content = "c")]
enum Event {
    Ping,
    Text(String),
    Move { x: i32, y: i32 },
}

/// Untagged.
#[derive(Argument, Deserialize, Debug, PartialEq)]
#[serde(untagged)]
enum Id {
    Number(u64),
    Name(String),
    Pair { a: u8, b: u8 },
}

/// Draws things.
#[derive(Tool, Deserialize, Debug, PartialEq)]
struct Draw {
    shapes: Vec<Shape>,
    event: Option<Event>,
    ids: Vec<Id>,
}

#[test]
fn every_representation_parses_as_serde_does() {
    let text = r#"{
        "shapes": ["Dot", {"Circle": 1.5}, {"Rect": {"w": 1, "h": 2}}, {"Named": {"text": "a"}}],
        "event": {"c": {"x": 1, "y": -1}, "t": "Move"},
        "ids": [7, "seven", {"a": 1, "b": 2}]
    }"#;
    let parsed = Draw::parse_arguments(text).unwrap();
    assert_eq!(parsed, serde_json::from_str::<Draw>(text).unwrap());
    for event in [r#"{"t": "Ping"}"#, r#"{"t": "Text", "c": "hi"}"#] {
        let text = format!(r#"{{"shapes": [], "event": {event}, "ids": []}}"#);
        let parsed = Draw::parse_arguments(&text).unwrap();
        assert_eq!(parsed, serde_json::from_str::<Draw>(&text).unwrap());
    }
}

#[test]
fn refusals_in_every_representation_name_what_was_expected() {
    let errors = Draw::parse_arguments(
        r#"{
        "shapes": ["Square", {"Circle": "big"}, {"Rect": {"w": 1}}, {"Oval": 1}, {"Dot": null},
                   {"Circle": 1, "Dot": 2}, {}, 5],
        "event": {"t": "Ping", "c": 1},
        "ids": [-1, {"a": 1}]
    }"#,
    )
    .unwrap_err();
    let found = messages(&errors);
    let expected = [
        "/shapes/0 enum must be one of \"Dot\"; got \"Square\"",
        "/shapes/1/Circle type expected number, got string \"big\"",
        "/shapes/2/Rect/h required missing required field",
        "/shapes/3/Oval additionalProperties unknown variant; expected one of \"Circle\", \"Rect\", \"Named\"",
        "/shapes/4/Dot additionalProperties unknown variant; expected one of \"Circle\", \"Rect\", \"Named\"",
        "/shapes/5/Dot additionalProperties a variant is one key; this object already names one",
        "/shapes/6 required expected one key naming the variant, one of \"Circle\", \"Rect\", \"Named\"",
        "/shapes/7 type expected string or object, got 5",
        "/event/c additionalProperties unknown field; expected one of \"t\"",
    ];
    for line in expected {
        assert!(found.iter().any(|f| f == line), "{line} not in {found:#?}");
    }
    let untagged: Vec<&String> = found.iter().filter(|f| f.starts_with("/ids")).collect();
    assert_eq!(untagged.len(), 2, "{found:#?}");
    assert!(
        untagged[0].starts_with("/ids/0 anyOf matches none of the alternatives: `Number` ("),
        "{untagged:?}"
    );
    assert!(
        untagged[1].contains("`Pair` (/ids/1/b: missing required field)"),
        "{untagged:?}"
    );
}

#[test]
fn schemas_of_the_other_representations() {
    let schema = Draw::input_schema();
    let shapes = &schema["properties"]["shapes"]["items"]["oneOf"];
    assert_eq!(shapes[0], json!({"type": "string", "const": "Dot"}));
    assert_eq!(
        shapes[1],
        json!({"type": "object", "properties": {"Circle": {"type": "number"}},
               "required": ["Circle"], "additionalProperties": false})
    );
    let event = &schema["properties"]["event"];
    assert_eq!(event["anyOf"][1], json!({"type": "null"}));
    assert_eq!(
        event["anyOf"][0]["oneOf"][1],
        json!({"type": "object", "properties": {"t": {"const": "Text"}, "c": {"type": "string"}},
               "required": ["t", "c"], "additionalProperties": false})
    );
    let ids = &schema["properties"]["ids"]["items"];
    assert_eq!(ids["anyOf"].as_array().unwrap().len(), 3);
    assert_eq!(ids["anyOf"][1], json!({"type": "string"}));
}

#[test]
fn a_tag_after_nested_members_is_found_and_nesting_stays_bounded() {
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let text = format!(r#"{{"path": "a", "ops": [{{"x": {deep}, "type": "Clear"}}]}}"#);
    let errors = EditFile::parse_arguments(&text).unwrap_err();
    assert!(errors.is_syntax(), "{errors}");
    let value: Value = json!({"path": "a", "ops": [{"line": 1, "text": "t", "type": "Insert"}]});
    assert!(EditFile::parse_value(&value).is_ok());
}

#[test]
fn members_held_until_the_tag_are_read_back_as_written() {
    // Escaped keys and tag values arrive as owned strings rather than borrowed ones.
    let text = r#"{"path": "a", "ops": [
        {"\u006cine": 3, "text": "hi", "type": "Insert"},
        {"line": 4, "type": "\u0044elete"}
    ]}"#;
    let parsed = EditFile::parse_arguments(text).unwrap();
    assert_eq!(parsed, serde_json::from_str::<EditFile>(text).unwrap());
    // A second tag, tags that are not strings, a unit variant with members.
    let errors = EditFile::parse_arguments(
        r#"{"path": "a", "ops": [
            {"line": 5, "type": "Delete", "type": "Clear"},
            {"line": 6, "type": 7},
            {"line": 7, "type": {"a": [1]}},
            {"line": 8, "type": "Clear"},
            {"text": "x", "type": null}
        ]}"#,
    )
    .unwrap_err();
    assert_eq!(
        messages(&errors),
        [
            "/ops/0/type duplicateKey duplicate field: each key may appear once",
            "/ops/1/type enum must be one of \"Insert\", \"Delete\", \"Clear\"; got 7",
            "/ops/2/type enum must be one of \"Insert\", \"Delete\", \"Clear\"; got object",
            "/ops/3/line additionalProperties unknown field; expected one of \"type\"",
            "/ops/4/type enum must be one of \"Insert\", \"Delete\", \"Clear\"; got null",
        ],
        "{errors}"
    );
}

#[test]
fn a_repeated_key_inside_a_member_held_before_the_tag_is_refused() {
    let errors = EditFile::parse_arguments(
        r#"{"path": "a", "ops": [{"line": 1, "x": {"a": 1, "a": 2}, "type": "Delete"}]}"#,
    )
    .unwrap_err();
    assert!(
        errors.to_string().contains("duplicate key \"a\""),
        "{errors}"
    );
}
