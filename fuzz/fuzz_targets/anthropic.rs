//! Anthropic Messages: `parse_response` on a whole message and `anthropic::Stream` on streamed
//! events.
//!
//! Input: the provider-target layout (see `tool_fuzz::Input`). For a whole message, its
//! `tool_use` blocks are also streamed back as `content_block_start`, `input_json_delta`
//! fragments of the input's JSON text (bit 3: pretty-printed) cut at the split lengths, and
//! `content_block_stop` (bit 4: a text block first); the stream must yield the same calls with
//! the same argument values, or `TooLarge` at the first call whose text passes the cap.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use tool_core::providers::{NameRule, StreamError, anthropic};
use tool_core::{ToolCall};
use tool_fuzz::{Input, Mode, stream};

type Stream = anthropic::Stream;

fuzz_target!(|data: &[u8]| {
    let input = Input::parse(data);
    let names = tool_fuzz::names(NameRule::Anthropic);
    let cap = input.max_call_bytes();
    match input.mode() {
        Mode::Whole => {
            let Some(body) = tool_fuzz::json_body(input.body) else {
                return;
            };
            stream::<Stream>(std::slice::from_ref(&body), &names, cap);
            let calls = match anthropic::parse_response(&body, &names) {
                Ok(calls) => calls,
                Err(error) => {
                    assert!(!error.to_string().is_empty());
                    return;
                }
            };
            calls.iter().for_each(tool_fuzz::check_call);
            let texts: Vec<String> = calls.iter().map(|c| input_text(c, &input)).collect();
            let streamed = stream::<Stream>(&events(&calls, &texts, &input), &names, cap);
            if texts.iter().any(|t| t.len() > cap) {
                assert!(
                    matches!(streamed.error, Some(StreamError::TooLarge { .. })),
                    "an over-cap call was not refused: {:?}",
                    streamed.error
                );
            } else {
                tool_fuzz::assert_same_calls(&calls, &streamed, true, "anthropic");
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

/// The JSON text a server streams for a call's input.
fn input_text(call: &ToolCall, input: &Input<'_>) -> String {
    let value = call.arguments_value().unwrap_or_else(|| json!({}));
    if input.flag(3) {
        serde_json::to_string_pretty(&value).expect("a value serializes")
    } else {
        value.to_string()
    }
}

/// The events a server would stream for `calls`.
fn events(calls: &[ToolCall], texts: &[String], input: &Input<'_>) -> Vec<Value> {
    let mut events = vec![json!({"type": "message_start",
                                 "message": {"id": "msg_1", "role": "assistant", "content": []}})];
    let first = usize::from(input.flag(4));
    if first == 1 {
        events.push(json!({"type": "content_block_start", "index": 0,
                           "content_block": {"type": "text", "text": ""}}));
        events.push(json!({"type": "content_block_delta", "index": 0,
                           "delta": {"type": "text_delta", "text": "Let me look."}}));
        events.push(json!({"type": "content_block_stop", "index": 0}));
    }
    for (n, (call, text)) in calls.iter().zip(texts).enumerate() {
        let index = first + n;
        events.push(json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": call.call_id(),
                              "name": call.provider_name(), "input": {}}}));
        for piece in tool_fuzz::split_str(text, &input.splits, n) {
            events.push(json!({"type": "content_block_delta", "index": index,
                               "delta": {"type": "input_json_delta", "partial_json": piece}}));
        }
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}));
    events.push(json!({"type": "message_stop"}));
    events
}
