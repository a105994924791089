//! A file-editing tool whose operations are a tagged union, with defaults and formats: what the
//! model is shown, and how a wrong operation is repaired.
//!
//! Run with `cargo run --example edit_file`.

use std::sync::{Arc, Mutex};

use tool_core::testing::ScriptedModel;
use tool_core::{
    Argument, Context, Registry, Runtime, Tool, ToolDef, registry::ToolError, repair::RepairLoop,
};

/// Edits a text file, applying the operations in order.
#[derive(Tool, Debug)]
struct EditFile {
    /// The file, relative to the workspace.
    #[tool(length(min = 1), pattern = r"^[^/]")]
    path: String,
    /// The operations, applied in order.
    #[tool(length(min = 1, max = 20))]
    ops: Vec<Op>,
    /// Why the edit is made, for the change log.
    #[serde(default)]
    reason: Option<String>,
    /// When the edit takes effect (RFC 3339); now if absent.
    #[tool(format = "date-time")]
    #[serde(default)]
    effective: Option<String>,
}

/// One operation on the file.
#[derive(Argument, Debug)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Op {
    /// Inserts `text` before line `line` (1 is the first line).
    Insert {
        #[tool(range(min = 1))]
        line: u32,
        text: String,
    },
    /// Deletes `count` lines from line `line`.
    Delete {
        #[tool(range(min = 1))]
        line: u32,
        /// How many lines.
        #[serde(default = "one")]
        #[tool(range(min = 1, max = 100))]
        count: u32,
    },
    /// Replaces line `line` with `text`.
    Replace {
        #[tool(range(min = 1))]
        line: u32,
        text: String,
    },
}

fn one() -> u32 {
    1
}

/// The file the tool edits, in memory.
type File = Arc<Mutex<Vec<String>>>;

async fn edit(args: EditFile, file: &File) -> Result<String, ToolError> {
    let mut lines = file
        .lock()
        .map_err(|_| ToolError::internal("the file is unavailable"))?;
    for op in &args.ops {
        let at = |line: u32| (line as usize).saturating_sub(1);
        match op {
            Op::Insert { line, text } => {
                let index = at(*line).min(lines.len());
                lines.insert(index, text.clone());
            }
            Op::Delete { line, count } => {
                let start = at(*line).min(lines.len());
                let end = (start + *count as usize).min(lines.len());
                lines.drain(start..end);
            }
            Op::Replace { line, text } => match lines.get_mut(at(*line)) {
                Some(slot) => *slot = text.clone(),
                None => {
                    return Err(ToolError::public(format!(
                        "{} has no line {line}",
                        args.path
                    )));
                }
            },
        }
    }
    Ok(format!("{} now has {} lines", args.path, lines.len()))
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // 1. What the model is shown: one `oneOf` branch per operation, the tag required, each
    //    operation's own fields required, defaults and formats advertised.
    println!("== {} ==\n{}", EditFile::NAME, EditFile::description());
    match serde_json::to_string_pretty(EditFile::input_schema()) {
        Ok(schema) => println!("input schema:\n{schema}"),
        Err(error) => eprintln!("could not render the schema: {error}"),
    }

    // 2. The tag picks the operation; only that operation's mistakes are reported, each at
    //    its pointer.
    let raw = r#"{"path": "notes.txt", "ops": [
        {"type": "insert", "line": 0, "text": "title"},
        {"type": "delete", "line": 2, "count": 500},
        {"type": "move", "line": 1}
    ], "effective": "2025-02-30T10:00:00Z"}"#;
    println!("\n== a broken call ==\n{raw}");
    match EditFile::parse_arguments(raw) {
        Ok(args) => println!("accepted: {args:#?}"),
        Err(errors) => println!("refused, {} problem(s):\n{errors}", errors.len()),
    }

    // 3. Through the repair loop: the model gets the violations back and corrects its call;
    //    the handler runs once, on valid arguments.
    let file: File = Arc::new(Mutex::new(vec![
        "first".to_owned(),
        "second".to_owned(),
        "third".to_owned(),
    ]));
    let mut registry = Registry::new();
    let handler_file = Arc::clone(&file);
    let registered = registry.register(ToolDef::new(move |args: EditFile, _: &Context| {
        let file = Arc::clone(&handler_file);
        async move { edit(args, &file).await }
    }));
    if let Err(error) = registered {
        eprintln!("could not register the tool: {error}");
        return;
    }
    let model = ScriptedModel::new().answer(
        r#"{"path": "notes.txt", "ops": [
            {"type": "insert", "line": 1, "text": "title"},
            {"type": "delete", "line": 3}
        ]}"#,
    );
    let repair = RepairLoop::new(Runtime::new(registry), model);
    let cx = Context::builder("alice").tenant("acme").build();
    let result = repair
        .call(
            "edit_1",
            "edit_file",
            r#"{"path": "notes.txt", "ops": [{"type": "insert", "line": 0, "text": "title"}, {"line": 3}]}"#,
            &cx,
        )
        .await;
    println!("\n== repaired ==");
    for request in repair.model().requests() {
        println!(
            "(sent to the model, asking for attempt {} of {}):\n{}",
            request.attempt, request.max_attempts, request.feedback
        );
    }
    println!(
        "-> {:?} after {} attempt(s)",
        result.end(),
        result.attempts()
    );
    match result.outcome().result() {
        Ok(output) => println!("-> ok: {output}"),
        Err(failure) => println!("-> {}: {}", failure.code(), failure.message()),
    }
    if let Ok(lines) = file.lock() {
        println!("file: {lines:?}");
    }
}
