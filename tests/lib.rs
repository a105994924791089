//! Integration tests live in this package; this library holds what several of them share.

use serde_json::{Map, Value};

/// BFCL's function-definition dialect to JSON Schema 2020-12, as the corpus README says:
/// `dict` → `object`, `float` → `number`, `tuple` → `array`, `any` → no type, the `optional`
/// key dropped. Property names are never rewritten.
pub fn bfcl_to_json_schema(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in map {
        match (key.as_str(), value) {
            ("optional", _) => {}
            ("type", Value::String(name)) => match name.as_str() {
                "any" => {}
                "dict" => drop(out.insert(key.clone(), Value::from("object"))),
                "float" => drop(out.insert(key.clone(), Value::from("number"))),
                "tuple" => drop(out.insert(key.clone(), Value::from("array"))),
                _ => drop(out.insert(key.clone(), value.clone())),
            },
            (
                "properties" | "patternProperties" | "$defs" | "definitions",
                Value::Object(props),
            ) => {
                let props = props
                    .iter()
                    .map(|(name, schema)| (name.clone(), bfcl_to_json_schema(schema)));
                out.insert(key.clone(), Value::Object(props.collect()));
            }
            ("items" | "additionalProperties" | "not" | "additionalItems", _) => match value {
                Value::Array(items) => {
                    out.insert(
                        key.clone(),
                        Value::Array(items.iter().map(bfcl_to_json_schema).collect()),
                    );
                }
                _ => drop(out.insert(key.clone(), bfcl_to_json_schema(value))),
            },
            ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(items)) => {
                out.insert(
                    key.clone(),
                    Value::Array(items.iter().map(bfcl_to_json_schema).collect()),
                );
            }
            _ => drop(out.insert(key.clone(), value.clone())),
        }
    }
    Value::Object(out)
}
