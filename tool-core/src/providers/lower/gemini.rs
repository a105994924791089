//! Gemini's quirks, applied to one lowered schema object: the OpenAPI form's upper-case types
//! and `nullable` (`parameters`), its `anyOf` that must stand alone, its rule for property
//! names, and a `null` in an enum (`parametersJsonSchema`, whose enums take strings and
//! numbers only).

use serde_json::{Map, Value, json};

use super::context::Report;
use crate::providers::loss::LossKind;

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

/// Vertex refuses an `anyOf` with other keywords beside it ("When using any_of, it must be the
/// only field set"): each other keyword moves into every branch, which says the same (`X` and
/// any of `A`, `B` is any of `X and A`, `X and B`). A branch with its own, different value
/// keeps its own: an assertion beside the `anyOf` is then not enforced there, a description
/// not shown with that branch.
pub(super) fn any_of_alone(report: &mut Report, pointer: &str, out: &mut Map<String, Value>) {
    if out.len() < 2 {
        return;
    }
    let Some(Value::Array(mut branches)) = out.remove("anyOf") else {
        return;
    };
    for (key, value) in std::mem::take(out) {
        let mut kept_own = false;
        for branch in &mut branches {
            kept_own |= !push_into(branch, &key, &value, 0);
        }
        if !kept_own {
            continue;
        }
        match key.as_str() {
            "description" | "title" | "example" | "default" => report.record(
                pointer,
                key,
                LossKind::Hidden,
                Some("beside an anyOf, which Gemini wants alone: not on branches with their own"),
            ),
            _ => report.dropped(
                pointer,
                &key,
                Some("beside an anyOf, which Gemini wants alone: a branch has its own"),
            ),
        }
    }
    out.insert("anyOf".to_owned(), Value::Array(branches));
}

/// Sets `key` in a lowered branch (in each of its own branches, if it is an `anyOf`); `false`
/// where the branch already had another value for it.
fn push_into(branch: &mut Value, key: &str, value: &Value, depth: usize) -> bool {
    let Value::Object(map) = branch else {
        return false;
    };
    if let Some(Value::Array(inner)) = map.get_mut("anyOf")
        && depth < 8
    {
        let mut all = true;
        for branch in inner {
            all &= push_into(branch, key, value, depth + 1);
        }
        return all;
    }
    match map.get(key) {
        None => {
            map.insert(key.to_owned(), value.clone());
            true
        }
        Some(own) => own == value,
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
