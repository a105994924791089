//! Data-carrying enums lowered to every provider dialect: the four serde representations
//! (internally, externally and adjacently tagged, untagged), each as a tool's root, as a
//! property, as array items and as an `Option` (nullable) property.
//!
//! For every dialect and shape the test checks that
//! (a) the lowered schema obeys the dialect's rules, as `PROVIDERS.md` lists them
//!     ([`violations`]);
//! (b) the loss report names what is lost, with its pointer into the canonical schema, and
//!     is honest: a lowering that reports nothing gives the same verdict as the canonical
//!     schema on every instance;
//! (c) the canonical schema accepts the enum's real values and refuses the others, and the
//!     lowered schema accepts every value the canonical one accepts (for OpenAI strict, once
//!     the model's `null`s for "not given" are filled in; `remove_strict_nulls` takes them
//!     back out).
//!
//! The schemas are the ones `#[derive(Tool)]` writes for
//! `enum Op { Insert { line: u32, text: String }, Delete { line: u32 } }` (plus unit or
//! newtype variants where a representation has them), written out by hand.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};
use tool_core::providers::{LossKind, Target, ToolSpec, advertise, remove_strict_nulls};

const DRAFT: &str = "https://json-schema.org/draft/2020-12/schema";

/// One target per dialect (Chat and Responses share theirs).
const DIALECTS: [Target; 6] = [
    Target::OpenAiChatStrict,
    Target::OpenAiChat,
    Target::AnthropicStrict,
    Target::Anthropic,
    Target::GeminiJsonSchema,
    Target::GeminiOpenApi,
];

// ---- The shapes --------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    Internal,
    External,
    Adjacent,
    Untagged,
}

const SHAPES: [Shape; 4] = [
    Shape::Internal,
    Shape::External,
    Shape::Adjacent,
    Shape::Untagged,
];

fn line() -> Value {
    json!({ "type": "integer", "minimum": 0, "maximum": 4_294_967_295_u64 })
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false })
}

/// The schema of `Op` in `shape`, as a field or array item has it.
fn union(shape: Shape) -> Value {
    let insert = || {
        object(
            json!({ "line": line(), "text": { "type": "string" } }),
            &["line", "text"],
        )
    };
    let delete = || object(json!({ "line": line() }), &["line"]);
    match shape {
        // #[serde(tag = "type")]
        Shape::Internal => json!({
            "description": "One edit.",
            "oneOf": [
                {
                    "type": "object",
                    "description": "Insert a line.",
                    "properties": { "type": { "const": "Insert" }, "line": line(), "text": { "type": "string" } },
                    "required": ["type", "line", "text"],
                    "additionalProperties": false
                },
                {
                    "type": "object",
                    "properties": { "type": { "const": "Delete" }, "line": line() },
                    "required": ["type", "line"],
                    "additionalProperties": false
                }
            ]
        }),
        // serde's default, with two unit variants.
        Shape::External => json!({ "oneOf": [
            { "type": "string", "enum": ["Clear", "Undo"] },
            object(json!({ "Insert": insert() }), &["Insert"]),
            object(json!({ "Delete": delete() }), &["Delete"])
        ] }),
        // #[serde(tag = "t", content = "c")], with a unit variant.
        Shape::Adjacent => json!({ "oneOf": [
            object(json!({ "t": { "const": "Insert" }, "c": insert() }), &["t", "c"]),
            object(json!({ "t": { "const": "Delete" }, "c": delete() }), &["t", "c"]),
            object(json!({ "t": { "const": "Clear" } }), &["t"])
        ] }),
        // #[serde(untagged)], with a newtype variant `Raw(String)`.
        Shape::Untagged => json!({ "anyOf": [insert(), delete(), { "type": "string" }] }),
    }
}

/// The values of `Op` serde writes, and values it refuses.
fn instances(shape: Shape) -> (Vec<Value>, Vec<Value>) {
    match shape {
        Shape::Internal => (
            vec![
                json!({ "type": "Insert", "line": 3, "text": "x" }),
                json!({ "type": "Delete", "line": 0 }),
            ],
            vec![
                json!({ "type": "Delete", "line": 1, "text": "x" }),
                json!({ "type": "Insert", "line": 1 }),
                json!({ "type": "Move", "line": 1 }),
                json!({ "type": "Delete", "line": -1 }),
                json!({ "line": 1 }),
                json!("Insert"),
            ],
        ),
        Shape::External => (
            vec![
                json!({ "Insert": { "line": 3, "text": "x" } }),
                json!({ "Delete": { "line": 0 } }),
                json!("Clear"),
            ],
            vec![
                json!({ "Insert": { "line": 3, "text": "x" }, "Delete": { "line": 0 } }),
                json!({ "Delete": { "line": 1, "text": "x" } }),
                json!({ "Insert": { "line": 1 } }),
                json!({ "Move": { "line": 1 } }),
                json!({}),
                json!("Redo"),
            ],
        ),
        Shape::Adjacent => (
            vec![
                json!({ "t": "Insert", "c": { "line": 3, "text": "x" } }),
                json!({ "t": "Delete", "c": { "line": 0 } }),
                json!({ "t": "Clear" }),
            ],
            vec![
                json!({ "t": "Clear", "c": { "line": 0 } }),
                json!({ "t": "Insert" }),
                json!({ "t": "Delete", "c": { "line": 1, "text": "x" } }),
                json!({ "t": "Insert", "c": { "line": 1 } }),
                json!({ "c": { "line": 1 } }),
            ],
        ),
        Shape::Untagged => (
            vec![
                json!({ "line": 3, "text": "x" }),
                json!({ "line": 0 }),
                json!("raw text"),
            ],
            vec![
                json!({ "line": 1, "extra": true }),
                json!({ "text": "x" }),
                json!({ "line": -1 }),
                json!(7),
            ],
        ),
    }
}

// ---- Where the enum is used --------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq)]
enum Place {
    /// The tool's arguments are the enum.
    Root,
    /// `op: Op`.
    Property,
    /// `ops: Vec<Op>`.
    Items,
    /// `op: Option<Op>`.
    Nullable,
}

const PLACES: [Place; 4] = [Place::Root, Place::Property, Place::Items, Place::Nullable];

impl Place {
    /// The JSON Pointer of the union in the canonical tool schema.
    fn pointer(self) -> &'static str {
        match self {
            Place::Root => "",
            Place::Property => "/properties/op",
            Place::Items => "/properties/ops/items",
            Place::Nullable => "/properties/op/anyOf/0",
        }
    }
}

fn tool_schema(shape: Shape, place: Place) -> Value {
    let union = union(shape);
    let mut root = match place {
        Place::Root => {
            let mut root = union;
            root["type"] = json!("object");
            root
        }
        Place::Property => object(json!({ "op": union }), &["op"]),
        Place::Items => object(
            json!({ "ops": { "type": "array", "items": union } }),
            &["ops"],
        ),
        Place::Nullable => {
            let nullable = json!({ "anyOf": [union, { "type": "null" }] });
            let mut root = object(json!({ "op": nullable }), &[]);
            root.as_object_mut().unwrap().remove("required");
            root
        }
    };
    root["$schema"] = json!(DRAFT);
    root
}

/// Arguments holding `value` where `place` puts the enum.
fn arguments(place: Place, value: &Value) -> Value {
    match place {
        Place::Root => value.clone(),
        Place::Property | Place::Nullable => json!({ "op": value }),
        Place::Items => json!({ "ops": [value] }),
    }
}

/// The valid and invalid arguments for a shape used at a place.
fn argument_sets(shape: Shape, place: Place) -> (Vec<Value>, Vec<Value>) {
    let (valid, invalid) = instances(shape);
    let mut good: Vec<Value> = valid.iter().map(|v| arguments(place, v)).collect();
    let mut bad: Vec<Value> = invalid.iter().map(|v| arguments(place, v)).collect();
    match place {
        // Arguments are always an object: a unit or newtype variant cannot be the root.
        Place::Root => {
            let (objects, others): (Vec<Value>, Vec<Value>) =
                good.into_iter().partition(Value::is_object);
            good = objects;
            bad.extend(others);
        }
        Place::Items => {
            good.push(json!({ "ops": valid }));
            good.push(json!({ "ops": [] }));
            bad.push(json!({ "ops": [valid[0], invalid[0]] }));
        }
        Place::Nullable => {
            good.push(json!({ "op": null }));
            good.push(json!({}));
        }
        Place::Property => bad.push(json!({})),
    }
    (good, bad)
}

// ---- (a) The dialects' rules -------------------------------------------------------------

/// Every subschema of `schema` with its pointer, the root first.
fn subschemas(schema: &Value) -> Vec<(String, &Map<String, Value>)> {
    fn visit<'a>(schema: &'a Value, at: String, out: &mut Vec<(String, &'a Map<String, Value>)>) {
        let Value::Object(map) = schema else { return };
        out.push((at.clone(), map));
        for (key, value) in map {
            match (key.as_str(), value) {
                ("properties" | "$defs" | "patternProperties", Value::Object(children)) => {
                    for (name, child) in children {
                        visit(child, format!("{at}/{key}/{name}"), out);
                    }
                }
                ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(children)) => {
                    for (i, child) in children.iter().enumerate() {
                        visit(child, format!("{at}/{key}/{i}"), out);
                    }
                }
                ("items" | "additionalProperties" | "not", child) => {
                    visit(child, format!("{at}/{key}"), out)
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    visit(schema, String::new(), &mut out);
    out
}

fn types_of(map: &Map<String, Value>) -> Vec<&str> {
    match map.get("type") {
        Some(Value::String(name)) => vec![name.as_str()],
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// What a lowered schema does that the target's dialect refuses (`PROVIDERS.md` §1.3, §2.1,
/// §2.4, §3.1 and the rejections providers have been seen to return), one line each.
fn violations(target: Target, schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    let mut bad = |at: &str, what: String| {
        found.push(format!(
            "{}: {what}",
            if at.is_empty() { "(root)" } else { at }
        ))
    };
    let Some(root) = schema.as_object() else {
        bad("", "the root is not an object schema".into());
        return found;
    };
    let object_type = if target == Target::GeminiOpenApi {
        "OBJECT"
    } else {
        "object"
    };
    if root.get("type") != Some(&json!(object_type)) {
        bad("", format!("the root type is not {object_type:?}"));
    }
    // OpenAI: "schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/
    // 'not' at the top level"; Anthropic: "input_schema does not support oneOf, allOf, or
    // anyOf at the top level"; Gemini's `parameters` lists parameters as root properties.
    let root_refused: &[&str] = match target {
        Target::OpenAiChat
        | Target::OpenAiChatStrict
        | Target::OpenAiResponses
        | Target::OpenAiResponsesStrict => &["anyOf", "oneOf", "allOf", "enum", "const", "not"],
        Target::Anthropic | Target::AnthropicStrict | Target::GeminiOpenApi => {
            &["anyOf", "oneOf", "allOf"]
        }
        _ => &[],
    };
    for keyword in root_refused {
        if root.contains_key(*keyword) {
            bad("", format!("`{keyword}` at the root"));
        }
    }
    for (at, map) in subschemas(schema) {
        let has = |k: &str| map.contains_key(k);
        let is_object = types_of(map).contains(&"object") || has("properties");
        match target {
            Target::OpenAiChatStrict | Target::OpenAiResponsesStrict => {
                for keyword in [
                    "oneOf",
                    "allOf",
                    "not",
                    "if",
                    "then",
                    "else",
                    "dependentRequired",
                    "dependentSchemas",
                    "default",
                    "patternProperties",
                    "propertyNames",
                    "unevaluatedProperties",
                    "minProperties",
                    "maxProperties",
                    "uniqueItems",
                    "contains",
                    "minLength",
                    "maxLength",
                    "$schema",
                ] {
                    if has(keyword) {
                        bad(&at, format!("`{keyword}` is not supported"));
                    }
                }
                if !(has("type") || has("anyOf") || has("enum") || has("const") || has("$ref")) {
                    bad(&at, "no type".into());
                }
                if is_object {
                    if map.get("additionalProperties") != Some(&json!(false)) {
                        bad(&at, "an object without additionalProperties: false".into());
                    }
                    let declared: BTreeSet<&str> = map
                        .get("properties")
                        .and_then(Value::as_object)
                        .map(|p| p.keys().map(String::as_str).collect())
                        .unwrap_or_default();
                    let required: BTreeSet<&str> = map
                        .get("required")
                        .and_then(Value::as_array)
                        .map(|r| r.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    if declared != required || !has("required") {
                        bad(&at, "not every property is required".into());
                    }
                }
            }
            Target::OpenAiChat | Target::OpenAiResponses => {
                // "'oneOf' is not permitted", seen on Responses even without `strict`.
                if has("oneOf") {
                    bad(&at, "`oneOf` is not supported".into());
                }
            }
            Target::AnthropicStrict => {
                for keyword in [
                    "oneOf",
                    "minimum",
                    "maximum",
                    "exclusiveMinimum",
                    "exclusiveMaximum",
                    "multipleOf",
                    "minLength",
                    "maxLength",
                    "maxItems",
                    "uniqueItems",
                    "not",
                    "if",
                    "then",
                    "else",
                    "patternProperties",
                ] {
                    if has(keyword) {
                        bad(&at, format!("`{keyword}` is not supported"));
                    }
                }
                if map
                    .get("minItems")
                    .and_then(Value::as_u64)
                    .is_some_and(|n| n > 1)
                {
                    bad(&at, "minItems above 1".into());
                }
                if is_object && map.get("additionalProperties") != Some(&json!(false)) {
                    bad(&at, "an object without additionalProperties: false".into());
                }
                if let Some(Value::Array(values)) = map.get("enum")
                    && values.iter().any(|v| v.is_object() || v.is_array())
                {
                    bad(&at, "an enum of complex values".into());
                }
            }
            Target::GeminiJsonSchema => {
                const KNOWN: &[&str] = &[
                    "$id",
                    "$defs",
                    "$ref",
                    "$anchor",
                    "type",
                    "format",
                    "title",
                    "description",
                    "enum",
                    "items",
                    "prefixItems",
                    "minItems",
                    "maxItems",
                    "minimum",
                    "maximum",
                    "anyOf",
                    "properties",
                    "additionalProperties",
                    "required",
                    "propertyOrdering",
                ];
                for key in map.keys() {
                    if !KNOWN.contains(&key.as_str()) {
                        bad(&at, format!("`{key}` is not in the documented subset"));
                    }
                }
                if let Some(Value::Array(values)) = map.get("enum")
                    && !values.iter().all(|v| v.is_string() || v.is_number())
                {
                    bad(&at, "an enum value that is not a string or a number".into());
                }
                if has("$ref") && map.keys().any(|k| !k.starts_with('$')) {
                    bad(&at, "a keyword beside $ref".into());
                }
            }
            Target::GeminiOpenApi => {
                const KNOWN: &[&str] = &[
                    "type",
                    "format",
                    "title",
                    "description",
                    "nullable",
                    "enum",
                    "items",
                    "minItems",
                    "maxItems",
                    "properties",
                    "required",
                    "minProperties",
                    "maxProperties",
                    "minLength",
                    "maxLength",
                    "pattern",
                    "minimum",
                    "maximum",
                    "example",
                    "default",
                    "anyOf",
                    "propertyOrdering",
                ];
                for key in map.keys() {
                    if !KNOWN.contains(&key.as_str()) {
                        bad(&at, format!("`{key}` is not in the OpenAPI subset"));
                    }
                }
                const TYPES: &[&str] = &[
                    "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL",
                ];
                match map.get("type") {
                    None => {}
                    Some(Value::String(name)) if TYPES.contains(&name.as_str()) => {}
                    Some(other) => {
                        bad(&at, format!("type {other} is not one of the OpenAPI types"))
                    }
                }
                if let Some(Value::Array(values)) = map.get("enum")
                    && (!values.iter().all(Value::is_string)
                        || map.get("type") != Some(&json!("STRING")))
                {
                    bad(
                        &at,
                        "an enum that is not a list of strings of type STRING".into(),
                    );
                }
                // Vertex: "When using any_of, it must be the only field set".
                if has("anyOf") && map.len() > 1 {
                    bad(&at, "a keyword beside anyOf".into());
                }
                if let Some(Value::Object(properties)) = map.get("properties") {
                    for name in properties.keys() {
                        let mut chars = name.chars();
                        let ok = chars
                            .next()
                            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                            && name.len() <= 64
                            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
                        if !ok {
                            bad(&at, format!("property name {name:?}"));
                        }
                    }
                }
            }
            Target::Anthropic => {}
            other => bad(&at, format!("no rules written for {other}")),
        }
    }
    found
}

// ---- (c) Instances -----------------------------------------------------------------------

/// Gemini's OpenAPI form read back as JSON Schema: lower-case types, `nullable` as a `null`
/// type (or branch), so instances can be checked against it.
fn openapi_as_json_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, value) in map {
                let value = match key.as_str() {
                    "type" => Value::from(value.as_str().unwrap_or_default().to_ascii_lowercase()),
                    "properties" => Value::Object(
                        value
                            .as_object()
                            .into_iter()
                            .flatten()
                            .map(|(k, v)| (k.clone(), openapi_as_json_schema(v)))
                            .collect(),
                    ),
                    "items" => openapi_as_json_schema(value),
                    "anyOf" => Value::Array(
                        value
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(openapi_as_json_schema)
                            .collect(),
                    ),
                    "nullable" | "example" => continue,
                    _ => value.clone(),
                };
                out.insert(key.clone(), value);
            }
            if map.get("nullable") == Some(&json!(true)) {
                return json!({ "anyOf": [Value::Object(out), { "type": "null" }] });
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// `value` as OpenAI strict makes the model send it: every property the lowered schema
/// declares, `null` for those the value leaves out.
fn with_strict_nulls(lowered: &Value, value: &Value) -> Value {
    if let Some(Value::Array(branches)) = lowered.get("anyOf") {
        for branch in branches {
            let filled = with_strict_nulls(branch, value);
            if jsonschema::is_valid(branch, &filled) {
                return filled;
            }
        }
        return value.clone();
    }
    match value {
        Value::Object(fields) => {
            let Some(properties) = lowered.get("properties").and_then(Value::as_object) else {
                return value.clone();
            };
            let mut out = Map::new();
            for (name, schema) in properties {
                out.insert(
                    name.clone(),
                    fields
                        .get(name)
                        .map_or(Value::Null, |field| with_strict_nulls(schema, field)),
                );
            }
            for (name, field) in fields {
                out.entry(name.clone()).or_insert_with(|| field.clone());
            }
            Value::Object(out)
        }
        Value::Array(items) => match lowered.get("items") {
            Some(schema) => Value::Array(
                items
                    .iter()
                    .map(|item| with_strict_nulls(schema, item))
                    .collect(),
            ),
            None => value.clone(),
        },
        _ => value.clone(),
    }
}

fn lower(schema: &Value, target: Target) -> (Value, Vec<(String, String, LossKind)>) {
    let advertised = advertise([ToolSpec::new("edit", "Edit a file.", schema)], target)
        .unwrap_or_else(|error| panic!("{target}: {error}"));
    let tool = &advertised.tools()[0];
    let mut losses: Vec<_> = tool
        .losses()
        .iter()
        .map(|l| (l.pointer().to_owned(), l.keyword().to_owned(), l.kind()))
        .collect();
    losses.sort();
    (tool.schema().clone(), losses)
}

fn is_strict(target: Target) -> bool {
    matches!(
        target,
        Target::OpenAiChatStrict | Target::OpenAiResponsesStrict
    )
}

/// (a), (c) and the honesty half of (b), for every dialect, shape and place.
#[test]
fn every_dialect_takes_every_union_shape_everywhere() {
    let mut checked = 0;
    for shape in SHAPES {
        for place in PLACES {
            let canonical = tool_schema(shape, place);
            let validator = jsonschema::validator_for(&canonical).unwrap();
            let (good, bad) = argument_sets(shape, place);
            for value in &good {
                assert!(
                    validator.is_valid(value),
                    "{shape:?} {place:?}: canonical refuses {value}"
                );
            }
            for value in &bad {
                assert!(
                    !validator.is_valid(value),
                    "{shape:?} {place:?}: canonical accepts {value}"
                );
            }
            for target in DIALECTS {
                let context = format!("{shape:?} at {place:?} for {target}");
                let (lowered, losses) = lower(&canonical, target);
                let broken = violations(target, &lowered);
                assert!(broken.is_empty(), "{context}: {broken:#?}\n{lowered:#}");

                let as_json_schema = if target == Target::GeminiOpenApi {
                    openapi_as_json_schema(&lowered)
                } else {
                    lowered.clone()
                };
                let provider = jsonschema::validator_for(&as_json_schema).unwrap_or_else(|e| {
                    panic!("{context}: the lowered schema does not compile: {e}")
                });
                for value in &good {
                    if is_strict(target) {
                        let sent = with_strict_nulls(&lowered, value);
                        assert!(
                            provider.is_valid(&sent),
                            "{context}: lowered refuses {sent}"
                        );
                        let mut back = sent.clone();
                        remove_strict_nulls(&canonical, &mut back);
                        assert!(
                            validator.is_valid(&back),
                            "{context}: {sent} does not come back valid: {back}"
                        );
                    } else {
                        assert!(
                            provider.is_valid(value),
                            "{context}: lowered refuses {value}\n{lowered:#}"
                        );
                    }
                }
                // Nothing reported lost: the provider's verdict is the contract's.
                if losses.is_empty() && !is_strict(target) {
                    for value in &bad {
                        assert!(
                            !provider.is_valid(value),
                            "{context}: no loss reported, yet {value} passes"
                        );
                    }
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 4 * 4 * 6);
}

// ---- (b) What each lowering loses ----------------------------------------------------------

fn losses_of(shape: Shape, place: Place, target: Target) -> Vec<(String, String, LossKind)> {
    lower(&tool_schema(shape, place), target).1
}

fn l(pointer: impl Into<String>, keyword: &str, kind: LossKind) -> (String, String, LossKind) {
    (pointer.into(), keyword.to_owned(), kind)
}

fn sorted(mut losses: Vec<(String, String, LossKind)>) -> Vec<(String, String, LossKind)> {
    losses.sort();
    losses
}

/// The pointers of the object branches of `shape`'s union that hold `line`, relative to the
/// union, with the property path to `line` in each.
fn line_pointers(shape: Shape) -> Vec<String> {
    match shape {
        Shape::Internal => vec![
            "/oneOf/0/properties/line".into(),
            "/oneOf/1/properties/line".into(),
        ],
        Shape::External => vec![
            "/oneOf/1/properties/Insert/properties/line".into(),
            "/oneOf/2/properties/Delete/properties/line".into(),
        ],
        Shape::Adjacent => vec![
            "/oneOf/0/properties/c/properties/line".into(),
            "/oneOf/1/properties/c/properties/line".into(),
        ],
        Shape::Untagged => vec![
            "/anyOf/0/properties/line".into(),
            "/anyOf/1/properties/line".into(),
        ],
    }
}

/// The closed objects of `shape`'s union, relative to the union.
fn closed_objects(shape: Shape) -> Vec<String> {
    match shape {
        Shape::Internal => vec!["/oneOf/0".into(), "/oneOf/1".into()],
        Shape::External => vec![
            "/oneOf/1".into(),
            "/oneOf/1/properties/Insert".into(),
            "/oneOf/2".into(),
            "/oneOf/2/properties/Delete".into(),
        ],
        Shape::Adjacent => vec![
            "/oneOf/0".into(),
            "/oneOf/0/properties/c".into(),
            "/oneOf/1".into(),
            "/oneOf/1/properties/c".into(),
            "/oneOf/2".into(),
        ],
        Shape::Untagged => vec!["/anyOf/0".into(), "/anyOf/1".into()],
    }
}

/// Nested unions: a tagged enum's branches exclude each other, so `oneOf` sent as `anyOf`
/// loses nothing; what is lost is only what the dialect loses anywhere (Anthropic strict's
/// numeric bounds, Gemini `parameters`' closed objects), each at its own pointer.
#[test]
fn nested_unions_lose_only_what_the_dialect_loses_anywhere() {
    use LossKind::*;
    for shape in SHAPES {
        for place in [Place::Property, Place::Items, Place::Nullable] {
            let at = place.pointer();
            for target in DIALECTS {
                let expected: Vec<_> = match target {
                    Target::AnthropicStrict => line_pointers(shape)
                        .into_iter()
                        .flat_map(|p| {
                            [
                                l(format!("{at}{p}"), "minimum", Unenforced),
                                l(format!("{at}{p}"), "maximum", Unenforced),
                            ]
                        })
                        .collect(),
                    Target::GeminiOpenApi => {
                        let mut out: Vec<_> = closed_objects(shape)
                            .into_iter()
                            .map(|p| l(format!("{at}{p}"), "additionalProperties", Unenforced))
                            .collect();
                        out.push(l("", "additionalProperties", Unenforced));
                        if shape == Shape::Internal {
                            // The enum's description moves into the branches beside `anyOf`;
                            // the branch with its own keeps its own.
                            out.push(l(at, "description", Hidden));
                        }
                        out
                    }
                    _ => Vec::new(),
                };
                assert_eq!(
                    losses_of(shape, place, target),
                    sorted(expected),
                    "{shape:?} at {place:?} for {target}"
                );
            }
        }
    }
}

/// A root union is merged into one object for every dialect but Gemini's JSON Schema form:
/// the loss names the union at the root and each branch whose own required properties are
/// no longer required.
#[test]
fn root_unions_are_merged_and_the_report_says_what_goes() {
    use LossKind::*;
    for shape in SHAPES {
        for target in DIALECTS {
            let context = format!("{shape:?} at the root for {target}");
            let losses = losses_of(shape, Place::Root, target);
            if target == Target::GeminiJsonSchema {
                // Kept as `anyOf`: tagged branches exclude each other, so nothing is lost.
                assert_eq!(losses, [], "{context}");
                continue;
            }
            // An assertion removed is "unenforced" where the provider constrains decoding,
            // "hidden" where the schema is only a hint.
            let dropped = if matches!(target, Target::OpenAiChat | Target::Anthropic) {
                Hidden
            } else {
                Unenforced
            };
            let (keyword, branches_losing_required): (&str, &[&str]) = match shape {
                // `text` is required in Insert only.
                Shape::Internal => ("oneOf", &["/oneOf/0"]),
                // Each object branch requires its own variant's key.
                Shape::External => ("oneOf", &["/oneOf/1", "/oneOf/2"]),
                // `c` is required except in the unit variant.
                Shape::Adjacent => ("oneOf", &["/oneOf/0", "/oneOf/1"]),
                Shape::Untagged => ("anyOf", &["/anyOf/0"]),
            };
            let mut expected = vec![l("", keyword, dropped)];
            for branch in branches_losing_required {
                expected.push(l(*branch, "required", dropped));
            }
            if shape == Shape::Internal {
                expected.push(l("/oneOf/0", "description", Hidden));
            }
            // Bounds found inside the merged branches point into the branch they came from.
            if target == Target::AnthropicStrict {
                let first = &line_pointers(shape)[0];
                expected.push(l(first.clone(), "minimum", Unenforced));
                expected.push(l(first.clone(), "maximum", Unenforced));
                if shape == Shape::Adjacent || shape == Shape::External {
                    // The variant objects differ between branches: each is walked in its own.
                    let second = &line_pointers(shape)[1];
                    expected.push(l(second.clone(), "minimum", Unenforced));
                    expected.push(l(second.clone(), "maximum", Unenforced));
                }
            }
            if target == Target::GeminiOpenApi {
                let nested: &[&str] = match shape {
                    Shape::External => {
                        &["/oneOf/1/properties/Insert", "/oneOf/2/properties/Delete"]
                    }
                    Shape::Adjacent => &["/oneOf/0/properties/c", "/oneOf/1/properties/c"],
                    _ => &[],
                };
                for p in nested {
                    expected.push(l(*p, "additionalProperties", Unenforced));
                }
                expected.push(l("", "additionalProperties", Unenforced));
            }
            assert_eq!(losses, sorted(expected), "{context}");
        }
    }
}

/// The merged root for an internally tagged enum, as each dialect receives it.
#[test]
fn a_root_tagged_enum_becomes_one_object_with_the_tags_as_an_enum() {
    let canonical = tool_schema(Shape::Internal, Place::Root);
    for target in [
        Target::OpenAiChat,
        Target::Anthropic,
        Target::AnthropicStrict,
    ] {
        let (lowered, _) = lower(&canonical, target);
        let properties = &lowered["properties"];
        assert_eq!(
            properties["type"]["enum"],
            json!(["Insert", "Delete"]),
            "{target}"
        );
        assert!(properties["text"].is_object(), "{target}");
        assert_eq!(lowered["required"], json!(["type", "line"]), "{target}");
        assert_eq!(lowered["additionalProperties"], false, "{target}");
        assert!(lowered.get("oneOf").is_none() && lowered.get("anyOf").is_none());
    }
    // OpenAI strict: every property required, `text` nullable.
    let (strict, _) = lower(&canonical, Target::OpenAiChatStrict);
    assert_eq!(
        strict["properties"]["type"],
        json!({ "type": "string", "enum": ["Insert", "Delete"] })
    );
    assert_eq!(
        strict["properties"]["text"]["type"],
        json!(["string", "null"])
    );
    assert_eq!(strict["required"], json!(["type", "line", "text"]));
    // The model's Delete comes back as the contract's Delete.
    let mut sent = json!({ "type": "Delete", "line": 4, "text": null });
    assert_eq!(remove_strict_nulls(&canonical, &mut sent), ["/text"]);
    assert_eq!(sent, json!({ "type": "Delete", "line": 4 }));
    // Gemini's `parameters` gets the parameters as properties (a union would leave none).
    let gemini = advertise(
        [ToolSpec::new("edit", "", &canonical)],
        Target::GeminiOpenApi,
    )
    .unwrap();
    let parameters = &gemini.to_json()[0]["functionDeclarations"][0]["parameters"];
    assert_eq!(
        parameters["properties"]["type"],
        json!({ "type": "STRING", "enum": ["Insert", "Delete"] })
    );
    // The merged object is a relaxation: it admits what the contract refuses, as reported.
    let (anthropic, _) = lower(&canonical, Target::Anthropic);
    let mixed = json!({ "type": "Delete", "line": 1, "text": "x" });
    assert!(jsonschema::is_valid(&anthropic, &mixed));
    assert!(!jsonschema::is_valid(&canonical, &mixed));
}

/// Where branches may overlap, `oneOf` sent as `anyOf` is a loss, named at the union.
#[test]
fn an_overlapping_one_of_sent_as_any_of_is_reported() {
    let schema = json!({
        "type": "object",
        "properties": { "id": { "oneOf": [{ "type": "integer" }, { "type": "number", "minimum": 10 }] } },
        "required": ["id"],
        "additionalProperties": false
    });
    for target in DIALECTS {
        let losses = losses_of_schema(&schema, target);
        let expected = if target == Target::Anthropic {
            // Anthropic's default sends `oneOf` as it is.
            Vec::new()
        } else {
            let kind = if target == Target::OpenAiChat {
                LossKind::Hidden
            } else {
                LossKind::Unenforced
            };
            vec![l("/properties/id", "oneOf", kind)]
        };
        let ones: Vec<_> = losses
            .into_iter()
            .filter(|(_, k, _)| k == "oneOf")
            .collect();
        assert_eq!(ones, expected, "{target}");
    }
}

fn losses_of_schema(schema: &Value, target: Target) -> Vec<(String, String, LossKind)> {
    lower(schema, target).1
}

/// OpenAI refuses `enum`, `const` and `not` at the root too; they go, reported.
#[test]
fn openai_root_keywords_are_removed_and_reported() {
    let schema = json!({
        "type": "object",
        "properties": { "a": { "type": "string" }, "b": { "type": "string" } },
        "not": { "required": ["a", "b"] }
    });
    for target in [Target::OpenAiChat, Target::OpenAiChatStrict] {
        let (lowered, losses) = lower(&schema, target);
        assert!(lowered.get("not").is_none(), "{target}");
        assert!(
            losses.iter().any(|(p, k, _)| p.is_empty() && k == "not"),
            "{target}: {losses:?}"
        );
        assert!(violations(target, &lowered).is_empty());
    }
    let (anthropic, _) = lower(&schema, Target::Anthropic);
    assert!(anthropic.get("not").is_some());
}

/// The rule checks can fail: the canonical schemas break each dialect's rules.
#[test]
fn the_rule_checks_catch_canonical_unions() {
    let root = tool_schema(Shape::Internal, Place::Root);
    let nested = tool_schema(Shape::Internal, Place::Nullable);
    for target in DIALECTS {
        let found = violations(target, &root);
        match target {
            Target::GeminiJsonSchema => {
                assert!(
                    found.iter().any(|v| v.contains("`oneOf` is not in")),
                    "{target}: {found:?}"
                )
            }
            _ => assert!(
                found.iter().any(|v| v.contains("at the root")),
                "{target}: {found:?}"
            ),
        }
    }
    assert!(
        violations(Target::OpenAiChatStrict, &nested)
            .iter()
            .any(|v| v.contains("`oneOf`"))
    );
    assert!(
        violations(Target::AnthropicStrict, &nested)
            .iter()
            .any(|v| v.contains("`maximum`"))
    );
    assert!(
        violations(Target::GeminiOpenApi, &nested)
            .iter()
            .any(|v| v.contains("`const`"))
    );
    let beside = json!({ "type": "OBJECT", "properties": { "x": { "anyOf": [{ "type": "STRING" }], "description": "d" } } });
    assert_eq!(
        violations(Target::GeminiOpenApi, &beside),
        ["/properties/x: a keyword beside anyOf"]
    );
}

/// A root union from an untrusted MCP server can be wide: merging it stays linear.
#[test]
fn a_wide_root_union_is_merged_in_linear_time() {
    let branches: Vec<Value> = (0..20_000)
        .map(|i| {
            json!({ "type": "object", "properties": { "kind": { "const": format!("k{i}") }, "n": { "type": "integer" } },
                    "required": ["kind", "n"], "additionalProperties": false })
        })
        .collect();
    let schema = json!({ "type": "object", "oneOf": branches });
    let started = std::time::Instant::now();
    let (lowered, losses) = lower(&schema, Target::Anthropic);
    let elapsed = started.elapsed();
    assert_eq!(
        lowered["properties"]["kind"]["enum"]
            .as_array()
            .map(Vec::len),
        Some(20_000)
    );
    assert_eq!(lowered["required"], json!(["kind", "n"]));
    assert_eq!(losses, [l("", "oneOf", LossKind::Hidden)]);
    // A quadratic merge takes minutes here; a linear one well under a second.
    assert!(elapsed < std::time::Duration::from_secs(20), "{elapsed:?}");
}
