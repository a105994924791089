//! One schema object lowered keyword by keyword: each kept, dropped (an assertion), hidden (an
//! annotation) or rewritten as the dialect says; its types checked, inferred or spelled out;
//! `enum` and `const`. Object and array keywords go to [`objects`], Gemini's last rewrites to
//! [`gemini`], and every subschema back to the [`Walk`].

use serde_json::{Map, Value, json};

use super::context::{Report, Walk, child, invalid, json_kind};
use super::{gemini, objects, unions};
use crate::providers::dialect::{Action, Dialect};
use crate::providers::loss::{LossKind, LowerError};

/// The types JSON Schema knows.
const TYPES: [&str; 7] = [
    "string", "number", "integer", "boolean", "array", "object", "null",
];

/// Lowers one schema object. `partial` is for keywords written beside a `$ref`: they are
/// not a schema of their own, so no type is inferred for them.
pub(super) fn schema_object(
    w: &mut impl Walk,
    map: &Map<String, Value>,
    pointer: &str,
    partial: bool,
) -> Result<Value, LowerError> {
    let d = w.dialect();
    let mut out = Map::new();
    let mut types = types(map, pointer)?;
    if types.is_none() && !partial && d.needs_types() {
        types = infer_type(w.report(), map, pointer);
    }
    let has = |t: &str| types.as_ref().is_some_and(|ts| ts.iter().any(|x| x == t));
    let object_keywords = [
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
    ];
    let is_object =
        has("object") || (types.is_none() && object_keywords.iter().any(|k| map.contains_key(*k)));
    let is_array = has("array")
        || (types.is_none()
            && ["items", "prefixItems"]
                .iter()
                .any(|k| map.contains_key(*k)));

    for (key, value) in map {
        let at = || child(pointer, key);
        match key.as_str() {
            "type"
            | "properties"
            | "required"
            | "additionalProperties"
            | "patternProperties"
            | "items"
            | "prefixItems"
            | "additionalItems"
            | "enum"
            | "const"
            | "$defs"
            | "definitions"
            | "$ref" => {}
            "description" => drop(out.insert(key.clone(), value.clone())),
            "anyOf" | "oneOf" => {
                let Value::Array(branches) = value else {
                    return Err(invalid(&at(), format!("{key} must be an array")));
                };
                let mut lowered = Vec::with_capacity(branches.len());
                for (i, branch) in branches.iter().enumerate() {
                    lowered.push(w.walk(branch, &child(&at(), &i.to_string()))?);
                }
                let name = if key == "oneOf" && !d.keeps_one_of() {
                    if !unions::exclusive(w.root(), branches) {
                        w.report().dropped(
                            pointer,
                            "oneOf",
                            Some("sent as anyOf: more than one branch may match"),
                        );
                    }
                    "anyOf"
                } else {
                    key.as_str()
                };
                if out.contains_key(name) {
                    // anyOf and oneOf together: both must hold, which one list cannot say.
                    w.report().dropped(pointer, key, Some("beside an anyOf"));
                } else {
                    out.insert(name.to_owned(), Value::Array(lowered));
                }
            }
            "allOf" => {
                let Value::Array(members) = value else {
                    return Err(invalid(&at(), "allOf must be an array"));
                };
                let mut lowered = Vec::with_capacity(members.len());
                for (i, member) in members.iter().enumerate() {
                    lowered.push(w.walk(member, &child(&at(), &i.to_string()))?);
                }
                out.insert(key.clone(), Value::Array(lowered));
            }
            "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "contentSchema" => {
                if d.constrained() {
                    w.report().dropped(pointer, key, None);
                } else {
                    let lowered = w.walk(value, &at())?;
                    out.insert(key.clone(), lowered);
                }
            }
            "dependentSchemas" | "dependencies" => {
                if d.constrained() {
                    w.report().dropped(pointer, key, None);
                } else {
                    let mut lowered = Map::new();
                    if let Value::Object(entries) = value {
                        for (name, entry) in entries {
                            let entry = match entry {
                                Value::Object(_) | Value::Bool(_) => {
                                    w.walk(entry, &child(&at(), name))?
                                }
                                other => other.clone(),
                            };
                            lowered.insert(name.clone(), entry);
                        }
                    }
                    out.insert(key.clone(), Value::Object(lowered));
                }
            }
            "format" => match value.as_str() {
                Some(format) if d.keeps_format(format) => {
                    drop(out.insert(key.clone(), value.clone()))
                }
                _ => w
                    .report()
                    .dropped(pointer, "format", Some("this format is not supported")),
            },
            "pattern" => match value.as_str() {
                Some(pattern) if d.keeps_pattern(pattern) => {
                    out.insert(key.clone(), value.clone());
                }
                _ => w.report().dropped(pointer, "pattern", None),
            },
            "minItems" if d == Dialect::AnthropicStrict => match value.as_u64() {
                Some(0 | 1) => drop(out.insert(key.clone(), value.clone())),
                Some(_) => {
                    out.insert(key.clone(), Value::from(1));
                    w.report().dropped(
                        pointer,
                        "minItems",
                        Some("only 0 or 1 is supported; sent as 1"),
                    );
                }
                None => w.report().dropped(pointer, "minItems", None),
            },
            "examples" if d == Dialect::GeminiOpenApi => {
                if let Some(first) = value.as_array().and_then(|e| e.first()) {
                    out.insert("example".to_owned(), first.clone());
                }
            }
            "exclusiveMinimum" | "exclusiveMaximum" if value.is_boolean() => {
                // Draft 4: a flag on minimum/maximum.
                let bound = if key == "exclusiveMinimum" {
                    "minimum"
                } else {
                    "maximum"
                };
                if value == &Value::Bool(true)
                    && let Some(limit) = map.get(bound)
                {
                    if d.action(key) == Action::Keep {
                        out.insert(key.clone(), limit.clone());
                    } else {
                        w.report().dropped(pointer, key, None);
                    }
                }
            }
            _ => match d.action(key) {
                Action::Keep => drop(out.insert(key.clone(), value.clone())),
                Action::Drop => w.report().dropped(pointer, key, None),
                Action::Hide => w
                    .report()
                    .record(pointer, key.clone(), LossKind::Hidden, None),
                Action::Silent => {}
            },
        }
    }
    // Draft 4 bounds made exclusive above replace the inclusive ones.
    for (flag, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        if map.get(flag) == Some(&Value::Bool(true)) && out.contains_key(flag) {
            out.remove(bound);
        }
    }

    enum_and_const(w.report(), map, pointer, &mut out)?;
    if is_object {
        objects::object(w, map, pointer, &mut out, partial)?;
    }
    if is_array {
        objects::array(w, map, pointer, &mut out, partial)?;
    }
    if types.is_none() && matches!(d, Dialect::OpenAiStrict | Dialect::AnthropicStrict) {
        // An enum or const says its own type; strict decoders want it spelled out.
        types = literal_types(&out);
    }
    if let Some(types) = types {
        out.insert(
            "type".to_owned(),
            if types.len() == 1 {
                Value::from(types[0].clone())
            } else {
                Value::from(types)
            },
        );
    } else if !partial
        && d.needs_types()
        && !["anyOf", "enum", "const", "$ref", "allOf"]
            .iter()
            .any(|k| out.contains_key(*k))
    {
        w.report().narrowed(
            pointer,
            "type",
            "any value: only strings, numbers, booleans and null can be sent",
        );
        out.insert(
            "type".to_owned(),
            json!(["string", "number", "boolean", "null"]),
        );
    }
    if d == Dialect::GeminiOpenApi {
        gemini::openapi_types(&mut out);
    }
    if d.wants_any_of_alone() {
        gemini::any_of_alone(w.report(), pointer, &mut out);
    }
    if d == Dialect::GeminiJson {
        gemini::json_null_enum(&mut out);
    }
    Ok(Value::Object(out))
}

/// The declared types, checked.
fn types(map: &Map<String, Value>, pointer: &str) -> Result<Option<Vec<String>>, LowerError> {
    let at = || child(pointer, "type");
    let check = |name: &str| {
        if TYPES.contains(&name) {
            Ok(name.to_owned())
        } else {
            Err(invalid(
                &at(),
                format!("{name:?} is not a JSON Schema type"),
            ))
        }
    };
    match map.get("type") {
        None => Ok(None),
        Some(Value::String(name)) => Ok(Some(vec![check(name)?])),
        Some(Value::Array(names)) => {
            let mut out = Vec::with_capacity(names.len());
            for name in names {
                let Value::String(name) = name else {
                    return Err(invalid(&at(), "type names must be strings"));
                };
                let name = check(name)?;
                if !out.contains(&name) {
                    out.push(name);
                }
            }
            if out.is_empty() {
                return Err(invalid(&at(), "an empty type list admits nothing"));
            }
            Ok(Some(out))
        }
        Some(other) => Err(invalid(
            &at(),
            format!(
                "type must be a string or an array, found {}",
                json_kind(other)
            ),
        )),
    }
}

/// A type for an untyped schema whose keywords say what it is meant to be.
fn infer_type(report: &mut Report, map: &Map<String, Value>, pointer: &str) -> Option<Vec<String>> {
    let any = |keys: &[&str]| keys.iter().any(|k| map.contains_key(*k));
    let inferred = if any(&[
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
    ]) {
        "object"
    } else if any(&["items", "prefixItems", "minItems", "maxItems"]) {
        "array"
    } else if any(&["minLength", "maxLength", "pattern", "format"]) {
        "string"
    } else if any(&[
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    ]) {
        "number"
    } else {
        return None;
    };
    report.narrowed(pointer, "type", "no type: inferred from the other keywords");
    Some(vec![inferred.to_owned()])
}

fn enum_and_const(
    report: &mut Report,
    map: &Map<String, Value>,
    pointer: &str,
    out: &mut Map<String, Value>,
) -> Result<(), LowerError> {
    let d = report.dialect();
    if let Some(values) = map.get("enum") {
        let Value::Array(values) = values else {
            return Err(invalid(&child(pointer, "enum"), "enum must be an array"));
        };
        let scalar = |v: &Value| !matches!(v, Value::Array(_) | Value::Object(_));
        let keep = match d {
            Dialect::AnthropicStrict => values.iter().all(scalar),
            Dialect::GeminiJson => values
                .iter()
                .all(|v| v.is_string() || v.is_number() || v.is_null()),
            Dialect::GeminiOpenApi => values.iter().all(|v| v.is_string() || v.is_null()),
            _ => true,
        };
        if keep {
            out.insert("enum".to_owned(), Value::Array(values.clone()));
        } else {
            report.dropped(
                pointer,
                "enum",
                Some("these value types are not supported in an enum"),
            );
        }
    }
    if let Some(value) = map.get("const") {
        match d {
            Dialect::GeminiJson if value.is_string() || value.is_number() => {
                out.insert("enum".to_owned(), json!([value]));
            }
            Dialect::GeminiOpenApi if value.is_string() => {
                out.insert("enum".to_owned(), json!([value]));
            }
            Dialect::GeminiJson | Dialect::GeminiOpenApi => {
                report.dropped(pointer, "const", None);
            }
            _ => drop(out.insert("const".to_owned(), value.clone())),
        }
    }
    Ok(())
}

/// The JSON types of an `enum`'s or `const`'s values, when they are all scalars.
fn literal_types(out: &Map<String, Value>) -> Option<Vec<String>> {
    let values: Vec<&Value> = match (out.get("enum"), out.get("const")) {
        (Some(Value::Array(values)), _) => values.iter().collect(),
        (None, Some(value)) => vec![value],
        _ => return None,
    };
    let mut types: Vec<String> = Vec::new();
    for value in values {
        let name = match value {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) | Value::Object(_) => return None,
        };
        if !types.iter().any(|t| t == name) {
            types.push(name.to_owned());
        }
    }
    if types.iter().any(|t| t == "number") {
        types.retain(|t| t != "integer");
    }
    (!types.is_empty()).then_some(types)
}
