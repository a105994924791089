//! Mistral: `[TOOL_CALLS]` then a list of call objects, or `name[ARGS]{…}`.

use std::ops::Range;

use crate::call::ToolCall;
use crate::text_calls::Marker;
use crate::text_calls::read::{arguments_text, json_calls, json_value, tool_name};
use crate::text_calls::scan::Table;
use crate::text_calls::{Dialect, Seeker, TextCall, TextError};

pub(crate) const TOOL_CALLS: &str = "[TOOL_CALLS]";
pub(crate) const ARGS: &str = "[ARGS]";

/// The dialect's markers.
pub(crate) const MARKERS: &[Marker] = &[Marker::opens(TOOL_CALLS), Marker::closes(ARGS)];

/// `[TOOL_CALLS][{"name": …, "arguments": {…}}, …]`.
pub(crate) fn render(out: &mut String, calls: &[ToolCall]) -> Result<(), TextError> {
    out.push_str(TOOL_CALLS);
    super::json::render(out, calls)
}

/// Mistral: `[TOOL_CALLS]` then a JSON list of call objects, or `name[ARGS]{…}` (repeated
/// with more `[TOOL_CALLS]` markers).
pub(crate) fn read(
    table: &Table,
    text: &str,
    detecting: bool,
) -> Result<(Vec<TextCall>, Vec<Range<usize>>), TextError> {
    let mut calls = Vec::new();
    let mut used = Vec::new();
    let mut seeker = Seeker::new(table, text, Dialect::Mistral);
    let mut from = 0;
    while let Some((start, marker)) = seeker.opener(from)? {
        let body = start + marker.text.len();
        let rest = text[body..].trim_start();
        let end = if rest.starts_with('[') || rest.starts_with('{') {
            let (mut found, end) = json_calls(text, body)?;
            calls.append(&mut found);
            end
        } else {
            let Some(args) = text[body..].find(ARGS) else {
                return Err(TextError::Unterminated {
                    at: body,
                    reason: format!("`{ARGS}` is missing after the tool's name"),
                });
            };
            let name = mistral_name(text, body, body + args)?;
            let call = mistral_call(text, start, name, body + args + ARGS.len())?;
            let end = call.span.end;
            calls.push(call);
            end
        };
        used.push(start..end);
        from = end;
    }
    seeker.finish(detecting)?;
    Ok((calls, used))
}

/// The tool name of a Mistral `name[ARGS]` call, written from `body` to `args` (where
/// `[ARGS]` starts).
pub(crate) fn mistral_name(text: &str, body: usize, args: usize) -> Result<String, TextError> {
    let name = text[body..args].trim();
    if !tool_name(name) {
        return Err(TextError::Invalid {
            at: body,
            reason: format!("{name:?} is not a tool name"),
        });
    }
    Ok(name.to_owned())
}

/// A Mistral `name[ARGS]{…}` call opened at `start`, its arguments from `at`.
pub(crate) fn mistral_call(
    text: &str,
    start: usize,
    name: String,
    at: usize,
) -> Result<TextCall, TextError> {
    let (raw, end) = json_value(text, at)?;
    let arguments = arguments_text(raw).map_err(|reason| TextError::Invalid { at, reason })?;
    Ok(TextCall {
        name,
        arguments,
        positional: Vec::new(),
        span: start..end,
    })
}
