//! Calls written back in a dialect, for the prompt of a model that reads its earlier calls as
//! text.

use std::fmt::Write as _;

use serde_json::Value;
use serde_json::value::RawValue;

use super::{Dialect, Dialects, TextError};
use crate::call::ToolCall;

/// Writes `calls` in `dialect` the way the model writes them, so that a text-only model's prompt
/// can show it the calls it made: [`parse_calls`](super::parse_calls) reads the text back as
/// the same calls (names and arguments), in the same order.
///
/// | dialect | written as |
/// |---|---|
/// | [`Json`](Dialect::Json) | `[{"name": …, "arguments": {…}}, …]` |
/// | [`Hermes`](Dialect::Hermes) | one `<tool_call>\n{"name": …, "arguments": {…}}\n</tool_call>` per call, on lines of their own |
/// | [`Llama3`](Dialect::Llama3) | `<\|python_tag\|>{"name": …, "parameters": {…}}; …` |
/// | [`Mistral`](Dialect::Mistral) | `[TOOL_CALLS][{"name": …, "arguments": {…}}, …]` |
/// | [`Granite`](Dialect::Granite) | one `<function_call> {"name": …, "arguments": {…}}` per line |
/// | [`DeepSeek`](Dialect::DeepSeek) | the call tokens, each call's arguments in a `json` fence |
/// | [`Pythonic`](Dialect::Pythonic) | `[name(key=literal, …), …]` |
///
/// JSON dialects carry each call's arguments as their exact text. Python calls need keyword
/// names that are identifiers and tool names that are dotted identifiers. Markers inside
/// string arguments (a query that quotes `<tool_call>`, say) are written as they are: a
/// reader never takes a marker inside quotes for a call. A call whose name holds a marker is
/// refused. Refusals, and arguments that are not a JSON object, are
/// [`Invalid`](TextError::Invalid) with `at` the index of the call (not a byte offset). No calls
/// render as the empty text. Integers beyond 64 bits
/// are written as floats in Python, as JSON readers without arbitrary precision hold them.
///
/// ```
/// use tool_core::ToolCall;
/// use tool_core::text_calls::{Dialect, parse_calls, render_calls};
///
/// let calls = [ToolCall::new("c1", "get_weather", r#"{"city": "Paris", "days": null}"#)];
/// let text = render_calls(Dialect::Pythonic, &calls).unwrap();
/// assert_eq!(text, "[get_weather(city='Paris', days=None)]");
/// let read = parse_calls(&text, None).unwrap();
/// assert_eq!(read.calls()[0].arguments(), r#"{"city":"Paris","days":null}"#);
/// ```
pub fn render_calls(dialect: Dialect, calls: &[ToolCall]) -> Result<String, TextError> {
    render_in(&Dialects::new(), dialect, calls)
}

/// [`render_calls`] over `set`.
pub(crate) fn render_in(
    set: &Dialects,
    dialect: Dialect,
    calls: &[ToolCall],
) -> Result<String, TextError> {
    let mut out = String::new();
    let reader = set.reader(dialect)?;
    if calls.is_empty() {
        return Ok(out);
    }
    let markers = set.table().iter().flat_map(|(_, markers)| markers.iter());
    for (i, call) in calls.iter().enumerate() {
        // In a call's name, a marker would be read as a call (or make the reply ambiguous).
        if let Some(marker) = markers.clone().find(|m| call.name().contains(m.text())) {
            return Err(refuse(
                i,
                format!(
                    "`{}` holds {:?}, which a reader would take for a call",
                    call.name(),
                    marker.text()
                ),
            ));
        }
    }
    reader.render(&mut out, calls)?;
    Ok(out)
}

pub(crate) fn refuse(index: usize, reason: String) -> TextError {
    TextError::Invalid { at: index, reason }
}

/// The call's arguments, checked to be one JSON object, as their exact text.
pub(crate) fn object_text(index: usize, call: &ToolCall) -> Result<Box<RawValue>, TextError> {
    let text = call.arguments_text();
    let raw: Box<RawValue> = serde_json::from_str(text.trim()).map_err(|error| {
        refuse(
            index,
            format!("the arguments of `{}` are not JSON: {error}", call.name()),
        )
    })?;
    if !raw.get().starts_with('{') {
        return Err(refuse(
            index,
            format!("the arguments of `{}` are not a JSON object", call.name()),
        ));
    }
    Ok(raw)
}

/// `{"name": …, "<key>": {…}}`.
pub(crate) fn write_call_object(
    out: &mut String,
    index: usize,
    call: &ToolCall,
    key: &str,
) -> Result<(), TextError> {
    let arguments = object_text(index, call)?;
    out.push_str("{\"name\": ");
    out.push_str(&Value::from(call.name()).to_string());
    let _ = write!(out, ", \"{key}\": {}}}", arguments.get());
    Ok(())
}
