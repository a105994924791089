//! Whether the branches of a `oneOf` exclude each other on their own, so that sending them as
//! `anyOf`, where a dialect has no `oneOf`, loses nothing. A tagged enum's branches do: each
//! has its own `const` tag (internally and adjacently tagged), its own required key in a
//! closed object (externally tagged), or its own type (a unit variant's string beside the
//! objects). When unsure the answer is no, and the loss is reported.

use serde_json::{Map, Value};

/// Past this many branches the pairs are not compared (the loss is reported).
const MAX_BRANCHES: usize = 64;

/// Past this many required properties in a branch, they are not compared.
const MAX_REQUIRED: usize = 256;

/// How far a chain of `$ref`s is followed.
const MAX_HOPS: usize = 8;

/// A branch as far as the comparison reads it.
enum Shape<'a> {
    /// `false`: matches nothing.
    Nothing,
    /// `true`, or a schema this module does not read (a `$ref` it cannot follow).
    Unknown,
    Schema(&'a Map<String, Value>),
}

/// Whether no instance matches two of `branches` (canonical subschemas, `$ref`s resolved
/// against `root`).
pub(super) fn exclusive(root: &Value, branches: &[Value]) -> bool {
    if branches.len() > MAX_BRANCHES {
        return false;
    }
    let shapes: Vec<Shape<'_>> = branches.iter().map(|b| shape(root, b)).collect();
    shapes.iter().enumerate().all(|(i, a)| {
        shapes[i + 1..].iter().all(|b| match (a, b) {
            (Shape::Nothing, _) | (_, Shape::Nothing) => true,
            (Shape::Schema(a), Shape::Schema(b)) => disjoint(root, a, b),
            _ => false,
        })
    })
}

fn shape<'a>(root: &'a Value, schema: &'a Value) -> Shape<'a> {
    let mut schema = schema;
    for _ in 0..MAX_HOPS {
        match schema {
            Value::Bool(false) => return Shape::Nothing,
            Value::Object(map) => match map.get("$ref") {
                None => return Shape::Schema(map),
                // Keywords beside the `$ref` also apply: not read here.
                Some(_) if map.len() > 1 => return Shape::Unknown,
                Some(Value::String(reference)) => {
                    let Some(target) = reference
                        .strip_prefix('#')
                        .filter(|p| p.is_empty() || p.starts_with('/'))
                        .and_then(|p| root.pointer(p))
                    else {
                        return Shape::Unknown;
                    };
                    schema = target;
                }
                Some(_) => return Shape::Unknown,
            },
            _ => return Shape::Unknown,
        }
    }
    Shape::Unknown
}

/// Whether two schema objects share no instance, by their types, their listed values, or
/// (for objects) a required property whose values differ or that one of them forbids.
fn disjoint(root: &Value, a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    if values_disjoint(a, b) || types_disjoint(a, b) {
        return true;
    }
    if !(only_objects(a) || only_objects(b)) {
        return false;
    }
    let (required_a, required_b) = (required(a), required(b));
    if required_a.len() > MAX_REQUIRED || required_b.len() > MAX_REQUIRED {
        return false;
    }
    for name in &required_a {
        if required_b.contains(name)
            && let (Shape::Schema(pa), Shape::Schema(pb)) =
                (property(root, a, name), property(root, b, name))
            && (values_disjoint(pa, pb) || types_disjoint(pa, pb))
        {
            return true;
        }
    }
    let forbids = |m: &Map<String, Value>, name: &str| match property(root, m, name) {
        Shape::Nothing => true,
        Shape::Schema(_) => false,
        Shape::Unknown => {
            !m.contains_key("patternProperties")
                && m.get("additionalProperties") == Some(&Value::Bool(false))
                && m.get("properties")
                    .and_then(Value::as_object)
                    .is_none_or(|p| !p.contains_key(name))
        }
    };
    required_a.iter().any(|name| forbids(b, name)) || required_b.iter().any(|name| forbids(a, name))
}

fn required(map: &Map<String, Value>) -> Vec<&str> {
    match map.get("required") {
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// A declared property's schema; [`Shape::Unknown`] when it is not declared.
fn property<'a>(root: &'a Value, map: &'a Map<String, Value>, name: &str) -> Shape<'a> {
    match map
        .get("properties")
        .and_then(Value::as_object)
        .and_then(|p| p.get(name))
    {
        Some(schema) => shape(root, schema),
        None => Shape::Unknown,
    }
}

fn values_disjoint(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    match (listed(a), listed(b)) {
        (Some(a), Some(b)) => a.iter().all(|v| !b.contains(v)),
        _ => false,
    }
}

/// The values a schema allows, when it lists them (`const` or `enum`).
fn listed(map: &Map<String, Value>) -> Option<&[Value]> {
    match (map.get("const"), map.get("enum")) {
        (Some(value), _) => Some(std::slice::from_ref(value)),
        (None, Some(Value::Array(values))) => Some(values),
        _ => None,
    }
}

fn types_disjoint(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    match (types(a), types(b)) {
        (Some(a), Some(b)) => !a.iter().any(|x| {
            b.iter().any(|y| {
                x == y || (*x == "integer" && *y == "number") || (*x == "number" && *y == "integer")
            })
        }),
        _ => false,
    }
}

fn types(map: &Map<String, Value>) -> Option<Vec<&str>> {
    match map.get("type")? {
        Value::String(name) => Some(vec![name.as_str()]),
        Value::Array(names) => names.iter().map(Value::as_str).collect(),
        _ => None,
    }
}

fn only_objects(map: &Map<String, Value>) -> bool {
    types(map).is_some_and(|t| t == ["object"])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn branches(value: Value) -> Vec<Value> {
        value.as_array().cloned().unwrap_or_default()
    }

    #[test]
    fn tagged_branches_exclude_each_other() {
        let root = json!({});
        let internal = branches(json!([
            {"type": "object", "properties": {"type": {"const": "A"}, "x": {}}, "required": ["type", "x"]},
            {"type": "object", "properties": {"type": {"const": "B"}}, "required": ["type"]}
        ]));
        assert!(exclusive(&root, &internal));
        let external = branches(json!([
            {"type": "string", "enum": ["U"]},
            {"type": "object", "properties": {"A": {}}, "required": ["A"], "additionalProperties": false},
            {"type": "object", "properties": {"B": {}}, "required": ["B"], "additionalProperties": false}
        ]));
        assert!(exclusive(&root, &external));
    }

    #[test]
    fn overlapping_or_unread_branches_do_not() {
        let root = json!({"$defs": {"A": {"type": "object", "properties": {"t": {"const": "A"}}, "required": ["t"]}}});
        // Same tag value.
        let same = branches(json!([
            {"type": "object", "properties": {"t": {"const": "A"}}, "required": ["t"]},
            {"type": "object", "properties": {"t": {"enum": ["A", "B"]}}, "required": ["t"]}
        ]));
        assert!(!exclusive(&root, &same));
        // The tag is not required in one branch: an object without it matches that one.
        let optional = branches(json!([
            {"type": "object", "properties": {"t": {"const": "A"}}, "required": ["t"]},
            {"type": "object", "properties": {"t": {"const": "B"}}}
        ]));
        assert!(!exclusive(&root, &optional));
        // An open object admits the other's key.
        let open = branches(json!([
            {"type": "object", "properties": {"A": {}}, "required": ["A"]},
            {"type": "object", "properties": {"B": {}}, "required": ["B"]}
        ]));
        assert!(!exclusive(&root, &open));
        // A local $ref is followed; one with siblings is not read.
        let refs = branches(json!([
            {"$ref": "#/$defs/A"},
            {"type": "object", "properties": {"t": {"const": "B"}}, "required": ["t"]}
        ]));
        assert!(exclusive(&root, &refs));
        let sibling = branches(json!([
            {"$ref": "#/$defs/A", "description": "x"},
            {"type": "object", "properties": {"t": {"const": "B"}}, "required": ["t"]}
        ]));
        assert!(!exclusive(&root, &sibling));
    }
}
