//! Accumulating streamed tool-call arguments: throughput on 1 KiB, 64 KiB and 1 MiB of
//! arguments sent in 32-byte fragments, for OpenAI Chat and Anthropic. Equal MB/s across sizes
//! is the linear scaling the accumulators promise.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};
use tool_core::providers::{NameMap, anthropic, openai_chat};

const FRAGMENT: usize = 32;

/// Arguments of `size` bytes: `{"data":"xxx…"}`.
fn arguments(size: usize) -> String {
    format!(r#"{{"data":"{}"}}"#, "x".repeat(size.saturating_sub(11)))
}

fn fragments(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = FRAGMENT.min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        out.push(&rest[..end]);
        rest = &rest[end..];
    }
    out
}

fn chat_chunks(args: &str) -> Vec<Value> {
    let chunk = |delta: Value, finish: Option<&str>| json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    let mut chunks = vec![chunk(
        json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "upload", "arguments": ""}}]}),
        None,
    )];
    for piece in fragments(args) {
        chunks.push(chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
            None,
        ));
    }
    chunks.push(chunk(json!({}), Some("tool_calls")));
    chunks
}

fn anthropic_events(args: &str) -> Vec<Value> {
    let mut events = vec![
        json!({"type": "message_start", "message": {"id": "msg_1", "content": []}}),
        json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "upload", "input": {}}}),
    ];
    for piece in fragments(args) {
        events.push(json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": piece}}));
    }
    events.push(json!({"type": "content_block_stop", "index": 0}));
    events
}

fn bench(c: &mut Criterion) {
    let names = NameMap::default();
    let mut group = c.benchmark_group("stream_arguments");
    for size in [1 << 10, 64 << 10, 1 << 20] {
        let args = arguments(size);
        group.throughput(Throughput::Bytes(args.len() as u64));
        let chat = chat_chunks(&args);
        group.bench_with_input(BenchmarkId::new("openai_chat", size), &chat, |b, chunks| {
            b.iter(|| {
                let mut stream = openai_chat::Stream::new(&names).max_call_bytes(2 << 20);
                let mut calls = 0;
                for chunk in chunks {
                    calls += stream.push(black_box(chunk)).map_or(0, |c| c.len());
                }
                assert_eq!(calls, 1);
            })
        });
        let events = anthropic_events(&args);
        group.bench_with_input(BenchmarkId::new("anthropic", size), &events, |b, events| {
            b.iter(|| {
                let mut stream = anthropic::Stream::new(&names).max_call_bytes(2 << 20);
                let mut calls = 0;
                for event in events {
                    calls += stream.push(black_box(event)).map_or(0, |c| c.len());
                }
                assert_eq!(calls, 1);
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
