//! BFCL v4: thousands of real function definitions as dynamic tools, and every ground-truth
//! call checked against them. Prints a report; asserts the measured totals so that a change in
//! behaviour shows up as a failure.
//!
//! BFCL's dialect is converted as its README says: `dict` → `object`, `float` → `number`,
//! `tuple` → `array`, `any` → no type, the `optional` key dropped. Java and JavaScript
//! definitions use language type names (`String`, `long`, `HashMap`), which are not JSON
//! Schema types: they are refused at registration, and counted.
//!
//! Ground truth lists the acceptable values of each argument. The call checked is built from
//! the first acceptable value of each argument, under this policy for BFCL's markers of "use
//! the default": an argument whose acceptable values include `""` or `null` besides real values
//! takes the first real value; an argument whose only acceptable values are `""`, `null` or the
//! sentinel `"dontcare"` is left out of the call, so the function's default applies. Sending
//! `""` or `null` for a typed parameter would be a wrong call, not a correct one.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use tool_core::{
    Context, Registry, Runtime, ToolDef,
    registry::{DynamicTool, ToolError},
};

fn root() -> PathBuf {
    tests::data("bfcl-v4")
}

async fn never(_: Value, _: &Context) -> Result<Value, ToolError> {
    Err(ToolError::public("not callable in this test"))
}

fn read_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

fn is_default_marker(value: &Value) -> bool {
    matches!(value, Value::Null) || value == "" || value == "dontcare"
}

/// The argument value built from ground-truth alternatives, or `None` to leave it out.
fn pick(alternatives: &Value, schema: Option<&Value>) -> Option<Value> {
    let Value::Array(options) = alternatives else {
        return Some(alternatives.clone());
    };
    let chosen = options.iter().find(|value| !is_default_marker(value))?;
    let is_object = schema
        .and_then(|s| s.get("type"))
        .is_some_and(|t| t == "object" || t == "dict");
    match chosen {
        // A dict argument's ground truth lists alternatives per key, recursively.
        Value::Object(fields) if is_object => {
            let properties = schema.and_then(|s| s.get("properties"));
            let mut out = Map::new();
            for (name, field) in fields {
                let field_schema = properties.and_then(|p| p.get(name));
                if let Some(value) = pick(field, field_schema) {
                    out.insert(name.clone(), value);
                }
            }
            Some(Value::Object(out))
        }
        other => Some(other.clone()),
    }
}

#[derive(Default)]
struct Report {
    definitions: usize,
    distinct: usize,
    compiled: usize,
    refused: BTreeMap<String, usize>,
    calls: usize,
    accepted: usize,
    rejected: BTreeMap<String, usize>,
    skipped_calls: BTreeMap<String, usize>,
}

/// A rejection class: keyword and, for `type`, what was expected and what came.
fn classify(violation: &tool_core::contract::Violation, arguments: &Value) -> String {
    let keyword = violation.keyword().as_str();
    let pointer = violation.pointer();
    let got = arguments.pointer(&pointer);
    let kind = |value: Option<&Value>| match value {
        None => "absent",
        Some(Value::Null) => "null",
        Some(Value::Bool(_)) => "boolean",
        Some(Value::Number(n)) if n.is_f64() => "float",
        Some(Value::Number(_)) => "integer",
        Some(Value::String(s)) if s.is_empty() => "empty string",
        Some(Value::String(_)) => "string",
        Some(Value::Array(_)) => "array",
        Some(Value::Object(_)) => "object",
    };
    match keyword {
        "type" => {
            let expected = violation
                .message()
                .split(" is not of type ")
                .nth(1)
                .unwrap_or("?");
            format!("type: {} where {expected} is declared", kind(got))
        }
        "enum" => format!("enum: {} value not in the enum", kind(got)),
        _ => keyword.to_owned(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bfcl_definitions_and_ground_truth_calls() {
    let root = root();
    let mut report = Report::default();
    // Compiled tools by their canonical definition; the definition by question id and name.
    let mut runtimes: HashMap<String, Result<Runtime, String>> = HashMap::new();
    let mut definitions: HashMap<(String, String), (String, Value)> = HashMap::new();

    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("BFCL_v4_"))
        })
        .collect();
    files.sort();
    for file in &files {
        for item in read_lines(file) {
            let (Some(id), Some(Value::Array(functions))) = (item.get("id"), item.get("function"))
            else {
                continue;
            };
            for function in functions {
                report.definitions += 1;
                let name = function["name"].as_str().unwrap_or_default().to_owned();
                let parameters = tests::bfcl_to_json_schema(&function["parameters"]);
                let key = tool_core::ledger::canonical_json(&serde_json::json!([name, parameters]));
                let compiled = runtimes.entry(key.clone()).or_insert_with(|| {
                    report.distinct += 1;
                    let tool = DynamicTool::new(&name, "", parameters.clone());
                    let mut registry = Registry::new();
                    match registry.register(ToolDef::dynamic(tool, never)) {
                        Ok(_) => Ok(Runtime::new(registry)),
                        Err(error) => Err(error.to_string()),
                    }
                });
                match compiled {
                    Ok(_) => report.compiled += 1,
                    Err(error) => {
                        let class = if error.contains("is not valid under any of the schemas")
                            || error.contains("is not one of")
                        {
                            "a type name that is not a JSON Schema type (Java/JavaScript)"
                                .to_owned()
                        } else {
                            error.split(": ").nth(1).unwrap_or(error).to_owned()
                        };
                        *report.refused.entry(class).or_default() += 1;
                    }
                }
                definitions.insert(
                    (id.as_str().unwrap_or_default().to_owned(), name),
                    (key, parameters),
                );
            }
        }
    }

    let mut answers: Vec<PathBuf> = std::fs::read_dir(root.join("possible_answer"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    answers.sort();
    for file in &answers {
        for item in read_lines(file) {
            let id = item["id"].as_str().unwrap_or_default().to_owned();
            let Some(Value::Array(calls)) = item.get("ground_truth") else {
                continue;
            };
            for call in calls {
                let Value::Object(call) = call else {
                    // Multi-turn answers are Python source, memory and web search answers are text.
                    *report.skipped_calls.entry("not a function call (multi-turn Python source, memory or web-search text)".into()).or_default() += 1;
                    continue;
                };
                for (name, arguments) in call {
                    let Some((key, parameters)) = definitions.get(&(id.clone(), name.clone()))
                    else {
                        *report
                            .skipped_calls
                            .entry("no definition with this name for the question".into())
                            .or_default() += 1;
                        continue;
                    };
                    let Some(Ok(runtime)) = runtimes.get(key) else {
                        *report
                            .skipped_calls
                            .entry("its definition was refused".into())
                            .or_default() += 1;
                        continue;
                    };
                    report.calls += 1;
                    let properties = parameters.get("properties");
                    let mut built = Map::new();
                    if let Value::Object(arguments) = arguments {
                        for (param, alternatives) in arguments {
                            let schema = properties.and_then(|p| p.get(param));
                            if let Some(value) = pick(alternatives, schema) {
                                built.insert(param.clone(), value);
                            }
                        }
                    }
                    let built = Value::Object(built);
                    match runtime.check(name, &built) {
                        Ok(()) => report.accepted += 1,
                        Err(failure) => {
                            let errors = failure.errors();
                            let first = errors.and_then(|e| e.iter().next());
                            let mut class = first
                                .map(|v| classify(v, &built))
                                .unwrap_or_else(|| failure.code().as_str().to_owned());
                            // A required argument left out by the policy above.
                            if let Some(property) = first.and_then(|v| v.property())
                                && class == "required"
                                && arguments.get(property).is_some()
                            {
                                class = "required, but the ground truth gives only \"\", null or \"dontcare\" (use the default)".to_owned();
                            }
                            *report.rejected.entry(class).or_default() += 1;
                        }
                    }
                }
            }
        }
    }

    eprintln!(
        "definitions: {} ({} distinct); compiled {}, refused {}",
        report.definitions,
        report.distinct,
        report.compiled,
        report.definitions - report.compiled
    );
    for (class, count) in &report.refused {
        eprintln!("  refused: {count} × {class}");
    }
    eprintln!(
        "ground-truth calls checked: {}; accepted {}, rejected {}",
        report.calls,
        report.accepted,
        report.calls - report.accepted
    );
    for (class, count) in &report.rejected {
        eprintln!("  rejected: {count} × {class}");
    }
    for (class, count) in &report.skipped_calls {
        eprintln!("  not checked: {count} × {class}");
    }

    // The figures measured on the corpus copy this project tests against.
    assert_eq!(report.definitions, 8726);
    assert_eq!(report.distinct, 3200);
    assert_eq!(report.compiled, 8632);
    assert_eq!(report.calls, 3208);
    assert_eq!(report.accepted, 3138);
}
