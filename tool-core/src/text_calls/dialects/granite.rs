//! IBM Granite: `<function_call>{…}` or `<|tool_call|>[{…}, …]`, repeated.

use std::ops::Range;

use crate::call::ToolCall;
use crate::text_calls::Marker;
use crate::text_calls::read::tagged;
use crate::text_calls::render::write_call_object;
use crate::text_calls::scan::Table;
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
