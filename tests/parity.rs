//! The parity law, tested: for every JSON value, `parse_arguments` accepts it exactly when the
//! `jsonschema` crate (Draft 2020-12, formats asserted) accepts it against `input_schema()`,
//! and both report violations at the same places with the same keywords, except inside a failed
//! `anyOf` or `oneOf` (a union, a nullable recursive type), which `jsonschema` reports as one
//! error at its location where the typed parser reports what failed inside it (see `check`).
//!
//! Instances are generated from the advertised schema itself (valid ones), then mutated
//! (wrong types, boundary numbers, missing and unknown fields), plus arbitrary JSON.
//!
//! By default each tool type gets 10,000 cases (3,000 valid, 6,000 mutated, 1,000 arbitrary),
//! which take about a minute. `PARITY_CASES=N` runs `N` cases per tool type in the same
//! proportions; the long mode is a million:
//!
//! ```sh
//! PARITY_CASES=1000000 cargo test --release -p tests --test parity
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};

use examples::{CreateInvoice, SearchFlights};
use proptest::prelude::*;
use proptest::sample::Index;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tool_core::{Argument, Tool};

/// Every integer width, floats, maps, a recursive type and serde's renames and defaults.
#[derive(Tool, Deserialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Widths {
    a_u8: u8,
    a_u16: u16,
    a_u32: u32,
    a_u64: u64,
    a_usize: usize,
    a_i8: i8,
    a_i16: i16,
    a_i32: i32,
    a_i64: i64,
    a_isize: isize,
    #[tool(range(min = -10, max = 10))]
    small: i32,
    #[tool(range(exclusive_min = -1.5, exclusive_max = 2.5))]
    ratio: f32,
    /// Numbers that round to 0 or 1 as an `f32` must be refused by both.
    #[tool(range(exclusive_min = 0, exclusive_max = 1))]
    factor: f32,
    /// 0.1 is not an `f32`: the field gets the nearest one.
    #[tool(range(max = 0.1))]
    tenth: f32,
    big: f32,
    real: f64,
    flag: bool,
    #[tool(length(min = 1, max = 3))]
    list: Vec<i8>,
    counts: HashMap<String, u16>,
    node: Option<Box<Node>>,
    #[serde(rename = "type")]
    kind: Option<Kind>,
    #[serde(default)]
    #[tool(length(max = 4), pattern = "^[a-z]*$")]
    note: String,
    #[serde(skip)]
    internal: u32,
}

/// A linked list, to exercise `$defs` and `$ref`.
#[derive(Argument, Deserialize, Debug, PartialEq)]
struct Node {
    value: i16,
    next: Option<Box<Node>>,
}

/// A unit-variant enum.
#[derive(Argument, Deserialize, Debug, PartialEq)]
#[serde(rename_all = "SCREAMING-KEBAB-CASE")]
enum Kind {
    FirstKind,
    Second,
}

/// Data-carrying enums in serde's four representations, as fields, in arrays and nullable.
#[derive(Tool, Deserialize, Debug, PartialEq)]
struct Unions {
    ops: Vec<Op>,
    shapes: Vec<Shape>,
    event: Option<Event>,
    #[tool(length(max = 3))]
    ids: Vec<Id>,
}

/// Internally tagged.
#[derive(Argument, Deserialize, Debug, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Op {
    Insert {
        #[tool(range(min = 1, max = 1000))]
        line: u32,
        #[tool(length(max = 5))]
        text: String,
    },
    Delete {
        line: u16,
        count: Option<u8>,
    },
    Wrap(Kind2),
    Clear,
}

/// A struct held by an internally tagged newtype variant.
#[derive(Argument, Deserialize, Debug, PartialEq)]
struct Kind2 {
    width: u8,
}

/// Externally tagged.
#[derive(Argument, Deserialize, Debug, PartialEq)]
enum Shape {
    Dot,
    Circle(f32),
    Rect { w: u8, h: u8 },
    Nested(Box<Shape>),
}

/// Adjacently tagged.
#[derive(Argument, Deserialize, Debug, PartialEq)]
#[serde(tag = "t", content = "c")]
enum Event {
    Ping,
    Text(#[allow(dead_code)] String),
    Move { x: i8, y: i8 },
}

/// Untagged.
#[derive(Argument, Deserialize, Debug, PartialEq)]
#[serde(untagged)]
enum Id {
    Number(u16),
    Name(String),
    Pair { a: bool },
    Nothing,
}

/// Untagged unions nested in untagged unions, recursively, with integer and float variants.
#[derive(Tool, Deserialize, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
struct Nested {
    amount: Amount,
    chain: Chain,
}

/// A count before a ratio: `2.0` is the ratio, as serde reads it.
#[derive(Argument, Deserialize, Debug, PartialEq)]
#[serde(untagged)]
enum Amount {
    Count(u8),
    Ratio(f64),
}

/// Two variants that read the same member.
#[derive(Argument, Deserialize, Debug, PartialEq)]
#[serde(untagged, deny_unknown_fields)]
enum Chain {
    Strict { next: Box<Chain>, flag: bool },
    Loose { next: Box<Chain> },
    Many { items: Vec<Chain> },
    End(u8),
    Wide(f64),
}

/// An internally tagged enum as a tool's root.
#[derive(Tool, Deserialize, Debug, PartialEq)]
#[serde(tag = "method")]
enum Pay {
    /// By card.
    Card {
        #[tool(length(min = 4, max = 4))]
        last4: String,
        amount: u32,
    },
    /// By transfer.
    Transfer { iban: String, amount: u32 },
    /// Nothing to pay.
    Free,
}

/// Newtypes, item constraints and defaults.
#[derive(Tool, Deserialize, Debug, PartialEq)]
struct Newtypes {
    to: Vec<Email>,
    cc: Option<Email>,
    #[tool(length(max = 3), inner(length(min = 1, max = 4), pattern = "^[a-z]+$"))]
    tags: Vec<String>,
    #[tool(inner(range(min = -5, max = 5)))]
    scores: BTreeMap<String, i8>,
    #[tool(inner(length(max = 2), inner(range(exclusive_max = 9.5))))]
    grid: Option<Vec<Vec<f64>>>,
    #[serde(default = "three")]
    page: Page,
    #[serde(default)]
    #[tool(range(max = 9))]
    retries: u8,
}

fn three() -> Page {
    Page { number: 3 }
}

/// An address.
#[derive(Argument, Deserialize, Debug, PartialEq)]
struct Email(#[tool(pattern = "^[a-z]+@[a-z]+$", length(max = 12))] String);

/// A page number, transparent.
#[derive(Argument, Deserialize, Debug, PartialEq)]
#[serde(transparent)]
struct Page {
    #[tool(range(min = 1, max = 50))]
    number: u16,
}

/// A struct flattened into a tool.
#[derive(Tool, Deserialize, Debug, PartialEq)]
struct Flattened {
    #[tool(length(max = 4))]
    query: String,
    #[serde(flatten)]
    paging: Paging,
}

/// Shared fields.
#[derive(Argument, Deserialize, Debug, PartialEq)]
struct Paging {
    #[serde(default)]
    #[tool(range(max = 50))]
    per_page: u8,
    cursor: Option<String>,
    kind: Kind,
}

fn validator_for<T: Tool>() -> jsonschema::Validator {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(T::input_schema())
        .expect("the advertised schema compiles")
}

type Found = BTreeSet<(String, String)>;

/// Checks the law on one instance; returns the parsed value when it was accepted.
fn check<T: Tool + PartialEq + std::fmt::Debug>(
    validator: &jsonschema::Validator,
    instance: &Value,
) -> Result<Option<T>, TestCaseError> {
    let text = serde_json::to_string(instance).expect("serializable");
    let ours = T::parse_arguments(&text);
    let theirs: Found = validator
        .iter_errors(instance)
        .map(|error| {
            (
                error.instance_path().to_string(),
                error.kind().keyword().to_owned(),
            )
        })
        .collect();
    prop_assert_eq!(
        ours.is_ok(),
        theirs.is_empty(),
        "accept/reject differ on {}: ours {:?}, jsonschema {:?}",
        text,
        ours.as_ref().err().map(ToString::to_string),
        theirs
    );
    // The two entry points agree exactly.
    let from_value = T::parse_value(instance);
    prop_assert_eq!(
        &from_value,
        &ours,
        "text and value entry points differ on {}",
        text
    );
    match ours {
        Ok(parsed) => Ok(Some(parsed)),
        Err(errors) => {
            let ours: Found = errors
                .iter()
                .map(|v| {
                    (
                        v.instance_location().to_owned(),
                        v.keyword().as_str().to_owned(),
                    )
                })
                .collect();
            // jsonschema summarizes a failed `anyOf` (used for a nullable `$ref`) as one error
            // at its location; the typed parser reports what failed inside it.
            let summarized = |pointer: &str| {
                theirs.iter().any(|(at, keyword)| {
                    (keyword == "anyOf" || keyword == "oneOf")
                        && (pointer == at || pointer.starts_with(&format!("{at}/")))
                })
            };
            for found in &ours {
                prop_assert!(
                    theirs.contains(found) || summarized(&found.0),
                    "{:?} reported only by the typed parser on {}; jsonschema: {:?}",
                    found,
                    text,
                    theirs
                );
            }
            for found in &theirs {
                let covered = if found.1.as_str() == "anyOf" || found.1.as_str() == "oneOf" {
                    ours.iter()
                        .any(|(at, _)| at == &found.0 || at.starts_with(&format!("{}/", found.0)))
                } else {
                    ours.contains(found)
                };
                prop_assert!(
                    covered,
                    "{:?} reported only by jsonschema on {}; ours: {:?}",
                    found,
                    text,
                    ours
                );
            }
            Ok(None)
        }
    }
}

// ---- instances generated from a schema ----

fn resolve<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let pointer = reference.trim_start_matches('#');
            root.pointer(pointer).expect("a resolvable $ref")
        }
        None => schema,
    }
}

fn integer_bound(schema: &Value, keyword: &str) -> Option<i128> {
    let value = schema.get(keyword)?;
    value
        .as_u64()
        .map(i128::from)
        .or_else(|| value.as_i64().map(i128::from))
        .or_else(|| value.as_f64().map(|f| f as i128))
}

fn integer_value(v: i128) -> Value {
    if v >= 0 {
        Value::from(u64::try_from(v).expect("in range"))
    } else {
        Value::from(i64::try_from(v).expect("in range"))
    }
}

fn valid(schema: &Value, root: &Value, depth: u32) -> BoxedStrategy<Value> {
    let schema = resolve(schema, root);
    if let Some(value) = schema.get("const") {
        return Just(value.clone()).boxed();
    }
    if let Some(alternatives) = schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array)
    {
        if depth > 3 && alternatives.iter().any(|a| a == &json!({"type": "null"})) {
            return Just(Value::Null).boxed();
        }
        // Deep down, only the branches that do not recurse.
        let finite: Vec<&Value> = alternatives
            .iter()
            .filter(|a| depth <= 3 || !a.to_string().contains("$ref"))
            .collect();
        let chosen = if finite.is_empty() {
            alternatives.iter().take(1).collect()
        } else {
            finite
        };
        let options: Vec<_> = chosen
            .into_iter()
            .map(|a| valid(a, root, depth + 1))
            .collect();
        return proptest::strategy::Union::new(options).boxed();
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return proptest::sample::select(values.clone()).boxed();
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(name) => vec![name.as_str()],
        Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    let nullable = types.contains(&"null");
    let main = types
        .iter()
        .copied()
        .find(|t| *t != "null")
        .unwrap_or("null");
    let inner = match main {
        "boolean" => any::<bool>().prop_map(Value::Bool).boxed(),
        "integer" => {
            let mut lo = integer_bound(schema, "minimum").unwrap_or(-1_000_000);
            let mut hi = integer_bound(schema, "maximum").unwrap_or(1_000_000);
            if let Some(min) = integer_bound(schema, "exclusiveMinimum") {
                lo = lo.max(min + 1);
            }
            if let Some(max) = integer_bound(schema, "exclusiveMaximum") {
                hi = hi.min(max - 1);
            }
            prop_oneof![
                1 => proptest::sample::select(vec![lo, hi, lo.max(0).min(hi)]),
                3 => lo..=hi,
            ]
            .prop_map(integer_value)
            .boxed()
        }
        "number" => {
            let bound = |k: &str| schema.get(k).and_then(Value::as_f64);
            let mut lo = bound("minimum").unwrap_or(-1e9);
            let mut hi = bound("maximum").unwrap_or(1e9);
            if let Some(min) = bound("exclusiveMinimum") {
                lo = lo.max(min.next_up());
            }
            if let Some(max) = bound("exclusiveMaximum") {
                hi = hi.min(max.next_down());
            }
            prop_oneof![
                1 => proptest::sample::select(vec![lo, hi]),
                3 => lo..=hi,
            ]
            .prop_map(Value::from)
            .boxed()
        }
        "string" => {
            let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0);
            let max = schema
                .get("maxLength")
                .and_then(Value::as_u64)
                .unwrap_or(min + 12);
            let regex = match schema.get("pattern").and_then(Value::as_str) {
                Some(pattern) => pattern
                    .trim_start_matches('^')
                    .trim_end_matches('$')
                    .replace(r"\d", "[0-9]")
                    // Short repetitions, so that length bounds rarely throw a string away.
                    .replace('+', "{1,4}")
                    .replace('*', "{0,4}"),
                None => format!("[a-zA-Z0-9 _é€😀\"\\\\]{{{min},{max}}}"),
            };
            proptest::string::string_regex(&regex)
                .expect("a generator regex")
                .prop_filter("length within bounds", move |s| {
                    let n = s.chars().count() as u64;
                    n >= min && n <= max
                })
                .prop_map(Value::String)
                .boxed()
        }
        "array" => {
            let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
            let max = schema
                .get("maxItems")
                .and_then(Value::as_u64)
                .map_or(min + 3, |max| max as usize);
            let items = valid(&schema["items"], root, depth + 1);
            proptest::collection::vec(items, min..=max)
                .prop_map(Value::Array)
                .boxed()
        }
        "object" => object(schema, root, depth),
        _ => Just(Value::Null).boxed(),
    };
    if nullable {
        if depth > 3 {
            Just(Value::Null).boxed()
        } else {
            prop_oneof![1 => Just(Value::Null), 3 => inner].boxed()
        }
    } else {
        inner
    }
}

fn object(schema: &Value, root: &Value, depth: u32) -> BoxedStrategy<Value> {
    let required: BTreeSet<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut members: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            let name = name.clone();
            let value = valid(property, root, depth + 1);
            if required.contains(name.as_str()) {
                members.push(value.prop_map(move |v| Some((name.clone(), v))).boxed());
            } else {
                members
                    .push(proptest::option::of(value.prop_map(move |v| (name.clone(), v))).boxed());
            }
        }
    }
    let extra = match schema.get("additionalProperties") {
        Some(Value::Object(values)) => {
            let values = Value::Object(values.clone());
            proptest::collection::btree_map("[a-z~/]{0,5}", valid(&values, root, depth + 1), 0..3)
                .boxed()
        }
        _ => Just(BTreeMap::new()).boxed(),
    };
    (members, extra)
        .prop_map(|(members, extra)| {
            let mut map: Map<String, Value> = extra.into_iter().collect();
            map.extend(members.into_iter().flatten());
            Value::Object(map)
        })
        .boxed()
}

/// Values that sit on the edges of the JSON types and the Rust ranges.
fn interesting() -> impl Strategy<Value = Value> {
    prop_oneof![
        proptest::sample::select(vec![
            Value::Null,
            json!(true),
            json!(0),
            json!(-1),
            json!(1),
            json!(1.5),
            json!(-0.0),
            json!(1.0),
            json!(100.0),
            json!(127),
            json!(128),
            json!(255),
            json!(256),
            json!(-129),
            json!(65535),
            json!(65536),
            json!(2147483647),
            json!(2147483648_u64),
            json!(-2147483649_i64),
            json!(4294967295_u64),
            json!(4294967296_u64),
            json!(i64::MIN),
            json!(i64::MAX),
            json!(u64::MAX),
            json!(18446744073709551616.0),
            json!(3.5e38),
            json!(1e-46),
            json!(7.006492321624085e-46),
            json!(0.99999999),
            json!(0.9999999701976776),
            json!(0.1),
            json!(0.09999999776482582),
            json!(16777217),
            json!(1152921573326323713_u64),
            json!(-1152921573326323713_i64),
            json!(1e300),
            json!(-1e300),
            json!(""),
            json!("x"),
            json!("USD"),
            json!("ABC"),
            json!("abc"),
            json!("2024-01-01"),
            json!("FIRST-KIND"),
            json!([]),
            json!([1, "a"]),
            json!({}),
            json!({"value": 1}),
        ]),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "[A-Za-z0-9]{0,8}".prop_map(Value::String),
        f32_edges(),
    ]
}

/// Numbers where rounding to `f32` crosses a bound: a few `f32` steps from one, and the
/// midpoints between neighbours, where ties go to the even one.
fn f32_edges() -> impl Strategy<Value = Value> {
    (
        proptest::sample::select(vec![0.0f32, 1.0, 0.1, -1.5, 2.5, 16_777_216.0]),
        -3i32..=3,
        0u8..4,
    )
        .prop_map(|(anchor, steps, nudge)| {
            let mut y = anchor;
            for _ in 0..steps.unsigned_abs() {
                y = if steps < 0 {
                    y.next_down()
                } else {
                    y.next_up()
                };
            }
            let midpoint = (f64::from(y) + f64::from(y.next_up())) / 2.0;
            Value::from(match nudge {
                0 => f64::from(y),
                1 => midpoint,
                2 => midpoint.next_up(),
                _ => midpoint.next_down(),
            })
        })
}

fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, member) in map {
                let escaped = key.replace('~', "~0").replace('/', "~1");
                pointers(member, format!("{at}/{escaped}"), out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                pointers(item, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

fn mutate(mut value: Value, mutations: Vec<(Index, u8, Value)>) -> Value {
    for (index, kind, replacement) in mutations {
        let mut all = Vec::new();
        pointers(&value, String::new(), &mut all);
        let target = index.get(&all).clone();
        let Some(node) = value.pointer_mut(&target) else {
            continue;
        };
        match (kind, node) {
            (1, Value::Object(map)) if !map.is_empty() => {
                let key = map.keys().nth(index.index(map.len())).cloned();
                if let Some(key) = key {
                    map.remove(&key);
                }
            }
            (2, Value::Object(map)) => {
                map.insert("unexpected".to_owned(), replacement);
            }
            (3, Value::Array(items)) => items.push(replacement),
            (_, node) => *node = replacement,
        }
    }
    value
}

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "[a-z]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("[a-zA-Z]{1,8}", inner, 0..6)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

fn valid_instances<T: Tool>() -> BoxedStrategy<Value> {
    let root = T::input_schema().clone();
    valid(&root, &root, 0)
}

fn mutated_instances<T: Tool>() -> impl Strategy<Value = Value> {
    (
        valid_instances::<T>(),
        proptest::collection::vec((any::<Index>(), 0..4u8, interesting()), 1..4),
    )
        .prop_map(|(value, mutations)| mutate(value, mutations))
}

/// `tenths` of the cases per tool type (`PARITY_CASES`, else 10,000), with room for the
/// generated strings that a filter throws away in proportion.
fn config(tenths: u32) -> ProptestConfig {
    let total = match std::env::var("PARITY_CASES") {
        Ok(text) => text
            .parse::<u32>()
            .unwrap_or_else(|_| panic!("PARITY_CASES must be a number of cases, not {text:?}")),
        Err(_) => 10_000,
    };
    let cases = (total / 10).saturating_mul(tenths).max(1);
    let defaults = ProptestConfig::default();
    ProptestConfig {
        cases,
        max_local_rejects: defaults.max_local_rejects.max(cases.saturating_mul(16)),
        max_global_rejects: defaults.max_global_rejects.max(cases.saturating_mul(16)),
        ..defaults
    }
}

macro_rules! parity_suite {
    ($module:ident, $ty:ty, |$parsed:ident, $instance:ident| $compare:block) => {
        mod $module {
            use super::*;

            fn law() -> &'static jsonschema::Validator {
                static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> =
                    std::sync::OnceLock::new();
                VALIDATOR.get_or_init(validator_for::<$ty>)
            }

            #[allow(unused_variables)]
            fn agree($parsed: &$ty, $instance: &Value) -> Result<(), TestCaseError> $compare

            proptest! {
                #![proptest_config(config(3))]
                #[test]
                fn accepts_every_valid_instance(instance in valid_instances::<$ty>()) {
                    let parsed = check::<$ty>(law(), &instance)?;
                    prop_assert!(parsed.is_some(), "a generated valid instance was refused: {}", instance);
                    agree(parsed.as_ref().expect("accepted"), &instance)?;
                }
            }

            proptest! {
                #![proptest_config(config(6))]
                #[test]
                fn agrees_on_mutated_instances(instance in mutated_instances::<$ty>()) {
                    if let Some(parsed) = check::<$ty>(law(), &instance)? {
                        agree(&parsed, &instance)?;
                    }
                }
            }

            proptest! {
                #![proptest_config(config(1))]
                #[test]
                fn agrees_on_arbitrary_json(instance in arbitrary_json()) {
                    check::<$ty>(law(), &instance)?;
                }
            }
        }
    };
}

parity_suite!(create_invoice, CreateInvoice, |parsed, instance| {
    prop_assert_eq!(Some(parsed.amount), instance["amount"].as_f64());
    prop_assert_eq!(
        Some(parsed.customer_id.as_str()),
        instance["customerId"].as_str()
    );
    Ok(())
});

parity_suite!(search_flights, SearchFlights, |parsed, instance| {
    prop_assert_eq!(
        parsed.passengers.len(),
        instance["passengers"].as_array().map_or(0, Vec::len)
    );
    // `limit` may arrive as `10` or `10.0`: compare the numbers.
    prop_assert_eq!(Some(f64::from(parsed.limit)), instance["limit"].as_f64());
    prop_assert_eq!(
        parsed.tags.len(),
        instance
            .get("tags")
            .and_then(Value::as_object)
            .map_or(0, Map::len)
    );
    Ok(())
});

parity_suite!(widths, Widths, |parsed, instance| {
    // The declared bounds hold on the values the fields receive.
    prop_assert!(
        parsed.factor > 0.0 && parsed.factor < 1.0,
        "factor {}",
        parsed.factor
    );
    prop_assert!(f64::from(parsed.tenth) <= 0.1, "tenth {}", parsed.tenth);
    prop_assert!(
        parsed.ratio > -1.5 && parsed.ratio < 2.5,
        "ratio {}",
        parsed.ratio
    );
    // Where serde's own derive accepts the instance, both produce the same value (serde
    // refuses a few that JSON Schema allows, such as `1.0` for an integer).
    if let Ok(by_serde) = serde_json::from_value::<Widths>(instance.clone()) {
        prop_assert_eq!(parsed, &by_serde);
    }
    Ok(())
});

parity_suite!(unions, Unions, |parsed, instance| {
    if let Ok(by_serde) = serde_json::from_value::<Unions>(instance.clone()) {
        prop_assert_eq!(parsed, &by_serde);
    }
    prop_assert_eq!(
        parsed.ops.len(),
        instance["ops"].as_array().map_or(0, Vec::len)
    );
    Ok(())
});

parity_suite!(pay, Pay, |parsed, instance| {
    if let Ok(by_serde) = serde_json::from_value::<Pay>(instance.clone()) {
        prop_assert_eq!(parsed, &by_serde);
    }
    Ok(())
});

parity_suite!(newtypes, Newtypes, |parsed, instance| {
    if let Ok(by_serde) = serde_json::from_value::<Newtypes>(instance.clone()) {
        prop_assert_eq!(parsed, &by_serde);
    }
    if instance.get("page").is_none() {
        prop_assert_eq!(parsed.page.number, 3);
    }
    Ok(())
});

parity_suite!(flattened, Flattened, |parsed, instance| {
    if let Ok(by_serde) = serde_json::from_value::<Flattened>(instance.clone()) {
        prop_assert_eq!(parsed, &by_serde);
    }
    Ok(())
});

parity_suite!(nested, Nested, |parsed, instance| {
    if let Ok(by_serde) = serde_json::from_value::<Nested>(instance.clone()) {
        prop_assert_eq!(parsed, &by_serde);
    }
    Ok(())
});
