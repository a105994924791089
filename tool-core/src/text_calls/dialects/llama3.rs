//! Llama 3.1 to 3.3: `<|python_tag|>` and JSON call objects.

use std::ops::Range;

use super::BuiltIn;
use crate::call::ToolCall;
use crate::text_calls::Marker;
use crate::text_calls::read::json_calls;
use crate::text_calls::render::write_call_object;
use crate::text_calls::scan::Table;
use crate::text_calls::stream::{BlockStream, CallObjects, Opened, Step, skip_space};
use crate::text_calls::{Dialect, Seeker, TextCall, TextError};

pub(crate) const PYTHON_TAG: &str = "<|python_tag|>";

/// The dialect's markers.
pub(crate) const MARKERS: &[Marker] = &[Marker::opens(PYTHON_TAG)];

/// `<|python_tag|>{"name": …, "parameters": {…}}; …`.
pub(crate) fn render(out: &mut String, calls: &[ToolCall]) -> Result<(), TextError> {
    out.push_str(PYTHON_TAG);
    for (i, call) in calls.iter().enumerate() {
        if i > 0 {
            out.push_str("; ");
        }
        write_call_object(out, i, call, "parameters")?;
    }
    Ok(())
}

/// Llama 3: `<|python_tag|>` then call objects separated by `;` (repeated); or a reply that is
/// one call object.
pub(crate) fn read(
    table: &Table,
    text: &str,
    detecting: bool,
) -> Result<(Vec<TextCall>, Vec<Range<usize>>), TextError> {
    let mut seeker = Seeker::new(table, text, Dialect::Llama3);
    let mut calls = Vec::new();
    let mut used = Vec::new();
    let mut from = 0;
    while let Some((start, marker)) = seeker.opener(from)? {
        let mut at = start + marker.text.len();
        loop {
            let (mut found, end) = json_calls(text, at)?;
            calls.append(&mut found);
            at = end;
            let rest = &text[at..];
            let gap = rest.len() - rest.trim_start().len();
            if rest[gap..].starts_with(';') {
                at += gap + 1;
                if text[at..].trim().is_empty() {
                    break;
                }
                continue;
            }
            break;
        }
        let mut end = at;
        for token in ["<|eom_id|>", "<|eot_id|>"] {
            let rest = &text[end..];
            let gap = rest.len() - rest.trim_start().len();
            if rest[gap..].starts_with(token) {
                end += gap + token.len();
            }
        }
        used.push(start..end);
        from = end;
    }
    if used.is_empty() {
        return super::json::read(text);
    }
    seeker.finish(detecting)?;
    Ok((calls, used))
}

/// The dialect, registered in [`super::BUILT_IN`].
pub(crate) const BUILT_IN: BuiltIn =
    BuiltIn::blocks(Dialect::Llama3, "llama3", MARKERS, read, open, render);

/// What a stream reads after the opening `marker` at byte `at`.
fn open(at: usize, marker: &'static Marker) -> Opened {
    Opened::Block(Box::new(Stream::Value(CallObjects::new(
        at,
        at + marker.text().len(),
    ))))
}

/// Calls after `<|python_tag|>` as they stream in.
#[derive(Debug)]
enum Stream {
    /// A call object (or list).
    Value(CallObjects),
    /// After a call (whitespace read up to `at`), a `;` and another call, or the end of the
    /// calls.
    Separator { at: usize },
    /// After a `;` (ending at `body`; whitespace read up to `at`), another call or the end
    /// of the calls.
    Semicolon { body: usize, at: usize },
}

impl BlockStream for Stream {
    fn step(&mut self, text: &str, out: &mut Vec<TextCall>) -> Result<Step, TextError> {
        match self {
            Stream::Value(objects) => {
                let Some((calls, end)) = objects.read(text)? else {
                    return Ok(Step::Wait(Some(objects.start)));
                };
                out.extend(calls);
                *self = Stream::Separator { at: end };
                Ok(Step::Again)
            }
            Stream::Separator { at } => {
                *at = skip_space(text, *at);
                match text.as_bytes().get(*at) {
                    None => Ok(Step::Wait(None)),
                    Some(b';') => {
                        let body = *at + 1;
                        *self = Stream::Semicolon { body, at: body };
                        Ok(Step::Again)
                    }
                    Some(_) => Ok(Step::Done(*at)),
                }
            }
            Stream::Semicolon { body, at } => {
                *at = skip_space(text, *at);
                if *at == text.len() {
                    // Whitespace, or the end of the calls: decided by what comes.
                    return Ok(Step::Wait(None));
                }
                let body = *body;
                *self = Stream::Value(CallObjects::new(body, body));
                Ok(Step::Again)
            }
        }
    }
}
