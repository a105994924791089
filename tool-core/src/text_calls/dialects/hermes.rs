//! Hermes and Qwen: `<tool_call>{…}</tool_call>`, repeated for parallel calls.

use std::ops::Range;

use super::BuiltIn;
use crate::call::ToolCall;
use crate::text_calls::Marker;
use crate::text_calls::read::tagged;
use crate::text_calls::render::write_call_object;
use crate::text_calls::scan::Table;
use crate::text_calls::stream::{BlockStream, CallObjects, Opened, Step, skip_space};
use crate::text_calls::{Dialect, TextCall, TextError};

pub(crate) const OPEN: &str = "<tool_call>";
pub(crate) const CLOSE: &str = "</tool_call>";

/// The dialect's markers.
pub(crate) const MARKERS: &[Marker] = &[Marker::opens(OPEN), Marker::closes(CLOSE)];

/// Every `<tool_call>` block of the reply.
pub(crate) fn read(
    table: &Table,
    text: &str,
    detecting: bool,
) -> Result<(Vec<TextCall>, Vec<Range<usize>>), TextError> {
    tagged(
        table,
        text,
        Dialect::Hermes,
        &[OPEN],
        Some(CLOSE),
        detecting,
    )
}

/// One `<tool_call>\n{…}\n</tool_call>` per call, on lines of their own.
pub(crate) fn render(out: &mut String, calls: &[ToolCall]) -> Result<(), TextError> {
    for (i, call) in calls.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(OPEN);
        out.push('\n');
        write_call_object(out, i, call, "arguments")?;
        out.push('\n');
        out.push_str(CLOSE);
    }
    Ok(())
}

/// The dialect, registered in [`super::BUILT_IN`].
pub(crate) const BUILT_IN: BuiltIn =
    BuiltIn::blocks(Dialect::Hermes, "hermes", MARKERS, read, open, render);

/// What a stream reads after the opening `marker` at byte `at`.
fn open(at: usize, marker: &'static Marker) -> Opened {
    Opened::Block(Box::new(Stream::Value(CallObjects::new(
        at,
        at + marker.text().len(),
    ))))
}

/// A `<tool_call>` block as it streams in.
#[derive(Debug)]
enum Stream {
    /// The call object (or list) of the block.
    Value(CallObjects),
    /// The block's calls are read; its `</tool_call>` is awaited from `at`.
    Close { at: usize, calls: Vec<TextCall> },
}

impl BlockStream for Stream {
    fn step(&mut self, text: &str, out: &mut Vec<TextCall>) -> Result<Step, TextError> {
        match self {
            Stream::Value(objects) => {
                let Some((calls, end)) = objects.read(text)? else {
                    return Ok(Step::Wait(Some(objects.start)));
                };
                *self = Stream::Close { at: end, calls };
                Ok(Step::Again)
            }
            Stream::Close { at, calls } => {
                *at = skip_space(text, *at);
                let rest = &text[*at..];
                if rest.starts_with(CLOSE) {
                    out.append(calls);
                    Ok(Step::Done(*at + CLOSE.len()))
                } else if rest.starts_with(OPEN) {
                    out.append(calls);
                    Ok(Step::Done(*at))
                } else if CLOSE.starts_with(rest) || OPEN.starts_with(rest) {
                    Ok(Step::Wait(Some(
                        calls.first().map_or(*at, |c| c.span.start),
                    )))
                } else {
                    Err(TextError::Invalid {
                        at: *at,
                        reason: format!("expected `{CLOSE}` after the call"),
                    })
                }
            }
        }
    }
}
