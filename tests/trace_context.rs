//! W3C trace context across processes (tool-core's `otel` feature): a model over HTTP sends
//! the step's `traceparent` onward, and the MCP server continues the trace a client names in a
//! request's `_meta`. In a binary of its own: it installs a `tracing` subscriber and the
//! global propagator.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::response::IntoResponse;
use opentelemetry::trace::{TraceContextExt as _, TracerProvider as _};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tool_core::agent::{Agent, RunEnd};
use tool_core::http::{ApiKey, HttpModel};
use tool_core::mcp::McpServer;
use tool_core::model::{Message, Provider};
use tool_core::{Context, Registry, Runtime, ToolDef};
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::layer::SubscriberExt as _;

/// Spans recorded in memory, and the subscriber that records them.
fn recording() -> (
    InMemorySpanExporter,
    SdkTracerProvider,
    impl tracing::Subscriber,
) {
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("test"));
    (
        exporter,
        provider,
        tracing_subscriber::registry().with(layer),
    )
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn a_model_over_http_sends_the_steps_traceparent() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (exporter, provider, subscriber) = recording();
    let seen: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let recorder = metrics_util::debugging::DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let _recorder = metrics::set_default_local_recorder(&recorder);
    let trace_id = tracing::subscriber::with_default(subscriber, || {
        runtime().block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let headers = Arc::clone(&seen);
            let app = Router::new().fallback(move |request: Request| {
                let headers = Arc::clone(&headers);
                async move {
                    let traceparent = request
                        .headers()
                        .get("traceparent")
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned);
                    headers.lock().unwrap().push(traceparent);
                    let body = tests::replay::openai_chat_answer("Hello.", 10, 2);
                    ([("content-type", "text/event-stream")], body).into_response()
                }
            });
            tokio::spawn(async move { axum::serve(listener, app).await });

            let model = HttpModel::new(Provider::OpenAiChat, "gpt-4o")
                .unwrap()
                .base_url(format!("http://{addr}/v1"))
                .api_key(ApiKey::new("sk-test"));
            let agent = Agent::new(Runtime::new(Registry::new()), model).max_steps(2);
            let root = tracing::info_span!("request");
            let trace_id = root.context().span().span_context().trace_id();
            let report = tracing::Instrument::instrument(
                agent.run(
                    vec![Message::User { text: "Hi".into() }],
                    &Context::builder("u")
                        .timeout(Duration::from_secs(10))
                        .build(),
                ),
                root,
            )
            .await;
            assert_eq!(report.end, RunEnd::Answered, "{report:?}");
            trace_id
        })
    });
    provider.force_flush().unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    let traceparent = seen[0].clone().expect("no traceparent was sent");
    let spans = exporter.get_finished_spans().unwrap();
    let chat = spans
        .iter()
        .find(|span| span.name == "chat gpt-4o")
        .unwrap_or_else(|| panic!("{spans:#?}"));
    assert_eq!(chat.span_context.trace_id(), trace_id);
    // version - trace id - the chat span's id - sampled
    assert_eq!(
        traceparent,
        format!("00-{}-{}-01", trace_id, chat.span_context.span_id()),
    );
    let attribute = |span: &SpanData, key: &str| {
        span.attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| kv.value.to_string())
    };
    assert_eq!(
        attribute(chat, "gen_ai.provider.name").as_deref(),
        Some("openai")
    );
    assert_eq!(
        attribute(chat, "gen_ai.request.model").as_deref(),
        Some("gpt-4o")
    );
    assert_eq!(
        attribute(chat, "gen_ai.usage.input_tokens").as_deref(),
        Some("10")
    );
    assert!(
        chat.events.iter().any(|event| event.name == "first chunk"),
        "{chat:#?}"
    );

    // The GenAI client metrics, labelled with the operation, the provider and the model.
    let exported = snapshotter.snapshot().into_vec();
    let histogram = |name: &str, token_type: Option<&str>| -> Vec<f64> {
        exported
            .iter()
            .filter(|(key, ..)| {
                let key = key.key();
                let label = |k: &str| key.labels().find(|l| l.key() == k).map(|l| l.value());
                key.name() == name
                    && label("gen_ai.operation.name") == Some("chat")
                    && label("gen_ai.provider.name") == Some("openai")
                    && label("gen_ai.request.model") == Some("gpt-4o")
                    && label("gen_ai.token.type") == token_type
            })
            .flat_map(|(.., value)| match value {
                metrics_util::debugging::DebugValue::Histogram(values) => {
                    values.iter().map(|v| v.into_inner()).collect::<Vec<_>>()
                }
                other => panic!("{other:?}"),
            })
            .collect()
    };
    assert_eq!(
        histogram("gen_ai.client.token.usage", Some("input")),
        [10.0]
    );
    assert_eq!(
        histogram("gen_ai.client.token.usage", Some("output")),
        [2.0]
    );
    let durations = histogram("gen_ai.client.operation.duration", None);
    assert_eq!(durations.len(), 1, "{exported:?}");
    assert!(durations[0] > 0.0);
}

#[test]
fn the_mcp_server_continues_the_clients_trace() {
    const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
    const CLIENT_SPAN: &str = "00f067aa0ba902b7";
    let (exporter, provider, subscriber) = recording();
    tracing::subscriber::with_default(subscriber, || {
        runtime().block_on(async {
            let mut registry = Registry::new();
            registry
                .register(ToolDef::new(examples::get_weather))
                .unwrap();
            let server = McpServer::new(Runtime::new(registry), || Context::builder("u").build());
            let (ours, theirs) = tokio::io::duplex(1 << 20);
            tokio::spawn(server.serve(theirs));
            let (read, mut write) = tokio::io::split(ours);
            let mut lines = BufReader::new(read).lines();
            let mut request = async |message: Value| -> Option<Value> {
                let mut line = message.to_string();
                line.push('\n');
                write.write_all(line.as_bytes()).await.unwrap();
                write.flush().await.unwrap();
                let id = message.get("id")?.clone();
                loop {
                    let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
                        .await
                        .expect("no reply in time")
                        .unwrap()
                        .expect("the server closed the connection");
                    let reply: Value = serde_json::from_str(&line).unwrap();
                    if reply["id"] == id {
                        return Some(reply);
                    }
                }
            };
            request(json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": { "name": "trace-test", "version": "0" }
                }
            }))
            .await;
            request(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await;
            for (id, meta) in [
                (
                    1,
                    json!({ "traceparent": format!("00-{TRACE}-{CLIENT_SPAN}-01") }),
                ),
                (2, json!({})),
            ] {
                let reply = request(json!({
                    "jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {
                        "name": "get_weather",
                        "arguments": { "city": "Paris", "units": "celsius" },
                        "_meta": meta
                    }
                }))
                .await
                .unwrap();
                assert_eq!(reply["result"]["isError"], false, "{reply}");
            }
        });
    });
    provider.force_flush().unwrap();
    let spans = exporter.get_finished_spans().unwrap();
    let calls: Vec<&SpanData> = spans.iter().filter(|s| s.name == "tools/call").collect();
    assert_eq!(calls.len(), 2, "{spans:#?}");
    let continued = calls
        .iter()
        .find(|span| span.span_context.trace_id().to_string() == TRACE)
        .unwrap_or_else(|| panic!("{calls:#?}"));
    assert_eq!(continued.parent_span_id.to_string(), CLIENT_SPAN);
    assert_eq!(continued.span_kind, opentelemetry::trace::SpanKind::Server);
    let tool = spans
        .iter()
        .find(|span| span.parent_span_id == continued.span_context.span_id())
        .unwrap_or_else(|| panic!("{spans:#?}"));
    assert_eq!(tool.name, "execute_tool get_weather");
    assert_eq!(tool.span_context.trace_id().to_string(), TRACE);
    // Without a traceparent, a trace of its own.
    assert!(
        calls
            .iter()
            .any(|span| span.span_context.trace_id().to_string() != TRACE),
        "{calls:#?}"
    );
}
