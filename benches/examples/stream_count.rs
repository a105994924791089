//! Pushes one streamed OpenAI Chat call of `<size>` bytes of arguments through the accumulator
//! `<n>` times, for instruction counts: `stream_count <size> <n>`.

use serde_json::{Value, json};
use tool_core::providers::{NameMap, openai_chat};

fn main() {
    let mut args = std::env::args().skip(1);
    let size: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1024);
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let text = format!(r#"{{"data":"{}"}}"#, "x".repeat(size.saturating_sub(11)));
    let chunk = |delta: Value, finish: Option<&str>| json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    let mut chunks = vec![chunk(
        json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "upload", "arguments": ""}}]}),
        None,
    )];
    for piece in text.as_bytes().chunks(32) {
        let piece = String::from_utf8_lossy(piece);
        chunks.push(chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
            None,
        ));
    }
    chunks.push(chunk(json!({}), Some("tool_calls")));
    let names = NameMap::default();
    for _ in 0..n {
        let mut stream = openai_chat::Stream::new(&names).max_call_bytes(2 << 20);
        let calls: usize = chunks
            .iter()
            .map(|c| stream.push(c).map_or(0, |calls| calls.len()))
            .sum();
        assert_eq!(calls, 1);
    }
}
