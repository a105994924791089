//! A provider wire format added from outside: OpenAI Chat Completions as a deployment gateway
//! serves it (the model in the path with an `api-version`, the key in an `api-key` header, no
//! `model` in the body), through `tool_core::providers::WireFormat`, spoken by `HttpModel`
//! against a loopback server this file runs, in whole and streamed responses, inside the agent
//! loop.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tool_core::agent::{Agent, RunEnd, RunReport};
use tool_core::http::{ApiKey, HttpModel, RetryPolicy};
use tool_core::model::{Message, Turn, Usage};
use tool_core::providers::{
    Advertised, EncodeError, NameMap, ParseError, RequestError, RequestOptions, Target, TurnStream,
    WireFormat, openai_chat,
};
use tool_core::registry::{DynamicTool, ToolError};
use tool_core::{Context, Outcome, Registry, Runtime, ToolCall, ToolDef};

const API_VERSION: &str = "2024-10-21";

/// OpenAI Chat Completions behind a gateway that routes by deployment: what is read and
/// written is the built-in format's; where it goes and how it is authenticated is not.
#[derive(Debug)]
struct Deployment;

impl WireFormat for Deployment {
    fn name(&self) -> &str {
        "Deployment"
    }

    fn default_target(&self) -> Target {
        Target::OpenAiChat
    }

    fn request(
        &self,
        transcript: &[Message],
        tools: &Advertised,
        options: &RequestOptions,
    ) -> Result<Value, RequestError> {
        openai_chat::Format.request(transcript, tools, options)
    }

    fn parse_turn(&self, body: &Value, names: &NameMap) -> Result<Turn, ParseError> {
        openai_chat::Format.parse_turn(body, names)
    }

    fn results(&self, calls: &[ToolCall], outcomes: &[Outcome]) -> Result<Value, EncodeError> {
        openai_chat::Format.results(calls, outcomes)
    }

    fn stream(&self, names: &NameMap, max_call_bytes: usize) -> Box<dyn TurnStream> {
        openai_chat::Format.stream(names, max_call_bytes)
    }

    fn default_base_url(&self) -> &str {
        "https://my-resource.openai.azure.com"
    }

    fn key_variable(&self) -> &str {
        "AZURE_OPENAI_API_KEY"
    }

    fn path(&self, model: &str, _stream: bool) -> String {
        format!("/openai/deployments/{model}/chat/completions?api-version={API_VERSION}")
    }

    fn headers(&self, key: Option<&str>) -> Vec<(&'static str, String)> {
        key.map(|key| ("api-key", key.to_owned()))
            .into_iter()
            .collect()
    }

    fn complete_body(&self, body: &mut Map<String, Value>, model: &str, stream: bool) {
        openai_chat::Format.complete_body(body, model, stream);
        // The deployment in the path is the model; some gateways refuse a body naming one.
        body.remove("model");
    }

    fn forbid_calls(&self, body: &mut Map<String, Value>) {
        openai_chat::Format.forbid_calls(body);
    }
}

const KEY: &str = "gateway-key-7f3a91";
const DEPLOYMENT: &str = "weather-gpt";
const CALL_ID: &str = "call_Xq7w3kP2mZ";

/// One request as the server read it.
#[derive(Debug, Clone)]
struct Seen {
    /// `POST /path?query HTTP/1.1`.
    line: String,
    /// Names lowercased, in the order sent.
    headers: Vec<(String, String)>,
    body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A canned answer: the content type and the body.
#[derive(Debug, Clone)]
struct Reply {
    content_type: &'static str,
    body: String,
}

fn whole(body: &Value) -> Reply {
    Reply {
        content_type: "application/json",
        body: body.to_string(),
    }
}

/// Server-sent events, one `data:` line per chunk, closed by `data: [DONE]`.
fn sse(chunks: &[Value]) -> Reply {
    let mut body = String::new();
    for chunk in chunks {
        body.push_str(&format!("data: {chunk}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    Reply {
        content_type: "text/event-stream",
        body,
    }
}

/// A server on 127.0.0.1 answering each request with the next reply of its script, one
/// connection per request, and keeping what it read.
struct Server {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    async fn start(script: Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        tokio::spawn(async move {
            let mut script = script.into_iter();
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                serve(socket, &mut script, &log).await;
            }
        });
        Server { url, seen }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

async fn serve(
    mut socket: TcpStream,
    script: &mut impl Iterator<Item = Reply>,
    log: &Mutex<Vec<Seen>>,
) {
    let Some(seen) = read_request(&mut socket).await else {
        return;
    };
    log.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(seen);
    // A request past the end of the script is refused outright, so that a retry shows up as
    // one more request seen rather than as a hang.
    let (status, reply) = match script.next() {
        Some(reply) => ("200 OK", reply),
        None => (
            "400 Bad Request",
            whole(
                &json!({"error": {"message": "the script is over", "type": "invalid_request_error"}}),
            ),
        ),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        reply.content_type,
        reply.body.len()
    );
    let _ = socket.write_all(head.as_bytes()).await;
    let _ = socket.write_all(reply.body.as_bytes()).await;
    let _ = socket.shutdown().await;
}

/// One HTTP/1.1 request with a `content-length` body; `None` if the client hung up first.
async fn read_request(socket: &mut TcpStream) -> Option<Seen> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let read = socket.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
    };
    let head = String::from_utf8(buffer[..head_end].to_vec()).ok()?;
    let mut lines = head.split("\r\n");
    let line = lines.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let body_start = head_end + 4;
    while buffer.len() < body_start + length {
        let read = socket.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
    let body = serde_json::from_slice(&buffer[body_start..body_start + length]).ok()?;
    Some(Seen {
        line,
        headers,
        body,
    })
}

/// `get_weather`, counting its runs.
fn runtime() -> (Runtime, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    let handler = move |arguments: Value, _: &Context| {
        counter.fetch_add(1, Ordering::SeqCst);
        async move {
            assert_eq!(arguments, json!({"city": "Paris"}));
            Ok::<Value, ToolError>(json!({"celsius": 18}))
        }
    };
    let mut registry = Registry::new();
    registry
        .register(ToolDef::dynamic(
            DynamicTool::new(
                "get_weather",
                "The weather in a city.",
                json!({"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"], "additionalProperties": false}),
            ),
            handler,
        ))
        .unwrap();
    (Runtime::new(registry), runs)
}

fn model(server: &Server) -> HttpModel {
    HttpModel::with_format(Arc::new(Deployment), DEPLOYMENT)
        .unwrap()
        .base_url(&server.url)
        .api_key(ApiKey::new(KEY))
        .retry(RetryPolicy::new(3).base_delay(Duration::from_millis(5)))
        .timeout(Duration::from_secs(20))
}

async fn run(model: HttpModel) -> (RunReport, usize) {
    let (runtime, runs) = runtime();
    let cx = Context::builder("tester")
        .timeout(Duration::from_secs(30))
        .build();
    let start = vec![Message::User {
        text: "Weather in Paris?".into(),
    }];
    let report = Agent::new(runtime, model)
        .max_steps(4)
        .run(start, &cx)
        .await;
    (report, runs.load(Ordering::SeqCst))
}

/// What every request to the gateway must look like, whatever it carries.
fn assert_gateway_request(seen: &Seen, stream: bool) {
    assert_eq!(
        seen.line,
        format!(
            "POST /openai/deployments/{DEPLOYMENT}/chat/completions?api-version={API_VERSION} HTTP/1.1"
        )
    );
    assert_eq!(seen.header("api-key"), Some(KEY));
    assert_eq!(seen.header("authorization"), None, "{:?}", seen.headers);
    assert_eq!(seen.header("content-type"), Some("application/json"));
    let body = seen.body.as_object().unwrap();
    assert!(!body.contains_key("model"), "{body:?}");
    assert_eq!(body["stream"], json!(stream));
    if stream {
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
    } else {
        assert!(!body.contains_key("stream_options"), "{body:?}");
    }
    assert_eq!(body["tools"][0]["function"]["name"], json!("get_weather"));
}

/// The first request asks; the second carries the call and its result back.
fn assert_exchange(seen: &[Seen], stream: bool) {
    assert_eq!(seen.len(), 2, "{seen:#?}");
    for request in seen {
        assert_gateway_request(request, stream);
    }
    assert_eq!(
        seen[0].body["messages"],
        json!([{"role": "user", "content": "Weather in Paris?"}])
    );
    let messages = seen[1].body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{messages:#?}");
    assert_eq!(messages[1]["tool_calls"][0]["id"], json!(CALL_ID));
    assert_eq!(
        messages[1]["tool_calls"][0]["function"]["name"],
        json!("get_weather")
    );
    assert_eq!(messages[2]["role"], json!("tool"));
    assert_eq!(messages[2]["tool_call_id"], json!(CALL_ID));
    let content: Value = serde_json::from_str(messages[2]["content"].as_str().unwrap()).unwrap();
    assert_eq!(content, json!({"celsius": 18}));
}

/// The run: one call proposed with its usage, run once, then the answer.
fn assert_report(report: &RunReport, runs: usize) {
    assert_eq!(report.end, RunEnd::Answered, "{report:#?}");
    assert_eq!(runs, 1);
    assert_eq!(report.steps, 2);
    assert_eq!(report.tool_calls, 1);
    let turns: Vec<(&Option<String>, &[ToolCall], Usage)> = report
        .transcript
        .iter()
        .filter_map(|m| match m {
            Message::Assistant {
                text, calls, usage, ..
            } => Some((text, calls.as_slice(), *usage)),
            _ => None,
        })
        .collect();
    assert_eq!(turns.len(), 2, "{:#?}", report.transcript);
    let (_, calls, usage) = &turns[0];
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name(), "get_weather");
    assert_eq!(calls[0].call_id(), CALL_ID);
    assert_eq!(calls[0].provider_call_id(), Some(CALL_ID));
    assert_eq!(calls[0].arguments_value(), Some(json!({"city": "Paris"})));
    assert_eq!(
        *usage,
        Usage {
            input_tokens: 50,
            output_tokens: 12
        }
    );
    let (text, calls, usage) = &turns[1];
    assert!(calls.is_empty());
    assert_eq!(text.as_deref(), Some("18 °C in Paris."));
    assert_eq!(
        *usage,
        Usage {
            input_tokens: 80,
            output_tokens: 7
        }
    );
    assert_eq!(
        report.usage,
        Usage {
            input_tokens: 130,
            output_tokens: 19
        }
    );
}

fn usage(input: u64, output: u64) -> Value {
    json!({"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output})
}

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
           "model": DEPLOYMENT, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

fn usage_chunk(input: u64, output: u64) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
           "model": DEPLOYMENT, "choices": [], "usage": usage(input, output)})
}

/// The weather call, its arguments in two pieces.
fn call_stream() -> Reply {
    sse(&[
        chunk(
            json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": CALL_ID,
                   "type": "function", "function": {"name": "get_weather", "arguments": ""}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\":"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"Paris\"}"}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
        usage_chunk(50, 12),
    ])
}

fn answer_stream() -> Reply {
    sse(&[
        chunk(json!({"role": "assistant", "content": "18 °C"}), None),
        chunk(json!({"content": " in Paris."}), None),
        chunk(json!({}), Some("stop")),
        usage_chunk(80, 7),
    ])
}

#[tokio::test]
async fn whole_responses_go_to_the_deployment_with_an_api_key_header() {
    let call = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": DEPLOYMENT,
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": CALL_ID, "type": "function",
                            "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]}}],
        "usage": usage(50, 12)
    });
    let answer = json!({
        "id": "chatcmpl-2", "object": "chat.completion", "created": 2, "model": DEPLOYMENT,
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "18 °C in Paris."}}],
        "usage": usage(80, 7)
    });
    let server = Server::start(vec![whole(&call), whole(&answer)]).await;
    let model = model(&server).streaming(false);
    assert_eq!(
        model.endpoint(),
        format!(
            "{}/openai/deployments/{DEPLOYMENT}/chat/completions?api-version={API_VERSION}",
            server.url
        )
    );
    let (report, runs) = run(model).await;
    assert_exchange(&server.seen(), false);
    assert_report(&report, runs);
}

#[tokio::test]
async fn streamed_responses_go_to_the_deployment_with_an_api_key_header() {
    let server = Server::start(vec![call_stream(), answer_stream()]).await;
    let (report, runs) = run(model(&server)).await;
    assert_exchange(&server.seen(), true);
    assert_report(&report, runs);
}

#[tokio::test]
async fn a_refused_request_in_the_stream_fails_the_step_once() {
    let refused = sse(&[
        chunk(json!({"role": "assistant", "content": "Let me"}), None),
        json!({"error": {"type": "invalid_request_error",
                         "message": "the deployment weather-gpt does not allow tools"}}),
    ]);
    let server = Server::start(vec![refused, call_stream(), answer_stream()]).await;
    let (report, runs) = run(model(&server)).await;
    match &report.end {
        RunEnd::ModelFailed(error) => assert!(
            error.contains("the deployment weather-gpt does not allow tools"),
            "{error}"
        ),
        other => panic!("expected the model to fail, the run ended {other:?}"),
    }
    // Another attempt would be refused the same: the server saw one request, and nothing ran.
    assert_eq!(server.seen().len(), 1);
    assert_gateway_request(&server.seen()[0], true);
    assert_eq!(runs, 0);
    assert_eq!(report.tool_calls, 0);
    assert!(!format!("{report:?}").contains(KEY));
}

/// The counterpart of the refusal: a passing error (the gateway overloaded) is retried, so the
/// single request seen above is the format's doing, not a server that stops answering.
#[tokio::test]
async fn a_passing_error_in_the_stream_is_retried() {
    let overloaded = sse(&[json!({"error": {"type": "server_error",
                                            "message": "the deployment is busy"}})]);
    let server = Server::start(vec![overloaded, call_stream(), answer_stream()]).await;
    let (report, runs) = run(model(&server)).await;
    let seen = server.seen();
    assert_eq!(seen.len(), 3, "{seen:#?}");
    assert_eq!(
        seen[0].body, seen[1].body,
        "the retry sends the same request"
    );
    assert_exchange(&seen[1..], true);
    assert_report(&report, runs);
}
