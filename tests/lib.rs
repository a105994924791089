//! Integration tests live in this package; this library holds what several of them share.

pub mod replay;
pub mod replies;

use std::path::{Path, PathBuf};

pub mod workers;

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

/// The PostgreSQL database the ledger tests run against: `TOOL_LEDGER_POSTGRES_URL`.
///
/// Without it, the calling test says on the terminal that it was skipped and how to run it,
/// and returns `None`; with `REQUIRE_POSTGRES=1` (as `.ci/run` sets, after starting a server)
/// a missing URL fails the test instead.
#[track_caller]
pub fn postgres_url(test: &str) -> Option<String> {
    if let Some(url) = std::env::var("TOOL_LEDGER_POSTGRES_URL")
        .ok()
        .filter(|url| !url.is_empty())
    {
        return Some(url);
    }
    assert!(
        std::env::var_os("REQUIRE_POSTGRES").is_none_or(|v| v != "1"),
        "REQUIRE_POSTGRES=1 but TOOL_LEDGER_POSTGRES_URL is not set: {test} needs a PostgreSQL \
         database (TOOL_LEDGER_POSTGRES_URL=postgres://user@host:port/database)"
    );
    // Straight to stderr: libtest captures `eprintln!` of a passing test.
    let _ = std::io::Write::write_fmt(
        &mut std::io::stderr(),
        format_args!(
            "skipped {test}: no PostgreSQL database. Run it with \
         `TOOL_LEDGER_POSTGRES_URL=postgres://user@host:port/database cargo test -p tests --test ledger_postgres` \
         (the tables it creates are named tool_ledger_*; .ci/run starts a throwaway server and sets \
         REQUIRE_POSTGRES=1 so that a missing database fails)\n"
        ),
    );
    None
}

/// A name no earlier run on the same database used: `prefix`, the process id and the time.
pub fn unique_name(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    format!("{prefix}-{}-{nanos}", std::process::id())
}
