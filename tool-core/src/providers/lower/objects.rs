//! Objects and arrays of one schema object: `properties` and `required` (under OpenAI strict
//! every property required, an optional one made nullable), objects closed where the dialect
//! wants them closed, `patternProperties`, `additionalProperties`; `items`, `prefixItems` and
//! Draft 7 tuples, positions folded into one `items` where the dialect has no `prefixItems`.

use serde_json::{Map, Value, json};

use super::context::{Walk, child, invalid};
use super::gemini;
use crate::contract::schema::{NullableRule, nullable};
use crate::providers::dialect::Dialect;
use crate::providers::loss::LowerError;

pub(super) fn object(
    w: &mut impl Walk,
    map: &Map<String, Value>,
    pointer: &str,
    out: &mut Map<String, Value>,
    partial: bool,
) -> Result<(), LowerError> {
    let d = w.dialect();
    let required: Vec<String> = match map.get("required") {
        None => Vec::new(),
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        Some(_) => {
            return Err(invalid(
                &child(pointer, "required"),
                "required must be an array",
            ));
        }
    };
    let mut properties = Map::new();
    if let Some(declared) = map.get("properties") {
        let Value::Object(declared) = declared else {
            return Err(invalid(
                &child(pointer, "properties"),
                "properties must be an object",
            ));
        };
        let at = child(pointer, "properties");
        for (name, schema) in declared {
            if d == Dialect::GeminiOpenApi && !gemini::property_name(name) {
                return Err(LowerError::PropertyName {
                    pointer: pointer.to_owned(),
                    name: name.clone(),
                });
            }
            let property_pointer = child(&at, name);
            if schema == &Value::Bool(false) && d.closes_objects() {
                // Forbidden by name: a closed object without it says the same.
                continue;
            }
            let mut lowered = w.walk(schema, &property_pointer)?;
            if d == Dialect::OpenAiStrict && !required.contains(name) {
                lowered = nullable(lowered, NullableRule::Lowered);
            }
            properties.insert(name.clone(), lowered);
        }
    }
    if d == Dialect::OpenAiStrict {
        for name in &required {
            if !properties.contains_key(name) {
                // Required but not declared: any value, as far as this object says.
                let lowered = w.walk(
                    &Value::Bool(true),
                    &child(&child(pointer, "properties"), name),
                )?;
                properties.insert(name.clone(), lowered);
            }
        }
    }
    let strict_object = !partial && d == Dialect::OpenAiStrict;
    let required_out: Vec<Value> = if d == Dialect::OpenAiStrict {
        properties.keys().cloned().map(Value::from).collect()
    } else {
        required.iter().cloned().map(Value::from).collect()
    };
    if map.contains_key("properties") || !properties.is_empty() || (!partial && d.closes_objects())
    {
        out.insert("properties".to_owned(), Value::Object(properties));
    }
    // OpenAI strict wants `required` on every object, even an empty one.
    if !required_out.is_empty() || strict_object {
        out.insert("required".to_owned(), Value::Array(required_out));
    }

    let additional = map.get("additionalProperties");
    if let Some(patterns) = map.get("patternProperties") {
        match d {
            Dialect::OpenAi | Dialect::Anthropic => {
                let mut lowered = Map::new();
                if let Value::Object(patterns) = patterns {
                    let at = child(pointer, "patternProperties");
                    for (pattern, schema) in patterns {
                        lowered.insert(pattern.clone(), w.walk(schema, &child(&at, pattern))?);
                    }
                }
                out.insert("patternProperties".to_owned(), Value::Object(lowered));
            }
            _ if d.closes_objects() => {
                w.report().narrowed(
                    pointer,
                    "patternProperties",
                    "only the declared properties can be sent",
                );
            }
            _ => w.report().dropped(pointer, "patternProperties", None),
        }
    }
    if partial && additional.is_none() {
        return Ok(());
    }
    if d.closes_objects() {
        match additional {
            Some(Value::Bool(false)) => {}
            _ if map.contains_key("patternProperties") => {}
            _ => w.report().narrowed(
                pointer,
                "additionalProperties",
                "closed: only the declared properties can be sent",
            ),
        }
        out.insert("additionalProperties".to_owned(), Value::Bool(false));
        return Ok(());
    }
    match (d, additional) {
        (_, None) => {}
        (Dialect::GeminiOpenApi, Some(Value::Bool(true))) => {}
        (Dialect::GeminiOpenApi, Some(_)) => {
            w.report().dropped(pointer, "additionalProperties", None)
        }
        (_, Some(Value::Bool(flag))) => {
            drop(out.insert("additionalProperties".to_owned(), Value::Bool(*flag)))
        }
        (_, Some(schema)) => {
            let lowered = w.walk(schema, &child(pointer, "additionalProperties"))?;
            out.insert("additionalProperties".to_owned(), lowered);
        }
    }
    Ok(())
}

pub(super) fn array(
    w: &mut impl Walk,
    map: &Map<String, Value>,
    pointer: &str,
    out: &mut Map<String, Value>,
    partial: bool,
) -> Result<(), LowerError> {
    let d = w.dialect();
    // Draft 7 tuples: `items` as an array, `additionalItems` for the rest.
    let (prefix, rest, rest_key) = match (map.get("prefixItems"), map.get("items")) {
        (Some(prefix), items) => (Some(prefix), items, "items"),
        (None, Some(Value::Array(_))) => (
            map.get("items"),
            map.get("additionalItems"),
            "additionalItems",
        ),
        (None, items) => (None, items, "items"),
    };
    let mut prefix_lowered = Vec::new();
    if let Some(prefix) = prefix {
        let Value::Array(prefix) = prefix else {
            return Err(invalid(
                &child(pointer, "prefixItems"),
                "prefixItems must be an array",
            ));
        };
        let key = if map.contains_key("prefixItems") {
            "prefixItems"
        } else {
            "items"
        };
        for (i, schema) in prefix.iter().enumerate() {
            prefix_lowered.push(w.walk(schema, &child(&child(pointer, key), &i.to_string()))?);
        }
    }
    let rest_lowered = match rest {
        None => None,
        Some(Value::Bool(false)) if !prefix_lowered.is_empty() => Some(Value::Bool(false)),
        Some(schema) => Some(w.walk(schema, &child(pointer, rest_key))?),
    };
    if prefix_lowered.is_empty() {
        match rest_lowered {
            Some(items) => drop(out.insert("items".to_owned(), items)),
            None if !partial && d.needs_types() => {
                let items = w.walk(&Value::Bool(true), &child(pointer, "items"))?;
                out.insert("items".to_owned(), items);
            }
            None => {}
        }
        return Ok(());
    }
    if d.keeps_prefix_items() {
        out.insert("prefixItems".to_owned(), Value::Array(prefix_lowered));
        if let Some(items) = rest_lowered {
            out.insert("items".to_owned(), items);
        }
        return Ok(());
    }
    // One schema for every position: any of the positional ones (or the rest).
    w.report()
        .dropped(pointer, "prefixItems", Some("positions are not enforced"));
    let mut branches = prefix_lowered;
    match rest_lowered {
        Some(Value::Bool(false)) | None => {}
        Some(items) => branches.push(items),
    }
    let mut unique: Vec<Value> = Vec::with_capacity(branches.len());
    for branch in branches {
        if !unique.contains(&branch) {
            unique.push(branch);
        }
    }
    let items = if unique.len() == 1 {
        unique.pop().unwrap_or(Value::Bool(true))
    } else {
        json!({ "anyOf": unique })
    };
    out.insert("items".to_owned(), items);
    Ok(())
}
