//! Llama 3.1 to 3.3: `<|python_tag|>` and JSON call objects.

use std::ops::Range;

use crate::call::ToolCall;
use crate::text_calls::Marker;
use crate::text_calls::read::json_calls;
use crate::text_calls::render::write_call_object;
use crate::text_calls::scan::Table;
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
