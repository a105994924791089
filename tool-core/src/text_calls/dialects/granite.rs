//! IBM Granite: `<function_call>{…}` or `<|tool_call|>[{…}, …]`, repeated.

use std::ops::Range;

use super::BuiltIn;
use crate::call::ToolCall;
use crate::text_calls::Marker;
use crate::text_calls::dialect::{Read, Reader};
use crate::text_calls::read::{json_calls, tagged};
use crate::text_calls::render::write_call_object;
use crate::text_calls::scan::Table;
use crate::text_calls::stream::{BlockStream, JsonEnd, Opened, Step};
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
pub(crate) const BUILT_IN: BuiltIn = BuiltIn {
    dialect: Dialect::Granite,
    name: "granite",
    markers: MARKERS,
    reader: &Granite,
};

struct Granite;

impl Reader for Granite {
    fn read(&self, table: &Table, text: &str, detecting: bool) -> Result<Option<Read>, TextError> {
        read(table, text, detecting).map(Some)
    }

    fn open(&self, at: usize, marker: &'static Marker) -> Opened {
        Opened::Block(Box::new(Stream {
            start: at,
            json: JsonEnd::new(at + marker.text().len()),
        }))
    }

    fn render(&self, out: &mut String, calls: &[ToolCall]) -> Result<(), TextError> {
        render(out, calls)
    }
}

/// A block's call object (or list) as it streams in; the block ends with it.
#[derive(Debug)]
struct Stream {
    start: usize,
    json: JsonEnd,
}

impl BlockStream for Stream {
    fn step(&mut self, text: &str, out: &mut Vec<TextCall>) -> Result<Step, TextError> {
        if self.json.advance(text)?.is_none() {
            return Ok(Step::Wait(Some(self.start)));
        }
        let (calls, end) = json_calls(text, self.json.from)?;
        out.extend(calls);
        Ok(Step::Done(end))
    }
}
