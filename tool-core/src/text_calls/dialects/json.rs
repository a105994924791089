//! Call objects as the whole reply, one or a list, bare or in a fence; or a tool name on a
//! line of its own over its arguments.

use std::ops::Range;

use serde_json::Value;

use super::BuiltIn;
use crate::call::ToolCall;
use crate::text_calls::read::{arguments_text, json_calls, json_value, tool_name, unfenced};
use crate::text_calls::render::write_call_object;
use crate::text_calls::{Dialect, Marker, TextCall, TextError};

/// The dialect has no markers: a reply that is wholly calls is read as it.
pub(crate) const MARKERS: &[Marker] = &[];

/// `[{"name": …, "arguments": {…}}, …]`.
pub(crate) fn render(out: &mut String, calls: &[ToolCall]) -> Result<(), TextError> {
    out.push('[');
    for (i, call) in calls.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_call_object(out, i, call, "arguments")?;
    }
    out.push(']');
    Ok(())
}

/// Whether the reply's first JSON value looks meant as calls: an object with a `name`, or a
/// list holding one.
pub(crate) fn call_shaped(text: &str) -> bool {
    let body = unfenced(text).0.trim_start();
    let first = serde_json::Deserializer::from_str(body)
        .into_iter::<Value>()
        .next();
    let named = |value: &Value| value.get("name").is_some();
    match first {
        Some(Ok(Value::Object(object))) => {
            object.contains_key("name") || object.contains_key("tool_calls")
        }
        Some(Ok(Value::Array(items))) => items.is_empty() || items.iter().any(named),
        // Not one whole JSON value: it may be a call cut short or written wrong.
        _ => true,
    }
}

/// A reply whose first line is a tool name alone and whose rest is one JSON object (bare or
/// in a fence): the name, and where the object (or its fence) starts.
pub(crate) fn name_line(text: &str) -> Option<(&str, usize)> {
    let start = text.len() - text.trim_start().len();
    let rest = &text[start..];
    // A function's name, not a title or a word (`Result`, `json`, `search`): lowercase first,
    // and more than one word (`snake_case`, `dotted.name`, `camelCase`). The first byte is
    // the name's (the line starts with no space), so a reply that opens with a bracket is
    // ruled out before its line is looked for.
    let first = *rest.as_bytes().first()?;
    if !(first.is_ascii_lowercase() || first == b'_') {
        return None;
    }
    let line = rest.find('\n')?;
    let name = rest[..line].trim_end();
    let words = name
        .bytes()
        .skip(1)
        .any(|c| matches!(c, b'_' | b'.') || c.is_ascii_uppercase());
    if !words || !tool_name(name) {
        return None;
    }
    // A file's name over its contents is not a call.
    const FILES: [&str; 14] = [
        "json", "jsonl", "yaml", "yml", "toml", "txt", "md", "py", "js", "ts", "rs", "csv", "xml",
        "html",
    ];
    if let Some((_, extension)) = name.rsplit_once('.')
        && FILES
            .iter()
            .any(|file| extension.eq_ignore_ascii_case(file))
    {
        return None;
    }
    let after = &rest[line..];
    let object = start + line + (after.len() - after.trim_start().len());
    let body = unfenced(&text[object..]).0.trim_start();
    body.starts_with('{').then_some((name, object))
}

/// The whole reply as call objects (one, or a list).
pub(crate) fn read(text: &str) -> Result<(Vec<TextCall>, Vec<Range<usize>>), TextError> {
    let (body, offset) = unfenced(text);
    if let Some((name, object)) = name_line(body) {
        return name_line_call(text, name, offset + object);
    }
    let trimmed = body.trim_start();
    let at = offset + (body.len() - trimmed.len());
    let (calls, end) = json_calls(text, at)?;
    if !text[end..].trim().is_empty() && text[end..].trim() != "```" {
        let rest = end + (text[end..].len() - text[end..].trim_start().len());
        return Err(TextError::Invalid {
            at: rest,
            reason: "text after the calls in a reply that is only calls".into(),
        });
    }
    Ok((calls, std::iter::once(0..text.len()).collect()))
}

/// A reply that is a tool name on a line of its own, then its arguments as a JSON object
/// (bare or in a fence) at `object`.
pub(crate) fn name_line_call(
    text: &str,
    name: &str,
    object: usize,
) -> Result<(Vec<TextCall>, Vec<Range<usize>>), TextError> {
    let (inner, inner_offset) = unfenced(&text[object..]);
    let at = object + inner_offset + (inner.len() - inner.trim_start().len());
    let (raw, end) = json_value(text, at)?;
    let arguments = arguments_text(raw).map_err(|reason| TextError::Invalid { at, reason })?;
    let rest = text[end..].trim();
    if !rest.is_empty() && rest != "```" && rest.replace(char::is_whitespace, "") != "``````" {
        return Err(TextError::Invalid {
            at: end + (text[end..].len() - text[end..].trim_start().len()),
            reason: "text after the call in a reply that is only a call".into(),
        });
    }
    let start = text.len() - text.trim_start().len();
    let call = TextCall {
        name: name.to_owned(),
        arguments,
        positional: Vec::new(),
        span: start..end,
    };
    Ok((vec![call], std::iter::once(0..text.len()).collect()))
}

/// The dialect, registered in [`super::BUILT_IN`].
pub(crate) const BUILT_IN: BuiltIn = BuiltIn::whole(
    Dialect::Json,
    "json",
    MARKERS,
    |_, text, _| read(text),
    claims_whole,
    render,
)
.meant_as_calls(call_shaped);

/// A call object, or a list of them (or an empty list).
fn claims_whole(text: &str) -> bool {
    match text.as_bytes().first() {
        Some(b'{') => true,
        Some(b'[') => {
            let inner = text[1..].trim_start();
            inner.starts_with('{') || inner.starts_with(']')
        }
        _ => false,
    }
}
