//! Gemini's quirks, applied to one lowered schema object: the OpenAPI form's upper-case types
//! and `nullable` (`parameters`), its rule for property names, and a `null` in an enum
//! (`parametersJsonSchema`, whose enums take strings and numbers only).

use serde_json::{Map, Value, json};

/// Gemini's OpenAPI form: upper-case types, `nullable` instead of a `null` type.
pub(super) fn openapi_types(out: &mut Map<String, Value>) {
    let upper = |name: &str| Value::from(name.to_ascii_uppercase());
    match out.get("type").cloned() {
        Some(Value::String(name)) => {
            out.insert("type".to_owned(), upper(&name));
        }
        Some(Value::Array(names)) => {
            let null = names.iter().any(|n| n == "null");
            let rest: Vec<&str> = names
                .iter()
                .filter_map(Value::as_str)
                .filter(|n| *n != "null")
                .collect();
            match rest.as_slice() {
                [] => drop(out.insert("type".to_owned(), upper("null"))),
                [one] => drop(out.insert("type".to_owned(), upper(one))),
                many => {
                    out.remove("type");
                    let branches: Vec<Value> =
                        many.iter().map(|t| json!({ "type": upper(t) })).collect();
                    out.insert("anyOf".to_owned(), Value::Array(branches));
                }
            }
            if null {
                out.insert("nullable".to_owned(), Value::Bool(true));
            }
        }
        _ => {}
    }
    if let Some(Value::Array(values)) = out.get_mut("enum")
        && values.contains(&Value::Null)
    {
        values.retain(|v| !v.is_null());
        out.insert("nullable".to_owned(), Value::Bool(true));
    }
    if out.contains_key("enum") && !out.contains_key("type") {
        out.insert("type".to_owned(), Value::from("STRING"));
    }
    // anyOf [X, null] is X made nullable.
    if let Some(Value::Array(branches)) = out.get("anyOf") {
        let is_null = |b: &Value| {
            b.get("type").is_some_and(|t| t == "NULL")
                && b.as_object().is_some_and(|m| m.len() == 1)
        };
        if branches.iter().any(is_null) {
            let rest: Vec<Value> = branches.iter().filter(|b| !is_null(b)).cloned().collect();
            out.insert("nullable".to_owned(), Value::Bool(true));
            if let [single] = rest.as_slice()
                && let Value::Object(single) = single
            {
                out.remove("anyOf");
                for (key, value) in single {
                    out.entry(key.clone()).or_insert_with(|| value.clone());
                }
            } else {
                out.insert("anyOf".to_owned(), Value::Array(rest));
            }
        }
    }
}

/// Gemini's `parametersJsonSchema` enum takes strings and numbers only: a `null` member
/// becomes a null branch.
pub(super) fn json_null_enum(out: &mut Map<String, Value>) {
    let Some(Value::Array(values)) = out.get_mut("enum") else {
        return;
    };
    if !values.contains(&Value::Null) {
        return;
    }
    values.retain(|v| !v.is_null());
    match out.get_mut("type") {
        Some(Value::Array(types)) => {
            types.retain(|t| t != "null");
            if types.len() == 1 {
                let single = types[0].clone();
                out.insert("type".to_owned(), single);
            }
        }
        Some(Value::String(t)) if t == "null" => {
            out.remove("type");
        }
        _ => {}
    }
    let description = out.remove("description");
    let inner = Value::Object(std::mem::take(out));
    out.insert("anyOf".to_owned(), json!([inner, { "type": "null" }]));
    if let Some(description) = description {
        out.insert("description".to_owned(), description);
    }
}

/// Whether Gemini's `parameters` form accepts a property name
/// (`^[A-Za-z_][A-Za-z0-9_]{0,63}$`).
pub(super) fn property_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
