//! Streamed arguments: nothing runs before the provider says a call is complete, over-cap
//! streams stop early, slow streams stop at their time cap.

use std::time::Duration;

use serde_json::{Value, json};
use tool_core::Code;
use tool_core::providers::{NameMap, StreamError, anthropic, openai_chat};

fn chat_chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

fn opening(id: &str) -> Value {
    chat_chunk(
        json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
            "function": {"name": "search", "arguments": ""}}]}),
        None,
    )
}

fn fragment(text: &str) -> Value {
    chat_chunk(
        json!({"tool_calls": [{"index": 0, "function": {"arguments": text}}]}),
        None,
    )
}

#[test]
fn a_prefix_that_parses_is_never_yielded() {
    let mut stream = openai_chat::Stream::new(&NameMap::default());
    assert!(stream.push(&opening("c1")).unwrap().is_empty());
    // `{"q":"a"}` is complete JSON after this fragment, but the call is not complete.
    assert!(stream.push(&fragment(r#"{"q":"a"}"#)).unwrap().is_empty());
    let calls = stream
        .push(&chat_chunk(json!({}), Some("tool_calls")))
        .unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].call_id(), "c1");
}

#[test]
fn an_over_cap_stream_is_aborted_at_the_fragment_that_crosses_the_cap() {
    let mut stream = openai_chat::Stream::new(&NameMap::default()).max_call_bytes(64);
    stream.push(&opening("c1")).unwrap();
    stream.push(&fragment(r#"{"q":""#)).unwrap();
    let mut pushed = 6;
    let error = loop {
        match stream.push(&fragment("xxxxxxxxxx")) {
            Ok(calls) => {
                assert!(calls.is_empty());
                pushed += 10;
                assert!(pushed <= 64, "the cap was not enforced");
            }
            Err(error) => break error,
        }
    };
    assert_eq!(error.code(), Some(Code::InputTooLarge));
    assert!(
        matches!(error, StreamError::TooLarge { limit: 64, .. }),
        "{error}"
    );
}

#[test]
fn an_anthropic_block_with_no_input_is_an_empty_object() {
    let mut stream = anthropic::Stream::new(&NameMap::default());
    let events = [
        json!({"type": "message_start", "message": {"id": "m", "content": []}}),
        json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "now", "input": {}}}),
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": ""}}),
    ];
    for event in &events {
        assert!(stream.push(event).unwrap().is_empty());
    }
    let calls = stream
        .push(&json!({"type": "content_block_stop", "index": 0}))
        .unwrap();
    assert_eq!(calls[0].arguments_value(), Some(json!({})));
}

#[tokio::test(start_paused = true)]
async fn a_stream_longer_than_its_time_cap_is_abandoned() {
    let mut stream =
        openai_chat::Stream::new(&NameMap::default()).max_duration(Duration::from_secs(5));
    stream.push(&opening("c1")).unwrap();
    tokio::time::advance(Duration::from_secs(3)).await;
    stream.push(&fragment(r#"{"q":"#)).unwrap();
    tokio::time::advance(Duration::from_secs(3)).await;
    let error = stream.push(&fragment(r#""a"}"#)).unwrap_err();
    assert_eq!(error.code(), Some(Code::Timeout));
    assert_eq!(error.to_string(), "the stream ran longer than 5000 ms");
}
