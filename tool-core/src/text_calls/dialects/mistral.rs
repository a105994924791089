//! Mistral: `[TOOL_CALLS]` then a list of call objects, or `name[ARGS]{…}`.

use std::ops::Range;

use super::BuiltIn;
use crate::call::ToolCall;
use crate::text_calls::Marker;
use crate::text_calls::read::{arguments_text, json_calls, json_value, tool_name};
use crate::text_calls::scan::Table;
use crate::text_calls::stream::{
    BlockStream, CallObjects, JsonEnd, Opened, Step, back_off, skip_space,
};
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

/// The dialect, registered in [`super::BUILT_IN`].
pub(crate) const BUILT_IN: BuiltIn =
    BuiltIn::blocks(Dialect::Mistral, "mistral", MARKERS, read, open, render);

/// What a stream reads after the opening `marker` at byte `at`.
fn open(at: usize, marker: &'static Marker) -> Opened {
    let body = at + marker.text().len();
    Opened::Block(Box::new(Stream::Head {
        start: at,
        body,
        scan: body,
    }))
}

/// A `[TOOL_CALLS]` block as it streams in.
#[derive(Debug)]
enum Stream {
    /// After `[TOOL_CALLS]` at `start` (ending at `body`; whitespace read up to `scan`), a
    /// list of calls or `name[ARGS]`.
    Head {
        start: usize,
        body: usize,
        scan: usize,
    },
    /// A tool name from `body` up to `[ARGS]`, looked for from `scan`.
    Name {
        start: usize,
        body: usize,
        scan: usize,
    },
    /// A list of call objects.
    List(CallObjects),
    /// The arguments of a `name[ARGS]` call.
    Args {
        start: usize,
        json: JsonEnd,
        name: String,
    },
}

impl BlockStream for Stream {
    fn step(&mut self, text: &str, out: &mut Vec<TextCall>) -> Result<Step, TextError> {
        match self {
            Stream::Head { start, body, scan } => {
                let at = skip_space(text, (*scan).max(*body));
                match text.as_bytes().get(at) {
                    None => {
                        *scan = at;
                        Ok(Step::Wait(None))
                    }
                    Some(b'[' | b'{') => {
                        *self = Stream::List(CallObjects::new(*start, *body));
                        Ok(Step::Again)
                    }
                    Some(_) => {
                        *self = Stream::Name {
                            start: *start,
                            body: *body,
                            scan: at,
                        };
                        Ok(Step::Again)
                    }
                }
            }
            Stream::Name { start, body, scan } => {
                let from = (*scan).max(*body);
                let Some(found) = text[from..].find(ARGS) else {
                    *scan = back_off(text, ARGS.len()).max(*body);
                    return Ok(Step::Wait(Some(*start)));
                };
                let args = from + found;
                let name = mistral_name(text, *body, args)?;
                *self = Stream::Args {
                    start: *start,
                    json: JsonEnd::new(args + ARGS.len()),
                    name,
                };
                Ok(Step::Again)
            }
            Stream::List(objects) => {
                let Some((calls, end)) = objects.read(text)? else {
                    return Ok(Step::Wait(Some(objects.start)));
                };
                out.extend(calls);
                Ok(Step::Done(end))
            }
            Stream::Args { start, json, name } => {
                let Some(end) = json.advance(text)? else {
                    return Ok(Step::Wait(Some(*start)));
                };
                out.push(mistral_call(text, *start, std::mem::take(name), json.from)?);
                Ok(Step::Done(end))
            }
        }
    }
}
