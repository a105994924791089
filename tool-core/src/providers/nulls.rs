//! The way back from OpenAI strict's nullable optionals.
//!
//! OpenAI strict requires every property, so lowering turns an optional property into a
//! required one that may be `null`, and the model sends `null` for "not given". The
//! canonical contract decides what that means: a `null` the canonical schema accepts at that
//! place stays (an `Option<T>` field), and a `null` for an optional property whose canonical
//! schema does not accept `null` is removed, as if the model had left the property out. A
//! call the canonical schema accepts is thus never refused because of the lowering, and
//! nothing the canonical schema refuses is let through: the result is validated as usual.

use serde_json::{Map, Value};

use super::call::{CallArguments, ToolCall};

/// Removes the `null`s OpenAI strict put in for optional properties whose canonical schema
/// does not admit `null`; returns the JSON Pointer of each property removed.
///
/// ```
/// use serde_json::json;
/// use tool_core::providers::remove_strict_nulls;
///
/// let schema = json!({
///     "type": "object",
///     "properties": {
///         "q": { "type": "string" },
///         "limit": { "type": "integer" },
///         "cursor": { "type": ["string", "null"] }
///     },
///     "required": ["q"]
/// });
/// let mut arguments = json!({ "q": "rust", "limit": null, "cursor": null });
/// assert_eq!(remove_strict_nulls(&schema, &mut arguments), ["/limit"]);
/// assert_eq!(arguments, json!({ "q": "rust", "cursor": null }));
/// ```
pub fn remove_strict_nulls(schema: &Value, arguments: &mut Value) -> Vec<String> {
    let mut removed = Vec::new();
    strip(
        schema,
        schema,
        arguments,
        &mut String::new(),
        &mut removed,
        0,
    );
    removed
}

impl ToolCall {
    /// [`remove_strict_nulls`] on this call's arguments, against its tool's canonical input
    /// schema. Text arguments are read with the runtime's strict parser first; text that does
    /// not pass it (duplicate keys, bad syntax) is left for the runtime to refuse, and text
    /// with nothing to remove is left byte for byte.
    pub fn remove_strict_nulls(&mut self, schema: &Value) -> Vec<String> {
        match &mut self.arguments {
            CallArguments::Json(value) => remove_strict_nulls(schema, value),
            CallArguments::Text(text) => {
                let Ok(mut value) = crate::contract::validate::parse_str::<Value>(text) else {
                    return Vec::new();
                };
                let removed = remove_strict_nulls(schema, &mut value);
                if !removed.is_empty() {
                    self.arguments = CallArguments::Json(value);
                }
                removed
            }
        }
    }
}

/// The deepest schema nesting followed while stripping nulls: a bound on the recursion, in
/// schema levels (deeper parts are left as they are).
const MAX_DEPTH: usize = 256;

fn strip(
    root: &Value,
    schema: &Value,
    value: &mut Value,
    at: &mut String,
    removed: &mut Vec<String>,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let Value::Object(schema_map) = schema else {
        return;
    };
    if let Some(target) = schema_map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| resolve(root, r))
    {
        strip(root, target, value, at, removed, depth + 1);
    }
    if let Some(Value::Array(members)) = schema_map.get("allOf") {
        for member in members {
            strip(root, member, value, at, removed, depth + 1);
        }
    }
    // A union: the branch the value belongs to, if exactly one object branch fits its keys.
    // A union merged into one object (a root union under OpenAI strict) makes the model send
    // `null` for the other branches' properties: if no branch declares every key, the one
    // that declares every key with a value is taken, and `null`s for keys it forbids go.
    for keyword in ["anyOf", "oneOf"] {
        if let (Some(Value::Array(branches)), Value::Object(fields)) =
            (schema_map.get(keyword), &*value)
        {
            let fitting = |skip_nulls: bool| -> Vec<&Value> {
                branches
                    .iter()
                    .filter(|branch| fits(root, branch, fields, skip_nulls, depth))
                    .collect()
            };
            let mut chosen = fitting(false);
            let mut loose = false;
            if chosen.is_empty() {
                chosen = fitting(true);
                loose = true;
            }
            if let [branch] = chosen.as_slice() {
                strip(root, branch, value, at, removed, depth + 1);
                if loose {
                    remove_forbidden_nulls(root, branch, value, at, removed);
                }
            }
        }
    }
    match value {
        Value::Object(fields) => {
            let required: Vec<&str> = match schema_map.get("required") {
                Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            let properties = schema_map.get("properties").and_then(Value::as_object);
            let Some(properties) = properties else { return };
            let names: Vec<String> = fields.keys().cloned().collect();
            for name in names {
                let Some(property) = properties.get(&name) else {
                    continue;
                };
                let before = at.len();
                crate::contract::path::push_escaped(at, &name);
                if fields.get(&name) == Some(&Value::Null) {
                    if !required.contains(&name.as_str()) && !admits_null(root, property, depth) {
                        fields.remove(&name);
                        removed.push(at.clone());
                    }
                } else if let Some(field) = fields.get_mut(&name) {
                    strip(root, property, field, at, removed, depth + 1);
                }
                at.truncate(before);
            }
        }
        Value::Array(items) => {
            let item_schema = schema_map.get("items");
            let prefix = schema_map.get("prefixItems").and_then(Value::as_array);
            for (i, item) in items.iter_mut().enumerate() {
                let schema = prefix.and_then(|p| p.get(i)).or(item_schema);
                if let Some(schema) = schema {
                    let before = at.len();
                    crate::contract::path::push_escaped(at, &i.to_string());
                    strip(root, schema, item, at, removed, depth + 1);
                    at.truncate(before);
                }
            }
        }
        _ => {}
    }
}

/// Whether an object branch of a union can be the one `fields` were meant for: it declares
/// every key with a value, each value one the branch allows where it lists the values it
/// allows (a tag's `const`), and every key set to `null` unless `loose`; a `null` it
/// declares is one it accepts or may drop (not required).
fn fits(
    root: &Value,
    branch: &Value,
    fields: &Map<String, Value>,
    loose: bool,
    depth: usize,
) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let branch = referenced(root, branch);
    let Some(properties) = branch.get("properties").and_then(Value::as_object) else {
        return false;
    };
    let required = |key: &str| {
        branch
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|names| names.iter().any(|n| n == key))
    };
    fields.iter().all(|(key, field)| match properties.get(key) {
        None => loose && field.is_null(),
        Some(property) if field.is_null() => {
            !required(key) || admits_null(root, property, depth + 1)
        }
        Some(property) => allows_listed(referenced(root, property), field),
    })
}

/// `schema`'s target if it is a `$ref` that resolves, else `schema`.
fn referenced<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| resolve(root, r))
        .unwrap_or(schema)
}

/// Whether `value` is among the values `schema` lists (`const` or `enum`); `true` when it
/// lists none.
fn allows_listed(schema: &Value, value: &Value) -> bool {
    match (schema.get("const"), schema.get("enum")) {
        (Some(listed), _) => listed == value,
        (None, Some(Value::Array(listed))) => listed.contains(value),
        _ => true,
    }
}

/// Removes the `null`s of `value` for keys a closed `branch` does not declare.
fn remove_forbidden_nulls(
    root: &Value,
    branch: &Value,
    value: &mut Value,
    at: &mut String,
    removed: &mut Vec<String>,
) {
    let branch = referenced(root, branch);
    if branch.get("additionalProperties") != Some(&Value::Bool(false))
        || branch.get("patternProperties").is_some()
    {
        return;
    }
    let (Some(properties), Value::Object(fields)) =
        (branch.get("properties").and_then(Value::as_object), value)
    else {
        return;
    };
    let forbidden: Vec<String> = fields
        .iter()
        .filter(|(key, field)| field.is_null() && !properties.contains_key(*key))
        .map(|(key, _)| key.clone())
        .collect();
    for key in forbidden {
        fields.remove(&key);
        let before = at.len();
        crate::contract::path::push_escaped(at, &key);
        removed.push(at.clone());
        at.truncate(before);
    }
}

/// Whether `schema` accepts `null`; `true` when unsure, so that no `null` is removed on a
/// guess.
fn admits_null(root: &Value, schema: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return true;
    }
    let Value::Object(map) = schema else {
        return schema != &Value::Bool(false);
    };
    let typed = match map.get("type") {
        None => true,
        Some(Value::String(name)) => name == "null",
        Some(Value::Array(names)) => names.iter().any(|n| n == "null"),
        Some(_) => true,
    };
    let in_enum = match map.get("enum") {
        Some(Value::Array(values)) => values.contains(&Value::Null),
        _ => true,
    };
    let in_const = map.get("const").is_none_or(Value::is_null);
    let any_branch = |keyword: &str| match map.get(keyword) {
        Some(Value::Array(branches)) => branches.iter().any(|b| admits_null(root, b, depth + 1)),
        _ => true,
    };
    let all_members = match map.get("allOf") {
        Some(Value::Array(members)) => members.iter().all(|m| admits_null(root, m, depth + 1)),
        _ => true,
    };
    let referenced = match map.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            resolve(root, reference).is_none_or(|target| admits_null(root, target, depth + 1))
        }
        None => true,
    };
    typed
        && in_enum
        && in_const
        && any_branch("anyOf")
        && any_branch("oneOf")
        && all_members
        && referenced
}

fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let fragment = reference.strip_prefix('#')?;
    root.pointer(fragment)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn follows_refs_arrays_and_unions() {
        let schema = json!({
            "type": "object",
            "properties": {
                "items": { "type": "array", "items": { "$ref": "#/$defs/Item" } },
                "choice": { "anyOf": [
                    { "type": "object", "properties": { "a": { "type": "string" } } },
                    { "type": "object", "properties": { "b": { "type": "integer" } } }
                ] }
            },
            "$defs": { "Item": { "type": "object", "properties": { "n": { "type": "integer" }, "m": { "enum": ["x", null] } } } }
        });
        let mut arguments = json!({ "items": [{ "n": null, "m": null }], "choice": { "b": null } });
        let removed = remove_strict_nulls(&schema, &mut arguments);
        assert_eq!(removed, ["/items/0/n", "/choice/b"]);
        assert_eq!(arguments, json!({ "items": [{ "m": null }], "choice": {} }));
    }

    #[test]
    fn a_merged_root_union_loses_the_other_branches_nulls() {
        let schema = json!({
            "type": "object",
            "oneOf": [
                { "type": "object", "properties": { "type": { "const": "Insert" }, "line": { "type": "integer" }, "text": { "type": "string" } },
                  "required": ["type", "line", "text"], "additionalProperties": false },
                { "type": "object", "properties": { "type": { "const": "Delete" }, "line": { "type": "integer" } },
                  "required": ["type", "line"], "additionalProperties": false }
            ]
        });
        // What OpenAI strict sends for the merged root: every property, `null` for "not given".
        let mut delete = json!({ "type": "Delete", "line": 3, "text": null });
        assert_eq!(remove_strict_nulls(&schema, &mut delete), ["/text"]);
        assert_eq!(delete, json!({ "type": "Delete", "line": 3 }));
        // A null the chosen branch requires is the model's mistake, and stays.
        let mut insert = json!({ "type": "Insert", "line": 3, "text": null });
        assert!(remove_strict_nulls(&schema, &mut insert).is_empty());
        // No branch has this tag: nothing is guessed.
        let mut unknown = json!({ "type": "Move", "line": 3, "text": null });
        assert!(remove_strict_nulls(&schema, &mut unknown).is_empty());
    }
}
