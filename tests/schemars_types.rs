//! Types that derive schemars' `JsonSchema` and serde's `Deserialize` (in this file, and
//! chrono's from another crate) used as tool arguments through `ViaSchemars`: the advertised
//! schema is schemars' with its definitions moved into the tool's root `$defs`; valid values
//! come out as serde reads them; invalid ones give every violation at its pointer; and over a
//! few hundred generated instances the tool accepts exactly what `jsonschema` accepts against
//! the advertised schema, with the same violations.

use std::collections::BTreeSet;

use chrono::{DateTime, NaiveDate, Utc};
use proptest::prelude::*;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Deserialize;
use serde_json::{Value, json};
use tool_core::providers::{AdvertiseError, LowerError, Target, ToolSpec, advertise};
use tool_core::{
    Tool,
    contract::{Keyword, ViaSchemars},
};

/// Types written for another purpose, deriving only serde and schemars.
mod theirs {
    use schemars::JsonSchema;
    use serde::Deserialize;

    /// When a job may run.
    #[derive(Deserialize, JsonSchema, Debug, Clone, PartialEq)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub(crate) struct Window {
        /// Hour of the day, 0 to 23.
        #[schemars(range(max = 23))]
        pub(crate) start_hour: u8,
        #[schemars(length(min = 1, max = 8))]
        pub(crate) label: String,
        #[serde(default)]
        #[schemars(length(max = 3))]
        pub(crate) days: Vec<Day>,
        pub(crate) repeat: Repeat,
    }

    #[derive(Deserialize, JsonSchema, Debug, Clone, Copy, PartialEq)]
    pub(crate) enum Day {
        Mon,
        Tue,
        Wed,
    }

    /// How often.
    #[derive(Deserialize, JsonSchema, Debug, Clone, PartialEq)]
    #[serde(tag = "kind", deny_unknown_fields)]
    pub(crate) enum Repeat {
        Once,
        Every { minutes: u16 },
    }

    /// A tree of numbers: a recursive type.
    #[derive(Deserialize, JsonSchema, Debug, Clone, PartialEq)]
    #[serde(deny_unknown_fields)]
    pub(crate) struct Tree {
        pub(crate) value: i32,
        #[serde(default)]
        pub(crate) children: Vec<Tree>,
    }

    /// Two crates with a type of the same name.
    pub(crate) mod a {
        #[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
        #[serde(deny_unknown_fields)]
        pub(crate) struct Inner {
            pub(crate) x: u8,
        }

        #[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
        #[serde(deny_unknown_fields)]
        pub(crate) struct Outer {
            pub(crate) inner: Inner,
        }
    }

    pub(crate) mod b {
        #[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
        #[serde(deny_unknown_fields)]
        pub(crate) struct Inner {
            pub(crate) y: String,
        }

        #[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
        #[serde(deny_unknown_fields)]
        pub(crate) struct Outer {
            pub(crate) inner: Inner,
        }
    }
}

use theirs::{Day, Repeat, Tree, Window};

/// Schedules a job.
#[derive(Tool, Debug)]
#[allow(dead_code)]
struct Schedule {
    title: String,
    window: ViaSchemars<Window>,
    /// When to start (chrono's own schema: an RFC 3339 `date-time` string).
    at: ViaSchemars<DateTime<Utc>>,
    until: Option<ViaSchemars<NaiveDate>>,
    more: Vec<ViaSchemars<Window>>,
    tree: Option<ViaSchemars<Tree>>,
}

/// Takes both `Outer`s, whose schemars schemas both define `Inner`.
#[derive(Tool, Debug)]
#[allow(dead_code)]
struct Both {
    a: ViaSchemars<theirs::a::Outer>,
    b: ViaSchemars<theirs::b::Outer>,
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(schema)
        .expect("the advertised schema compiles, every $ref resolving")
}

fn valid_schedule() -> Value {
    json!({
        "title": "backup",
        "window": { "startHour": 3, "label": "night", "days": ["Mon", "Wed"], "repeat": { "kind": "Every", "minutes": 30 } },
        "at": "2026-12-01T03:00:00Z",
        "until": "2027-01-31",
        "more": [{ "startHour": 23, "label": "x", "repeat": { "kind": "Once" } }],
        "tree": { "value": 1, "children": [{ "value": 2 }, { "value": 3, "children": [{ "value": 4 }] }] }
    })
}

#[test]
fn the_advertised_schema_is_schemars_with_definitions_at_the_root() {
    let schema = Schedule::input_schema();
    validator(schema);
    let defs = schema["$defs"].as_object().expect("root $defs");
    // schemars' definitions of Window's parts, and Tree's (recursive: in `$defs`, referred to).
    for name in ["Day", "Repeat", "Tree"] {
        assert!(defs.contains_key(name), "{name} in {:?}", defs.keys());
    }
    let window = &schema["properties"]["window"];
    assert_eq!(window["properties"]["startHour"]["maximum"], 23);
    assert_eq!(window["properties"]["repeat"]["$ref"], "#/$defs/Repeat");
    assert_eq!(window.get("$schema"), None);
    assert_eq!(window.get("$defs"), None);
    // Window is used twice; its definitions are there once.
    assert_eq!(schema["properties"]["more"]["items"], *window);
    assert_eq!(schema["properties"]["at"]["format"], "date-time");
    assert_eq!(
        schema["properties"]["at"]["description"],
        "When to start (chrono's own schema: an RFC 3339 `date-time` string)."
    );
    // Every provider takes it (local references only), but those without recursion (Tree).
    for target in Target::ALL {
        let advertised = advertise(
            [ToolSpec::new("schedule", "", Schedule::input_schema())],
            target,
        );
        match target {
            Target::AnthropicStrict | Target::GeminiOpenApi => assert!(
                matches!(
                    advertised,
                    Err(AdvertiseError::Refused {
                        error: LowerError::Recursive { .. },
                        ..
                    })
                ),
                "{target}: {advertised:?}"
            ),
            _ => drop(advertised.unwrap_or_else(|e| panic!("{target}: {e}"))),
        }
    }
}

#[test]
fn same_named_definitions_are_kept_apart() {
    let schema = Both::input_schema();
    let check = validator(schema);
    let defs: BTreeSet<&str> = schema["$defs"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(defs, BTreeSet::from(["Inner", "Inner2"]));
    let good = json!({ "a": { "inner": { "x": 1 } }, "b": { "inner": { "y": "z" } } });
    assert!(check.is_valid(&good));
    let parsed = Both::parse_value(&good).unwrap();
    assert_eq!(parsed.a.inner.x, 1);
    assert_eq!(parsed.b.inner.y, "z");
    // Each reference reaches its own Inner: the swapped value breaks both.
    let swapped = json!({ "a": { "inner": { "y": "z" } }, "b": { "inner": { "x": 1 } } });
    assert!(!check.is_valid(&swapped));
    let errors = Both::parse_value(&swapped).unwrap_err();
    let found: BTreeSet<(String, &str)> = errors
        .iter()
        .map(|v| (v.pointer().into_owned(), v.keyword().as_str()))
        .collect();
    assert_eq!(
        found,
        BTreeSet::from([
            ("/a/inner/x".to_owned(), "required"),
            ("/a/inner/y".to_owned(), "additionalProperties"),
            ("/b/inner/y".to_owned(), "required"),
            ("/b/inner/x".to_owned(), "additionalProperties"),
        ])
    );
}

#[test]
fn a_valid_value_is_what_serde_reads() {
    let value = valid_schedule();
    let parsed = Schedule::parse_value(&value).unwrap();
    let text = Schedule::parse_arguments(&value.to_string()).unwrap();
    let window: Window = serde_json::from_value(value["window"].clone()).unwrap();
    assert_eq!(*parsed.window, window);
    assert_eq!(*text.window, window);
    assert_eq!(
        parsed.window.repeat,
        Repeat::Every { minutes: 30 },
        "the tagged enum inside"
    );
    assert_eq!(parsed.window.days, [Day::Mon, Day::Wed]);
    let at: DateTime<Utc> = serde_json::from_value(value["at"].clone()).unwrap();
    assert_eq!(*parsed.at, at);
    assert_eq!(
        parsed.until.map(ViaSchemars::into_inner),
        NaiveDate::from_ymd_opt(2027, 1, 31)
    );
    let tree: Tree = serde_json::from_value(value["tree"].clone()).unwrap();
    assert_eq!(parsed.tree.map(ViaSchemars::into_inner), Some(tree));
    assert_eq!(parsed.more.len(), 1);
}

#[test]
fn an_invalid_value_gives_every_violation_at_its_pointer() {
    let value = json!({
        "title": "backup",
        "window": { "startHour": 24, "label": "", "days": ["Mon", "Sun"], "repeat": { "kind": "Every" }, "extra": 1 },
        "at": "yesterday",
        "until": "2027-02-30",
        "more": [{ "startHour": 1, "label": "ok", "repeat": { "kind": "Never" } }],
        "tree": { "value": 1, "children": [{ "value": "two" }] }
    });
    let errors = Schedule::parse_value(&value).unwrap_err();
    let found: BTreeSet<(String, &str)> = errors
        .iter()
        .map(|v| (v.pointer().into_owned(), v.keyword().as_str()))
        .collect();
    let expected: BTreeSet<(String, &str)> = [
        ("/window/startHour", "maximum"),
        ("/window/label", "minLength"),
        ("/window/days/1", "enum"),
        ("/window/extra", "additionalProperties"),
        ("/window/repeat", "oneOf"),
        ("/at", "format"),
        ("/until", "format"),
        ("/more/0/repeat", "oneOf"),
        ("/tree/children/0/value", "type"),
    ]
    .into_iter()
    .map(|(p, k)| (p.to_owned(), k))
    .collect();
    assert_eq!(found, expected);
    // The same as a standard validator says against the advertised schema.
    let theirs: Found = validator(Schedule::input_schema())
        .iter_errors(&value)
        .map(|e| (e.instance_path().to_string(), e.kind().keyword().to_owned()))
        .collect();
    let ours: Found = errors
        .iter()
        .map(|v| {
            (
                v.instance_location().to_owned(),
                v.keyword().as_str().to_owned(),
            )
        })
        .collect();
    same_violations(&ours, &theirs).unwrap();
    // The nullable `$ref` (an `anyOf` with null): jsonschema says only that, we say why.
    assert!(theirs.contains(&("/tree".to_owned(), "anyOf".to_owned())));
}

/// Whether the typed parser and jsonschema report the same (location, keyword) pairs, but
/// for a failed `anyOf` (a nullable `$ref`), which jsonschema reports as one error at its
/// location where the typed parser reports what failed inside it (as `tests/parity.rs`).
fn same_violations(ours: &Found, theirs: &Found) -> Result<(), String> {
    let inside = |pointer: &str, at: &str| pointer == at || pointer.starts_with(&format!("{at}/"));
    for found in ours {
        let summarized = theirs
            .iter()
            .any(|(at, keyword)| keyword == "anyOf" && inside(&found.0, at));
        if !theirs.contains(found) && !summarized {
            return Err(format!(
                "{found:?} reported only by the typed parser; jsonschema: {theirs:?}"
            ));
        }
    }
    for found in theirs {
        let covered = if found.1 == "anyOf" {
            ours.iter().any(|(at, _)| inside(at, &found.0))
        } else {
            ours.contains(found)
        };
        if !covered {
            return Err(format!(
                "{found:?} reported only by jsonschema; ours: {ours:?}"
            ));
        }
    }
    Ok(())
}

#[test]
fn strict_json_holds_inside() {
    let text = r#"{"title":"t","window":{"startHour":1,"startHour":2,"label":"a","repeat":{"kind":"Once"}},
        "at":"2026-12-01T03:00:00Z","more":[]}"#;
    let errors = Schedule::parse_arguments(text).unwrap_err();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors.violations()[0].keyword(), Keyword::DuplicateKey);
    assert_eq!(errors.violations()[0].pointer(), "/window/startHour");
}

/// A type whose schema says more than its `Deserialize` accepts.
#[derive(Debug, Deserialize)]
struct Loose(#[allow(dead_code)] u32);

impl JsonSchema for Loose {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Loose".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string" })
    }
}

/// A type whose schema refers to another document.
#[derive(Debug, Deserialize)]
struct Remote(#[allow(dead_code)] String);

impl JsonSchema for Remote {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Remote".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "$ref": "https://example.com/schemas/remote.json" })
    }
}

/// A type whose pattern needs a backtracking engine.
#[derive(Debug, Deserialize)]
struct Lookahead(#[allow(dead_code)] String);

impl JsonSchema for Lookahead {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Lookahead".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "pattern": "^(?=.*[0-9]).{8,}$" })
    }
}

/// Odd types.
#[derive(Tool, Debug)]
#[allow(dead_code)]
struct Odd {
    loose: Option<ViaSchemars<Loose>>,
    remote: Option<ViaSchemars<Remote>>,
    lookahead: Option<ViaSchemars<Lookahead>>,
}

#[test]
fn a_schema_the_type_refuses_is_one_violation_at_the_value() {
    let errors = Odd::parse_value(&json!({ "loose": "seven" })).unwrap_err();
    assert_eq!(errors.len(), 1);
    let violation = &errors.violations()[0];
    assert_eq!(violation.pointer(), "/loose");
    assert_eq!(violation.keyword(), Keyword::Other("deserialize"));
    assert!(
        violation.message().contains("disagree"),
        "{}",
        violation.message()
    );
}

#[test]
fn schemas_that_fetch_or_backtrack_check_nothing_and_refuse_every_value() {
    let errors = Odd::parse_value(&json!({ "remote": "x" })).unwrap_err();
    let violation = &errors.violations()[0];
    assert_eq!(
        (violation.pointer().as_ref(), violation.keyword()),
        ("/remote", Keyword::Other("$ref"))
    );
    assert!(
        violation.message().contains("not fetched"),
        "{}",
        violation.message()
    );

    let errors = Odd::parse_value(&json!({ "lookahead": "abcdefgh1" })).unwrap_err();
    let violation = &errors.violations()[0];
    assert_eq!(
        (violation.pointer().as_ref(), violation.keyword()),
        ("/lookahead", Keyword::Other("pattern"))
    );
    assert!(
        violation.message().contains("backtracking"),
        "{}",
        violation.message()
    );
    // Absent, they are not checked at all.
    assert!(Odd::parse_value(&json!({})).is_ok());
    // Providers are not shown a reference they would have to fetch.
    let error = advertise(
        [ToolSpec::new("odd", "", Odd::input_schema())],
        Target::Anthropic,
    )
    .unwrap_err();
    assert!(
        matches!(
            error,
            AdvertiseError::Refused {
                error: LowerError::NonLocalRef { .. },
                ..
            }
        ),
        "{error}"
    );
}

// ---- Parity with jsonschema ------------------------------------------------------------------

/// Values near the `Window` shape: mostly right, with wrong and missing fields of every kind.
fn window_like() -> impl Strategy<Value = Value> {
    let hour = prop_oneof![
        40 => (0u32..24).prop_map(Value::from),
        1 => (24u32..30).prop_map(Value::from),
        1 => Just(json!(-1)),
        1 => Just(json!(2.5)),
        1 => Just(json!("3")),
    ];
    let label = prop_oneof![
        40 => "[a-z]{1,8}".prop_map(Value::from),
        1 => Just(json!("")),
        1 => Just(json!("much too long")),
        1 => Just(json!(null)),
    ];
    let day = prop_oneof![
        40 => prop::sample::select(vec!["Mon", "Tue", "Wed"]),
        1 => prop::sample::select(vec!["Thu", "mon"]),
    ]
    .prop_map(Value::from);
    let days = prop_oneof![
        40 => prop::collection::vec(day, 0..4).prop_map(Value::from),
        1 => Just(json!("Mon")),
    ];
    let repeat = prop_oneof![
        20 => Just(json!({ "kind": "Once" })),
        20 => (0u32..70_000).prop_map(|m| json!({ "kind": "Every", "minutes": m })),
        1 => Just(json!({ "kind": "Every" })),
        1 => Just(json!({ "kind": "Once", "minutes": 5 })),
        1 => Just(json!({ "kind": "Never" })),
        1 => Just(json!("Once")),
    ];
    (
        prop::option::weighted(0.95, hour),
        prop::option::weighted(0.95, label),
        prop::option::weighted(0.7, days),
        prop::option::weighted(0.95, repeat),
        prop::bool::weighted(0.05),
    )
        .prop_map(|(hour, label, days, repeat, extra)| {
            let mut map = serde_json::Map::new();
            for (key, value) in [
                ("startHour", hour),
                ("label", label),
                ("days", days),
                ("repeat", repeat),
            ] {
                if let Some(value) = value {
                    map.insert(key.to_owned(), value);
                }
            }
            if extra {
                map.insert("note".to_owned(), json!(true));
            }
            Value::Object(map)
        })
}

fn tree_like() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        40 => (-5i32..5).prop_map(|v| json!({ "value": v })),
        1 => Just(json!({ "value": "x" })),
        1 => Just(json!({})),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        ((-5i32..5), prop::collection::vec(inner, 0..3))
            .prop_map(|(v, children)| json!({ "value": v, "children": children }))
    })
}

fn schedule_like() -> impl Strategy<Value = Value> {
    let at = prop_oneof![
        20 => prop::sample::select(vec!["2026-12-01T03:00:00Z", "2026-12-01T03:00:00+02:00"]),
        1 => prop::sample::select(vec!["2026-12-01", "soon"]),
    ]
    .prop_map(Value::from);
    let until = prop_oneof![
        20 => Just("2027-01-31"),
        1 => prop::sample::select(vec!["2027-02-30", "31/01/2027"]),
    ]
    .prop_map(Value::from);
    (
        window_like(),
        prop::option::weighted(0.95, at),
        prop::option::of(until),
        prop::collection::vec(window_like(), 0..3),
        prop::option::of(tree_like()),
    )
        .prop_map(|(window, at, until, more, tree)| {
            let mut map = serde_json::Map::new();
            map.insert("title".to_owned(), json!("job"));
            map.insert("window".to_owned(), window);
            if let Some(at) = at {
                map.insert("at".to_owned(), at);
            }
            if let Some(until) = until {
                map.insert("until".to_owned(), until);
            }
            map.insert("more".to_owned(), Value::from(more));
            if let Some(tree) = tree {
                map.insert("tree".to_owned(), tree);
            }
            Value::Object(map)
        })
}

type Found = BTreeSet<(String, String)>;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// The tool accepts exactly what a standard validator accepts against the advertised
    /// schema, reports the same (location, keyword) pairs, and an accepted value is what
    /// serde reads.
    #[test]
    fn accepts_what_jsonschema_accepts(instance in schedule_like()) {
        let check = validator(Schedule::input_schema());
        let theirs: Found = check
            .iter_errors(&instance)
            .map(|e| (e.instance_path().to_string(), e.kind().keyword().to_owned()))
            .collect();
        let ours = Schedule::parse_value(&instance);
        let from_text = Schedule::parse_arguments(&instance.to_string());
        prop_assert_eq!(ours.is_ok(), from_text.is_ok());
        match ours {
            Ok(parsed) => {
                prop_assert!(theirs.is_empty(), "accepted, but jsonschema found {:?} in {}", theirs, instance);
                let window: Window = serde_json::from_value(instance["window"].clone()).unwrap();
                prop_assert_eq!(parsed.window.into_inner(), window);
            }
            Err(errors) => {
                let ours: Found = errors
                    .iter()
                    .map(|v| (v.instance_location().to_owned(), v.keyword().as_str().to_owned()))
                    .collect();
                let same = same_violations(&ours, &theirs);
                prop_assert!(same.is_ok(), "{} on {}", same.unwrap_err(), instance);
            }
        }
    }
}

/// Schedules a job: a whole tool whose contract is its schemars schema.
#[derive(Tool, Deserialize, JsonSchema, Debug, PartialEq)]
#[tool(schemars)]
#[serde(deny_unknown_fields)]
struct ScheduleJob {
    /// The job's name.
    #[schemars(length(min = 1))]
    name: String,
    /// When it may run.
    window: theirs::Window,
    #[serde(default)]
    retries: u8,
}

#[test]
fn a_whole_tool_can_take_its_contract_from_schemars() {
    assert_eq!(ScheduleJob::NAME, "schedule_job");
    assert_eq!(
        ScheduleJob::description(),
        "Schedules a job: a whole tool whose contract is its schemars schema."
    );
    let schema = ScheduleJob::input_schema();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["name"]["minLength"], 1);
    assert!(
        schema["required"]
            .as_array()
            .unwrap()
            .contains(&json!("window"))
    );
    let text = r#"{"name": "backup", "window": {"startHour": 3, "label": "night", "repeat": {"kind": "Once"}}}"#;
    let parsed = ScheduleJob::parse_arguments(text).unwrap();
    assert_eq!(parsed, serde_json::from_str::<ScheduleJob>(text).unwrap());
    let errors = ScheduleJob::parse_arguments(
        r#"{"name": "", "window": {"startHour": 30, "label": "night", "repeat": {"kind": "Once"}}, "x": 1}"#,
    )
    .unwrap_err();
    let pointers: Vec<String> = errors.iter().map(|v| v.pointer().into_owned()).collect();
    assert!(pointers.contains(&"/name".to_owned()), "{errors}");
    assert!(
        pointers.contains(&"/window/startHour".to_owned()),
        "{errors}"
    );
    assert!(pointers.contains(&"/x".to_owned()), "{errors}");
}

/// Plans a job: fields of other crates' types, each `#[tool(schemars)]`, keep their own types.
#[derive(Tool, Debug)]
struct Plan {
    title: String,
    #[tool(schemars)]
    window: Window,
    /// When to start.
    #[tool(schemars)]
    at: Option<DateTime<Utc>>,
    #[tool(schemars)]
    #[serde(default)]
    more: Vec<Window>,
}

#[test]
fn a_schemars_field_keeps_its_own_type() {
    let schema = Plan::input_schema();
    validator(schema);
    // schemars' schema, here in the root `$defs` (`more` refers to it too).
    let window = &schema["properties"]["window"];
    let window = match window["$ref"].as_str() {
        Some(reference) => &schema["$defs"][reference.trim_start_matches("#/$defs/")],
        None => window,
    };
    assert_eq!(window["properties"]["startHour"]["maximum"], 23);
    assert_eq!(schema["properties"]["at"]["format"], "date-time");
    assert_eq!(schema["properties"]["at"]["description"], "When to start.");
    assert_eq!(schema["required"], json!(["title", "window"]));
    let plan = Plan::parse_arguments(
        r#"{"title": "t", "window": {"startHour": 3, "label": "night", "repeat": {"kind": "Once"}}}"#,
    )
    .unwrap();
    let window: Window = plan.window;
    assert_eq!(window.start_hour, 3);
    assert_eq!(plan.at, None);
    assert!(plan.more.is_empty());
    let errors = Plan::parse_arguments(
        r#"{"title": "t", "window": {"startHour": 30, "label": "night", "repeat": {"kind": "Once"}},
            "at": "yesterday", "more": [{"label": ""}]}"#,
    )
    .unwrap_err();
    let pointers: BTreeSet<String> = errors.iter().map(|v| v.pointer().into_owned()).collect();
    assert_eq!(
        pointers,
        BTreeSet::from(
            [
                "/window/startHour",
                "/at",
                "/more/0/label",
                "/more/0/startHour",
                "/more/0/repeat"
            ]
            .map(str::to_owned)
        ),
        "{errors}"
    );
}

#[test]
fn a_schemars_field_decides_as_jsonschema() {
    let law = validator(Plan::input_schema());
    let window = json!({"startHour": 3, "label": "night", "repeat": {"kind": "Once"}});
    for instance in [
        json!({"title": "t", "window": window}),
        json!({"title": "t", "window": window, "at": "2026-12-01T03:00:00Z", "more": [window]}),
        json!({"title": "t", "window": window, "at": null}),
        json!({"title": "t", "window": {"startHour": 24, "label": "n", "repeat": {"kind": "Once"}}}),
        json!({"title": "t", "window": window, "at": "2026-13-01T03:00:00Z"}),
        json!({"title": "t", "window": window, "more": {}}),
        json!({"title": "t"}),
        json!({"title": "t", "window": window, "other": 1}),
    ] {
        let ours = Plan::parse_value(&instance);
        assert_eq!(
            ours.is_ok(),
            law.is_valid(&instance),
            "{instance}: {:?}",
            ours.err().map(|errors| errors.to_string())
        );
    }
}

/// A whole tool's arguments of a type from another crate, which derives only `Deserialize` and
/// `JsonSchema`: a newtype of one `#[tool(schemars)]` field.
#[derive(Tool, Debug)]
struct Reschedule(#[tool(schemars)] Window);

#[test]
fn a_foreign_type_can_be_a_whole_tools_arguments() {
    assert_eq!(Reschedule::NAME, "reschedule");
    let schema = Reschedule::input_schema();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["startHour"]["maximum"], 23);
    let text = r#"{"startHour": 3, "label": "night", "repeat": {"kind": "Every", "minutes": 5}}"#;
    let Reschedule(window) = Reschedule::parse_arguments(text).unwrap();
    assert_eq!(window, serde_json::from_str::<Window>(text).unwrap());
    let errors = Reschedule::parse_arguments(
        r#"{"startHour": 30, "label": "", "repeat": {"kind": "Once"}}"#,
    )
    .unwrap_err();
    let pointers: Vec<String> = errors.iter().map(|v| v.pointer().into_owned()).collect();
    assert_eq!(pointers, ["/startHour", "/label"], "{errors}");
    let law = validator(schema);
    for instance in [
        json!({"startHour": 3, "label": "n", "repeat": {"kind": "Once"}}),
        json!({"startHour": 3, "label": "n", "repeat": {"kind": "Once"}, "x": 1}),
        json!({"startHour": 3, "label": "n"}),
        json!([]),
    ] {
        assert_eq!(
            Reschedule::parse_value(&instance).is_ok(),
            law.is_valid(&instance),
            "{instance}"
        );
    }
}

/// Shouts: a newtype tool over a type whose schema is not an object.
#[derive(Tool, Debug)]
struct Shout(#[tool(schemars)] String);

#[test]
fn a_foreign_type_that_is_not_an_object_is_an_unsound_tool() {
    assert_eq!(
        Shout::contract_errors(),
        ["a tool's arguments are one JSON object, but its type advertises `type` \"string\""]
    );
    assert!(Shout::parse_arguments(r#""hi""#).is_err());
    let mut registry = tool_core::Registry::new();
    let registered = registry.register(tool_core::ToolDef::new(
        |Shout(text): Shout, _cx: &tool_core::Context| async move {
            Ok::<_, tool_core::registry::ToolError>(text)
        },
    ));
    assert!(registered.is_err());
}
