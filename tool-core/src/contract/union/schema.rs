//! The schemas of unions, and of objects with a flattened field.

use super::*;

/// One branch of a union's schema: the variant `wire` with its content's schema (`None` for a
/// unit variant) in the representation `repr`, described by the variant's doc comment.
#[doc(hidden)]
pub fn union_branch(
    generator: &mut SchemaGen,
    repr: Repr,
    wire: &str,
    content: Option<Value>,
    description: Option<&str>,
) -> Value {
    let tag_const = |tag: &str| (tag.to_owned(), json!({ "const": wire }));
    let mut branch = match (repr, content) {
        (Repr::External, None) => json!({ "type": "string", "const": wire }),
        (Repr::External, Some(content)) => closed_object(vec![(wire.to_owned(), content)], 1),
        (Repr::Internal(tag), None) => closed_object(vec![tag_const(tag)], 1),
        (Repr::Internal(tag), Some(content)) => match content {
            Value::Object(mut object)
                if object.get("type") == Some(&Value::from("object"))
                    && object.get("properties").is_some_and(Value::is_object) =>
            {
                let mut properties = Map::new();
                properties.insert(tag.to_owned(), json!({ "const": wire }));
                if let Some(Value::Object(fields)) = object.remove("properties") {
                    properties.extend(fields);
                }
                let mut required = vec![Value::from(tag)];
                if let Some(Value::Array(names)) = object.remove("required") {
                    required.extend(names);
                }
                let mut branch = Map::new();
                branch.insert("type".to_owned(), Value::from("object"));
                if let Some(description) = object.remove("description") {
                    branch.insert("description".to_owned(), description);
                }
                branch.insert("properties".to_owned(), Value::Object(properties));
                branch.insert("required".to_owned(), Value::Array(required));
                branch.extend(object);
                Value::Object(branch)
            }
            other => {
                generator.problem(format!(
                    "the variant `{wire}` is internally tagged, so its content must be an \
                     object schema with properties; its type advertises {other}"
                ));
                other
            }
        },
        (Repr::Adjacent(tag, _), None) => closed_object(vec![tag_const(tag)], 1),
        (Repr::Adjacent(tag, content_key), Some(content)) => {
            closed_object(vec![tag_const(tag), (content_key.to_owned(), content)], 2)
        }
        (Repr::Untagged, None) => json!({ "type": "null" }),
        (Repr::Untagged, Some(content)) => content,
    };
    if let (Some(description), Value::Object(map)) = (description, &mut branch) {
        map.insert("description".to_owned(), Value::from(description));
    }
    branch
}

/// `{"type": "object", "properties": ..., "required": [the first `required` names], closed}`.
fn closed_object(properties: Vec<(String, Value)>, required: usize) -> Value {
    let names: Vec<Value> = properties
        .iter()
        .take(required)
        .map(|(name, _)| Value::from(name.as_str()))
        .collect();
    let mut map = Map::new();
    map.insert("type".to_owned(), Value::from("object"));
    map.insert(
        "properties".to_owned(),
        Value::Object(properties.into_iter().collect()),
    );
    map.insert("required".to_owned(), Value::Array(names));
    map.insert("additionalProperties".to_owned(), Value::Bool(false));
    Value::Object(map)
}

/// The schema of a union: `oneOf` its branches when tagged (they exclude each other), `anyOf`
/// when untagged.
#[doc(hidden)]
pub fn union_schema(description: Option<&str>, repr: Repr, branches: Vec<Value>) -> Value {
    let mut schema = Map::new();
    if let Some(description) = description {
        schema.insert("description".to_owned(), Value::from(description));
    }
    let keyword = match repr {
        Repr::Untagged => "anyOf",
        _ => "oneOf",
    };
    schema.insert(keyword.to_owned(), Value::Array(branches));
    Value::Object(schema)
}

/// A variant's value as JSON, in the representation `repr` (`content` is `None` for a unit
/// variant).
#[doc(hidden)]
pub fn union_value(repr: Repr, wire: &str, content: Option<Value>) -> Option<Value> {
    Some(match (repr, content) {
        (Repr::External, None) => Value::from(wire),
        (Repr::External, Some(content)) => json!({ wire: content }),
        (Repr::Internal(tag) | Repr::Adjacent(tag, _), None) => json!({ tag: wire }),
        (Repr::Internal(tag), Some(Value::Object(fields))) => {
            let mut object = Map::new();
            object.insert(tag.to_owned(), Value::from(wire));
            object.extend(fields);
            Value::Object(object)
        }
        (Repr::Internal(_), Some(_)) => return None,
        (Repr::Adjacent(tag, content_key), Some(content)) => {
            json!({ tag: wire, content_key: content })
        }
        (Repr::Untagged, None) => Value::Null,
        (Repr::Untagged, Some(content)) => content,
    })
}

/// Merges the object schema `inner` of the flattened field `wire` of `owner` into the object
/// schema `outer`: its properties after the outer ones, its `required` too.
#[doc(hidden)]
pub fn flatten_schema(
    generator: &mut SchemaGen,
    mut outer: Value,
    inner: Value,
    owner: &str,
    wire: &str,
) -> Value {
    let (Value::Object(outer_map), Value::Object(mut inner_map)) = (&mut outer, inner) else {
        return outer;
    };
    let Some(Value::Object(fields)) = inner_map.remove("properties") else {
        generator.problem(format!(
            "the flattened field `{owner}.{wire}` must be a struct whose schema lists its \
             properties (a recursive type is not)"
        ));
        return outer;
    };
    if let Some(Value::Object(properties)) = outer_map.get_mut("properties") {
        for (name, schema) in fields {
            if properties.contains_key(&name) {
                generator.problem(format!(
                    "the flattened field `{owner}.{wire}` brings a field {name:?} that `{owner}` \
                     already has"
                ));
            }
            properties.insert(name, schema);
        }
    }
    if let Some(Value::Array(names)) = inner_map.remove("required") {
        match outer_map.get_mut("required") {
            Some(Value::Array(required)) => required.extend(names),
            _ => {
                // `required` goes before `additionalProperties`, where object schemas have it.
                let closed = outer_map.shift_remove("additionalProperties");
                outer_map.insert("required".to_owned(), Value::Array(names));
                if let Some(closed) = closed {
                    outer_map.insert("additionalProperties".to_owned(), closed);
                }
            }
        }
    }
    outer
}
