//! OpenAI Chat Completions: `parse_response` on a whole completion and `openai_chat::Stream`
//! on streamed chunks.
//!
//! Input: the provider-target layout (see `tool_fuzz::Input`). For a whole completion, its
//! calls are also streamed back as chunks, each call's arguments cut at the split lengths
//! (bit 3: interleave the calls' fragments; bit 4: the opening chunk carries the first
//! fragment), and the stream must yield the same calls, or `TooLarge` when a call's arguments
//! pass the cap.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use tool_core::providers::{NameRule, StreamError, openai_chat};
use tool_core::{CallArguments, ToolCall};
use tool_fuzz::{Input, Mode, stream};

type Stream = openai_chat::Stream;

fuzz_target!(|data: &[u8]| {
    let input = Input::parse(data);
    let names = tool_fuzz::names(NameRule::OpenAi);
    let cap = input.max_call_bytes();
    match input.mode() {
        Mode::Whole => {
            let Some(body) = tool_fuzz::json_body(input.body) else {
                return;
            };
            // The body as one streamed chunk, too.
            stream::<Stream>(std::slice::from_ref(&body), &names, cap);
            let calls = match openai_chat::parse_response(&body, &names) {
                Ok(calls) => calls,
                Err(error) => {
                    assert!(!error.to_string().is_empty());
                    return;
                }
            };
            calls.iter().for_each(tool_fuzz::check_call);
            let chunks = chunks(&calls, &input);
            let streamed = stream::<Stream>(&chunks, &names, cap);
            let text = |c: &ToolCall| match c.raw_arguments() {
                CallArguments::Text(text) => text.len(),
                CallArguments::Json(_) => unreachable!("chat arguments are text"),
            };
            if calls.iter().any(|c| text(c) > cap) {
                assert!(
                    matches!(streamed.error, Some(StreamError::TooLarge { .. })),
                    "an over-cap call was not refused: {:?}",
                    streamed.error
                );
            } else if calls
                .iter()
                .any(|c| c.call_id().is_empty() || c.provider_name().is_empty())
            {
                // The stream needs an id and a name for each call; a whole completion is
                // read as sent.
                assert!(streamed.error.is_some(), "{:?}", streamed.calls);
            } else {
                tool_fuzz::assert_same_calls(&calls, &streamed, true, "openai chat");
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

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

/// The chunks a server would stream for `calls`.
fn chunks(calls: &[ToolCall], input: &Input<'_>) -> Vec<Value> {
    let mut per_call: Vec<Vec<Value>> = Vec::new();
    for (index, call) in calls.iter().enumerate() {
        let CallArguments::Text(arguments) = call.raw_arguments() else {
            continue;
        };
        let mut pieces = tool_fuzz::split_str(arguments, &input.splits, index).into_iter();
        let first = if input.flag(4) { pieces.next().unwrap_or("") } else { "" };
        let mut chunks = vec![chunk(
            json!({"role": "assistant", "content": null, "tool_calls": [{
                "index": index, "id": call.call_id(), "type": "function",
                "function": {"name": call.provider_name(), "arguments": first}}]}),
            None,
        )];
        for piece in pieces {
            chunks.push(chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                None,
            ));
        }
        per_call.push(chunks);
    }
    let mut all = Vec::new();
    if input.flag(3) {
        let longest = per_call.iter().map(Vec::len).max().unwrap_or(0);
        for turn in 0..longest {
            for chunks in &per_call {
                if let Some(chunk) = chunks.get(turn) {
                    all.push(chunk.clone());
                }
            }
        }
    } else {
        all.extend(per_call.into_iter().flatten());
    }
    all.push(chunk(json!({}), Some("tool_calls")));
    all
}
