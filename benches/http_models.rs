//! The HTTP models' own cost. Per streamed byte, for each provider's recorded stream: SSE
//! framing alone (`SseDecoder`) against framing, JSON parsing of each event and the
//! provider's `Stream` accumulator, side by side. And one agent step (a request to a replay
//! server on the loopback, the recorded stream back, its call run) against the same step with
//! a scripted model.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};
use tests::replay::{Api, Exchange, Expect, ReplayServer, Reply, cassette, recorded_reply};
use tool_core::agent::{Agent, RunEnd};
use tool_core::http::{ApiKey, HttpModel};
use tool_core::model::Provider;
use tool_core::model::{Message, Turn};
use tool_core::providers::{
    NameMap, SseDecoder, SseEvent, StreamError, anthropic, gemini, openai_chat, openai_responses,
};
use tool_core::testing::ScriptedTurns;
use tool_core::{
    Context, Registry, Runtime, ToolCall, ToolDef,
    registry::{DynamicTool, ToolError},
};

/// Bytes arrive from the network in pieces of this size.
const READ: usize = 1024;

fn recorded_streams() -> Vec<(&'static str, Vec<u8>)> {
    let sse = |file: &str| tests::read_data(file).into_bytes();
    let chunks = |file: &str| -> Vec<u8> {
        tests::read_data(file)
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| format!("data: {line}\n\n"))
            .collect::<String>()
            .into_bytes()
    };
    let responses = cassette("providers/openai-responses/streamed-call-then-text.cassette.yaml");
    let Reply::Sse(responses) = recorded_reply(&responses, 0) else {
        panic!("the Responses cassette's first body is not a stream");
    };
    let gemini =
        cassette("providers/gemini/streamed-call-with-signature-then-answer.cassette.yaml");
    let Reply::Sse(gemini) = recorded_reply(&gemini, 0) else {
        panic!("the Gemini cassette's first body is not a stream");
    };
    vec![
        (
            "openai_chat",
            sse("providers/openai-chat/parallel-tool-calls.sse.txt"),
        ),
        ("openai_responses", responses),
        (
            "openai_responses_gpt5",
            chunks("providers/openai-responses/single-strict-call-gpt-5.1.chunks.txt"),
        ),
        (
            "anthropic",
            sse("providers/anthropic/text-then-tool-use.sse.txt"),
        ),
        ("gemini", gemini),
        (
            "gemini_vertex",
            chunks("providers/gemini/vertex-no-args-then-partial-args.chunks.txt"),
        ),
    ]
}

fn decode(bytes: &[u8]) -> Vec<SseEvent> {
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    for piece in bytes.chunks(READ) {
        events.extend(decoder.push(piece));
    }
    events.extend(decoder.finish());
    events
}

/// Framing, parsing and accumulation, as the HTTP model does it; the calls completed.
fn accumulate(provider: &str, bytes: &[u8], names: &NameMap) -> Result<usize, StreamError> {
    fn run<S>(
        mut stream: S,
        bytes: &[u8],
        push: fn(&mut S, &Value) -> Result<Vec<ToolCall>, StreamError>,
        finish: fn(S) -> Result<(), StreamError>,
    ) -> Result<usize, StreamError> {
        let mut decoder = SseDecoder::new();
        let mut calls = 0;
        let mut take = |stream: &mut S, event: SseEvent| -> Result<(), StreamError> {
            if let Some(Ok(value)) = event.json() {
                calls += push(stream, &value)?.len();
            }
            Ok(())
        };
        for piece in bytes.chunks(READ) {
            for event in decoder.push(piece) {
                take(&mut stream, event)?;
            }
        }
        if let Some(event) = decoder.finish() {
            take(&mut stream, event)?;
        }
        finish(stream)?;
        Ok(calls)
    }
    match provider {
        "openai_chat" => run(
            openai_chat::Stream::new(names),
            bytes,
            openai_chat::Stream::push,
            openai_chat::Stream::finish,
        ),
        "anthropic" => run(
            anthropic::Stream::new(names),
            bytes,
            anthropic::Stream::push,
            anthropic::Stream::finish,
        ),
        p if p.starts_with("gemini") => run(
            gemini::Stream::new(names),
            bytes,
            gemini::Stream::push,
            gemini::Stream::finish,
        ),
        _ => run(
            openai_responses::Stream::new(names),
            bytes,
            openai_responses::Stream::push,
            openai_responses::Stream::finish,
        ),
    }
}

fn per_byte(c: &mut Criterion) {
    let names = NameMap::default();
    let mut group = c.benchmark_group("http_stream_per_byte");
    for (provider, bytes) in recorded_streams() {
        let calls =
            accumulate(provider, &bytes, &names).unwrap_or_else(|e| panic!("{provider}: {e}"));
        assert!(calls > 0, "{provider}: the recording has no call");
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_with_input(
            BenchmarkId::new("sse_decode", provider),
            &bytes,
            |b, bytes| b.iter(|| decode(black_box(bytes)).len()),
        );
        group.bench_with_input(
            BenchmarkId::new("decode_parse_accumulate", provider),
            &bytes,
            |b, bytes| b.iter(|| accumulate(provider, black_box(bytes), &names).map_or(0, |n| n)),
        );
    }
    group.finish();
}

const KEY: &str = "sk-bench";

fn weather_runtime() -> Runtime {
    let mut registry = Registry::new();
    let schema = json!({"type": "object", "properties": {"city": {"type": "string"}, "state": {"type": "string"}},
                        "required": ["city", "state"], "additionalProperties": false});
    registry
        .register(ToolDef::dynamic(
            DynamicTool::new("get_weather", "The weather in a city.", schema),
            |_: Value, _: &Context| async { Ok::<Value, ToolError>(json!({"temperature": 18})) },
        ))
        .unwrap_or_else(|e| panic!("{e}"));
    Runtime::new(registry)
}

fn agent_step(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let stream = tests::read_data("providers/openai-chat/strict-tool.sse.txt").into_bytes();
    let server = rt.block_on(ReplayServer::start(Vec::new()));
    let runtime = weather_runtime();
    let model = HttpModel::new(Provider::OpenAiChat, "gpt-4o")
        .unwrap_or_else(|e| panic!("{e}"))
        .base_url(server.url("/v1"))
        .api_key(ApiKey::new(KEY));
    let agent = Agent::new(runtime.clone(), model).max_steps(1);
    let cx = Context::builder("bench").build();
    let start = vec![Message::User {
        text: "Weather in SF?".into(),
    }];

    let mut group = c.benchmark_group("http_agent_step");
    group.bench_function("openai_chat_replay_server", |b| {
        b.iter(|| {
            server.push(Exchange::new(
                Expect::post(Api::OpenAi, "/v1/chat/completions", KEY),
                Reply::Sse(stream.clone()),
            ));
            let report = rt.block_on(agent.run(start.clone(), &cx));
            assert_eq!(report.tool_calls, 1, "{:?}", report.end);
            assert!(matches!(report.end, RunEnd::Guard(_)));
        })
    });
    let call = ToolCall::new(
        "call_1",
        "get_weather",
        r#"{"city":"San Francisco","state":"CA"}"#,
    );
    group.bench_function("scripted_model", |b| {
        b.iter(|| {
            let model = ScriptedTurns::new().turn(Turn::calls([call.clone()]));
            let agent = Agent::new(runtime.clone(), model).max_steps(1);
            let report = rt.block_on(agent.run(start.clone(), &cx));
            assert_eq!(report.tool_calls, 1);
        })
    });
    group.finish();
    assert!(server.problems().is_empty(), "{:?}", server.problems());
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(3));
    targets = per_byte, agent_step
}
criterion_main!(benches);
