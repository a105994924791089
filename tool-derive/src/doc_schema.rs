//! The JSON Schema of a tool as far as the derive can see it, for rustdoc: the standard types
//! it knows are written out exactly as the runtime writes them; a type it cannot see into (a
//! type of your own, a newtype, a type from another crate) is named, and its own page shows
//! its schema.

use serde_json::{Map, Value, json};
use syn::{GenericArgument, PathArguments, Type};

use crate::ast::{Body, Input};
use crate::attr::{self, NumLit};

/// The schema, and whether every part of it is exact (no type shown by name only, no default
/// the derive cannot compute).
pub(crate) struct DocSchema {
    pub(crate) schema: Value,
    pub(crate) complete: bool,
}

pub(crate) fn doc_schema(input: &Input<'_>) -> Option<DocSchema> {
    let Body::Struct(fields) = &input.body else {
        return None;
    };
    let mut complete = !input.attrs.default;
    let mut properties = Map::new();
    let mut required = Vec::new();
    for field in fields.iter().filter(|field| !field.attrs.skip) {
        if field.attrs.flatten.is_some() {
            complete = false;
            continue;
        }
        let (mut schema, optional) = if field.attrs.schemars.is_some() || field.attrs.with.is_some()
        {
            complete = false;
            let ty = field.ty;
            let text = quote::quote!(#ty).to_string().replace(' ', "");
            let optional =
                split(ty).is_some_and(|(name, args)| name == "Option" && args.len() == 1);
            let comment = match &field.attrs.with {
                Some(marker) => {
                    let marker = quote::quote!(#marker).to_string().replace(' ', "");
                    format!("the schema `{marker}` gives `{text}`")
                }
                None => format!("the schemars schema of `{text}`"),
            };
            (json!({ "$comment": comment }), optional)
        } else {
            type_schema(field.ty, &field.attrs, &mut complete)
        };
        let has_default =
            input.attrs.default || !matches!(field.attrs.default, attr::Default::None);
        if let Value::Object(map) = &mut schema {
            if let Some(doc) = &field.doc {
                map.insert("description".to_owned(), Value::from(doc.as_str()));
            }
            match &field.attrs.default {
                attr::Default::Trait => match trait_default(field.ty) {
                    Some(value) => {
                        map.insert("default".to_owned(), value);
                    }
                    None => complete = false,
                },
                attr::Default::Path(_) => complete = false,
                attr::Default::None => {}
            }
            if field.attrs.deprecated {
                map.insert("deprecated".to_owned(), Value::Bool(true));
            }
            if !field.attrs.examples.is_empty() {
                let examples = field
                    .attrs
                    .examples
                    .iter()
                    .filter_map(|example| serde_json::from_str(&example.value).ok())
                    .collect();
                map.insert("examples".to_owned(), Value::Array(examples));
            }
        }
        if !has_default && !optional {
            required.push(Value::from(field.wire.as_str()));
        }
        properties.insert(field.wire.clone(), schema);
    }
    let mut schema = Map::new();
    schema.insert("type".to_owned(), Value::from("object"));
    schema.insert("properties".to_owned(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".to_owned(), Value::Array(required));
    }
    schema.insert("additionalProperties".to_owned(), Value::Bool(false));
    Some(DocSchema {
        schema: Value::Object(schema),
        complete,
    })
}

/// The last segment of a type path and its type arguments: `Vec<String>` is `("Vec",
/// [String])`.
fn split(ty: &Type) -> Option<(String, Vec<&Type>)> {
    let Type::Path(path) = ty else { return None };
    if path.qself.is_some() {
        return None;
    }
    let last = path.path.segments.last()?;
    let args = match &last.arguments {
        PathArguments::None => Vec::new(),
        PathArguments::AngleBracketed(angle) => angle
            .args
            .iter()
            .filter_map(|arg| match arg {
                GenericArgument::Type(ty) => Some(ty),
                _ => None,
            })
            .collect(),
        PathArguments::Parenthesized(_) => return None,
    };
    Some((last.ident.to_string(), args))
}

fn integer_range(name: &str) -> Option<(NumLit, NumLit)> {
    Some(match name {
        "u8" => (NumLit::U(0), NumLit::U(u8::MAX.into())),
        "u16" => (NumLit::U(0), NumLit::U(u16::MAX.into())),
        "u32" => (NumLit::U(0), NumLit::U(u32::MAX.into())),
        "u64" | "usize" => (NumLit::U(0), NumLit::U(u64::MAX)),
        "i8" => (NumLit::I(i8::MIN.into()), NumLit::U(i8::MAX as u64)),
        "i16" => (NumLit::I(i16::MIN.into()), NumLit::U(i16::MAX as u64)),
        "i32" => (NumLit::I(i32::MIN.into()), NumLit::U(i32::MAX as u64)),
        "i64" | "isize" => (NumLit::I(i64::MIN), NumLit::U(i64::MAX as u64)),
        _ => return None,
    })
}

fn num_value(n: NumLit) -> Value {
    match n {
        NumLit::U(u) => Value::from(u),
        NumLit::I(i) => Value::from(i),
        NumLit::F(f) => Value::from(f),
    }
}

/// `Default::default()` of the types whose default the derive knows, as JSON.
fn trait_default(ty: &Type) -> Option<Value> {
    let (name, _) = split(ty)?;
    Some(match name.as_str() {
        "bool" => Value::Bool(false),
        "String" => Value::from(""),
        "Option" => Value::Null,
        "Vec" | "BTreeSet" | "HashSet" => json!([]),
        "BTreeMap" | "HashMap" => json!({}),
        name if integer_range(name).is_some() => Value::from(0),
        _ => return None,
    })
}

/// The schema of `ty` under the constraints `attrs` (which may be empty), and whether a field
/// of it may be absent. A type the derive cannot see into is named and makes the schema
/// incomplete.
fn type_schema(ty: &Type, attrs: &attr::Field, complete: &mut bool) -> (Value, bool) {
    let mut unknown = || {
        *complete = false;
        let text = quote::quote!(#ty).to_string().replace(' ', "");
        (
            json!({ "$comment": format!("the schema of `{text}`, on its own page") }),
            false,
        )
    };
    let Some((name, args)) = split(ty) else {
        return unknown();
    };
    let mut map = Map::new();
    match (name.as_str(), args.as_slice()) {
        ("bool", []) => {
            map.insert("type".to_owned(), Value::from("boolean"));
        }
        ("f64", []) => {
            map.insert("type".to_owned(), Value::from("number"));
            number_keywords(&mut map, &attrs.range, None);
        }
        ("String", []) => {
            map.insert("type".to_owned(), Value::from("string"));
            string_keywords(&mut map, attrs);
        }
        ("Option", [inner]) => {
            let (schema, _) = type_schema(inner, attrs, complete);
            return (nullable(schema), true);
        }
        ("Box", [inner]) => return type_schema(inner, attrs, complete),
        ("Vec", [item]) => {
            map.insert("type".to_owned(), Value::from("array"));
            let none = attr::Field::default();
            let inner = attrs.inner.as_deref().unwrap_or(&none);
            map.insert("items".to_owned(), type_schema(item, inner, complete).0);
            if let Some(min) = attrs.length.min {
                map.insert("minItems".to_owned(), Value::from(min));
            }
            if let Some(max) = attrs.length.max {
                map.insert("maxItems".to_owned(), Value::from(max));
            }
        }
        ("BTreeMap" | "HashMap", [key, value, ..]) => {
            if split(key).is_none_or(|(key, _)| key != "String") {
                return unknown();
            }
            map.insert("type".to_owned(), Value::from("object"));
            let none = attr::Field::default();
            let inner = attrs.inner.as_deref().unwrap_or(&none);
            map.insert(
                "additionalProperties".to_owned(),
                type_schema(value, inner, complete).0,
            );
            if let Some(keys) = &attrs.keys {
                let mut names = Map::new();
                string_keywords(&mut names, &keys.value);
                if !names.is_empty() {
                    map.insert("propertyNames".to_owned(), Value::Object(names));
                }
            }
            if let Some(min) = attrs.length.min {
                map.insert("minProperties".to_owned(), Value::from(min));
            }
            if let Some(max) = attrs.length.max {
                map.insert("maxProperties".to_owned(), Value::from(max));
            }
        }
        (name, []) if integer_range(name).is_some() => {
            map.insert("type".to_owned(), Value::from("integer"));
            number_keywords(&mut map, &attrs.range, integer_range(name));
        }
        _ => return unknown(),
    }
    (Value::Object(map), false)
}

fn number_keywords(
    map: &mut Map<String, Value>,
    range: &attr::Range,
    ty: Option<(NumLit, NumLit)>,
) {
    let tighter = |a: Option<NumLit>, b: Option<NumLit>, lower: bool| match (a, b) {
        (Some(a), Some(b)) => Some(if a.less(b, false) == lower { b } else { a }),
        (a, b) => a.or(b),
    };
    let bounds = [
        ("minimum", tighter(ty.map(|t| t.0), range.min, true)),
        ("maximum", tighter(ty.map(|t| t.1), range.max, false)),
        ("exclusiveMinimum", range.exclusive_min),
        ("exclusiveMaximum", range.exclusive_max),
    ];
    for (keyword, bound) in bounds {
        if let Some(bound) = bound {
            map.insert(keyword.to_owned(), num_value(bound));
        }
    }
}

fn string_keywords(map: &mut Map<String, Value>, attrs: &attr::Field) {
    if let Some(min) = attrs.length.min {
        map.insert("minLength".to_owned(), Value::from(min));
    }
    if let Some(max) = attrs.length.max {
        map.insert("maxLength".to_owned(), Value::from(max));
    }
    if let Some(pattern) = &attrs.pattern {
        map.insert("pattern".to_owned(), Value::from(pattern.value.as_str()));
    }
    if let Some(format) = &attrs.format {
        map.insert("format".to_owned(), Value::from(format.value.as_str()));
    }
}

/// The same rule as the runtime's: `null` folded into `type`, else `anyOf`.
fn nullable(mut schema: Value) -> Value {
    if let Value::Object(map) = &mut schema
        && let Some(Value::String(name)) = map.get("type").cloned()
    {
        map.insert("type".to_owned(), json!([name, "null"]));
        return schema;
    }
    json!({ "anyOf": [schema, { "type": "null" }] })
}
