//! OpenAI Chat Completions: tool calls out of a completion (whole or streamed), results back
//! as `role: "tool"` messages.
//!
//! ```
//! use serde_json::json;
//! use tool_core::providers::{NameMap, openai_chat};
//!
//! let completion = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
//!     "role": "assistant", "content": null,
//!     "tool_calls": [{"id": "call_Jm3Wq8Yx2Vb7", "type": "function",
//!                     "function": {"name": "search", "arguments": "{\"q\":\"rust\"}"}}]}}]});
//! let calls = openai_chat::parse_response(&completion, &NameMap::default())?;
//! assert_eq!((calls[0].call_id(), calls[0].name()), ("call_Jm3Wq8Yx2Vb7", "search"));
//! # Ok::<(), tool_core::providers::ParseError>(())
//! ```

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::advertise::Advertised;
use super::call::{CallArguments, ParseError, ToolCall, make_ids_unique};
use super::encode::{EncodeError, WireResult, pair};
use super::format::{ProviderStream, WireFormat, default, error_event};
use super::names::NameMap;
use super::request::{Body, Entry, RequestError, RequestOptions, entries};
use super::stream::{self, Caps, StreamError};
use super::target::Target;
use crate::Outcome;
use crate::model::{ProviderState, Turn, Usage};

#[derive(Deserialize)]
struct Completion {
    #[serde(default)]
    choices: Option<Vec<Choice>>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    message: Option<Message>,
    #[serde(default)]
    delta: Option<Message>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    tool_calls: Option<Vec<WireCall>>,
}

#[derive(Deserialize)]
struct WireCall {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<WireFunction>,
}

#[derive(Deserialize)]
struct WireFunction {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

/// The tool calls of a completion (`choices[0].message.tool_calls`), or of one assistant
/// message, in order. Arguments stay JSON text, as sent.
pub fn parse_response(body: &Value, names: &NameMap) -> Result<Vec<ToolCall>, ParseError> {
    let message = if body.get("choices").is_some() {
        let completion = Completion::deserialize(body).map_err(ParseError::malformed)?;
        let choices = completion.choices.unwrap_or_default();
        match choices.into_iter().find(|c| c.index.unwrap_or(0) == 0) {
            Some(choice) => choice.message,
            None => None,
        }
    } else {
        Some(Message::deserialize(body).map_err(ParseError::malformed)?)
    };
    let wire = message.and_then(|m| m.tool_calls).unwrap_or_default();
    let mut calls = Vec::with_capacity(wire.len());
    for (index, call) in wire.into_iter().enumerate() {
        let id = call
            .id
            .ok_or(ParseError::MissingField { index, field: "id" })?;
        let function = call.function.ok_or(ParseError::MissingField {
            index,
            field: "function",
        })?;
        let name = function.name.ok_or(ParseError::MissingField {
            index,
            field: "function.name",
        })?;
        calls.push(ToolCall::proposed(
            id,
            &name,
            CallArguments::openai_text(function.arguments.unwrap_or_default()),
            names,
        ));
    }
    make_ids_unique(&mut calls, &std::collections::HashSet::new());
    Ok(calls)
}

/// The `role: "tool"` messages answering `calls`, one per call in call order: the output's
/// JSON text, or the failure's code and public message.
pub fn tool_messages(calls: &[ToolCall], outcomes: &[Outcome]) -> Result<Vec<Value>, EncodeError> {
    Ok(pair(calls, outcomes)?
        .into_iter()
        .map(|(call, outcome)| {
            let content = WireResult::outcome(outcome).text();
            json!({ "role": "tool", "tool_call_id": call.wire_id(), "content": content })
        })
        .collect())
}

#[derive(Debug)]
struct Partial {
    id: Option<String>,
    name: String,
    arguments: String,
}

/// Tool calls out of a streamed completion (`chat.completion.chunk` events), accumulated by
/// `tool_calls[].index`: the id and name come in the first fragment of each index, argument
/// text in the following ones. Calls are yielded when the choice's `finish_reason` arrives.
///
/// ```
/// use serde_json::json;
/// use tool_core::providers::{NameMap, openai_chat};
///
/// let mut stream = openai_chat::Stream::new(&NameMap::default());
/// let chunk = |delta: serde_json::Value, finish: Option<&str>| json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
/// let first = json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "search", "arguments": ""}}]});
/// assert!(stream.push(&chunk(first, None))?.is_empty());
/// let text = json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"q\":\"rust\"}"}}]});
/// assert!(stream.push(&chunk(text, None))?.is_empty()); // complete JSON, but not yet final
/// let calls = stream.push(&chunk(json!({}), Some("tool_calls")))?;
/// assert_eq!(calls[0].arguments_value(), Some(json!({"q": "rust"})));
/// # Ok::<(), tool_core::providers::StreamError>(())
/// ```
#[derive(Debug)]
pub struct Stream {
    names: NameMap,
    caps: Caps,
    calls: BTreeMap<u64, Partial>,
    finished: bool,
    text: String,
}

impl Stream {
    /// An accumulator decoding names with `names`, capping each call at
    /// [`DEFAULT_MAX_CALL_BYTES`](super::DEFAULT_MAX_CALL_BYTES).
    pub fn new(names: &NameMap) -> Self {
        Stream {
            names: names.clone(),
            caps: Caps::default(),
            calls: BTreeMap::new(),
            finished: false,
            text: String::new(),
        }
    }

    stream::caps_builders!("arguments");

    /// The assistant text received so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Takes one chunk; returns the calls it completes. After an error, drop the stream.
    pub fn push(&mut self, chunk: &Value) -> Result<Vec<ToolCall>, StreamError> {
        self.caps.chunk()?;
        let chunk =
            Completion::deserialize(chunk).map_err(|e| StreamError::protocol(e.to_string()))?;
        let mut done = Vec::new();
        for choice in chunk.choices.unwrap_or_default() {
            if choice.index.unwrap_or(0) != 0 {
                continue;
            }
            if let Some(delta) = choice.delta {
                if let Some(Value::String(text)) = delta.content {
                    self.text.push_str(&text);
                }
                for fragment in delta.tool_calls.unwrap_or_default() {
                    self.fragment(fragment)?;
                }
            }
            if let Some(reason) = choice.finish_reason {
                done.extend(self.finish_reason(&reason)?);
            }
        }
        Ok(done)
    }

    fn fragment(&mut self, fragment: WireCall) -> Result<(), StreamError> {
        if self.finished {
            return Err(StreamError::protocol(
                "a tool call fragment after finish_reason",
            ));
        }
        let index = fragment.index.unwrap_or(0);
        let partial = self.calls.entry(index).or_insert_with(|| Partial {
            id: None,
            name: String::new(),
            arguments: String::new(),
        });
        if let Some(id) = fragment.id.filter(|id| !id.is_empty()) {
            match &partial.id {
                Some(known) if *known != id => {
                    return Err(StreamError::protocol(format!(
                        "tool call index {index} changed id from {known:?} to {id:?}"
                    )));
                }
                _ => partial.id = Some(id),
            }
        }
        if let Some(function) = fragment.function {
            if let Some(name) = function.name.filter(|n| !n.is_empty())
                && partial.name != name
            {
                // OpenAI sends the name once; compatible servers may split it.
                partial.name.push_str(&name);
            }
            if let Some(arguments) = function.arguments {
                self.caps
                    .append(&mut partial.arguments, &arguments, partial.id.as_deref())?;
            }
        }
        Ok(())
    }

    fn finish_reason(&mut self, reason: &str) -> Result<Vec<ToolCall>, StreamError> {
        self.finished = true;
        if !matches!(reason, "tool_calls" | "stop" | "function_call") {
            if let Some((_, partial)) = std::mem::take(&mut self.calls).into_iter().next() {
                return Err(truncated(reason, partial));
            }
            return Ok(Vec::new());
        }
        let mut calls = Vec::with_capacity(self.calls.len());
        for (index, partial) in std::mem::take(&mut self.calls) {
            let Some(id) = partial.id else {
                return Err(StreamError::protocol(format!(
                    "tool call index {index} never got an id"
                )));
            };
            if partial.name.is_empty() {
                return Err(StreamError::protocol(format!(
                    "tool call index {index} never got a name"
                )));
            }
            calls.push(ToolCall::proposed(
                id,
                &partial.name,
                CallArguments::openai_text(partial.arguments),
                &self.names,
            ));
        }
        make_ids_unique(&mut calls, &std::collections::HashSet::new());
        Ok(calls)
    }

    /// Ends the stream: an error if a call was opened and never finished.
    pub fn finish(self) -> Result<(), StreamError> {
        match self.calls.into_iter().next() {
            Some((_, partial)) if !self.finished => Err(truncated("end of stream", partial)),
            _ => Ok(()),
        }
    }

    /// All calls of a whole stream, in index order.
    pub fn collect<'a>(
        names: &NameMap,
        chunks: impl IntoIterator<Item = &'a Value>,
    ) -> Result<Vec<ToolCall>, StreamError> {
        stream::collect(Stream::new(names), chunks, Stream::push, Stream::finish)
    }
}

fn truncated(reason: &str, partial: Partial) -> StreamError {
    StreamError::Truncated {
        reason: reason.to_owned(),
        call_id: partial.id.unwrap_or_default(),
        name: partial.name,
        partial: partial.arguments,
    }
}

/// A whole completion as an assistant [`Turn`]: the message's text, its calls and the token
/// usage. Chat Completions has nothing that must go back unchanged, so the turn carries no
/// provider state.
pub fn parse_turn(body: &Value, names: &NameMap) -> Result<Turn, ParseError> {
    let calls = parse_response(body, names)?;
    let text = body["choices"]
        .as_array()
        .and_then(|choices| {
            choices
                .iter()
                .find(|c| c["index"].as_u64().unwrap_or(0) == 0)
        })
        .and_then(|choice| choice["message"]["content"].as_str())
        .map(str::to_owned);
    let usage = |key: &str| body["usage"][key].as_u64().unwrap_or(0);
    Ok(Turn {
        text,
        calls,
        usage: Usage {
            input_tokens: usage("prompt_tokens"),
            output_tokens: usage("completion_tokens"),
        },
        provider: None,
    })
}

/// The body of the next Chat Completions request: the `messages` of `transcript` (after a
/// `system` message when `options` has a system prompt) and the `tools`, over `options`'
/// settings (`model`, `tool_choice`, `parallel_tool_calls`, …).
///
/// An assistant turn is its text (left out when it has none) and its `tool_calls`, each with its
/// id, name and arguments text. Each result is a `tool` message for its call id, in call order;
/// the API has no error flag, so a failure is written `code: message`.
pub fn request(
    transcript: &[crate::model::Message],
    tools: &Advertised,
    options: &RequestOptions,
) -> Result<Value, RequestError> {
    let mut body = Body::new(options, tools, "OpenAI Chat", |t| {
        matches!(t, Target::OpenAiChat | Target::OpenAiChatStrict)
    })?;
    let mut messages: Vec<Value> = Vec::new();
    if let Some(system) = options.system_prompt() {
        messages.push(json!({"role": "system", "content": system}));
    }
    for entry in entries(transcript)? {
        match entry {
            Entry::User(text, _) => messages.push(json!({"role": "user", "content": text})),
            Entry::Assistant { text, calls, .. } => {
                if text.is_none() && calls.is_empty() {
                    continue;
                }
                // `content` may be left out of a message with tool calls.
                let mut message = json!({"role": "assistant"});
                if let Some(text) = text {
                    message["content"] = Value::from(text);
                }
                if !calls.is_empty() {
                    let calls: Vec<Value> = calls
                        .iter()
                        .map(|call| {
                            json!({
                                "id": call.wire_id(),
                                "type": "function",
                                "function": {
                                    "name": call.provider_name(),
                                    "arguments": call.arguments_text(),
                                },
                            })
                        })
                        .collect();
                    message["tool_calls"] = Value::Array(calls);
                }
                messages.push(message);
            }
            Entry::Results(pairs) => {
                for (call, result) in pairs {
                    messages.push(json!({
                        "role": "tool",
                        "tool_call_id": call.wire_id(),
                        "content": WireResult::transcript(result).text(),
                    }));
                }
            }
        }
    }
    body.put("messages", Value::Array(messages))?;
    body.tools(tools)?;
    Ok(body.finish())
}

/// OpenAI Chat Completions as a [`WireFormat`] (`POST {base}/chat/completions`), spoken by
/// OpenAI and by the servers compatible with it: vLLM, llama.cpp's server, Ollama, … Key from
/// `OPENAI_API_KEY`, sent as `Authorization: Bearer`; no key, no `Authorization` (local servers).
#[derive(Debug, Clone, Copy, Default)]
pub struct Format;

impl WireFormat for Format {
    fn name(&self) -> &str {
        "OpenAI Chat"
    }

    fn default_target(&self) -> Target {
        Target::OpenAiChat
    }

    super::format::module_format!();

    fn results(&self, calls: &[ToolCall], outcomes: &[Outcome]) -> Result<Value, EncodeError> {
        tool_messages(calls, outcomes).map(Value::Array)
    }

    fn default_base_url(&self) -> &str {
        "https://api.openai.com/v1"
    }

    fn key_variable(&self) -> &str {
        "OPENAI_API_KEY"
    }

    fn path(&self, _model: &str, _stream: bool) -> String {
        "/chat/completions".to_owned()
    }

    fn headers(&self, key: Option<&str>) -> Vec<(&'static str, String)> {
        bearer(key)
    }

    fn complete_body(&self, body: &mut Map<String, Value>, model: &str, stream: bool) {
        default(body, "model", Value::from(model));
        body.insert("stream".to_owned(), Value::Bool(stream));
        if stream {
            // Without it the stream carries no token counts.
            default(body, "stream_options", json!({"include_usage": true}));
        }
    }

    fn forbid_calls(&self, body: &mut Map<String, Value>) {
        body.insert("tool_choice".to_owned(), Value::from("none"));
    }
}

/// `Authorization: Bearer` with the key, when there is one (both OpenAI APIs).
pub(super) fn bearer(key: Option<&str>) -> Vec<(&'static str, String)> {
    key.map(|key| ("authorization", format!("Bearer {key}")))
        .into_iter()
        .collect()
}

impl ProviderStream for Stream {
    super::format::module_stream!();

    fn provider_state(&self) -> Option<ProviderState> {
        None
    }

    fn meta(
        &mut self,
        event: &Value,
        usage: &mut Usage,
        ended: &mut bool,
    ) -> Result<(), StreamError> {
        // An error arrives as a chunk with an `error` member, which `push` would pass over as
        // a chunk with nothing in it.
        let error = &event["error"];
        if error.is_object() {
            return Err(error_event(&error["type"], &error["message"]));
        }
        let counts = &event["usage"];
        if let (Some(input), Some(output)) = (
            counts["prompt_tokens"].as_u64(),
            counts["completion_tokens"].as_u64(),
        ) {
            *usage = Usage {
                input_tokens: input,
                output_tokens: output,
            };
        }
        if event["choices"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|choice| !choice["finish_reason"].is_null())
        {
            *ended = true;
        }
        Ok(())
    }
}
