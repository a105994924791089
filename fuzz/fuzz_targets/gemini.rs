//! Gemini: `parse_response` on a whole response and `gemini::Stream` on streamed chunks.
//!
//! Input: the provider-target layout (see `tool_fuzz::Input`). For a whole response, its calls
//! are also streamed back, either each `functionCall` whole in its own chunk, or (bit 3, when
//! the arguments are an object without empty containers) as Vertex `partialArgs`: an opening
//! `{name, willContinue}`, one entry per leaf at its JSONPath (bit 4: dotted keys where
//! possible), strings cut at the split lengths and continued with `willContinue`, entries
//! grouped into chunks by the split lengths, then a closing `functionCall`. The stream must
//! yield the same calls (ids compared when the provider gave them or the response has an id),
//! or `TooLarge` when the cap is small.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use tool_core::providers::{NameRule, StreamError, gemini};
use tool_core::{ToolCall};
use tool_fuzz::{Input, Mode, stream};

type Stream = gemini::Stream;

fuzz_target!(|data: &[u8]| {
    let input = Input::parse(data);
    let names = tool_fuzz::names(NameRule::Gemini);
    let cap = input.max_call_bytes();
    match input.mode() {
        Mode::Whole => {
            let Some(body) = tool_fuzz::json_body(input.body) else {
                return;
            };
            stream::<Stream>(std::slice::from_ref(&body), &names, cap);
            let calls = match gemini::parse_response(&body, &names) {
                Ok(calls) => calls,
                Err(error) => {
                    assert!(!error.to_string().is_empty());
                    return;
                }
            };
            calls.iter().for_each(tool_fuzz::check_call);
            if calls.iter().any(|c| c.provider_name().is_empty()) {
                // A streamed `functionCall` without a name continues or closes the open
                // call; a whole response reads it as a call named "".
                return;
            }
            let response_id = body
                .get("candidates")
                .and(body.get("responseId"))
                .and_then(Value::as_str);
            let (chunks, partial) = chunks(&calls, response_id, &input);
            let streamed = stream::<Stream>(&chunks, &names, cap);
            if partial && matches!(streamed.error, Some(StreamError::TooLarge { .. })) {
                assert!(cap < tool_core::providers::DEFAULT_MAX_CALL_BYTES);
                return;
            }
            let ids = response_id.is_some() || calls.iter().all(ToolCall::has_provider_id);
            tool_fuzz::assert_same_calls(&calls, &streamed, ids, "gemini");
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

fn chunk(response_id: Option<&str>, parts: Vec<Value>, finish: Option<&str>) -> Value {
    let mut candidate = json!({"index": 0, "content": {"role": "model", "parts": parts}});
    if let Some(reason) = finish {
        candidate["finishReason"] = Value::from(reason);
    }
    let mut chunk = json!({"candidates": [candidate]});
    if let Some(id) = response_id {
        chunk["responseId"] = Value::from(id);
    }
    chunk
}

/// The chunks a server would stream for `calls`, and whether any call went as `partialArgs`.
fn chunks(calls: &[ToolCall], response_id: Option<&str>, input: &Input<'_>) -> (Vec<Value>, bool) {
    let mut chunks = Vec::new();
    let mut partial = false;
    for (n, call) in calls.iter().enumerate() {
        let args = call.arguments_value().unwrap_or_else(|| json!({}));
        let mut function_call = json!({"name": call.provider_name()});
        if call.has_provider_id() {
            function_call["id"] = Value::from(call.call_id());
        }
        let part = |function_call: Value| {
            let mut part = json!({"functionCall": function_call});
            if let Some(signature) = call.thought_signature() {
                part["thoughtSignature"] = Value::from(signature);
            }
            part
        };
        let entries = if input.flag(3) { leaves(&args, input, n) } else { None };
        match entries {
            None => {
                function_call["args"] = args;
                chunks.push(chunk(response_id, vec![part(function_call)], None));
            }
            Some(entries) => {
                partial = true;
                function_call["willContinue"] = Value::Bool(true);
                chunks.push(chunk(response_id, vec![part(function_call)], None));
                let mut entries = entries.into_iter().peekable();
                let mut turn = n;
                while entries.peek().is_some() {
                    let take = input.splits.get(turn % input.splits.len().max(1)).copied().unwrap_or(usize::MAX);
                    turn += 1;
                    let group: Vec<Value> = entries.by_ref().take(take.max(1)).collect();
                    chunks.push(chunk(
                        response_id,
                        vec![json!({"functionCall": {"partialArgs": group, "willContinue": true}})],
                        None,
                    ));
                }
                chunks.push(chunk(response_id, vec![json!({"functionCall": {}})], None));
            }
        }
    }
    chunks.push(chunk(response_id, vec![json!({"text": ""})], Some("STOP")));
    (chunks, partial)
}

/// One `partialArgs` entry per leaf of `args`, in document order, strings cut in pieces; `None`
/// when `args` is not an object or holds an empty object or array (no leaf to carry them).
fn leaves(args: &Value, input: &Input<'_>, offset: usize) -> Option<Vec<Value>> {
    let Value::Object(map) = args else {
        return None;
    };
    let mut entries = Vec::new();
    let mut stack: Vec<(String, &Value)> = map
        .iter()
        .rev()
        .map(|(key, value)| (format!("${}", segment(key, input)), value))
        .collect();
    while let Some((path, value)) = stack.pop() {
        match value {
            Value::Object(map) if map.is_empty() => return None,
            Value::Array(items) if items.is_empty() => return None,
            Value::Object(map) => stack.extend(
                map.iter()
                    .rev()
                    .map(|(key, value)| (format!("{path}{}", segment(key, input)), value)),
            ),
            Value::Array(items) => stack.extend(
                items.iter().enumerate().rev().map(|(i, value)| (format!("{path}[{i}]"), value)),
            ),
            Value::String(text) => {
                let pieces = tool_fuzz::split_str(text, &input.splits, offset);
                let last = pieces.len() - 1;
                for (i, piece) in pieces.into_iter().enumerate() {
                    entries.push(json!({"jsonPath": path, "stringValue": piece, "willContinue": i < last}));
                }
            }
            Value::Number(number) => entries.push(json!({"jsonPath": path, "numberValue": number})),
            Value::Bool(flag) => entries.push(json!({"jsonPath": path, "boolValue": flag})),
            Value::Null => entries.push(json!({"jsonPath": path, "nullValue": "NULL_VALUE"})),
        }
    }
    Some(entries)
}

/// A key as a JSONPath segment: `.key` for a plain name (bit 4), else `['key']`.
fn segment(key: &str, input: &Input<'_>) -> String {
    let plain = !key.is_empty()
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !key.starts_with(|c: char| c.is_ascii_digit());
    if plain && input.flag(4) {
        format!(".{key}")
    } else {
        let escaped = key.replace('\\', "\\\\").replace('\'', "\\'");
        format!("['{escaped}']")
    }
}
