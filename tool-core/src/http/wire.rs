//! One request and its response through a [`WireFormat`]: the body written and completed, and
//! a streamed response's events handed to the format's [`TurnStream`].

use serde_json::Value;

use crate::model::Message;
use crate::providers::{
    Advertised, RequestError, RequestOptions, SseEvent, StreamError, TurnStream, WireFormat,
};

/// The request body: the format's builder, then what the format adds that the options did
/// not say.
pub(super) fn body(
    format: &dyn WireFormat,
    transcript: &[Message],
    tools: &Advertised,
    options: &RequestOptions,
    model: &str,
    stream: bool,
) -> Result<Value, RequestError> {
    let mut body = format.request(transcript, tools, options)?;
    let Value::Object(map) = &mut body else {
        return Ok(body);
    };
    if tools.tools().is_empty() {
        // Settings about tools (a `tool_choice` of "required", say) make a request with no
        // tools one the provider refuses: a repair request, or a registry with none.
        for key in ["tool_choice", "parallel_tool_calls", "toolConfig"] {
            map.remove(key);
        }
    }
    format.complete_body(map, model, stream);
    Ok(body)
}

/// Why a streamed event could not be taken.
#[derive(Debug)]
pub(super) enum EventError {
    /// The event's data is not JSON.
    Malformed(String),
    /// The format's stream refused it, or the provider reported an error.
    Stream(StreamError),
}

/// Takes one server-sent event into `turn`.
pub(super) fn event(turn: &mut dyn TurnStream, event: &SseEvent) -> Result<(), EventError> {
    if event.data.trim().is_empty() {
        return Ok(());
    }
    if event.is_done() {
        turn.end();
        return Ok(());
    }
    let value: Value = serde_json::from_str(&event.data)
        .map_err(|error| EventError::Malformed(error.to_string()))?;
    if !value.is_object() {
        return Err(EventError::Malformed(
            "the event is not a JSON object".into(),
        ));
    }
    turn.event(&value).map_err(EventError::Stream)
}
