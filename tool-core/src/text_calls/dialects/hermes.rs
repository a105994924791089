//! Hermes and Qwen: `<tool_call>{…}</tool_call>`, repeated for parallel calls.

use std::ops::Range;

use crate::call::ToolCall;
use crate::text_calls::Marker;
use crate::text_calls::read::tagged;
use crate::text_calls::render::write_call_object;
use crate::text_calls::scan::Table;
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
