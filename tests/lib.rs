//! Integration tests live in this package; this library holds what several of them share.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// The third-party data the tests read, vendored under `tests/data` with its licences
/// (`tests/data/README.md` says where each file comes from).
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data")
}

/// A file or folder under [`data_dir`]. Fails the calling test when nothing is there, so a test
/// never passes without the data it is about.
#[track_caller]
pub fn data(relative: &str) -> PathBuf {
    let path = data_dir().join(relative);
    assert!(
        path.exists(),
        "test data {} is missing; it is part of the repository (tests/data/README.md)",
        path.display()
    );
    path
}

/// The text of a file under [`data_dir`]; a missing or unreadable file fails the calling test.
#[track_caller]
pub fn read_data(relative: &str) -> String {
    let path = data(relative);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read test data {}: {error}", path.display()))
}

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
