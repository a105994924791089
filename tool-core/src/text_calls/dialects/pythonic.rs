//! Python call syntax: the whole reply (or its fence) is calls, or they follow
//! `<|python_start|>`.

use std::fmt::Write as _;
use std::ops::Range;

use serde_json::Value;

use super::BuiltIn;
use crate::call::ToolCall;
use crate::text_calls::Marker;
use crate::text_calls::read::unfenced;
use crate::text_calls::render::refuse;
use crate::text_calls::scan::Table;
use crate::text_calls::{Dialect, Seeker, TextCall, TextError, python};

pub(crate) const PYTHON_START: &str = "<|python_start|>";
pub(crate) const PYTHON_END: &str = "<|python_end|>";

/// The dialect's markers. The end token may stand after all calls.
pub(crate) const MARKERS: &[Marker] = &[Marker::opens(PYTHON_START), Marker::trails(PYTHON_END)];

/// Whether `text` starts with `name(` (the name possibly dotted).
pub(crate) fn python_call_start(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    if !(b
        .first()
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        || b.starts_with(b"\\_"))
    {
        return false;
    }
    while i < b.len() {
        if b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.' {
            i += 1;
        } else if b[i] == b'\\' && b.get(i + 1) == Some(&b'_') {
            i += 2;
        } else {
            break;
        }
    }
    b.get(i) == Some(&b'(')
}

/// Whether a text starting with `name(` is meant as nothing but calls: it ends with `)` or
/// `);` (or is cut off inside the call, which then reads as unterminated). Prose that merely
/// starts with a word and a parenthesis (`Note (see below): …`) does not.
pub(crate) fn looks_whole_call(text: &str) -> bool {
    let trimmed = text.trim_end();
    if trimmed.trim_end_matches(';').trim_end().ends_with(')') || !trimmed.contains(')') {
        return true;
    }
    // A literal call and a separator: calls (the next one perhaps cut off).
    let mut reader = python::Reader::new(trimmed, 0);
    reader.call().is_ok() && {
        reader.skip_space();
        matches!(trimmed.as_bytes().get(reader.at()), Some(b';' | b','))
    }
}

/// Python calls: the whole reply (or its one fence) is a call or a list of calls, or the
/// calls stand after `<|python_start|>` (up to an optional `<|python_end|>`).
pub(crate) fn read(
    table: &Table,
    text: &str,
    detecting: bool,
) -> Result<(Vec<TextCall>, Vec<Range<usize>>), TextError> {
    let mut seeker = Seeker::new(table, text, Dialect::Pythonic);
    let (start, used_from) = match seeker.next(0) {
        Some((at, marker)) if marker.opens => {
            // The prose before the marker holds no other call.
            seeker.finish(detecting)?;
            (at + marker.text.len(), at)
        }
        _ => {
            let (body, offset) = unfenced(text);
            (offset + (body.len() - body.trim_start().len()), 0)
        }
    };
    let mut reader = python::Reader::new(text, start);
    let calls = reader.calls()?;
    let end = reader.at();
    let rest = &text[end..];
    let rest = rest.trim_start();
    let allowed_after = ["", "```", PYTHON_END, "<|eom|>", "<|eot|>"];
    if !allowed_after.iter().any(|tail| rest.trim_end() == *tail) {
        return Err(TextError::Invalid {
            at: text.len() - rest.len(),
            reason: "text after the calls in a reply that is only calls".into(),
        });
    }
    let calls = calls
        .into_iter()
        .map(|call| TextCall {
            name: call.name,
            arguments: call.keyword,
            positional: call.positional,
            span: call.span,
        })
        .collect();
    Ok((calls, std::iter::once(used_from..text.len()).collect()))
}

/// `[name(key=literal, …), …]`.
pub(crate) fn render(out: &mut String, calls: &[ToolCall]) -> Result<(), TextError> {
    out.push('[');
    for (i, call) in calls.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        python_call(out, i, call)?;
    }
    out.push(']');
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

/// The dialect, registered in [`super::BUILT_IN`].
pub(crate) const BUILT_IN: BuiltIn = BuiltIn::whole(
    Dialect::Pythonic,
    "pythonic",
    MARKERS,
    read,
    claims_whole,
    render,
);

/// A Python call or a list of them (or of strings holding them), and nothing else.
fn claims_whole(text: &str) -> bool {
    match text.as_bytes().first() {
        None | Some(b'{') => false,
        Some(b'[') => {
            let inner = text[1..].trim_start();
            let quoted = inner
                .strip_prefix(['\'', '"'])
                .is_some_and(python_call_start);
            python_call_start(inner) || quoted
        }
        Some(_) => python_call_start(text) && looks_whole_call(text),
    }
}
