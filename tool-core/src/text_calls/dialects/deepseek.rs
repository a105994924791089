//! DeepSeek's tool-call tokens.

use std::ops::Range;

use super::BuiltIn;
use crate::call::ToolCall;
use crate::text_calls::Marker;
use crate::text_calls::read::{arguments_text, json_value, tool_name};
use crate::text_calls::render::{object_text, refuse};
use crate::text_calls::scan::Table;
use crate::text_calls::stream::{BlockStream, JsonEnd, Opened, Step, skip_space};
use crate::text_calls::{Dialect, Seeker, TextCall, TextError};

pub(crate) const DS_CALLS_BEGIN: &str = "<｜tool▁calls▁begin｜>";
pub(crate) const DS_CALLS_END: &str = "<｜tool▁calls▁end｜>";
pub(crate) const DS_CALL_BEGIN: &str = "<｜tool▁call▁begin｜>";
pub(crate) const DS_CALL_END: &str = "<｜tool▁call▁end｜>";
pub(crate) const DS_SEP: &str = "<｜tool▁sep｜>";

/// The dialect's markers. The wrapper's end may stand after all calls.
pub(crate) const MARKERS: &[Marker] = &[
    Marker::opens(DS_CALLS_BEGIN),
    Marker::opens(DS_CALL_BEGIN),
    Marker::closes(DS_CALL_END),
    Marker::trails(DS_CALLS_END),
    Marker::closes(DS_SEP),
];

/// The call tokens, each call's arguments in a `json` fence.
pub(crate) fn render(out: &mut String, calls: &[ToolCall]) -> Result<(), TextError> {
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
    Ok(())
}

/// DeepSeek: `<｜tool▁call▁begin｜>[function<｜tool▁sep｜>]name` then the arguments as JSON (in
/// a fence or bare) and `<｜tool▁call▁end｜>`, inside optional
/// `<｜tool▁calls▁begin｜>`…`<｜tool▁calls▁end｜>`.
pub(crate) fn read(
    table: &Table,
    text: &str,
    detecting: bool,
) -> Result<(Vec<TextCall>, Vec<Range<usize>>), TextError> {
    let mut calls = Vec::new();
    let mut used = Vec::new();
    let mut seeker = Seeker::new(table, text, Dialect::DeepSeek);
    let mut from = 0;
    let (mut opened, mut closed) = (false, false);
    while let Some((start, marker)) = seeker.opener(from)? {
        let end = start + marker.text.len();
        match marker.text {
            DS_CALL_BEGIN => {
                let call = deepseek_call(text, start)?;
                used.push(call.span());
                from = call.span.end;
                calls.push(call);
                continue;
            }
            // The wrapper's tokens are left out of the prose.
            DS_CALLS_BEGIN => {
                opened = true;
                used.push(start..end);
            }
            DS_CALLS_END => {
                closed = true;
                used.push(start..end);
            }
            _ => {}
        }
        from = end;
    }
    if opened && !closed && calls.is_empty() {
        return Err(TextError::Unterminated {
            at: text.len(),
            reason: format!("`{DS_CALLS_END}` is missing"),
        });
    }
    seeker.finish(detecting)?;
    Ok((calls, used))
}

/// The most bytes from a DeepSeek call's begin marker to its arguments.
pub(crate) const DS_MAX_HEAD: usize = 1024;

/// The head of a DeepSeek call opened at `start`: its tool name, where its arguments start,
/// and whether they are in a fence. `None`: the text ends before that is known and more may
/// come (never when `complete`).
pub(crate) fn deepseek_head(
    text: &str,
    start: usize,
    complete: bool,
) -> Result<Option<(String, usize, bool)>, TextError> {
    let body = start + DS_CALL_BEGIN.len();
    let invalid = |at: usize, reason: String| TextError::Invalid { at, reason };
    let short = |at: usize, what: &str| {
        if complete {
            Err(TextError::Unterminated {
                at,
                reason: format!("the call ends before {what}"),
            })
        } else {
            Ok(None)
        }
    };
    let capped = text.len() > body + DS_MAX_HEAD;
    let window = &text[body..text.floor_char_boundary(text.len().min(body + DS_MAX_HEAD))];
    let name_byte = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.');
    // The name (or `function`) up to the separator.
    let q = window
        .bytes()
        .position(|c| !(name_byte(c) || c == b' ' || c == b'\t'))
        .unwrap_or(window.len());
    if !window[q..].starts_with(DS_SEP) {
        if !capped && DS_SEP.starts_with(&window[q..]) {
            return short(text.len(), &format!("`{DS_SEP}`"));
        }
        return Err(invalid(
            body,
            format!("`{DS_SEP}` is missing after the tool's name"),
        ));
    }
    let before = window[..q].trim();
    let mut at = q + DS_SEP.len();
    // V3 writes `function<sep>name\n```json\n{…}\n```; later ones `name<sep>{…}`.
    let name = if before == "function" {
        let rest = &window[at..];
        let len = rest
            .bytes()
            .position(|c| !name_byte(c))
            .unwrap_or(rest.len());
        if len == rest.len() && !capped {
            return short(text.len(), "the arguments");
        }
        at += len;
        &rest[..len]
    } else {
        before
    };
    if !tool_name(name) {
        return Err(invalid(body, format!("{name:?} is not a tool name")));
    }
    let rest = &window[at..];
    at += rest.len() - rest.trim_start().len();
    let rest = &window[at..];
    let fenced = rest.starts_with("```");
    if fenced {
        at += 3;
        let label = window[at..]
            .bytes()
            .take_while(u8::is_ascii_alphabetic)
            .count();
        if at + label == window.len() && !capped {
            return short(text.len(), "the arguments");
        }
        if !(label == 0 || window[at..at + label].eq_ignore_ascii_case("json")) {
            return Err(invalid(
                body + at,
                "the arguments' fence is not JSON".into(),
            ));
        }
        at += label;
    } else if rest.is_empty() || "```".starts_with(rest) {
        if !capped {
            return short(text.len(), "the arguments");
        }
        return Err(invalid(body, "the call's head is too long".into()));
    }
    Ok(Some((name.to_owned(), body + at, fenced)))
}

/// One DeepSeek call opened at `start` (its begin marker), read up to its end marker.
pub(crate) fn deepseek_call(text: &str, start: usize) -> Result<TextCall, TextError> {
    let Some((name, args_at, fenced)) = deepseek_head(text, start, true)? else {
        return Err(TextError::Unterminated {
            at: text.len(),
            reason: "the call is cut off".into(),
        });
    };
    let (raw, mut at) = json_value(text, args_at)?;
    let arguments = arguments_text(raw).map_err(|reason| TextError::Invalid {
        at: args_at,
        reason,
    })?;
    let mut expect = |token: &str| {
        let rest = &text[at..];
        let rest_at = at + (rest.len() - rest.trim_start().len());
        let rest = &text[rest_at..];
        if rest.starts_with(token) {
            at = rest_at + token.len();
            Ok(())
        } else if token.starts_with(rest) {
            Err(TextError::Unterminated {
                at: rest_at,
                reason: format!("`{token}` is missing"),
            })
        } else {
            Err(TextError::Invalid {
                at: rest_at,
                reason: format!("expected `{token}` after the arguments"),
            })
        }
    };
    if fenced {
        expect("```")?;
    }
    expect(DS_CALL_END)?;
    Ok(TextCall {
        name,
        arguments,
        positional: Vec::new(),
        span: start..at,
    })
}

/// The dialect, registered in [`super::BUILT_IN`].
pub(crate) const BUILT_IN: BuiltIn =
    BuiltIn::blocks(Dialect::DeepSeek, "deepseek", MARKERS, read, open, render);

/// What a stream reads after the opening `marker` at byte `at`.
fn open(at: usize, marker: &'static Marker) -> Opened {
    match marker.text() {
        DS_CALL_BEGIN => Opened::Block(Box::new(Stream::Head { start: at })),
        DS_CALLS_BEGIN => Opened::Skip(at + DS_CALLS_BEGIN.len()),
        _ => Opened::Rest,
    }
}

/// A DeepSeek call as it streams in.
#[derive(Debug)]
enum Stream {
    /// A call opened at `start`, up to its arguments.
    Head { start: usize },
    /// Its arguments, in a fence if `fenced`.
    Value {
        start: usize,
        json: JsonEnd,
        fenced: bool,
    },
    /// After the arguments (whitespace read up to `at`), the fence's end if `fenced`, then
    /// the end marker.
    Tail {
        start: usize,
        at: usize,
        fenced: bool,
    },
}

impl BlockStream for Stream {
    fn step(&mut self, text: &str, out: &mut Vec<TextCall>) -> Result<Step, TextError> {
        match self {
            Stream::Head { start } => match deepseek_head(text, *start, false)? {
                None => Ok(Step::Wait(Some(*start))),
                Some((_, args, fenced)) => {
                    *self = Stream::Value {
                        start: *start,
                        json: JsonEnd::new(args),
                        fenced,
                    };
                    Ok(Step::Again)
                }
            },
            Stream::Value {
                start,
                json,
                fenced,
            } => {
                let Some(end) = json.advance(text)? else {
                    return Ok(Step::Wait(Some(*start)));
                };
                *self = Stream::Tail {
                    start: *start,
                    at: end,
                    fenced: *fenced,
                };
                Ok(Step::Again)
            }
            Stream::Tail { start, at, fenced } => {
                *at = skip_space(text, *at);
                let rest = &text[*at..];
                let token = if *fenced { "```" } else { DS_CALL_END };
                if rest.starts_with(token) {
                    if *fenced {
                        *at += token.len();
                        *fenced = false;
                        return Ok(Step::Again);
                    }
                    let call = deepseek_call(text, *start)?;
                    let end = call.span.end;
                    out.push(call);
                    Ok(Step::Done(end))
                } else if token.starts_with(rest) {
                    Ok(Step::Wait(Some(*start)))
                } else {
                    Err(TextError::Invalid {
                        at: *at,
                        reason: format!("expected `{token}` after the arguments"),
                    })
                }
            }
        }
    }
}
