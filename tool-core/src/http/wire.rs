//! What differs between the providers on the wire: endpoints, authentication, the request
//! body, and how one streamed event adds to the turn (through each provider's `Stream`).

use serde_json::{Map, Value};

use super::ApiKey;
use crate::ToolCall;
use crate::model::{Message, Provider, Turn, Usage};
use crate::providers::{
    Advertised, NameMap, ParseError, RequestError, RequestOptions, SseEvent, StreamError, Target,
    anthropic, gemini, openai_chat, openai_responses,
};

/// The `anthropic-version` header sent with every Anthropic request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// What an [`HttpModel`](super::HttpModel) needs of each provider.
impl Provider {
    /// The base URL requests go to unless another is given.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Provider::OpenAiChat | Provider::OpenAiResponses => "https://api.openai.com/v1",
            Provider::Anthropic => "https://api.anthropic.com/v1",
            Provider::Gemini => "https://generativelanguage.googleapis.com/v1beta",
        }
    }

    /// The environment variable the key is read from unless one is given.
    pub fn key_variable(self) -> &'static str {
        match self {
            Provider::OpenAiChat | Provider::OpenAiResponses => "OPENAI_API_KEY",
            Provider::Anthropic => "ANTHROPIC_API_KEY",
            Provider::Gemini => "GEMINI_API_KEY",
        }
    }

    /// The schema dialect tools are advertised in unless another is chosen (each provider's
    /// non-strict form).
    pub fn default_target(self) -> Target {
        match self {
            Provider::OpenAiChat => Target::OpenAiChat,
            Provider::OpenAiResponses => Target::OpenAiResponses,
            Provider::Anthropic => Target::Anthropic,
            Provider::Gemini => Target::GeminiJsonSchema,
        }
    }

    /// The path of the request, after the base URL.
    pub(super) fn path(self, model: &str, stream: bool) -> String {
        match self {
            Provider::OpenAiChat => "/chat/completions".to_owned(),
            Provider::OpenAiResponses => "/responses".to_owned(),
            Provider::Anthropic => "/messages".to_owned(),
            Provider::Gemini if stream => format!("/models/{model}:streamGenerateContent?alt=sse"),
            Provider::Gemini => format!("/models/{model}:generateContent"),
        }
    }

    /// The authentication (and version) headers.
    pub(super) fn headers(self, key: Option<&ApiKey>) -> Vec<(&'static str, String)> {
        let mut headers = Vec::new();
        if let Some(key) = key {
            match self {
                Provider::OpenAiChat | Provider::OpenAiResponses => {
                    headers.push(("authorization", format!("Bearer {}", key.expose())));
                }
                Provider::Anthropic => headers.push(("x-api-key", key.expose().to_owned())),
                Provider::Gemini => headers.push(("x-goog-api-key", key.expose().to_owned())),
            }
        }
        if self == Provider::Anthropic {
            headers.push(("anthropic-version", ANTHROPIC_VERSION.to_owned()));
        }
        headers
    }

    /// The request body: the provider's builder, then the model, the `stream` flag and what
    /// the provider needs that the options did not say.
    pub(super) fn body(
        self,
        transcript: &[Message],
        tools: &Advertised,
        options: &RequestOptions,
        model: &str,
        stream: bool,
    ) -> Result<Value, RequestError> {
        let mut body = match self {
            Provider::OpenAiChat => openai_chat::request(transcript, tools, options)?,
            Provider::OpenAiResponses => openai_responses::request(transcript, tools, options)?,
            Provider::Anthropic => anthropic::request(transcript, tools, options)?,
            Provider::Gemini => gemini::request(transcript, tools, options)?,
        };
        let Value::Object(map) = &mut body else {
            return Ok(body);
        };
        if tools.tools().is_empty() {
            // Settings about tools (a `tool_choice` of "required", say) make a request with no
            // tools one the provider refuses: a repair request, or a registry with none.
            for key in ["tool_choice", "parallel_tool_calls", "toolConfig"] {
                map.remove(key);
            }
        }
        let default = |map: &mut Map<String, Value>, key: &str, value: Value| {
            map.entry(key.to_owned()).or_insert(value);
        };
        if self != Provider::Gemini {
            default(map, "model", Value::from(model));
            map.insert("stream".to_owned(), Value::Bool(stream));
        }
        if self == Provider::OpenAiChat && stream {
            // Without it the stream carries no token counts.
            default(
                map,
                "stream_options",
                serde_json::json!({"include_usage": true}),
            );
        }
        if self == Provider::Anthropic {
            default(map, "max_tokens", Value::from(4096));
        }
        Ok(body)
    }

    /// Tells the model to answer in text: the provider's "no tool calls" choice, replacing any
    /// the options set.
    pub(super) fn forbid_calls(self, body: &mut Value) {
        let Value::Object(map) = body else {
            return;
        };
        match self {
            Provider::OpenAiChat | Provider::OpenAiResponses => {
                map.insert("tool_choice".to_owned(), Value::from("none"));
            }
            Provider::Anthropic => {
                map.insert(
                    "tool_choice".to_owned(),
                    serde_json::json!({"type": "none"}),
                );
            }
            Provider::Gemini => {
                map.insert(
                    "toolConfig".to_owned(),
                    serde_json::json!({"functionCallingConfig": {"mode": "NONE"}}),
                );
            }
        }
    }

    /// A whole (not streamed) response as a turn.
    pub(super) fn parse_turn(self, body: &Value, names: &NameMap) -> Result<Turn, ParseError> {
        match self {
            Provider::OpenAiChat => openai_chat::parse_turn(body, names),
            Provider::OpenAiResponses => openai_responses::parse_turn(body, names),
            Provider::Anthropic => anthropic::parse_turn(body, names),
            Provider::Gemini => gemini::parse_turn(body, names),
        }
    }
}

/// Why a streamed event could not be taken.
#[derive(Debug)]
pub(super) enum EventError {
    /// The event's data is not JSON.
    Malformed(String),
    /// The provider's stream accumulator refused it.
    Stream(StreamError),
    /// The provider reported an error that another attempt would meet again (a request it
    /// refuses), with its message.
    Refused(String),
}

/// One streamed turn being put together: the provider's accumulator, the calls it has
/// completed, the token counts and whether the provider said the turn is over.
#[derive(Debug)]
pub(super) struct Accumulator {
    stream: Streams,
    calls: Vec<ToolCall>,
    usage: Usage,
    /// Anthropic's prompt counts as last reported: uncached, written to the cache, read from
    /// it (each cumulative, each reported on its own).
    anthropic_input: [u64; 3],
    ended: bool,
}

#[derive(Debug)]
enum Streams {
    OpenAiChat(openai_chat::Stream),
    OpenAiResponses(openai_responses::Stream),
    Anthropic(anthropic::Stream),
    Gemini(gemini::Stream),
}

impl Accumulator {
    pub(super) fn new(provider: Provider, names: &NameMap, max_call_bytes: usize) -> Self {
        let stream = match provider {
            Provider::OpenAiChat => {
                Streams::OpenAiChat(openai_chat::Stream::new(names).max_call_bytes(max_call_bytes))
            }
            Provider::OpenAiResponses => Streams::OpenAiResponses(
                openai_responses::Stream::new(names).max_call_bytes(max_call_bytes),
            ),
            Provider::Anthropic => {
                Streams::Anthropic(anthropic::Stream::new(names).max_call_bytes(max_call_bytes))
            }
            Provider::Gemini => {
                Streams::Gemini(gemini::Stream::new(names).max_call_bytes(max_call_bytes))
            }
        };
        Accumulator {
            stream,
            calls: Vec::new(),
            usage: Usage::default(),
            anthropic_input: [0; 3],
            ended: false,
        }
    }

    /// Whether the provider has said the turn is complete (`[DONE]`, `response.completed`,
    /// `message_stop`, a `finishReason`); a stream that closes before is cut off.
    pub(super) fn ended(&self) -> bool {
        self.ended
    }

    fn provider(&self) -> Provider {
        match self.stream {
            Streams::OpenAiChat(_) => Provider::OpenAiChat,
            Streams::OpenAiResponses(_) => Provider::OpenAiResponses,
            Streams::Anthropic(_) => Provider::Anthropic,
            Streams::Gemini(_) => Provider::Gemini,
        }
    }

    pub(super) fn event(&mut self, event: &SseEvent) -> Result<(), EventError> {
        if event.data.trim().is_empty() {
            return Ok(());
        }
        if event.is_done() {
            self.ended = true;
            return Ok(());
        }
        let value: Value = serde_json::from_str(&event.data)
            .map_err(|error| EventError::Malformed(error.to_string()))?;
        if !value.is_object() {
            return Err(EventError::Malformed(
                "the event is not a JSON object".into(),
            ));
        }
        if let Some(message) = refused(self.provider(), &value) {
            return Err(EventError::Refused(message));
        }
        // Chat and Gemini streams carry an error as a chunk with an `error` member, which their
        // accumulators would pass over as a chunk with nothing in it: it ends the attempt.
        if matches!(self.provider(), Provider::OpenAiChat | Provider::Gemini)
            && value["error"].is_object()
        {
            let message = value["error"]["message"]
                .as_str()
                .unwrap_or("an error event with no message");
            return Err(EventError::Stream(StreamError::Provider {
                message: message.to_owned(),
            }));
        }
        let count = |value: &Value| value.as_u64();
        let calls = match &mut self.stream {
            Streams::OpenAiChat(stream) => {
                let usage = &value["usage"];
                if let (Some(input), Some(output)) = (
                    count(&usage["prompt_tokens"]),
                    count(&usage["completion_tokens"]),
                ) {
                    self.usage = Usage {
                        input_tokens: input,
                        output_tokens: output,
                    };
                }
                let calls = stream.push(&value);
                if value["choices"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|choice| !choice["finish_reason"].is_null())
                {
                    self.ended = true;
                }
                calls
            }
            Streams::OpenAiResponses(stream) => {
                let kind = value["type"].as_str().unwrap_or_default();
                if matches!(kind, "response.completed" | "response.incomplete") {
                    self.ended = true;
                    let usage = &value["response"]["usage"];
                    self.usage = Usage {
                        input_tokens: count(&usage["input_tokens"]).unwrap_or(0),
                        output_tokens: count(&usage["output_tokens"]).unwrap_or(0),
                    };
                }
                if kind == "response.failed" {
                    let error = &value["response"]["error"];
                    let message = error["message"]
                        .as_str()
                        .or(error["code"].as_str())
                        .unwrap_or("the response failed");
                    return Err(EventError::Stream(StreamError::Provider {
                        message: message.to_owned(),
                    }));
                }
                stream.push(&value)
            }
            Streams::Anthropic(stream) => {
                let usage = match value["type"].as_str() {
                    Some("message_start") => &value["message"]["usage"],
                    Some("message_delta") => &value["usage"],
                    Some("message_stop") => {
                        self.ended = true;
                        &Value::Null
                    }
                    _ => &Value::Null,
                };
                // Counts are cumulative: the latest of each is the turn's. Prompt tokens read
                // from or written to the cache are counted apart from `input_tokens`.
                let keys = [
                    "input_tokens",
                    "cache_creation_input_tokens",
                    "cache_read_input_tokens",
                ];
                for (slot, key) in self.anthropic_input.iter_mut().zip(keys) {
                    if let Some(n) = count(&usage[key]) {
                        *slot = n;
                    }
                }
                self.usage.input_tokens = self
                    .anthropic_input
                    .iter()
                    .fold(0u64, |sum, n| sum.saturating_add(*n));
                if let Some(output) = count(&usage["output_tokens"]) {
                    self.usage.output_tokens = output;
                }
                stream.push(&value)
            }
            Streams::Gemini(stream) => {
                let usage = &value["usageMetadata"];
                if usage.is_object() {
                    self.usage = Usage {
                        input_tokens: count(&usage["promptTokenCount"]).unwrap_or(0),
                        output_tokens: count(&usage["candidatesTokenCount"])
                            .unwrap_or(0)
                            .saturating_add(count(&usage["thoughtsTokenCount"]).unwrap_or(0)),
                    };
                }
                if value["candidates"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|candidate| candidate["finishReason"].is_string())
                {
                    self.ended = true;
                }
                stream.push(&value)
            }
        };
        self.calls.extend(calls.map_err(EventError::Stream)?);
        Ok(())
    }

    /// The turn, once the stream is over.
    pub(super) fn finish(self) -> Result<Turn, StreamError> {
        let (text, provider) = match &self.stream {
            Streams::OpenAiChat(stream) => (stream.text().to_owned(), None),
            Streams::OpenAiResponses(stream) => (stream.text().to_owned(), stream.provider_state()),
            Streams::Anthropic(stream) => (stream.text().to_owned(), stream.provider_state()),
            Streams::Gemini(stream) => (stream.text().to_owned(), stream.provider_state()),
        };
        match self.stream {
            Streams::OpenAiChat(stream) => stream.finish()?,
            Streams::OpenAiResponses(stream) => stream.finish()?,
            Streams::Anthropic(stream) => stream.finish()?,
            Streams::Gemini(stream) => stream.finish()?,
        }
        Ok(Turn {
            text: (!text.is_empty()).then_some(text),
            calls: self.calls,
            usage: self.usage,
            provider,
        })
    }
}

/// The message of an error event whose error another attempt would meet again: one that names
/// its kind, and a kind that is not a passing one (overload, rate limit, server error, timeout).
/// Error events that name no kind are taken as passing.
fn refused(provider: Provider, value: &Value) -> Option<String> {
    let (kind, message) = match provider {
        // `{"type": "error", "code", "message"}` or `response.failed` with `response.error`.
        Provider::OpenAiResponses => match value["type"].as_str() {
            Some("error") => (&value["code"], &value["message"]),
            Some("response.failed") => (
                &value["response"]["error"]["code"],
                &value["response"]["error"]["message"],
            ),
            _ => return None,
        },
        // `{"type": "error", "error": {"type", "message"}}`.
        Provider::Anthropic if value["type"] == "error" => {
            (&value["error"]["type"], &value["error"]["message"])
        }
        // `{"error": {"type" | "status", "message"}}` as an event's data.
        Provider::OpenAiChat => (&value["error"]["type"], &value["error"]["message"]),
        Provider::Gemini => (&value["error"]["status"], &value["error"]["message"]),
        Provider::Anthropic => return None,
    };
    let kind = kind.as_str()?;
    let passing = matches!(
        kind.to_ascii_lowercase().as_str(),
        "server_error"
            | "rate_limit_exceeded"
            | "rate_limit_error"
            | "overloaded_error"
            | "api_error"
            | "timeout_error"
            | "vector_store_timeout"
            | "internal"
            | "unavailable"
            | "resource_exhausted"
            | "deadline_exceeded"
    );
    if passing {
        return None;
    }
    let message = message.as_str().unwrap_or("(no message)");
    Some(format!(
        "the provider refused the request ({kind}): {message}"
    ))
}
