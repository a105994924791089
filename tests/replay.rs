//! A local replay server: recorded provider responses served over HTTP the way the providers
//! serve them (status, content type, server-sent events), and every request it receives
//! checked the way the provider would check it (method, path, authentication headers, the
//! JSON body's messages and tools).
//!
//! A server plays a script: one [`Exchange`] per request, in order. A request that breaks an
//! expectation is answered `400` with the reason (so the client fails without retrying) and
//! the reason is kept: [`ReplayServer::problems`] is empty when every request was as expected.
//! Besides recorded bodies, a reply can be an error status with `Retry-After`, a stream cut
//! off part-way (the connection dropped), or a stream that stalls.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::fmt;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderMap, header};
use axum::response::Response;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// The API whose rules a request is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// OpenAI (Chat Completions and Responses): `Authorization: Bearer <key>`.
    OpenAi,
    /// Anthropic: `x-api-key: <key>` and `anthropic-version: 2023-06-01`.
    Anthropic,
    /// Gemini: `x-goog-api-key: <key>`.
    Gemini,
}

/// A check of a request's JSON body: its name (for the report) and the test.
pub type BodyCheck = Box<dyn Fn(&Value) -> Result<(), String> + Send + Sync>;

/// What one request must be.
pub struct Expect {
    api: Api,
    path_and_query: String,
    key: String,
    checks: Vec<(String, BodyCheck)>,
}

impl fmt::Debug for Expect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Expect")
            .field("api", &self.api)
            .field("path_and_query", &self.path_and_query)
            .field("checks", &self.checks.len())
            .finish_non_exhaustive()
    }
}

impl Expect {
    /// A `POST` to `path_and_query` (`/v1/chat/completions`,
    /// `/v1beta/models/m:streamGenerateContent?alt=sse`) authenticated with `key` as `api`
    /// does it, with a JSON object body.
    pub fn post(api: Api, path_and_query: &str, key: &str) -> Self {
        Expect {
            api,
            path_and_query: path_and_query.to_owned(),
            key: key.to_owned(),
            checks: Vec::new(),
        }
    }

    /// The body's value at the JSON Pointer `pointer` equals `value`.
    pub fn equal(mut self, pointer: &str, value: Value) -> Self {
        let shown = pointer.to_owned();
        let pointer = pointer.to_owned();
        self.checks.push((
            format!("{shown} as recorded"),
            Box::new(move |body: &Value| match body.pointer(&pointer) {
                Some(found) if *found == value => Ok(()),
                Some(found) => Err(format!("is {found}, expected {value}")),
                None => Err(format!("is missing, expected {value}")),
            }),
        ));
        self
    }

    /// `check` holds for the body.
    pub fn check(
        mut self,
        name: &str,
        check: impl Fn(&Value) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.checks.push((name.to_owned(), Box::new(check)));
        self
    }

    fn problems(
        &self,
        method: &str,
        path_and_query: &str,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Vec<String> {
        let mut problems = Vec::new();
        if method != "POST" {
            problems.push(format!("method is {method}, expected POST"));
        }
        if path_and_query != self.path_and_query {
            problems.push(format!(
                "path is {path_and_query}, expected {}",
                self.path_and_query
            ));
        }
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let mut expect_header = |name: &str, value: &str, secret: bool| match header(name) {
            Some(found) if found == value => {}
            Some(found) => problems.push(if secret {
                format!("header {name} has the wrong value ({} bytes)", found.len())
            } else {
                format!("header {name} is {found:?}, expected {value:?}")
            }),
            None => problems.push(format!("header {name} is missing")),
        };
        match self.api {
            Api::OpenAi => expect_header("authorization", &format!("Bearer {}", self.key), true),
            Api::Anthropic => {
                expect_header("x-api-key", &self.key, true);
                expect_header("anthropic-version", "2023-06-01", false);
            }
            Api::Gemini => expect_header("x-goog-api-key", &self.key, true),
        }
        if !header("content-type").is_some_and(|t| t.starts_with("application/json")) {
            problems.push("content-type is not application/json".to_owned());
        }
        let others: &[&str] = match self.api {
            Api::OpenAi => &["x-api-key", "x-goog-api-key"],
            Api::Anthropic => &["authorization", "x-goog-api-key"],
            Api::Gemini => &["authorization", "x-api-key"],
        };
        for other in others {
            if headers.contains_key(*other) {
                problems.push(format!("header {other} is sent to the wrong provider"));
            }
        }
        match serde_json::from_slice::<Value>(body) {
            Ok(body @ Value::Object(_)) => {
                for (name, check) in &self.checks {
                    if let Err(reason) = check(&body) {
                        problems.push(format!("body {name}: {reason}"));
                    }
                }
            }
            Ok(_) => problems.push("the body is not a JSON object".to_owned()),
            Err(error) => problems.push(format!("the body is not JSON: {error}")),
        }
        problems
    }
}

/// How the server answers one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// `200 OK`, `text/event-stream`, these bytes.
    Sse(Vec<u8>),
    /// `200 OK`, `application/json`, this value.
    Json(Value),
    /// Any status, content type and body, with extra headers (`retry-after`).
    Raw {
        /// The status.
        status: u16,
        /// The content type.
        content_type: String,
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// The body.
        body: Vec<u8>,
    },
    /// `200 OK`, `text/event-stream`: these bytes, then the connection is dropped before the
    /// body's end.
    Dropped(Vec<u8>),
    /// `200 OK`, `text/event-stream`: these bytes, then nothing, ever.
    Stall(Vec<u8>),
}

impl Reply {
    /// An error status with a provider-style JSON error body.
    pub fn error(status: u16, message: &str) -> Self {
        Reply::error_with(status, message, Vec::new())
    }

    /// `429 Too Many Requests` with `Retry-After: <retry_after>`.
    pub fn rate_limited(retry_after: &str) -> Self {
        let headers = vec![("retry-after".to_owned(), retry_after.to_owned())];
        Reply::error_with(429, "Rate limit reached", headers)
    }

    fn error_with(status: u16, message: &str, headers: Vec<(String, String)>) -> Self {
        Reply::Raw {
            status,
            content_type: "application/json".to_owned(),
            headers,
            body: json!({"error": {"message": message, "type": "replay"}})
                .to_string()
                .into_bytes(),
        }
    }

    fn into_response(self) -> Response {
        let build = |status: u16, content_type: &str, body: Body| {
            Response::builder()
                .status(status)
                .header(header::CONTENT_TYPE, content_type)
                .body(body)
                .unwrap_or_else(|_| Response::new(Body::empty()))
        };
        match self {
            Reply::Sse(bytes) => build(200, "text/event-stream; charset=utf-8", Body::from(bytes)),
            Reply::Json(value) => build(200, "application/json", Body::from(value.to_string())),
            Reply::Raw {
                status,
                content_type,
                headers,
                body,
            } => {
                let mut response = build(status, &content_type, Body::from(body));
                for (name, value) in headers {
                    if let (Ok(name), Ok(value)) = (
                        header::HeaderName::from_bytes(name.as_bytes()),
                        header::HeaderValue::from_str(&value),
                    ) {
                        response.headers_mut().insert(name, value);
                    }
                }
                response
            }
            Reply::Dropped(bytes) => {
                let chunks: Vec<Result<Bytes, std::io::Error>> = vec![
                    Ok(Bytes::from(bytes)),
                    Err(std::io::Error::other(
                        "connection dropped by the replay server",
                    )),
                ];
                build(
                    200,
                    "text/event-stream",
                    Body::from_stream(futures_util::stream::iter(chunks)),
                )
            }
            Reply::Stall(bytes) => {
                let first = futures_util::stream::iter([Ok::<_, Infallible>(Bytes::from(bytes))]);
                let never = futures_util::stream::pending::<Result<Bytes, Infallible>>();
                build(
                    200,
                    "text/event-stream",
                    Body::from_stream(futures_util::StreamExt::chain(first, never)),
                )
            }
        }
    }
}

/// One request and its answer.
#[derive(Debug)]
pub struct Exchange {
    /// What the request must be.
    pub expect: Expect,
    /// The answer.
    pub reply: Reply,
}

impl Exchange {
    /// `reply` to a request that meets `expect`.
    pub fn new(expect: Expect, reply: Reply) -> Self {
        Exchange { expect, reply }
    }
}

/// A request as received.
#[derive(Debug, Clone)]
pub struct Received {
    /// Path and query.
    pub path_and_query: String,
    /// The body, parsed (`Null` when it was not JSON).
    pub body: Value,
}

#[derive(Debug, Default)]
struct State {
    script: Mutex<VecDeque<Exchange>>,
    received: Mutex<Vec<Received>>,
    problems: Mutex<Vec<String>>,
}

/// A replay server on a loopback port, stopped when dropped.
#[derive(Debug)]
pub struct ReplayServer {
    addr: SocketAddr,
    state: Arc<State>,
    stop: Option<oneshot::Sender<()>>,
}

impl ReplayServer {
    /// Starts a server on `127.0.0.1` (port `port`, or any free one for 0) playing `script`.
    pub async fn start_on(port: u16, script: Vec<Exchange>) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(State {
            script: Mutex::new(script.into()),
            ..State::default()
        });
        let shared = Arc::clone(&state);
        let app = Router::new().fallback(move |request: Request| {
            let state = Arc::clone(&shared);
            async move { handle(&state, request).await }
        });
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
        });
        Ok(ReplayServer {
            addr,
            state,
            stop: Some(stop),
        })
    }

    /// Starts a server on any free loopback port.
    pub async fn start(script: Vec<Exchange>) -> Self {
        ReplayServer::start_on(0, script)
            .await
            .unwrap_or_else(|error| panic!("cannot start the replay server: {error}"))
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received, in order.
    pub fn received(&self) -> Vec<Received> {
        lock(&self.state.received).clone()
    }

    /// Every broken expectation, and every request that came after the script ran out.
    pub fn problems(&self) -> Vec<String> {
        lock(&self.state.problems).clone()
    }

    /// Adds `exchange` to the end of the script.
    pub fn push(&self, exchange: Exchange) {
        lock(&self.state.script).push_back(exchange);
    }

    /// Exchanges not yet played.
    pub fn remaining(&self) -> usize {
        lock(&self.state.script).len()
    }
}

impl Drop for ReplayServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

async fn handle(state: &State, request: Request) -> Response {
    let method = request.method().as_str().to_owned();
    let path_and_query = request
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    let headers = request.headers().clone();
    let body = axum::body::to_bytes(request.into_body(), 64 << 20)
        .await
        .unwrap_or_default();
    let number = {
        let mut received = lock(&state.received);
        received.push(Received {
            path_and_query: path_and_query.clone(),
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        });
        received.len()
    };
    let Some(exchange) = lock(&state.script).pop_front() else {
        let problem =
            format!("request {number} ({method} {path_and_query}) came after the script ended");
        lock(&state.problems).push(problem.clone());
        return Reply::error(400, &problem).into_response();
    };
    let problems = exchange
        .expect
        .problems(&method, &path_and_query, &headers, &body);
    if !problems.is_empty() {
        let text = format!("request {number}: {}", problems.join("; "));
        lock(&state.problems).push(text.clone());
        return Reply::error(400, &text).into_response();
    }
    exchange.reply.into_response()
}

/// A recorded cassette (`*.cassette.yaml`, see `tests/data/providers/README.md`) as JSON.
pub fn cassette(relative: &str) -> Value {
    let text = crate::read_data(relative);
    serde_norway::from_str(&text)
        .unwrap_or_else(|error| panic!("cannot parse cassette {relative}: {error}"))
}

/// The recorded response of interaction `index` of a cassette: its JSON body, or its streamed
/// body with its content type.
pub fn recorded_reply(cassette: &Value, index: usize) -> Reply {
    let response = &cassette["interactions"][index]["response"];
    if let Some(text) = response["body"]["string"].as_str() {
        return Reply::Sse(text.as_bytes().to_vec());
    }
    Reply::Json(response["parsed_body"].clone())
}

/// The recorded request body of interaction `index`.
pub fn recorded_request(cassette: &Value, index: usize) -> &Value {
    &cassette["interactions"][index]["request"]["parsed_body"]
}

/// A short Chat Completions stream that answers `text` with no calls, and reports
/// `input`/`output` tokens: for a run's last step where no recording has one. Hand-written
/// in the shape of the recorded streams (`openai-chat/*.sse.txt`).
pub fn openai_chat_answer(text: &str, input: u64, output: u64) -> Vec<u8> {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-replay", "object": "chat.completion.chunk", "created": 0,
               "model": "replay", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut body = String::new();
    for event in [
        chunk(json!({"role": "assistant", "content": ""}), Value::Null),
        chunk(json!({"content": text}), Value::Null),
        chunk(json!({}), json!("stop")),
        json!({"id": "chatcmpl-replay", "object": "chat.completion.chunk", "created": 0, "model": "replay",
               "choices": [], "usage": {"prompt_tokens": input, "completion_tokens": output,
               "total_tokens": input + output}}),
    ] {
        body.push_str(&format!("data: {event}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    body.into_bytes()
}

/// A short Messages stream that answers `text` with no calls (hand-written in the shape of
/// `anthropic/*.sse.txt`).
pub fn anthropic_answer(text: &str, input: u64, output: u64) -> Vec<u8> {
    let events = [
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_replay", "type": "message",
            "role": "assistant", "content": [], "model": "replay", "stop_reason": null,
            "usage": {"input_tokens": input, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": text}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": output}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ];
    let mut body = String::new();
    for (name, data) in events {
        body.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    }
    body.into_bytes()
}

/// The script the `replay_server` binary plays for the agent example
/// (`cargo run -p examples --example agent --features http -- --provider openai`): the
/// recorded `get_weather` call of `openai-chat/strict-tool.sse.txt`, the repair of its refused
/// arguments, then an answer, each request checked (the last must carry the call's result).
pub fn agent_example_script(key: &str) -> Vec<Exchange> {
    let call = crate::read_data("providers/openai-chat/strict-tool.sse.txt");
    let call_id = "call_CTf1nWJLqSeRgDqaCG27xZ74";
    vec![
        Exchange::new(
            Expect::post(Api::OpenAi, "/v1/chat/completions", key)
                .check("asks for a stream", |body| {
                    (body["stream"] == true)
                        .then_some(())
                        .ok_or_else(|| "stream is not true".into())
                })
                .check("offers get_weather", |body| {
                    let names: Vec<&Value> = body["tools"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|tool| &tool["function"]["name"])
                        .collect();
                    names
                        .contains(&&json!("get_weather"))
                        .then_some(())
                        .ok_or_else(|| format!("tools are {names:?}"))
                })
                .check("starts with the user's words", |body| {
                    (body["messages"]
                        .as_array()
                        .and_then(|m| m.last())
                        .map(|m| &m["role"])
                        == Some(&json!("user")))
                    .then_some(())
                    .ok_or_else(|| "the last message is not the user's".into())
                }),
            Reply::Sse(call.into_bytes()),
        ),
        // The recorded call was made against another schema (`state`, no `units`): the
        // runtime refuses it and the repair loop asks the same model for new arguments.
        Exchange::new(
            Expect::post(Api::OpenAi, "/v1/chat/completions", key).check(
                "asks for a repair",
                |body| {
                    let last = body["messages"].as_array().and_then(|m| m.last());
                    let text = last.and_then(|m| m["content"].as_str()).unwrap_or_default();
                    (body.get("tools").is_none() && text.contains("`get_weather` was refused"))
                        .then_some(())
                        .ok_or_else(|| format!("not a repair request: {body}"))
                },
            ),
            Reply::Sse(openai_chat_answer(
                r#"{"city": "San Francisco", "units": "celsius"}"#,
                90,
                12,
            )),
        ),
        Exchange::new(
            Expect::post(Api::OpenAi, "/v1/chat/completions", key).check(
                "answers the call",
                move |body| {
                    let messages = body["messages"].as_array().cloned().unwrap_or_default();
                    let asked = messages
                        .iter()
                        .any(|m| m["role"] == "assistant" && m["tool_calls"][0]["id"] == call_id);
                    let answered = messages.iter().any(|m| {
                        m["role"] == "tool"
                            && m["tool_call_id"] == call_id
                            && m["content"]
                                .as_str()
                                .is_some_and(|c| c.contains("temperature"))
                    });
                    (asked && answered)
                        .then_some(())
                        .ok_or_else(|| format!("no call and result for {call_id} in {messages:?}"))
                },
            ),
            Reply::Sse(openai_chat_answer(
                "The weather tool answered for San Francisco: 17.5 °C.",
                120,
                14,
            )),
        ),
    ]
}
