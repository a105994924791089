//! OpenAI Responses: `parse_response` on a whole response and `openai_responses::Stream` on
//! streamed events.
//!
//! Input: the provider-target layout (see `tool_fuzz::Input`). For a whole response, its calls
//! are also streamed back as `output_item.added`, argument deltas cut at the split lengths,
//! `function_call_arguments.done` (bit 3: without `arguments`, so the deltas count),
//! `output_item.done` and `response.completed`; the stream must yield the same calls, or fail
//! at the first call whose arguments pass the cap (`TooLarge`) or that has no name.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use tool_core::providers::{NameRule, StreamError, openai_responses};
use tool_core::{CallArguments, ToolCall};
use tool_fuzz::{Input, Mode, stream};

type Stream = openai_responses::Stream;

fuzz_target!(|data: &[u8]| {
    let input = Input::parse(data);
    let names = tool_fuzz::names(NameRule::OpenAi);
    let cap = input.max_call_bytes();
    match input.mode() {
        Mode::Whole => {
            let Some(body) = tool_fuzz::json_body(input.body) else {
                return;
            };
            stream::<Stream>(std::slice::from_ref(&body), &names, cap);
            let calls = match openai_responses::parse_response(&body, &names) {
                Ok(calls) => calls,
                Err(error) => {
                    assert!(!error.to_string().is_empty());
                    return;
                }
            };
            calls.iter().for_each(tool_fuzz::check_call);
            let streamed = stream::<Stream>(&events(&calls, &input), &names, cap);
            // The first call the stream cannot yield decides the error.
            let first_bad = calls.iter().position(|c| text(c).len() > cap || c.provider_name().is_empty());
            match first_bad {
                Some(at) if text(&calls[at]).len() > cap => assert!(
                    matches!(streamed.error, Some(StreamError::TooLarge { .. })),
                    "an over-cap call was not refused: {:?}",
                    streamed.error
                ),
                Some(_) => assert!(
                    matches!(streamed.error, Some(StreamError::Protocol { .. })),
                    "a call without a name was not refused: {:?}",
                    streamed.error
                ),
                None => tool_fuzz::assert_same_calls(&calls, &streamed, true, "openai responses"),
            }
        }
        Mode::Sse => {
            let events = tool_fuzz::sse_events_split(input.body, &input.splits);
            stream::<Stream>(&tool_fuzz::event_values(&events), &names, cap);
        }
        Mode::Lines => {
            if let Some(values) = tool_fuzz::json_lines(input.body) {
                stream::<Stream>(&values, &names, cap);
            }
        }
    }
});

fn text(call: &ToolCall) -> &str {
    match call.raw_arguments() {
        CallArguments::Text(text) => text,
        CallArguments::Json(_) => unreachable!("responses arguments are text"),
    }
}

/// The events a server would stream for `calls`.
fn events(calls: &[ToolCall], input: &Input<'_>) -> Vec<Value> {
    let mut events = vec![json!({"type": "response.created", "response": {"output": []}})];
    let mut items = Vec::new();
    for (index, call) in calls.iter().enumerate() {
        let id = format!("fc_{index}");
        let arguments = text(call);
        let item = |arguments: &str, status: &str| {
            json!({"type": "function_call", "id": id, "call_id": call.call_id(),
                   "name": call.provider_name(), "arguments": arguments, "status": status})
        };
        events.push(json!({"type": "response.output_item.added", "output_index": index,
                           "item": item("", "in_progress")}));
        for piece in tool_fuzz::split_str(arguments, &input.splits, index) {
            events.push(json!({"type": "response.function_call_arguments.delta",
                               "item_id": id, "output_index": index, "delta": piece}));
        }
        let mut done = json!({"type": "response.function_call_arguments.done",
                              "item_id": id, "output_index": index});
        if !input.flag(3) {
            done["arguments"] = Value::from(arguments);
        }
        events.push(done);
        let complete = item(arguments, "completed");
        events.push(json!({"type": "response.output_item.done", "output_index": index,
                           "item": complete}));
        items.push(complete);
    }
    events.push(json!({"type": "response.completed", "response": {"output": items}}));
    events
}
