//! Refusals stay small whatever the arguments: the public message, the repair feedback and the
//! transcript entry show the first violations and count the rest, and the violations held as
//! data are bounded, while every violation is still counted.

use std::collections::BTreeMap;

use serde_json::Value;
use tool_core::Code;
use tool_core::ToolCall;
use tool_core::agent::Agent;
use tool_core::model::{Message, Turn};
use tool_core::testing::{ScriptedModel, ScriptedTurns};
use tool_core::{
    ArgumentErrors, Context, Registry, Runtime, Tool, ToolDef, contract::Keyword,
    registry::ToolError, repair::RepairLoop,
};

/// The most bytes a refusal message may take in these tests, whatever the input.
const MESSAGE_CAP: usize = 16 * 1024;

/// Files a task.
#[allow(dead_code)]
#[derive(Tool, Debug)]
struct FileTask {
    /// Title.
    title: String,
    /// Owner.
    owner: String,
    /// Priority.
    priority: u8,
    /// Due date.
    due: String,
    /// Tags.
    tags: Vec<String>,
}

/// Files labelled groups.
#[allow(dead_code)]
#[derive(Tool, Debug)]
struct FileGroups {
    /// Groups of names, by label.
    groups: BTreeMap<String, Vec<String>>,
}

async fn file_task(_: FileTask, _: &Context) -> Result<Value, ToolError> {
    Ok(Value::Null)
}

async fn file_groups(_: FileGroups, _: &Context) -> Result<Value, ToolError> {
    Ok(Value::Null)
}

fn runtime() -> Runtime {
    let mut registry = Registry::new();
    registry.register(ToolDef::new(file_task)).unwrap();
    registry.register(ToolDef::new(file_groups)).unwrap();
    Runtime::new(registry)
}

fn user() -> Context {
    Context::builder("user-1").build()
}

/// `{"tags":[0,0,…]}` of 1,040,004 bytes (under the default 1 MiB cap): 519,997 items of the
/// wrong type and the 4 other fields missing, 520,001 violations. Rendered in full, that was a
/// 20 MB message.
fn half_a_million_violations() -> String {
    let mut text = String::from(r#"{"tags":["#);
    text.push_str(&"0,".repeat(519_996));
    text.push_str("0]}");
    assert_eq!(text.len(), 1_040_004);
    text
}

/// A valid call to `file_task`.
const VALID: &str = r#"{"title":"t","owner":"o","priority":1,"due":"d","tags":[]}"#;

#[tokio::test]
async fn public_message_of_half_a_million_violations_is_capped() {
    let input = half_a_million_violations();
    let outcome = runtime()
        .invoke("c1", "file_task", input.as_str(), &user())
        .await;
    let failure = outcome.failure().expect("refused");
    let message = failure.message();
    assert!(message.len() <= MESSAGE_CAP, "{} bytes", message.len());
    assert!(
        message.starts_with("- /tags/0: expected string, got 0\n"),
        "{message}"
    );
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(lines.len(), ArgumentErrors::MAX_SHOWN + 1);
    assert_eq!(lines[19], "- /tags/19: expected string, got 0");
    assert_eq!(lines[20], "- and 519981 more: 519977 type, 4 required");
}

/// The operator still learns how many violations of each kind there were, and the first
/// ones in full, without the check holding half a million of them.
#[test]
fn every_violation_is_counted_but_only_the_first_are_held() {
    let input = half_a_million_violations();
    let errors = FileTask::parse_arguments(&input).expect_err("refused");
    assert_eq!(errors.total(), 520_001);
    assert_eq!(
        errors.counts(),
        [(Keyword::Type, 519_997), (Keyword::Required, 4)]
    );
    assert_eq!(errors.len(), ArgumentErrors::MAX_KEPT);
    assert_eq!(errors.violations()[999].pointer(), "/tags/999");
}

#[tokio::test]
async fn repair_feedback_of_half_a_million_violations_is_capped() {
    let input = half_a_million_violations();
    let repair = RepairLoop::new(runtime(), ScriptedModel::new().answer(VALID));
    let result = repair
        .call("c1", "file_task", input.as_str(), &user())
        .await;
    assert!(result.outcome().is_ok());
    let requests = repair.model().requests();
    let feedback = &requests[0].feedback;
    assert!(feedback.len() <= MESSAGE_CAP, "{} bytes", feedback.len());
    assert!(
        feedback.contains("\n- /tags/0: expected string, got 0\n"),
        "{feedback}"
    );
}

#[tokio::test]
async fn transcript_entry_of_half_a_million_violations_is_capped() {
    let input = half_a_million_violations();
    let model = ScriptedTurns::new()
        .turn(Turn::calls([ToolCall::new("c1", "file_task", input)]))
        .turn(Turn::answer("done"));
    let report = Agent::new(runtime(), model).run(Vec::new(), &user()).await;
    let entry = report
        .transcript
        .iter()
        .find_map(|message| match message {
            Message::Tool(result) => Some(result),
            _ => None,
        })
        .expect("a tool result");
    assert_eq!(entry.code, Some(Code::InvalidArguments));
    assert!(
        entry.content.len() <= MESSAGE_CAP,
        "{} bytes",
        entry.content.len()
    );
}

/// Every unknown key used to repeat the whole list of known fields on its own line.
#[test]
fn unknown_fields_name_the_known_fields_once() {
    let keys: Vec<String> = (0..200).map(|i| format!(r#""k{i}":0"#)).collect();
    let input = format!("{{{}}}", keys.join(","));
    let errors = FileTask::parse_arguments(&input).expect_err("refused");
    let listing = |text: &str| text.matches("expected one of").count();
    assert_eq!(listing(&errors.to_string()), 1, "{errors}");
    let unknown: Vec<_> = errors
        .iter()
        .filter(|v| v.keyword() == Keyword::AdditionalProperties)
        .collect();
    assert!(unknown.len() > 1);
    assert_eq!(
        unknown[0].message(),
        r#"unknown field; expected one of "title", "owner", "priority", "due", "tags""#
    );
    assert!(unknown[1..].iter().all(|v| v.message() == "unknown field"));
}

/// Each violation inside a long map key used to carry its own copy of the key in its pointer:
/// this 30 KB input held 100 MB of pointers and rendered a 100 MB message.
#[test]
fn a_long_key_is_not_copied_into_every_violation() {
    let key = "é".repeat(5_000);
    let items = vec!["0"; 10_000].join(",");
    let input = format!(r#"{{"groups":{{"{key}":[{items}]}}}}"#);
    let errors = FileGroups::parse_arguments(&input).expect_err("refused");
    let held: usize = errors
        .iter()
        .map(|v| v.pointer().len() + v.message().len())
        .sum();
    assert!(
        held <= ArgumentErrors::MAX_KEPT_BYTES + 2 * input.len(),
        "{held} bytes held for {} bytes of input",
        input.len()
    );
    assert_eq!(errors.total(), 10_000);
    let message = errors.to_string();
    assert!(message.len() <= MESSAGE_CAP, "{} bytes", message.len());
    // Pointers are cut on a character boundary.
    let first = message.lines().next().unwrap_or_default();
    assert_eq!(
        first,
        format!("- /groups/{}…: expected string, got 0", "é".repeat(46))
    );
}
