//! Dynamic tools: defined by a JSON Schema document, checked with `jsonschema`, driven through
//! the same pipeline. Includes the JSON-Schema-Test-Suite (draft 2020-12) run through it.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tool_core::{
    Code, Context, Output, Registry, Runtime, ToolDef,
    contract::Keyword,
    registry::{DynamicTool, RegistryError, ToolError},
};

async fn echo(args: Value, _cx: &Context) -> Result<Value, ToolError> {
    Ok(args)
}

fn runtime_for(tool: DynamicTool) -> Result<Runtime, RegistryError> {
    let mut registry = Registry::new();
    registry.register(ToolDef::dynamic(tool, echo))?;
    Ok(Runtime::new(registry))
}

fn user() -> Context {
    Context::builder("user-1").build()
}

fn stock_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "sku": { "type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$" },
            "quantity": { "type": "integer", "minimum": 1 },
            "email": { "type": "string", "format": "email" }
        },
        "required": ["sku", "quantity"],
        "additionalProperties": false
    })
}

#[tokio::test]
async fn valid_arguments_reach_the_handler_as_json() {
    let runtime = runtime_for(DynamicTool::new("stock", "Stock.", stock_schema())).unwrap();
    let outcome = runtime
        .invoke("c1", "stock", r#"{"sku":"ABC-1234","quantity":2}"#, &user())
        .await;
    assert_eq!(
        outcome.output().map(Output::to_value),
        Some(json!({"sku":"ABC-1234","quantity":2}))
    );
}

#[tokio::test]
async fn every_violation_is_reported_with_its_pointer() {
    let runtime = runtime_for(DynamicTool::new("stock", "Stock.", stock_schema())).unwrap();
    let raw = r#"{"sku":"abc","quantity":0,"email":"nope","colour":"red"}"#;
    let outcome = runtime.invoke("c1", "stock", raw, &user()).await;
    let errors = outcome.failure().unwrap().errors().unwrap();
    let mut found: Vec<(String, Keyword)> = errors
        .iter()
        .map(|v| (v.pointer().into_owned(), v.keyword()))
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        found,
        [
            ("/colour".to_owned(), Keyword::AdditionalProperties),
            ("/email".to_owned(), Keyword::Other("format")),
            ("/quantity".to_owned(), Keyword::Minimum),
            ("/sku".to_owned(), Keyword::Pattern),
        ]
    );
    let missing = runtime.invoke("c2", "stock", "{}", &user()).await;
    let errors = missing.failure().unwrap().errors().unwrap();
    let pointers: Vec<_> = errors.iter().map(|v| v.pointer().into_owned()).collect();
    assert_eq!(pointers, ["/sku", "/quantity"]);
    assert!(errors.iter().all(|v| v.keyword() == Keyword::Required));
}

#[tokio::test]
async fn the_json_is_strict_before_the_schema_is_consulted() {
    let runtime = runtime_for(DynamicTool::new("any", "Anything.", json!({}))).unwrap();
    let outcome = runtime
        .invoke("c1", "any", r#"{"a":1,"a":2}"#, &user())
        .await;
    let errors = outcome.failure().unwrap().errors().unwrap();
    assert_eq!(errors.violations()[0].keyword(), Keyword::DuplicateKey);
    let outcome = runtime.invoke("c2", "any", r#"{"a":1} x"#, &user()).await;
    assert!(outcome.failure().unwrap().errors().unwrap().is_syntax());
    let deep = "[".repeat(100_000);
    let outcome = runtime.invoke("c3", "any", &deep, &user()).await;
    assert_eq!(outcome.code(), Some(Code::InvalidArguments));
}

#[test]
fn a_schema_that_does_not_compile_is_refused_at_registration() {
    let error = runtime_for(DynamicTool::new("bad", "", json!({"type": "strnig"}))).unwrap_err();
    let RegistryError::InvalidSchema { tool, which, .. } = &error else {
        panic!("{error:?}");
    };
    assert_eq!((tool.as_str(), *which), ("bad", "input"));
    let error = runtime_for(
        DynamicTool::new("bad_out", "", json!({})).output_schema(json!({"minimum": "zero"})),
    )
    .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("the output schema of `bad_out` does not compile: "),
        "{error}"
    );
    // Nothing is fetched: a reference to a document that was not supplied is refused.
    let remote = json!({"$ref": "https://example.com/schemas/address.json"});
    let error = runtime_for(DynamicTool::new("remote", "", remote.clone())).unwrap_err();
    assert!(
        matches!(error, RegistryError::InvalidSchema { .. }),
        "{error}"
    );
    let address = json!({"type": "object", "required": ["street"]});
    let tool = DynamicTool::new("remote", "", remote)
        .resource("https://example.com/schemas/address.json", address);
    assert!(runtime_for(tool).is_ok());
}

#[tokio::test]
async fn dialects_are_honoured_or_refused_explicitly() {
    // Draft 4: `exclusiveMaximum` is a boolean modifier of `maximum`.
    let draft4 = json!({
        "$schema": "http://json-schema.org/draft-04/schema#",
        "properties": { "n": { "maximum": 5, "exclusiveMaximum": true } }
    });
    let runtime = runtime_for(DynamicTool::new("d4", "", draft4)).unwrap();
    assert_eq!(
        runtime
            .invoke("a", "d4", r#"{"n":5}"#, &user())
            .await
            .code(),
        Some(Code::InvalidArguments)
    );
    assert!(
        runtime
            .invoke("b", "d4", r#"{"n":4}"#, &user())
            .await
            .is_ok()
    );

    // Draft 7: `items` as an array is positional.
    let draft7 = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "properties": { "pair": { "items": [{ "type": "string" }, { "type": "integer" }] } }
    });
    let runtime = runtime_for(DynamicTool::new("d7", "", draft7)).unwrap();
    assert!(
        runtime
            .invoke("a", "d7", r#"{"pair":["x",1]}"#, &user())
            .await
            .is_ok()
    );
    assert_eq!(
        runtime
            .invoke("b", "d7", r#"{"pair":[1,"x"]}"#, &user())
            .await
            .code(),
        Some(Code::InvalidArguments)
    );

    // No `$schema`: Draft 2020-12, where `prefixItems` is positional.
    let default = json!({ "properties": { "pair": { "prefixItems": [{ "type": "string" }] } } });
    let runtime = runtime_for(DynamicTool::new("d2020", "", default)).unwrap();
    assert_eq!(
        runtime
            .invoke("a", "d2020", r#"{"pair":[1]}"#, &user())
            .await
            .code(),
        Some(Code::InvalidArguments)
    );

    for dialect in [json!("https://example.com/my-dialect"), json!(7)] {
        let schema = json!({ "$schema": dialect, "type": "object" });
        let error = runtime_for(DynamicTool::new("odd", "", schema)).unwrap_err();
        assert!(
            matches!(error, RegistryError::UnsupportedDialect { .. }),
            "{error}"
        );
        assert!(
            error
                .to_string()
                .contains("supported: Draft 4, 6, 7, 2019-09 and 2020-12")
        );
    }
}

#[tokio::test]
async fn formats_are_asserted_unless_turned_off() {
    let schema = json!({ "properties": { "at": { "format": "date-time" } } });
    let strict = runtime_for(DynamicTool::new("t", "", schema.clone())).unwrap();
    let lax = runtime_for(DynamicTool::new("t", "", schema).assert_formats(false)).unwrap();
    let raw = r#"{"at":"yesterday"}"#;
    assert_eq!(
        strict.invoke("a", "t", raw, &user()).await.code(),
        Some(Code::InvalidArguments)
    );
    assert!(lax.invoke("a", "t", raw, &user()).await.is_ok());
}

#[tokio::test]
async fn output_is_checked_against_the_output_schema() {
    let tool = DynamicTool::new("t", "", json!({}))
        .output_schema(json!({ "type": "object", "required": ["id"] }));
    let runtime = runtime_for(tool).unwrap();
    let outcome = runtime.invoke("a", "t", r#"{"id":1}"#, &user()).await;
    assert!(outcome.is_ok());
    let outcome = runtime.invoke("b", "t", r#"{"name":1}"#, &user()).await;
    assert_eq!(outcome.failure().unwrap().code(), Code::InvalidOutput);
}

// ---- JSON-Schema-Test-Suite -----------------------------------------------------------

fn suite_root() -> PathBuf {
    tests::data("json-schema-test-suite")
}

/// Every file under `remotes/`, by the URI the suite serves it at.
fn remotes(root: &Path) -> Vec<(String, Value)> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<(String, Value)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.path());
        for entry in entries {
            let path = entry.path();
            // `v1/` and `draft3/` belong to other dialects' suites.
            if path.is_dir() && !path.ends_with("v1") && !path.ends_with("draft3") {
                walk(&path, base, out);
            } else if path.is_file() && path.extension().is_some_and(|e| e == "json") {
                let relative = path
                    .strip_prefix(base)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                let document =
                    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
                out.push((format!("http://localhost:1234/{relative}"), document));
            }
        }
    }
    let mut out = Vec::new();
    let base = root.join("remotes");
    walk(&base, &base, &mut out);
    out
}

#[derive(Default, Debug)]
struct Tally {
    passed: usize,
    total: usize,
    failures: Vec<String>,
}

/// Runs the files of one section through registration and `invoke` (as text and as a value).
async fn run_section(
    files: &[PathBuf],
    remotes: &[(String, Value)],
    assert_formats: bool,
) -> Tally {
    let mut tally = Tally::default();
    for file in files {
        let groups: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        for group in groups {
            let mut tool = DynamicTool::new("suite", "", group["schema"].clone())
                .assert_formats(assert_formats);
            for (uri, document) in remotes {
                tool = tool.resource(uri, document.clone());
            }
            let runtime = runtime_for(tool);
            for case in group["tests"].as_array().unwrap() {
                tally.total += 1;
                let expected = case["valid"].as_bool().unwrap();
                let label = format!(
                    "{name}: {} / {}",
                    group["description"].as_str().unwrap(),
                    case["description"].as_str().unwrap()
                );
                let Ok(runtime) = &runtime else {
                    tally.failures.push(format!(
                        "{label}: schema refused: {}",
                        runtime.as_ref().unwrap_err()
                    ));
                    continue;
                };
                let data = &case["data"];
                let text = serde_json::to_string(data).unwrap();
                let by_text = runtime.invoke("", "suite", &text, &user()).await;
                let by_value = runtime.invoke("", "suite", data, &user()).await;
                assert_eq!(
                    by_text.is_ok(),
                    by_value.is_ok(),
                    "{label}: the two entry points disagree"
                );
                if by_text.is_ok() == expected {
                    tally.passed += 1;
                } else {
                    tally.failures.push(format!(
                        "{label}: expected valid={expected}, got {}",
                        by_text.code().map_or("ok", Code::as_str)
                    ));
                }
            }
        }
    }
    tally
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

#[tokio::test]
async fn json_schema_test_suite_draft2020_12_through_dynamic_tools() {
    let root = suite_root();
    let remotes = remotes(&root);
    let tests = root.join("tests/draft2020-12");
    let required = json_files(&tests);
    let optional = json_files(&tests.join("optional"));
    let format = json_files(&tests.join("optional/format"));

    let required_asserting = run_section(&required, &remotes, true).await;
    let required_annotating = run_section(&required, &remotes, false).await;
    let optional_tally = run_section(&optional, &remotes, true).await;
    let format_tally = run_section(&format, &remotes, true).await;

    for (section, tally) in [
        (
            "required (formats asserted, the default)",
            &required_asserting,
        ),
        ("required (formats as annotations)", &required_annotating),
        ("optional", &optional_tally),
        ("optional/format", &format_tally),
    ] {
        eprintln!("{section}: {}/{} passed", tally.passed, tally.total);
        for failure in &tally.failures {
            eprintln!("  FAIL {failure}");
        }
    }

    assert_eq!(required_asserting.total, 1299);
    assert_eq!(optional_tally.total, 162);
    assert_eq!(format_tally.total, 764);
    // With formats as annotations, as the specification's default, all required cases pass.
    assert_eq!(required_annotating.failures, Vec::<String>::new());
    // Asserting formats fails exactly the cases of format.json that expect annotation only.
    assert!(
        required_asserting
            .failures
            .iter()
            .all(|f| f.starts_with("format.json: ")),
        "{:#?}",
        required_asserting.failures
    );
    assert_eq!(required_asserting.failures.len(), 19);
    assert_eq!(optional_tally.failures, Vec::<String>::new());
    assert_eq!(format_tally.failures, Vec::<String>::new());
}
