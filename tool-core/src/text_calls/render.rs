//! Calls written back in a dialect, for the prompt of a model that reads its earlier calls as
//! text.

use std::fmt::Write as _;

use serde_json::Value;
use serde_json::value::RawValue;

use super::{DS_CALL_BEGIN, DS_CALL_END, DS_CALLS_BEGIN, DS_CALLS_END, DS_SEP, Dialect, TextError};
use crate::call::ToolCall;

/// Writes `calls` in `dialect` the way the model writes them, so that a text-only model's prompt
/// can show it the calls it made: [`parse_calls`](super::parse_calls) reads the text back as
/// the same calls (names and arguments), in the same order.
///
/// | dialect | written as |
/// |---|---|
/// | [`Json`](Dialect::Json) | `[{"name": …, "arguments": {…}}, …]` |
/// | [`Hermes`](Dialect::Hermes) | one `<tool_call>\n{"name": …, "arguments": {…}}\n</tool_call>` per call, on lines of their own |
/// | [`Llama3`](Dialect::Llama3) | `<\|python_tag\|>{"name": …, "parameters": {…}}; …` |
/// | [`Mistral`](Dialect::Mistral) | `[TOOL_CALLS][{"name": …, "arguments": {…}}, …]` |
/// | [`Granite`](Dialect::Granite) | one `<function_call> {"name": …, "arguments": {…}}` per line |
/// | [`DeepSeek`](Dialect::DeepSeek) | the call tokens, each call's arguments in a `json` fence |
/// | [`Pythonic`](Dialect::Pythonic) | `[name(key=literal, …), …]` |
///
/// JSON dialects carry each call's arguments as their exact text. Python calls need keyword
/// names that are identifiers and tool names that are dotted identifiers. Markers inside
/// string arguments (a query that quotes `<tool_call>`, say) are written as they are: a
/// reader never takes a marker inside quotes for a call. A call whose name holds a marker is
/// refused. Refusals, and arguments that are not a JSON object, are
/// [`Invalid`](TextError::Invalid) with `at` the index of the call (not a byte offset). No calls
/// render as the empty text. Integers beyond 64 bits
/// are written as floats in Python, as JSON readers without arbitrary precision hold them.
///
/// ```
/// use tool_core::ToolCall;
/// use tool_core::text_calls::{Dialect, parse_calls, render_calls};
///
/// let calls = [ToolCall::new("c1", "get_weather", r#"{"city": "Paris", "days": null}"#)];
/// let text = render_calls(Dialect::Pythonic, &calls).unwrap();
/// assert_eq!(text, "[get_weather(city='Paris', days=None)]");
/// let read = parse_calls(&text, None).unwrap();
/// assert_eq!(read.calls()[0].arguments(), r#"{"city":"Paris","days":null}"#);
/// ```
pub fn render_calls(dialect: Dialect, calls: &[ToolCall]) -> Result<String, TextError> {
    let mut out = String::new();
    if calls.is_empty() {
        return Ok(out);
    }
    for (i, call) in calls.iter().enumerate() {
        if let Some(marker) = MARKERS.iter().find(|m| call.name().contains(*m)) {
            return Err(refuse(
                i,
                format!(
                    "`{}` holds {marker:?}, which a reader would take for a call",
                    call.name()
                ),
            ));
        }
    }
    match dialect {
        Dialect::Json | Dialect::Mistral => {
            if dialect == Dialect::Mistral {
                out.push_str("[TOOL_CALLS]");
            }
            out.push('[');
            for (i, call) in calls.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                call_object(&mut out, i, call, "arguments")?;
            }
            out.push(']');
        }
        Dialect::Hermes => {
            for (i, call) in calls.iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                out.push_str("<tool_call>\n");
                call_object(&mut out, i, call, "arguments")?;
                out.push_str("\n</tool_call>");
            }
        }
        Dialect::Llama3 => {
            out.push_str("<|python_tag|>");
            for (i, call) in calls.iter().enumerate() {
                if i > 0 {
                    out.push_str("; ");
                }
                call_object(&mut out, i, call, "parameters")?;
            }
        }
        Dialect::Granite => {
            for (i, call) in calls.iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                out.push_str("<function_call> ");
                call_object(&mut out, i, call, "arguments")?;
            }
        }
        Dialect::DeepSeek => {
            out.push_str(DS_CALLS_BEGIN);
            for (i, call) in calls.iter().enumerate() {
                let name = call.name();
                if name.is_empty() || name.contains(['\n', '<']) || name.trim() != name {
                    return Err(refuse(
                        i,
                        format!("{name:?} cannot be written as a tool name"),
                    ));
                }
                out.push_str(DS_CALL_BEGIN);
                out.push_str("function");
                out.push_str(DS_SEP);
                out.push_str(name);
                out.push_str("\n```json\n");
                out.push_str(object_text(i, call)?.get());
                out.push_str("\n```");
                out.push_str(DS_CALL_END);
            }
            out.push_str(DS_CALLS_END);
        }
        Dialect::Pythonic => {
            out.push('[');
            for (i, call) in calls.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                python_call(&mut out, i, call)?;
            }
            out.push(']');
        }
    }
    Ok(out)
}

/// Every dialect's markers: in a call's name, one would be read as a call (or make the reply
/// ambiguous).
const MARKERS: [&str; 11] = [
    "<tool_call>",
    "</tool_call>",
    "<|python_tag|>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "<function_call>",
    "<|tool_call|>",
    "<|python_start|>",
    DS_CALLS_BEGIN,
    DS_CALL_BEGIN,
    DS_CALL_END,
];

fn refuse(index: usize, reason: String) -> TextError {
    TextError::Invalid { at: index, reason }
}

/// The call's arguments, checked to be one JSON object, as their exact text.
fn object_text(index: usize, call: &ToolCall) -> Result<Box<RawValue>, TextError> {
    let text = call.arguments_text();
    let raw: Box<RawValue> = serde_json::from_str(text.trim()).map_err(|error| {
        refuse(
            index,
            format!("the arguments of `{}` are not JSON: {error}", call.name()),
        )
    })?;
    if !raw.get().starts_with('{') {
        return Err(refuse(
            index,
            format!("the arguments of `{}` are not a JSON object", call.name()),
        ));
    }
    Ok(raw)
}

/// `{"name": …, "<key>": {…}}`.
fn call_object(
    out: &mut String,
    index: usize,
    call: &ToolCall,
    key: &str,
) -> Result<(), TextError> {
    let arguments = object_text(index, call)?;
    out.push_str("{\"name\": ");
    out.push_str(&Value::from(call.name()).to_string());
    let _ = write!(out, ", \"{key}\": {}}}", arguments.get());
    Ok(())
}

fn identifier(name: &str) -> bool {
    name.bytes()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// `name(key=literal, …)`.
fn python_call(out: &mut String, index: usize, call: &ToolCall) -> Result<(), TextError> {
    if !call.name().split('.').all(identifier) {
        return Err(refuse(
            index,
            format!("`{}` is not a Python name", call.name()),
        ));
    }
    let Some(Value::Object(arguments)) = call.arguments_value() else {
        return Err(refuse(
            index,
            format!("the arguments of `{}` are not a JSON object", call.name()),
        ));
    };
    out.push_str(call.name());
    out.push('(');
    for (i, (key, value)) in arguments.iter().enumerate() {
        if !identifier(key) {
            return Err(refuse(
                index,
                format!("`{key}` cannot be a Python keyword argument"),
            ));
        }
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(key);
        out.push('=');
        python_literal(out, value);
    }
    out.push(')');
    Ok(())
}

/// `value` as the Python literal that reads back as it.
fn python_literal(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::String(s) => python_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                python_literal(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                python_string(out, key);
                out.push_str(": ");
                python_literal(out, item);
            }
            out.push('}');
        }
    }
}

/// A single-quoted Python string: quotes, backslashes and control characters escaped.
fn python_string(out: &mut String, s: &str) {
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\U{:08x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('\'');
}
