//! The root as providers accept it. Arguments are always an object, and most providers want
//! that object spelled out at the root: OpenAI (both modes) and Anthropic (both modes) refuse
//! `anyOf`/`oneOf`/`allOf` there, OpenAI also `enum`, `const` and `not`, and Gemini's
//! `parameters` declares the parameters through the root's `properties`. A root union, as a
//! tagged enum used as a tool's arguments gives, is merged here into one object before the
//! walk:
//!
//! - each property keeps its schema when every branch that declares it agrees; the branches'
//!   `const`/`enum` values for it (an enum's tag) become one `enum` (typed `string` when every
//!   value is one); other disagreements an `anyOf` of the branches' schemas;
//! - a property is required when every branch requires it;
//! - the object is closed when every branch is closed;
//! - a branch that cannot be an object is left out (it can never hold).
//!
//! Which branch holds (which properties go together, what each variant requires) is what the
//! provider no longer enforces; the loss report says so, branch by branch. The merged object
//! admits every object the union admits, so no valid call becomes impossible.
//!
//! Each merged subschema is walked at its pointer in the canonical schema (the [`FlatRoot`]'s
//! origins), so losses found inside a branch point into that branch.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

use super::context::{child, invalid, json_kind};
use super::merge::Merge;
use crate::providers::dialect::{Action, Dialect};
use crate::providers::loss::{LossKind, LowerError};

/// A root with its unions merged, and where each merged subschema came from.
pub(super) struct FlatRoot {
    pub(super) map: Map<String, Value>,
    /// (pointer in the flat root, pointer in the canonical schema) for each subschema taken
    /// from a branch.
    pub(super) origins: Vec<(String, String)>,
}

/// Whether the root must be flattened before `dialect` sees it.
pub(super) fn needs_flattening(map: &Map<String, Value>, dialect: Dialect) -> bool {
    let union = ["anyOf", "oneOf", "allOf"]
        .iter()
        .any(|k| map.contains_key(*k));
    let literal = ["enum", "const", "not"]
        .iter()
        .any(|k| map.contains_key(*k));
    (union && !dialect.allows_root_union()) || (literal && !dialect.allows_root_literals())
}

/// The root with `allOf` merged, each `anyOf`/`oneOf` merged into one object, and the
/// keywords the dialect refuses at the root removed.
pub(super) fn flatten(
    merge: &mut Merge<'_, '_>,
    map: &Map<String, Value>,
) -> Result<FlatRoot, LowerError> {
    let dialect = merge.report.dialect();
    let mut root = if map.contains_key("allOf") && !dialect.allows_root_union() {
        merge.all_of(map, "", 0)?
    } else {
        map.clone()
    };
    let mut origins = Vec::new();
    if !dialect.allows_root_union() {
        for keyword in ["anyOf", "oneOf"] {
            if let Some(branches) = root.remove(keyword) {
                union_into(merge, &mut root, keyword, &branches, &mut origins)?;
            }
        }
    }
    if !dialect.allows_root_literals() {
        for keyword in ["enum", "const", "not"] {
            if root.remove(keyword).is_some() {
                merge
                    .report
                    .dropped("", keyword, Some("not allowed at the root"));
            }
        }
    }
    Ok(FlatRoot { map: root, origins })
}

/// One object branch of a root union, as far as the merge reads it.
struct Branch {
    pointer: String,
    properties: Map<String, Value>,
    /// In the order written, without repeats.
    required: Required,
    closed: bool,
}

/// Required names, in the order written, each once.
#[derive(Default)]
struct Required {
    names: Vec<String>,
    set: HashSet<String>,
}

impl Required {
    fn iter(&self) -> std::slice::Iter<'_, String> {
        self.names.iter()
    }

    fn contains(&self, name: &str) -> bool {
        self.set.contains(name)
    }

    fn len(&self) -> usize {
        self.names.len()
    }
}

fn union_into(
    merge: &mut Merge<'_, '_>,
    root: &mut Map<String, Value>,
    keyword: &str,
    branches: &Value,
    origins: &mut Vec<(String, String)>,
) -> Result<(), LowerError> {
    let at = child("", keyword);
    let Value::Array(branches) = branches else {
        return Err(invalid(&at, format!("{keyword} must be an array")));
    };
    merge.report.dropped(
        "",
        keyword,
        Some("the root cannot be a union: its branches are merged into one object"),
    );
    let mut read = Vec::with_capacity(branches.len());
    for (i, branch) in branches.iter().enumerate() {
        let pointer = child(&at, &i.to_string());
        let map = match branch {
            // Any object: nothing this branch says narrows the merge.
            Value::Bool(true) => Map::new(),
            Value::Bool(false) => continue,
            Value::Object(branch) => merge
                .resolve_member(branch, &pointer, keyword)?
                .unwrap_or_default(),
            other => {
                return Err(invalid(
                    &pointer,
                    format!(
                        "a schema must be an object or a boolean, found {}",
                        json_kind(other)
                    ),
                ));
            }
        };
        let map = if map.contains_key("allOf") {
            merge.all_of(&map, &pointer, 1)?
        } else {
            map
        };
        if let Some(branch) = read_branch(merge, map, pointer) {
            read.push(branch);
        }
    }
    if read.is_empty() {
        return Ok(());
    }

    let required: Vec<&String> = read[0]
        .required
        .iter()
        .filter(|name| read.iter().all(|b| b.required.contains(name)))
        .collect();
    for branch in &read {
        if branch.required.len() > required.len() {
            merge.report.dropped(
                &branch.pointer,
                "required",
                Some("required only in this branch: sent as optional"),
            );
        }
    }
    let required: Vec<String> = required.into_iter().cloned().collect();

    // Each property's distinct schemas, in branch order, with the pointer of each.
    let mut properties: Vec<(String, Vec<(String, Value)>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut seen: HashSet<(usize, String)> = HashSet::new();
    for branch in &read {
        for (name, schema) in &branch.properties {
            let i = *index.entry(name.clone()).or_insert_with(|| {
                properties.push((name.clone(), Vec::new()));
                properties.len() - 1
            });
            if seen.insert((i, schema.to_string())) {
                let pointer = child(&child(&branch.pointer, "properties"), name);
                properties[i].1.push((pointer, schema.clone()));
            }
        }
    }

    let target = root
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(target) = target else {
        return Err(invalid("/properties", "properties must be an object"));
    };
    for (name, schemas) in properties {
        let own = target.remove(&name);
        let at = child(&child("", "properties"), &name);
        let base = match own {
            Some(_) => child(&child(&at, "allOf"), "1"),
            None => at,
        };
        let merged = merged_property(merge, &schemas, &base, origins);
        let merged = match own {
            // The root's own schema for it holds too.
            Some(own) => json!({ "allOf": [own, merged] }),
            None => merged,
        };
        target.insert(name, merged);
    }

    if !required.is_empty() {
        let target = root
            .entry("required")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(target) = target {
            for name in required {
                let name = Value::from(name);
                if !target.contains(&name) {
                    target.push(name);
                }
            }
        }
    }
    if read.iter().all(|b| b.closed) && !root.contains_key("additionalProperties") {
        root.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
    Ok(())
}

/// The parts of a branch the merge keeps, every other keyword reported; `None` for a branch
/// that cannot be an object.
fn read_branch(
    merge: &mut Merge<'_, '_>,
    map: Map<String, Value>,
    pointer: String,
) -> Option<Branch> {
    let admits_object = match map.get("type") {
        None => true,
        Some(Value::String(name)) => name == "object",
        Some(Value::Array(names)) => names.iter().any(|n| n == "object"),
        Some(_) => true,
    };
    if !admits_object {
        return None;
    }
    let dialect = merge.report.dialect();
    let mut branch = Branch {
        pointer,
        properties: Map::new(),
        required: Required::default(),
        closed: false,
    };
    let patterns = map.contains_key("patternProperties");
    for (key, value) in map {
        match key.as_str() {
            "type" | "$defs" | "definitions" => {}
            "properties" => {
                if let Value::Object(properties) = value {
                    branch.properties = properties;
                }
            }
            "required" => {
                if let Value::Array(names) = value {
                    for name in names.iter().filter_map(Value::as_str) {
                        if branch.required.set.insert(name.to_owned()) {
                            branch.required.names.push(name.to_owned());
                        }
                    }
                }
            }
            "additionalProperties" => match value {
                Value::Bool(closed) => branch.closed = !closed,
                _ => {
                    merge
                        .report
                        .dropped(&branch.pointer, &key, Some("in a branch of a root union"))
                }
            },
            "description" | "title" | "examples" | "default" | "deprecated" => merge.report.record(
                &branch.pointer,
                key,
                LossKind::Hidden,
                Some("in a branch of a root union"),
            ),
            _ if dialect.action(&key) == Action::Silent => {}
            _ => merge
                .report
                .dropped(&branch.pointer, &key, Some("in a branch of a root union")),
        }
    }
    if patterns {
        // Properties matching a pattern are allowed too; the merged object does not say so.
        branch.closed = false;
    }
    Some(branch)
}

/// One property's schema from the branches' schemas for it, recording where each part came
/// from in `origins`.
fn merged_property(
    merge: &mut Merge<'_, '_>,
    schemas: &[(String, Value)],
    base: &str,
    origins: &mut Vec<(String, String)>,
) -> Value {
    if let [(pointer, schema)] = schemas {
        origins.push((base.to_owned(), pointer.clone()));
        return schema.clone();
    }
    if let Some(literal) = merged_literals(merge, schemas) {
        origins.push((base.to_owned(), schemas[0].0.clone()));
        return literal;
    }
    let at = child(base, "anyOf");
    for (i, (pointer, _)) in schemas.iter().enumerate() {
        origins.push((child(&at, &i.to_string()), pointer.clone()));
    }
    json!({ "anyOf": schemas.iter().map(|(_, s)| s.clone()).collect::<Vec<_>>() })
}

/// Schemas that each allow only listed values (`const`, or `enum`, with at most a `type` and
/// annotations beside) as one `enum` of all their values: the tag of a tagged enum.
fn merged_literals(merge: &mut Merge<'_, '_>, schemas: &[(String, Value)]) -> Option<Value> {
    let mut values: Vec<Value> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for (_, schema) in schemas {
        let Value::Object(map) = schema else {
            return None;
        };
        let literal_keys = ["const", "enum", "type", "description", "title"];
        if !map.keys().all(|k| literal_keys.contains(&k.as_str())) {
            return None;
        }
        let listed = match (map.get("const"), map.get("enum")) {
            (Some(value), None) => std::slice::from_ref(value),
            (None, Some(Value::Array(listed))) => listed.as_slice(),
            _ => return None,
        };
        for value in listed {
            if seen.insert(value.to_string()) {
                values.push(value.clone());
            }
        }
    }
    let mut out = Map::new();
    let first = &schemas[0].1;
    for keyword in ["type", "description", "title"] {
        let same = schemas
            .iter()
            .all(|(_, s)| s.get(keyword) == first.get(keyword));
        match first.get(keyword) {
            Some(value) if same => drop(out.insert(keyword.to_owned(), value.clone())),
            // A tag's `const`s name no type; the enum of them is a string, said outright for
            // readers that want every property typed.
            _ if keyword == "type" => {
                if values.iter().all(Value::is_string) {
                    out.insert("type".to_owned(), Value::from("string"));
                }
            }
            _ => {
                for (pointer, schema) in schemas {
                    if schema.get(keyword).is_some() {
                        merge.report.record(
                            pointer,
                            keyword,
                            LossKind::Hidden,
                            Some("the branches' values are merged into one enum"),
                        );
                    }
                }
            }
        }
    }
    out.insert("enum".to_owned(), Value::Array(values));
    Some(Value::Object(out))
}

/// The root must describe an object: a missing `type` becomes `"object"`, a type list keeps
/// only `"object"` (arguments are always an object), anything else is refused.
pub(super) fn root_object(
    map: &mut Map<String, Value>,
    dialect: Dialect,
) -> Result<(), LowerError> {
    let object = if dialect == Dialect::GeminiOpenApi {
        "OBJECT"
    } else {
        "object"
    };
    map.remove("nullable");
    match map.get("type") {
        None => {}
        Some(Value::String(name)) if name == object => return Ok(()),
        Some(Value::Array(names)) if names.iter().any(|n| n == object) => {}
        Some(other) => {
            return Err(LowerError::RootNotObject {
                found: other.to_string(),
            });
        }
    }
    map.insert("type".to_owned(), Value::from(object));
    Ok(())
}
