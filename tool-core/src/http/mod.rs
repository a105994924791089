//! Models over HTTP: [`HttpModel`] implements the agent's [`Model`] for OpenAI Chat Completions
//! (and the servers that speak it: vLLM, llama.cpp, Ollama), OpenAI Responses, Anthropic
//! Messages and Gemini `generateContent`.
//!
//! One step is one request: the transcript written with the provider's request builder
//! ([`providers::openai_chat::request`](crate::providers::openai_chat::request) and the like),
//! the tools advertised in the provider's dialect, the answer streamed over server-sent events
//! through the provider's `Stream` accumulator, and returned as a [`Turn`]: text, calls, token
//! usage and the [`ProviderState`](crate::model::ProviderState) the next request sends back.
//! A turn's calls are returned only once the provider has said the turn is complete, so a
//! request that fails part-way has had none of its calls acted on, and is retried under the
//! [`RetryPolicy`].
//!
//! Each request ends at its own timeout ([`HttpModel::timeout`]) and, inside an agent run, when
//! the run's deadline passes or it is cancelled ([`ModelRequest::context`]). Failures are
//! [`ModelError`]s whose text says what went wrong: the provider's own error message for a
//! refused request, the status, or what was wrong with the response. The API key
//! ([`ApiKey`]) never appears in them, nor in `Debug` output.
//!
//! ```no_run
//! use tool_core::agent::Agent;
//! use tool_core::model::Message;
//! use tool_core::http::HttpModel;
//! use tool_core::model::Provider;
//! use tool_core::providers::RequestOptions;
//! use tool_core::{Context, Registry, Runtime};
//!
//! # async fn run() -> Result<(), tool_core::model::ModelError> {
//! // The key from OPENAI_API_KEY; the model and a system prompt.
//! let model = HttpModel::new(Provider::OpenAiChat, "gpt-4.1-mini")?
//!     .options(RequestOptions::new().system("You are terse."));
//! let agent = Agent::new(Runtime::new(Registry::new()), model).max_steps(8);
//! let start = vec![Message::User { text: "Hello".into() }];
//! let report = agent.run(start, &Context::builder("user-1").build()).await;
//! println!("{:?}", report.end);
//! # Ok(())
//! # }
//! ```

mod key;
mod retry;
mod wire;

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use serde_json::Value;
use tokio::time::Instant;
use tracing::Instrument as _;

use crate::model::Provider;
pub use key::ApiKey;
pub use retry::RetryPolicy;

use crate::context::Stopped;
use crate::model::ModelError;
use crate::model::{Message, Model, ModelRequest, Turn, Usage};
use crate::providers::stream::Limits;
use crate::providers::{
    NameMap, RequestOptions, SseDecoder, Target, TurnStream, WireFormat, advertise,
};
use crate::repair::{RepairModel, RepairRequest};
use crate::sync::lock;
use wire::EventError;

/// The default cap on a response body, streamed or whole: 16 MiB.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 16 << 20;

/// The default timeout of one request, from sending it to the end of its response: 10 minutes.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The default longest silence of a streamed response: 5 minutes (a reasoning model may think
/// for minutes before its first token).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// The most bytes of a refused request's body quoted in an error.
const MAX_ERROR_CHARS: usize = 600;

/// A model behind a provider's HTTP API. See the [module documentation](self).
///
/// ```
/// use std::time::Duration;
/// use tool_core::http::{ApiKey, HttpModel, RetryPolicy};
/// use tool_core::model::Provider;
/// use tool_core::providers::RequestOptions;
/// use serde_json::json;
///
/// // A local OpenAI-compatible server (llama.cpp, vLLM, Ollama) needs no key.
/// let local = HttpModel::new(Provider::OpenAiChat, "qwen3:8b")?
///     .base_url("http://127.0.0.1:11434/v1")
///     .timeout(Duration::from_secs(120));
/// let claude = HttpModel::new(Provider::Anthropic, "claude-haiku-4-5")?
///     .api_key(ApiKey::new("sk-ant-…"))
///     .options(RequestOptions::new().setting("max_tokens", json!(1024)))
///     .retry(RetryPolicy::new(3));
/// assert!(!format!("{claude:?}").contains("sk-ant"));
/// # Ok::<(), tool_core::model::ModelError>(())
/// ```
#[derive(Debug, Clone)]
pub struct HttpModel {
    format: Arc<dyn WireFormat>,
    model: String,
    base_url: String,
    key: Option<ApiKey>,
    options: RequestOptions,
    target: Target,
    stream: bool,
    timeout: Duration,
    idle_timeout: Duration,
    retry: RetryPolicy,
    /// Each call's streamed bytes, and the response body's.
    limits: Limits,
    client: reqwest::Client,
    /// Tokens spent on repairs, not yet taken by the agent loop (shared by clones).
    repair_usage: Arc<Mutex<Usage>>,
}

impl HttpModel {
    /// `model` behind `provider`'s API at its [default base URL](WireFormat::default_base_url),
    /// with the key of its [environment variable](WireFormat::key_variable) when it is set,
    /// streaming, with the default [timeout](DEFAULT_TIMEOUT) and [`RetryPolicy`].
    ///
    /// Fails only when no HTTP client can be made (no TLS configuration). TLS is rustls with
    /// the process's default crypto provider, or ring when none is installed (nothing is
    /// installed process-wide), and certificates are checked by the operating system's
    /// verifier.
    pub fn new(provider: Provider, model: impl Into<String>) -> Result<Self, ModelError> {
        HttpModel::with_format(provider.format(), model)
    }

    /// `model` behind an API spoken in `format`, one of your own or a built-in one
    /// ([`Provider::format`]); otherwise as [`new`](Self::new).
    pub fn with_format(
        format: Arc<dyn WireFormat>,
        model: impl Into<String>,
    ) -> Result<Self, ModelError> {
        let tls = tls_config()
            .map_err(|error| ModelError::new(format!("cannot configure TLS: {error}")))?;
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(30))
            // No provider API redirects, and a redirect would carry `x-api-key` or
            // `x-goog-api-key` to the new host: a 3xx is an error.
            .redirect(reqwest::redirect::Policy::none())
            .tls_backend_preconfigured(tls)
            .build()
            .map_err(|error| ModelError::new(format!("cannot make an HTTP client: {error}")))?;
        Ok(HttpModel {
            model: model.into(),
            base_url: format.default_base_url().to_owned(),
            key: ApiKey::from_env(format.key_variable()),
            options: RequestOptions::new(),
            target: format.default_target(),
            format,
            stream: true,
            timeout: DEFAULT_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            retry: RetryPolicy::default(),
            limits: {
                let mut limits = Limits::default();
                limits.set_max_total_bytes(DEFAULT_MAX_RESPONSE_BYTES);
                limits
            },
            client,
            repair_usage: Arc::default(),
        })
    }

    /// Sends requests to `url` instead (`http://127.0.0.1:8080/v1` for a local server; the
    /// [format's paths](WireFormat::path) are added to it).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into().trim_end_matches('/').to_owned();
        self
    }

    /// Uses `key` rather than the environment's.
    pub fn api_key(mut self, key: ApiKey) -> Self {
        self.key = Some(key);
        self
    }

    /// Sends no key (a local server that needs none).
    pub fn without_api_key(mut self) -> Self {
        self.key = None;
        self
    }

    /// The system prompt and the provider's settings (`max_tokens`, `temperature`,
    /// `tool_choice`, `generationConfig`, …). `model` and `stream` are set by the model unless
    /// the options set `model` themselves.
    pub fn options(mut self, options: RequestOptions) -> Self {
        self.options = options;
        self
    }

    /// Advertises tools in `target`'s dialect (a strict one, say). It must be one of the
    /// provider's; a request for another fails.
    pub fn target(mut self, target: Target) -> Self {
        self.target = target;
        self
    }

    /// Whether responses are streamed (the default) or asked for whole.
    pub fn streaming(mut self, stream: bool) -> Self {
        self.stream = stream;
        self
    }

    /// The most time one request may take, from sending it to the end of its response
    /// (each retry has its own).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The longest a streamed response may go without sending a byte before the attempt is
    /// given up (and retried); default [`DEFAULT_IDLE_TIMEOUT`].
    pub fn idle_timeout(mut self, idle: Duration) -> Self {
        self.idle_timeout = idle;
        self
    }

    /// How failed requests are retried.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// The most bytes a response body may have; a larger one fails the request.
    pub fn max_response_bytes(mut self, bytes: usize) -> Self {
        self.limits.set_max_total_bytes(bytes);
        self
    }

    /// The most bytes one call's streamed arguments may have (see
    /// [`StreamError::TooLarge`](crate::providers::StreamError::TooLarge)).
    pub fn max_call_bytes(mut self, bytes: usize) -> Self {
        self.limits.set_max_call_bytes(bytes);
        self
    }

    /// The wire format it speaks.
    pub fn format(&self) -> &dyn WireFormat {
        &*self.format
    }

    /// The model's name.
    pub fn model_name(&self) -> &str {
        &self.model
    }

    /// The URL one step is sent to.
    pub fn endpoint(&self) -> String {
        format!(
            "{}{}",
            self.base_url,
            self.format.path(&self.model, self.stream)
        )
    }

    fn error(&self, message: impl fmt::Display) -> ModelError {
        let text = format!("{}: {message}", self.format.name());
        ModelError::new(match &self.key {
            Some(key) => key.redact(text),
            None => text,
        })
    }

    async fn respond_inner(&self, request: &ModelRequest<'_>) -> Result<Turn, ModelError> {
        // On the wrap-up turn the tools stay declared (Anthropic refuses earlier `tool_use`
        // blocks without them) and calls are forbidden instead.
        let tools = if request.answer_only() {
            request.declared_tools()
        } else {
            request.tools()
        };
        let advertised = advertise(tools.iter().copied(), self.target)
            .map_err(|error| self.error(format_args!("cannot advertise the tools: {error}")))?;
        let mut body = wire::body(
            &*self.format,
            request.transcript(),
            &advertised,
            &self.options,
            &self.model,
            self.stream,
        )
        .map_err(|error| self.error(format_args!("cannot write the request: {error}")))?;
        if request.answer_only()
            && !tools.is_empty()
            && let Value::Object(map) = &mut body
        {
            self.format.forbid_calls(map);
        }
        let body = serde_json::to_vec(&body)
            .map_err(|error| self.error(format_args!("cannot write the request: {error}")))?;
        let deadline = request.context().and_then(crate::Context::deadline);
        let mut waited = Duration::ZERO;
        let mut attempt = 1;
        loop {
            let (error, retry_after) = match self.attempt(&body, advertised.names()).await {
                Ok(mut turn) => {
                    unique_ids(&mut turn, request.transcript());
                    return Ok(turn);
                }
                Err(Failure::Fatal(error)) => return Err(error),
                Err(Failure::Retry(error, retry_after)) => (error, retry_after),
            };
            if attempt >= self.retry.attempts() {
                return Err(self.gave_up(attempt, &error));
            }
            let wait = self.retry.wait(attempt, retry_after);
            waited += wait;
            let past_deadline = deadline.is_some_and(|d| Instant::now() + wait >= d);
            if waited > self.retry.max_total() || past_deadline {
                return Err(self.gave_up(attempt, &error));
            }
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    fn gave_up(&self, attempts: u32, last: &str) -> ModelError {
        if attempts == 1 {
            return self.error(last);
        }
        self.error(format_args!("gave up after {attempts} attempts: {last}"))
    }

    /// One request, under the per-request timeout.
    async fn attempt(&self, body: &[u8], names: &NameMap) -> Result<Turn, Failure> {
        match tokio::time::timeout(self.timeout, self.exchange(body, names)).await {
            Ok(result) => result,
            Err(_) => Err(Failure::Retry(
                format!(
                    "the request timed out after {} ms",
                    self.timeout.as_millis()
                ),
                None,
            )),
        }
    }

    async fn exchange(&self, body: &[u8], names: &NameMap) -> Result<Turn, Failure> {
        let started = Instant::now();
        let mut builder = self
            .client
            .post(self.endpoint())
            .header(CONTENT_TYPE, "application/json")
            .body(body.to_vec());
        // The W3C trace context of this step's span, for a provider or gateway that traces.
        #[cfg(feature = "otel")]
        for (name, value) in crate::observe::trace_headers() {
            builder = builder.header(name, value);
        }
        for (name, value) in self.format.headers(self.key.as_ref().map(ApiKey::expose)) {
            let mut value = HeaderValue::from_str(&value).map_err(|_| {
                Failure::Fatal(self.error("the API key is not a valid HTTP header value"))
            })?;
            value.set_sensitive(true);
            builder = builder.header(name, value);
        }
        let mut response = builder.send().await.map_err(|error| {
            if error.is_builder() {
                // A URL that is not one: no attempt can succeed.
                Failure::Fatal(self.error(format_args!(
                    "cannot send a request to {}: {}",
                    self.endpoint(),
                    describe(&error)
                )))
            } else {
                Failure::Retry(format!("the request failed: {}", describe(&error)), None)
            }
        })?;
        let status = response.status();
        if !status.is_success() {
            let retry_after = response
                .headers()
                .get(RETRY_AFTER)
                .and_then(|value| value.to_str().ok())
                .and_then(retry::parse_retry_after);
            let text = read_capped(&mut response, 64 << 10)
                .await
                .unwrap_or_default();
            let message = format!("HTTP {status}: {}", error_message(&text));
            return Err(if retryable(status) {
                Failure::Retry(message, retry_after)
            } else {
                Failure::Fatal(self.error(message))
            });
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let expected = if self.stream {
            "text/event-stream"
        } else {
            "application/json"
        };
        if !content_type.starts_with(expected) {
            let shown = if content_type.is_empty() {
                "none"
            } else {
                &content_type
            };
            return Err(Failure::Fatal(self.error(format_args!(
                "expected a {expected} response, got content type {shown}"
            ))));
        }
        if self.stream {
            self.read_stream(response, names, started).await
        } else {
            let text = read_capped(&mut response, self.limits.max_total_bytes())
                .await
                .map_err(|error| self.body_failure(error))?;
            let value: Value = serde_json::from_str(&text).map_err(|error| {
                Failure::Fatal(self.error(format_args!("the response is not JSON: {error}")))
            })?;
            self.format
                .parse_turn(&value, names)
                .map_err(|error| Failure::Fatal(self.error(error)))
        }
    }

    async fn read_stream(
        &self,
        mut response: reqwest::Response,
        names: &NameMap,
        started: Instant,
    ) -> Result<Turn, Failure> {
        let mut decoder = SseDecoder::new();
        let mut turn = self.format.stream(names, self.limits.max_call_bytes());
        let mut received = 0usize;
        loop {
            let Ok(read) = tokio::time::timeout(self.idle_timeout, response.chunk()).await else {
                return Err(Failure::Retry(
                    format!(
                        "the stream sent nothing for {} ms",
                        self.idle_timeout.as_millis()
                    ),
                    None,
                ));
            };
            let chunk = match read {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                Err(error) => {
                    return Err(Failure::Retry(
                        format!("the stream broke off: {}", describe(&error)),
                        None,
                    ));
                }
            };
            if received == 0 {
                tracing::debug!(
                    tool_core.time_to_first_chunk_s = started.elapsed().as_secs_f64(),
                    "first chunk"
                );
            }
            received += chunk.len();
            if let Some(limit) = self.limits.total_over(received) {
                return Err(self.body_failure(BodyError::TooLarge(limit)));
            }
            for event in decoder.push(&chunk) {
                self.take(&mut turn, &event)?;
            }
        }
        if let Some(event) = decoder.finish() {
            self.take(&mut turn, &event)?;
        }
        if !turn.ended() {
            return Err(Failure::Retry(
                "the stream ended before the provider finished the turn".to_owned(),
                None,
            ));
        }
        turn.finish()
            .map_err(|error| Failure::Fatal(self.error(error)))
    }

    fn take(
        &self,
        turn: &mut Box<dyn TurnStream>,
        event: &crate::providers::SseEvent,
    ) -> Result<(), Failure> {
        wire::event(&mut **turn, event).map_err(|error| match error {
            EventError::Malformed(reason) => {
                Failure::Fatal(self.error(format_args!("malformed stream event: {reason}")))
            }
            // An error event: the provider failed mid-turn (overloaded, say).
            EventError::Stream(error @ crate::providers::StreamError::Provider { .. }) => {
                Failure::Retry(error.to_string(), None)
            }
            EventError::Stream(error) => Failure::Fatal(self.error(error)),
        })
    }

    fn body_failure(&self, error: BodyError) -> Failure {
        match error {
            BodyError::TooLarge(limit) => Failure::Fatal(
                self.error(format_args!("the response is larger than {limit} bytes")),
            ),
            BodyError::Read(reason) => {
                Failure::Retry(format!("the response broke off: {reason}"), None)
            }
            BodyError::NotText => Failure::Fatal(self.error("the response is not UTF-8 text")),
        }
    }
}

impl HttpModel {
    /// Runs one model call in a `chat` span (the agent's step's, or one of its own) naming the
    /// provider and the model, and reports its duration and tokens to the `metrics` facade.
    async fn traced(
        &self,
        step: u32,
        work: impl Future<Output = Result<Turn, ModelError>>,
    ) -> Result<Turn, ModelError> {
        let (span, own) = match crate::observe::current_chat_span() {
            Some(span) => (span, false),
            None => (crate::observe::chat_span(step), true),
        };
        let provider = provider_name(self.format.name());
        if !span.is_disabled() {
            span.record("gen_ai.provider.name", provider);
            span.record("gen_ai.request.model", self.model.as_str());
            let name = format!("chat {}", self.model);
            span.record("otel.name", name.as_str());
            // The OpenTelemetry layer takes `otel.name` only until the span is first entered,
            // which the agent's step span was; rename the OpenTelemetry span itself.
            #[cfg(feature = "otel")]
            {
                use opentelemetry::trace::TraceContextExt as _;
                use tracing_opentelemetry::OpenTelemetrySpanExt as _;
                span.context().span().update_name(name);
            }
        }
        let started = Instant::now();
        let result = if own {
            work.instrument(span.clone()).await
        } else {
            work.await
        };
        crate::metrics::emit_chat(&crate::metrics::ChatRecord {
            provider,
            model: &self.model,
            seconds: started.elapsed().as_secs_f64(),
            usage: result.as_ref().ok().map(|turn| turn.usage),
            error: result.as_ref().err().map(|_| "model_error"),
        });
        if own {
            let end = match &result {
                Ok(turn) => Ok(crate::observe::ChatEnd {
                    input_tokens: turn.usage.input_tokens,
                    output_tokens: turn.usage.output_tokens,
                    calls: turn.calls.len(),
                }),
                Err(_) => Err("model_error"),
            };
            crate::observe::record_chat(&span, end);
        }
        result
    }
}

/// The `gen_ai.provider.name` of a wire format, by the conventions' well-known values; a
/// format of the application's own is `"other"`.
fn provider_name(format: &str) -> &'static str {
    if format.starts_with("OpenAI") {
        "openai"
    } else if format == "Anthropic" {
        "anthropic"
    } else if format == "Gemini" {
        "gcp.gemini"
    } else {
        "other"
    }
}

impl Model for HttpModel {
    async fn respond(&self, request: &ModelRequest<'_>) -> Result<Turn, ModelError> {
        let work = async {
            match request.context() {
                Some(cx) => match cx.bounded(self.respond_inner(request)).await {
                    Ok(result) => result,
                    Err(Stopped::Cancelled) => Err(self.error("the run was cancelled")),
                    Err(Stopped::Deadline) => Err(self.error("the run's deadline passed")),
                },
                None => self.respond_inner(request).await,
            }
        };
        self.traced(request.step(), work).await
    }
}

/// The same model fixes refused arguments for the repair loop: it is sent one user message
/// holding the tool's name, its input schema, the refused arguments and the field-level
/// feedback, with no tools offered, and the one JSON object in its answer (bare, in a Markdown
/// fence or in prose: [`extract_json_object`](crate::extract::extract_json_object)) is the new
/// arguments. An answer with no single object is passed on as it is, for the repair loop to
/// refuse with its reason. The tokens it spends are reported by
/// [`take_usage`](RepairModel::take_usage), and so counted in the run's usage and budgets
/// (clones share the count).
impl RepairModel for HttpModel {
    async fn repair(&self, request: &RepairRequest<'_>) -> Result<String, ModelError> {
        let schema = serde_json::to_string(request.schema())
            .map_err(|error| self.error(format_args!("cannot write the schema: {error}")))?;
        let text = format!(
            "Your call to the tool `{}` was refused.\nThe tool's input schema: {schema}\n\
             Your arguments: {}\n{}",
            request.tool(),
            request.previous(),
            request.feedback()
        );
        let transcript = [Message::User { text }];
        let model_request = ModelRequest {
            transcript: &transcript,
            tools: Vec::new(),
            declared: Vec::new(),
            answer_only: false,
            step: request.attempt(),
            context: None,
        };
        let turn = self
            .traced(request.attempt(), self.respond_inner(&model_request))
            .await?;
        *lock(&self.repair_usage) += turn.usage;
        let answer = turn.text.unwrap_or_default();
        Ok(match crate::extract::extract_json_object(&answer) {
            Ok(found) => found.json().to_owned(),
            Err(_) => answer,
        })
    }

    fn take_usage(&self) -> Usage {
        std::mem::take(&mut *lock(&self.repair_usage))
    }
}

/// Gives the turn's calls ids made here where the provider's do not look unique (see
/// [Call ids](crate::ToolCall#call-ids)), counting the ids of the transcript's earlier calls
/// as taken: a server that numbers the calls of each response repeats them turn after turn.
fn unique_ids(turn: &mut Turn, transcript: &[Message]) {
    let earlier: std::collections::HashSet<&str> = transcript
        .iter()
        .filter_map(|message| match message {
            Message::Assistant { calls, .. } => Some(calls),
            _ => None,
        })
        .flatten()
        .flat_map(|call| [Some(call.call_id()), call.provider_call_id()])
        .flatten()
        .collect();
    crate::providers::make_ids_unique(&mut turn.calls, &earlier);
}

/// How an attempt failed: worth another try (with the provider's `Retry-After`), or not.
enum Failure {
    Retry(String, Option<Duration>),
    Fatal(ModelError),
}

enum BodyError {
    TooLarge(usize),
    Read(String),
    NotText,
}

/// TLS for the client: the process's crypto provider (ring when it has none), the platform's
/// certificate verifier, HTTP/1.1.
fn tls_config() -> Result<rustls::ClientConfig, rustls::Error> {
    use rustls_platform_verifier::BuilderVerifierExt;
    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| std::sync::Arc::new(rustls::crypto::ring::default_provider()));
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_platform_verifier()?
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// Statuses that may succeed later.
fn retryable(status: StatusCode) -> bool {
    matches!(status.as_u16(), 408 | 429) || status.is_server_error()
}

/// A whole body, at most `limit` bytes.
async fn read_capped(response: &mut reqwest::Response, limit: usize) -> Result<String, BodyError> {
    let mut bytes = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if bytes.len() + chunk.len() > limit {
                    return Err(BodyError::TooLarge(limit));
                }
                bytes.extend_from_slice(&chunk);
            }
            Ok(None) => break,
            Err(error) => return Err(BodyError::Read(describe(&error))),
        }
    }
    String::from_utf8(bytes).map_err(|_| BodyError::NotText)
}

/// The provider's message in an error body (`{"error": {"message": …}}` for all four), or
/// the start of the body.
fn error_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let message = parsed.as_ref().and_then(|value| {
        value["error"]["message"]
            .as_str()
            .or(value["message"].as_str())
            .or(value["error"].as_str())
    });
    let text = message.unwrap_or(body).trim();
    if text.is_empty() {
        return "(no message)".to_owned();
    }
    let mut shown: String = text.chars().take(MAX_ERROR_CHARS).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    shown
}

/// A client error without its URL's query, and with its causes.
fn describe(error: &reqwest::Error) -> String {
    use std::error::Error as _;
    let mut text = if error.is_builder() {
        "invalid request".to_owned()
    } else if error.is_connect() {
        "could not connect".to_owned()
    } else if error.is_timeout() {
        "timed out".to_owned()
    } else {
        "connection error".to_owned()
    };
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_are_the_providers_and_capped() {
        assert_eq!(
            error_message(r#"{"error": {"message": "Invalid model", "type": "x"}}"#),
            "Invalid model"
        );
        assert_eq!(
            error_message("<html>bad gateway</html>"),
            "<html>bad gateway</html>"
        );
        let long = "x".repeat(5000);
        assert_eq!(error_message(&long).chars().count(), MAX_ERROR_CHARS + 1);
        assert_eq!(error_message(""), "(no message)");
    }
}
