//! IBM Granite: `<function_call>{…}` or `<|tool_call|>[{…}, …]`, repeated.

use std::ops::Range;

use super::BuiltIn;
use crate::call::ToolCall;
use crate::text_calls::Marker;
use crate::text_calls::read::tagged;
use crate::text_calls::render::write_call_object;
use crate::text_calls::scan::Table;
use crate::text_calls::stream::{BlockStream, CallObjects, Opened, Step};
use crate::text_calls::{Dialect, TextCall, TextError};

pub(crate) const FUNCTION_CALL: &str = "<function_call>";
pub(crate) const TOOL_CALL: &str = "<|tool_call|>";

/// The dialect's markers.
pub(crate) const MARKERS: &[Marker] = &[Marker::opens(FUNCTION_CALL), Marker::opens(TOOL_CALL)];

/// Every block of the reply, each ending with its JSON.
pub(crate) fn read(
    table: &Table,
    text: &str,
    detecting: bool,
) -> Result<(Vec<TextCall>, Vec<Range<usize>>), TextError> {
    tagged(
        table,
        text,
        Dialect::Granite,
        &[FUNCTION_CALL, TOOL_CALL],
        None,
        detecting,
    )
}

/// One `<function_call> {…}` per line.
pub(crate) fn render(out: &mut String, calls: &[ToolCall]) -> Result<(), TextError> {
    for (i, call) in calls.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(FUNCTION_CALL);
        out.push(' ');
        write_call_object(out, i, call, "arguments")?;
    }
    Ok(())
}

/// The dialect, registered in [`super::BUILT_IN`].
pub(crate) const BUILT_IN: BuiltIn =
    BuiltIn::blocks(Dialect::Granite, "granite", MARKERS, read, open, render);

/// What a stream reads after the opening `marker` at byte `at`.
fn open(at: usize, marker: &'static Marker) -> Opened {
    Opened::Block(Box::new(Stream(CallObjects::new(
        at,
        at + marker.text().len(),
    ))))
}

/// A block's call object (or list) as it streams in; the block ends with it.
#[derive(Debug)]
struct Stream(CallObjects);

impl BlockStream for Stream {
    fn step(&mut self, text: &str, out: &mut Vec<TextCall>) -> Result<Step, TextError> {
        let Some((calls, end)) = self.0.read(text)? else {
            return Ok(Step::Wait(Some(self.0.start)));
        };
        out.extend(calls);
        Ok(Step::Done(end))
    }
}
