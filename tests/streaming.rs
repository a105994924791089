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
    // `c1` is only a position: the call is known by an id made here, answered under `c1`.
    assert_eq!(calls[0].provider_call_id(), Some("c1"));
    assert_ne!(calls[0].call_id(), "c1");
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

/// Runs `f` on a thread with a 2 MiB stack, a Tokio worker's default. A stack overflow
/// aborts the whole test binary.
fn on_a_worker_sized_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

/// `{"a": {"a": … {}}}`, `depth` objects deep, built without recursion.
fn nested_objects(depth: usize) -> Value {
    let mut value = Value::Object(serde_json::Map::new());
    for _ in 1..depth {
        let mut map = serde_json::Map::new();
        map.insert("a".to_owned(), value);
        value = Value::Object(map);
    }
    value
}

/// How many objects and arrays deep `value` is, counted without recursion.
fn depth_of(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1)];
    while let Some((value, depth)) = stack.pop() {
        match value {
            Value::Object(map) => stack.extend(map.values().map(|v| (v, depth + 1))),
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            _ => continue,
        }
        deepest = deepest.max(depth);
    }
    deepest
}

/// Drops `value` one level at a time, as serde_json's own drop recurses.
fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(mut value) = stack.pop() {
        match &mut value {
            Value::Object(map) => stack.extend(std::mem::take(map).into_iter().map(|(_, v)| v)),
            Value::Array(items) => stack.append(items),
            _ => {}
        }
    }
}

/// A Vertex chunk that opens and closes a call with one `partialArgs` entry at `$` followed
/// by `.a` `depth` times.
fn gemini_chunk_with_path_depth(depth: usize) -> Value {
    json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {
        "name": "lookup",
        "partialArgs": [{"jsonPath": format!("${}", ".a".repeat(depth)), "stringValue": "x"}],
        "willContinue": false
    }}]}}]})
}

// The attack: one ~28 KB chunk whose JSONPath is `$` and 14,000 `.a` built a 14,000-deep
// value, and dropping that call on a Tokio worker's 2 MiB stack overflowed it.
#[test]
fn a_gemini_path_deeper_than_the_parser_limit_is_a_protocol_error() {
    use tool_core::contract::MAX_DEPTH;
    use tool_core::providers::gemini;

    let limit = MAX_DEPTH as usize;
    on_a_worker_sized_stack(move || {
        let chunk = gemini_chunk_with_path_depth(14_000);
        let mut stream = gemini::Stream::new(&NameMap::default());
        let error = stream.push(&chunk).map(|calls| calls.len()).unwrap_err();
        assert!(matches!(error, StreamError::Protocol { .. }), "{error}");
        assert_eq!(
            error.to_string(),
            "stream protocol error: partialArgs path nests deeper than 127 levels"
        );
        let mut stream = gemini::Stream::new(&NameMap::default());
        let beyond = stream.push(&gemini_chunk_with_path_depth(limit + 1));
        assert!(matches!(beyond, Err(StreamError::Protocol { .. })));

        let mut stream = gemini::Stream::new(&NameMap::default());
        let calls = stream.push(&gemini_chunk_with_path_depth(limit)).unwrap();
        let arguments = calls[0].arguments_value().unwrap();
        assert_eq!(depth_of(&arguments), limit);
    });
}

// A deep value handed to `invoke` used to be serialized recursively to measure it, which
// aborted the process from about 22,000 levels.
#[test]
fn a_value_deeper_than_the_parser_limit_is_refused_by_invoke_without_overflow() {
    use examples::get_weather;
    use tool_core::{Context, Registry, Runtime, ToolDef, contract::MAX_DEPTH};

    let limit = MAX_DEPTH as usize;
    on_a_worker_sized_stack(move || {
        let tokio = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let mut registry = Registry::new();
        registry.register(ToolDef::new(get_weather)).unwrap();
        let runtime = Runtime::new(registry);
        let cx = Context::builder("user-1").build();
        let first_message = |depth: usize| {
            let value = nested_objects(depth);
            let outcome = tokio.block_on(runtime.invoke("", "get_weather", &value, &cx));
            dismantle(value);
            let failure = outcome.failure().expect("refused");
            assert_eq!(failure.code(), Code::InvalidArguments, "depth {depth}");
            failure.errors().unwrap().violations()[0]
                .message()
                .to_owned()
        };
        let refused = "nesting deeper than 127 levels";
        assert_eq!(first_message(100_000), refused);
        assert_eq!(first_message(limit + 1), refused);
        assert_ne!(first_message(limit), refused);
    });
}
