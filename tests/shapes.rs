//! Newtypes, item constraints, examples and deprecation: what each advertises and checks.

use serde::Deserialize;
use serde_json::json;
use tool_core::{Argument, Tool};

/// An email address.
#[derive(Argument, Deserialize, Debug, PartialEq, Clone)]
struct Email(#[tool(pattern = "^[^@ ]+@[^@ ]+$", length(max = 254))] String);

/// A label, transparent over its text.
#[derive(Argument, Deserialize, Debug, PartialEq)]
#[serde(transparent)]
struct Label {
    #[tool(length(min = 1, max = 20))]
    text: String,
}

/// A page size.
#[derive(Argument, Deserialize, Debug, PartialEq)]
struct PageSize(#[tool(range(min = 1, max = 100))] u8);

/// Sends a message.
#[derive(Tool, Deserialize, Debug, PartialEq)]
struct Send {
    /// Who gets it.
    to: Vec<Email>,
    cc: Option<Email>,
    labels: Vec<Label>,
    /// Tags, each short.
    #[tool(length(max = 3), inner(length(min = 1, max = 8), pattern = "^[a-z]+$"))]
    tags: Vec<String>,
    /// Scores per reviewer.
    #[tool(inner(range(min = 0, max = 10)))]
    scores: std::collections::BTreeMap<String, u8>,
    /// Rows of cells.
    #[tool(inner(length(max = 2), inner(range(max = 9))))]
    grid: Option<Vec<Vec<i32>>>,
    #[serde(default = "ten")]
    page: PageSize,
    /// The subject line.
    #[tool(example = "Weekly report", example = "Invoice #42")]
    subject: String,
    /// Use `to` instead.
    #[deprecated]
    #[serde(default)]
    recipient: Option<String>,
}

fn ten() -> PageSize {
    PageSize(10)
}

#[test]
fn a_newtype_advertises_its_inner_schema_with_its_constraints() {
    let schema = Send::input_schema();
    assert_eq!(
        schema["properties"]["to"]["items"],
        json!({"type": "string", "description": "An email address.", "maxLength": 254,
               "pattern": "^[^@ ]+@[^@ ]+$"})
    );
    assert_eq!(
        schema["properties"]["cc"]["type"],
        json!(["string", "null"])
    );
    assert_eq!(
        schema["properties"]["labels"]["items"],
        json!({"type": "string", "description": "A label, transparent over its text.",
               "minLength": 1, "maxLength": 20})
    );
    assert_eq!(
        schema["properties"]["page"],
        json!({"type": "integer", "description": "A page size.", "minimum": 1, "maximum": 100,
               "default": 10})
    );
}

#[test]
fn item_constraints_are_advertised_on_items_and_checked_at_each_item() {
    let schema = Send::input_schema();
    assert_eq!(
        schema["properties"]["tags"],
        json!({"type": "array", "description": "Tags, each short.", "maxItems": 3,
               "items": {"type": "string", "minLength": 1, "maxLength": 8, "pattern": "^[a-z]+$"}})
    );
    assert_eq!(
        schema["properties"]["scores"]["additionalProperties"],
        json!({"type": "integer", "minimum": 0, "maximum": 10})
    );
    assert_eq!(
        schema["properties"]["grid"]["items"],
        json!({"type": "array", "maxItems": 2,
               "items": {"type": "integer", "minimum": -2147483648, "maximum": 9}})
    );
    let errors = Send::parse_arguments(
        r#"{"to": ["a@b", "nope"], "cc": null, "labels": [""], "tags": ["ok", "TOOLONGTAG"],
            "scores": {"ann": 11}, "grid": [[1, 10], [1, 2, 3]], "page": 0, "subject": "s"}"#,
    )
    .unwrap_err();
    let found: Vec<String> = errors
        .iter()
        .map(|v| format!("{} {}", v.pointer(), v.keyword().as_str()))
        .collect();
    assert_eq!(
        found,
        [
            "/to/1 pattern",
            "/labels/0 minLength",
            "/tags/1 maxLength",
            "/tags/1 pattern",
            "/scores/ann maximum",
            "/grid/0/1 maximum",
            "/grid/1 maxItems",
            "/page minimum",
        ],
        "{errors}"
    );
}

#[test]
fn examples_and_deprecation_are_advertised() {
    let schema = Send::input_schema();
    assert_eq!(
        schema["properties"]["subject"]["examples"],
        json!(["Weekly report", "Invoice #42"])
    );
    assert_eq!(schema["properties"]["recipient"]["deprecated"], json!(true));
    assert!(Send::contract_errors().is_empty());
}

#[test]
fn newtypes_parse_as_serde_does() {
    let text = r#"{"to": ["a@b"], "labels": ["x"], "tags": [], "scores": {}, "subject": "s"}"#;
    let parsed = Send::parse_arguments(text).unwrap();
    assert_eq!(parsed, serde_json::from_str::<Send>(text).unwrap());
    assert_eq!(parsed.page, PageSize(10));
}

/// An example that breaks the field's constraints.
#[derive(Tool, Debug)]
#[allow(dead_code)]
struct BadExample {
    #[tool(range(max = 5), example = 7)]
    level: u8,
}

#[test]
fn an_example_that_breaks_its_constraints_is_a_contract_error() {
    let problems = BadExample::contract_errors();
    assert_eq!(problems.len(), 1);
    assert!(
        problems[0].contains("the example 7 of `BadExample.level`"),
        "{problems:?}"
    );
}

#[test]
fn properties_are_advertised_in_declaration_order() {
    let schema = Send::input_schema();
    let names: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(
        names,
        [
            "to",
            "cc",
            "labels",
            "tags",
            "scores",
            "grid",
            "page",
            "subject",
            "recipient"
        ]
    );
    let text = serde_json::to_string(schema).unwrap();
    assert!(
        text.find("\"to\"").unwrap() < text.find("\"cc\"").unwrap(),
        "{text}"
    );
}

/// One page of results.
#[derive(Argument, Deserialize, Debug, PartialEq)]
struct Page<T> {
    /// The items on this page.
    items: Vec<T>,
    /// Where the next page starts.
    cursor: Option<String>,
}

/// Replaces issues and comments in bulk.
#[derive(Tool, Deserialize, Debug, PartialEq)]
struct Bulk {
    issues: Page<u32>,
    comments: Page<Email>,
}

#[test]
fn a_generic_struct_is_an_argument_for_each_argument_it_holds() {
    let schema = Bulk::input_schema();
    assert_eq!(
        schema["properties"]["issues"]["properties"]["items"]["items"]["type"],
        "integer"
    );
    assert_eq!(
        schema["properties"]["comments"]["properties"]["items"]["items"]["pattern"],
        "^[^@ ]+@[^@ ]+$"
    );
    let text = r#"{"issues": {"items": [1, 2], "cursor": null},
                   "comments": {"items": ["a@b"], "cursor": "x"}}"#;
    let parsed = Bulk::parse_arguments(text).unwrap();
    assert_eq!(parsed, serde_json::from_str::<Bulk>(text).unwrap());
    let errors = Bulk::parse_arguments(
        r#"{"issues": {"items": [-1], "cursor": null}, "comments": {"items": ["x"], "cursor": null}}"#,
    )
    .unwrap_err();
    let pointers: Vec<String> = errors.iter().map(|v| v.pointer().into_owned()).collect();
    assert_eq!(pointers, ["/issues/items/0", "/comments/items/0"]);
}

/// Books a meeting.
#[derive(Tool, Deserialize, Debug, PartialEq)]
struct BookMeeting {
    /// When it starts.
    #[tool(format = "date-time")]
    start: String,
    #[tool(format = "date")]
    day: Option<String>,
    #[tool(inner(format = "email"))]
    attendees: Vec<String>,
    host: Email,
}

#[test]
fn formats_are_advertised_and_asserted() {
    let schema = BookMeeting::input_schema();
    assert_eq!(schema["properties"]["start"]["format"], "date-time");
    assert_eq!(
        schema["properties"]["attendees"]["items"]["format"],
        "email"
    );
    assert!(
        BookMeeting::parse_arguments(
            r#"{"start": "2025-02-28T12:30:00Z", "day": "2025-02-28", "attendees": ["a@b.co"], "host": "a@b"}"#
        )
        .is_ok()
    );
    let errors = BookMeeting::parse_arguments(
        r#"{"start": "2025-02-30T99:99:00Z", "day": "2025-02-30", "attendees": ["nope"], "host": "a@b"}"#,
    )
    .unwrap_err();
    let found: Vec<String> = errors
        .iter()
        .map(|v| format!("{} {}", v.pointer(), v.keyword().as_str()))
        .collect();
    assert_eq!(
        found,
        ["/start format", "/day format", "/attendees/0 format"],
        "{errors}"
    );
}

/// A weekday.
#[derive(Argument, Deserialize, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Day {
    Mon,
    Tue,
}

/// Sets opening hours.
#[derive(Tool, Deserialize, Debug, PartialEq)]
struct SetHours {
    #[tool(inner(range(max = 24)))]
    hours: std::collections::BTreeMap<Day, u8>,
    by_id: std::collections::HashMap<u32, String>,
}

#[test]
fn maps_keyed_by_unit_enums_and_integers() {
    let schema = SetHours::input_schema();
    assert_eq!(
        schema["properties"]["hours"]["propertyNames"],
        json!({"enum": ["mon", "tue"]})
    );
    let text = r#"{"hours": {"mon": 9, "tue": 10}, "by_id": {"7": "x"}}"#;
    let parsed = SetHours::parse_arguments(text).unwrap();
    assert_eq!(parsed, serde_json::from_str::<SetHours>(text).unwrap());
    let errors =
        SetHours::parse_arguments(r#"{"hours": {"sun": 9, "mon": 25}, "by_id": {"x": "y"}}"#)
            .unwrap_err();
    let found: Vec<String> = errors
        .iter()
        .map(|v| format!("{} {}", v.pointer(), v.keyword().as_str()))
        .collect();
    assert_eq!(
        found,
        [
            "/hours/sun propertyNames",
            "/hours/mon maximum",
            "/by_id/x propertyNames"
        ],
        "{errors}"
    );
}

/// Parameters shared by several tools.
#[derive(Argument, Deserialize, Debug, PartialEq)]
struct Paging {
    /// Results per page.
    #[serde(default = "twenty")]
    #[tool(range(min = 1, max = 100))]
    per_page: u8,
    cursor: Option<String>,
    /// The account searched.
    account: String,
}

fn twenty() -> u8 {
    20
}

/// Lists invoices.
#[derive(Tool, Deserialize, Debug, PartialEq)]
struct ListInvoices {
    status: Option<String>,
    #[serde(flatten)]
    paging: Paging,
}

/// Lists customers.
#[derive(Tool, Deserialize, Debug, PartialEq)]
struct ListCustomers {
    #[serde(flatten)]
    paging: Paging,
    #[tool(length(min = 1))]
    query: String,
}

#[test]
fn a_flattened_struct_shares_its_fields_with_several_tools() {
    let schema = ListInvoices::input_schema();
    let names: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(names, ["status", "per_page", "cursor", "account"]);
    assert_eq!(schema["required"], json!(["account"]));
    assert_eq!(schema["properties"]["per_page"]["default"], 20);
    assert_eq!(
        ListCustomers::input_schema()["required"],
        json!(["query", "account"])
    );

    for text in [
        r#"{"status": "open", "account": "acme", "per_page": 5}"#,
        r#"{"account": "acme"}"#,
    ] {
        let parsed = ListInvoices::parse_arguments(text).unwrap();
        assert_eq!(parsed, serde_json::from_str::<ListInvoices>(text).unwrap());
    }
    let errors = ListCustomers::parse_arguments(r#"{"query": "", "per_page": 0, "colour": "red"}"#)
        .unwrap_err();
    let found: Vec<String> = errors
        .iter()
        .map(|v| format!("{} {}", v.pointer(), v.keyword().as_str()))
        .collect();
    assert_eq!(
        found,
        [
            "/query minLength",
            "/per_page minimum",
            "/colour additionalProperties",
            "/account required"
        ],
        "{errors}"
    );
}

/// Labels a resource.
#[derive(Tool, Debug, PartialEq)]
struct Tag {
    /// One to three labels, each key a lowercase word of at most 8 characters.
    #[tool(length(min = 1, max = 3), keys(pattern = "^[a-z]+$", length(max = 8)))]
    labels: std::collections::BTreeMap<String, String>,
    /// Weights by numeric id, ids of at most 3 digits.
    #[tool(keys(length(max = 3)), inner(range(max = 10)))]
    #[serde(default)]
    weights: std::collections::HashMap<u32, u8>,
    /// Several label sets, each of at most one entry.
    #[tool(inner(length(max = 1), keys(pattern = "^x")))]
    #[serde(default)]
    sets: Vec<std::collections::BTreeMap<String, bool>>,
}

#[test]
fn a_maps_entries_and_keys_are_constrained() {
    let schema = Tag::input_schema();
    assert_eq!(
        schema["properties"]["labels"],
        json!({
            "type": "object",
            "description": "One to three labels, each key a lowercase word of at most 8 characters.",
            "additionalProperties": {"type": "string"},
            "propertyNames": {"maxLength": 8, "pattern": "^[a-z]+$"},
            "minProperties": 1,
            "maxProperties": 3
        })
    );
    // Beside the integer keys' own pattern.
    let weights = &schema["properties"]["weights"]["propertyNames"];
    assert_eq!(weights["maxLength"], 3);
    assert!(weights["pattern"].is_string(), "{weights}");
    assert_eq!(
        schema["properties"]["sets"]["items"]["propertyNames"],
        json!({"pattern": "^x"})
    );
    let ok =
        Tag::parse_arguments(r#"{"labels": {"team": "infra"}, "weights": {"12": 3}}"#).unwrap();
    assert_eq!(ok.labels.len(), 1);
    let errors = Tag::parse_arguments(
        r#"{"labels": {"Team": "a", "toolongname": "b", "c": "c", "d": "d"},
            "weights": {"1234": 11, "5": 11}, "sets": [{"xa": true, "xb": true}, {"y": false}]}"#,
    )
    .unwrap_err();
    let found: Vec<String> = errors
        .iter()
        .map(|v| format!("{} {}", v.pointer(), v.keyword().as_str()))
        .collect();
    assert_eq!(
        found,
        [
            "/labels/Team propertyNames",
            "/labels/toolongname propertyNames",
            "/labels maxProperties",
            "/weights/1234 propertyNames",
            "/weights/1234 maximum",
            "/weights/5 maximum",
            "/sets/0 maxProperties",
            "/sets/1/y propertyNames",
        ],
        "{errors}"
    );
    assert!(
        errors
            .to_string()
            .contains("must match the pattern \"^[a-z]+$\""),
        "{errors}"
    );
    let empty = Tag::parse_arguments(r#"{"labels": {}}"#).unwrap_err();
    assert_eq!(
        empty.to_string(),
        "- /labels: must have at least 1 entry; got 0",
        "{empty}"
    );
}

#[test]
fn a_maps_constraints_decide_as_jsonschema() {
    let law = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(Tag::input_schema())
        .unwrap();
    let names = [
        "a",
        "ab",
        "Team",
        "toolongname",
        "1",
        "12",
        "1234",
        "x",
        "xy",
        "y",
        "",
    ];
    let mut checked = 0;
    for size in 0..=4 {
        for start in 0..names.len() {
            let map: serde_json::Map<String, serde_json::Value> = names
                .iter()
                .cycle()
                .skip(start)
                .take(size)
                .map(|name| ((*name).to_owned(), json!(size as u64 * 3)))
                .collect();
            let labels: serde_json::Map<String, serde_json::Value> = map
                .iter()
                .map(|(name, _)| (name.clone(), json!("v")))
                .collect();
            let bools: serde_json::Map<String, serde_json::Value> =
                map.keys().map(|name| (name.clone(), json!(true))).collect();
            for instance in [
                json!({"labels": labels}),
                json!({"labels": {"a": "b"}, "weights": map}),
                json!({"labels": {"a": "b"}, "sets": [bools]}),
            ] {
                let ours = Tag::parse_value(&instance);
                assert_eq!(
                    ours.is_ok(),
                    law.is_valid(&instance),
                    "{instance}: {:?}",
                    ours.err().map(|errors| errors.to_string())
                );
                let theirs: std::collections::BTreeSet<(String, String)> = law
                    .iter_errors(&instance)
                    .map(|e| (e.instance_path().to_string(), e.kind().keyword().to_owned()))
                    .collect();
                let ours: std::collections::BTreeSet<(String, String)> =
                    Tag::parse_value(&instance)
                        .err()
                        .map(|errors| {
                            errors
                                .iter()
                                .map(|v| {
                                    (
                                        v.instance_location().to_owned(),
                                        v.keyword().as_str().to_owned(),
                                    )
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                assert_eq!(ours, theirs, "{instance}");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 5 * names.len() * 3);
}

/// Scores by small id.
#[derive(Tool, Debug)]
struct Scores {
    /// Ids starting with 1, beside the keys of a `u8`.
    #[tool(keys(pattern = "^1"))]
    by_id: std::collections::BTreeMap<u8, bool>,
}

#[test]
fn declared_key_constraints_stand_beside_the_key_types_own() {
    let schema = Scores::input_schema();
    let names = &schema["properties"]["by_id"]["propertyNames"]["allOf"];
    assert_eq!(names[1], json!({"pattern": "^1"}), "{schema}");
    assert!(names[0]["pattern"].is_string(), "{schema}");
    let law = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(schema)
        .unwrap();
    for (key, accepted) in [
        ("1", true),
        ("12", true),
        ("199", true),
        ("2", false),
        ("256", false),
        ("1x", false),
        ("01", false),
    ] {
        let instance = json!({"by_id": {key: true}});
        assert_eq!(Scores::parse_value(&instance).is_ok(), accepted, "{key}");
        assert_eq!(law.is_valid(&instance), accepted, "{key}");
    }
    let errors = Scores::parse_value(&json!({"by_id": {"2": true, "1000": true}})).unwrap_err();
    let found: Vec<String> = errors
        .iter()
        .map(|v| format!("{} {}", v.pointer(), v.keyword().as_str()))
        .collect();
    assert_eq!(
        found,
        ["/by_id/2 propertyNames", "/by_id/1000 propertyNames"],
        "{errors}"
    );
}
