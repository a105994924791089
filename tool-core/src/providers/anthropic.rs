//! Anthropic Messages: `tool_use` blocks (whole or streamed), results back as `tool_result`
//! blocks with `is_error`, all of one turn in one user message, in call order.
//!
//! ```
//! use serde_json::json;
//! use tool_core::providers::{NameMap, anthropic};
//!
//! let message = json!({"role": "assistant", "stop_reason": "tool_use", "content": [
//!     {"type": "text", "text": "Let me look."},
//!     {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"q": "rust"}}]});
//! let calls = anthropic::parse_response(&message, &NameMap::default())?;
//! assert_eq!(calls[0].arguments_value(), Some(json!({"q": "rust"})));
//! # Ok::<(), tool_core::providers::ParseError>(())
//! ```

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::advertise::Advertised;
use super::call::{CallArguments, ParseError, ToolCall, make_ids_unique};
use super::encode::{EncodeError, WireResult, pair};
use super::format::{ProviderStream, WireFormat, default, refused};
use super::names::NameMap;
use super::request::{
    Body, Entry, RequestError, RequestOptions, arguments_object, bad_state, check_ids, entries,
};
use super::stream::{self, Caps, MAX_STATE_ITEMS, StreamError};
use super::target::Target;
use crate::Outcome;
use crate::model::{Provider, ProviderState, Turn, Usage};

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    content: Option<Vec<Block>>,
}

#[derive(Deserialize)]
struct Block {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    input: Option<Value>,
    #[serde(default)]
    text: Option<String>,
}

/// The `tool_use` blocks of a message, in order.
pub fn parse_response(body: &Value, names: &NameMap) -> Result<Vec<ToolCall>, ParseError> {
    let message = Message::deserialize(body).map_err(ParseError::malformed)?;
    let mut calls = Vec::new();
    for block in message.content.unwrap_or_default() {
        if block.kind != "tool_use" {
            continue;
        }
        let index = calls.len();
        let id = block
            .id
            .ok_or(ParseError::MissingField { index, field: "id" })?;
        let name = block.name.ok_or(ParseError::MissingField {
            index,
            field: "name",
        })?;
        let input = block.input.unwrap_or_else(|| Value::Object(Map::new()));
        calls.push(ToolCall::proposed(
            id,
            &name,
            CallArguments::Json(input),
            names,
        ));
    }
    make_ids_unique(&mut calls, &std::collections::HashSet::new());
    Ok(calls)
}

/// The user message answering `calls`: one `tool_result` block per call, in call order,
/// `is_error` set for failures.
pub fn tool_results(calls: &[ToolCall], outcomes: &[Outcome]) -> Result<Value, EncodeError> {
    let blocks: Vec<Value> = pair(calls, outcomes)?
        .into_iter()
        .map(|(call, outcome)| {
            let (content, is_error) = (
                WireResult::outcome(outcome).text(),
                outcome.result().is_err(),
            );
            json!({
                "type": "tool_result",
                "tool_use_id": call.wire_id(),
                "content": content,
                "is_error": is_error,
            })
        })
        .collect();
    Ok(json!({ "role": "user", "content": blocks }))
}

#[derive(Deserialize)]
struct Event {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    content_block: Option<Block>,
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    error: Option<ErrorBody>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    partial_json: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default)]
    message: Option<String>,
}

#[derive(Debug)]
enum Open {
    Tool {
        id: String,
        name: String,
        input: Option<Value>,
        buffer: String,
    },
    Other,
}

/// Tool calls out of a streamed message, accumulated by content-block `index`: the
/// `input_json_delta.partial_json` fragments of a `tool_use` block are parsed when its
/// `content_block_stop` arrives (an empty buffer is `{}`). A second `message_start` before
/// `message_stop` is a protocol error; a message that stops (`max_tokens`) with a tool block
/// still open is [`StreamError::Truncated`].
#[derive(Debug)]
pub struct Stream {
    names: NameMap,
    caps: Caps,
    in_message: bool,
    blocks: BTreeMap<u64, Open>,
    stop_reason: Option<String>,
    text: String,
    /// Each block as sent, filled in by its deltas, for [`Stream::provider_state`].
    sent: BTreeMap<u64, Value>,
    completed: BTreeMap<u64, Value>,
    state_lost: bool,
    /// Prompt tokens as last reported: uncached, written to the cache, read from it (each
    /// cumulative, each reported on its own).
    input_counts: [u64; 3],
}

impl Stream {
    /// An accumulator decoding names with `names`, capping each call at
    /// [`DEFAULT_MAX_CALL_BYTES`](super::DEFAULT_MAX_CALL_BYTES).
    pub fn new(names: &NameMap) -> Self {
        Stream {
            names: names.clone(),
            caps: Caps::default(),
            in_message: false,
            blocks: BTreeMap::new(),
            stop_reason: None,
            text: String::new(),
            sent: BTreeMap::new(),
            completed: BTreeMap::new(),
            state_lost: false,
            input_counts: [0; 3],
        }
    }

    stream::caps_builders!("arguments");

    /// The text of the message's `text` blocks so far (thinking is not included).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The message's `stop_reason`, once `message_delta` has said it.
    pub fn stop_reason(&self) -> Option<&str> {
        self.stop_reason.as_deref()
    }

    /// The message's content blocks completed so far, as Anthropic sent them with their
    /// deltas applied (a `tool_use` block's `input` parsed from its `partial_json`, `caller` and
    /// every other field kept); `None` before the first block, when the message has more than
    /// [`MAX_STATE_ITEMS`] blocks, or when a `tool_use` input was
    /// not a JSON object (the turn is then written from its calls, which fails for such a
    /// call). Store it with the assistant turn ([`Turn::provider`]) so that [`request`] sends
    /// the turn back unchanged.
    pub fn provider_state(&self) -> Option<ProviderState> {
        if self.state_lost || self.completed.is_empty() {
            return None;
        }
        let blocks = self.completed.values().cloned().collect();
        Some(ProviderState::new(
            Provider::Anthropic,
            Value::Array(blocks),
        ))
    }

    /// Applies a delta to the block as sent.
    fn record_delta(&mut self, index: u64, delta: &Value) {
        let Some(Value::Object(block)) = self.sent.get_mut(&index) else {
            return;
        };
        let append = |block: &mut Map<String, Value>, key: &str, more: &Value| {
            if let Some(more) = more.as_str() {
                match block.get_mut(key) {
                    Some(Value::String(text)) => text.push_str(more),
                    _ => drop(block.insert(key.to_owned(), Value::from(more))),
                }
            }
        };
        match delta["type"].as_str() {
            Some("text_delta") => append(block, "text", &delta["text"]),
            Some("thinking_delta") => append(block, "thinking", &delta["thinking"]),
            Some("signature_delta") => append(block, "signature", &delta["signature"]),
            Some("citations_delta") => {
                if let Value::Array(list) = block
                    .entry("citations")
                    .or_insert_with(|| Value::Array(Vec::new()))
                {
                    list.push(delta["citation"].clone());
                }
            }
            _ => {}
        }
    }

    /// Takes one event; returns the call it completes, if any. After an error, drop the stream.
    pub fn push(&mut self, event: &Value) -> Result<Vec<ToolCall>, StreamError> {
        self.caps.chunk()?;
        let raw = event;
        let event = Event::deserialize(event).map_err(|e| StreamError::protocol(e.to_string()))?;
        match event.kind.as_str() {
            "message_start" => {
                if self.in_message {
                    return Err(StreamError::protocol(
                        "message_start inside an unfinished message",
                    ));
                }
                self.in_message = true;
                Ok(Vec::new())
            }
            "content_block_start" => {
                let index = event.index.unwrap_or(0);
                if self.blocks.contains_key(&index) {
                    return Err(StreamError::protocol(format!(
                        "content block {index} started twice"
                    )));
                }
                let block = event
                    .content_block
                    .ok_or_else(|| StreamError::protocol("content_block_start without a block"))?;
                let open = if block.kind == "tool_use" {
                    Open::Tool {
                        id: block
                            .id
                            .ok_or_else(|| StreamError::protocol("tool_use block without id"))?,
                        name: block
                            .name
                            .ok_or_else(|| StreamError::protocol("tool_use block without name"))?,
                        input: block.input,
                        buffer: String::new(),
                    }
                } else {
                    if let Some(text) = block.text.filter(|_| block.kind == "text") {
                        self.text.push_str(&text);
                    }
                    Open::Other
                };
                self.blocks.insert(index, open);
                self.sent.insert(index, raw["content_block"].clone());
                Ok(Vec::new())
            }
            "content_block_delta" => {
                let index = event.index.unwrap_or(0);
                let delta = event
                    .delta
                    .ok_or_else(|| StreamError::protocol("content_block_delta without a delta"))?;
                if self.blocks.contains_key(&index) {
                    self.record_delta(index, &raw["delta"]);
                }
                match (self.blocks.get_mut(&index), delta.kind.as_deref()) {
                    (None, _) => Err(StreamError::protocol(format!(
                        "delta for content block {index}, which never started"
                    ))),
                    (Some(Open::Tool { id, buffer, .. }), Some("input_json_delta")) => {
                        self.caps.append(
                            buffer,
                            delta.partial_json.as_deref().unwrap_or_default(),
                            Some(id),
                        )?;
                        Ok(Vec::new())
                    }
                    (Some(Open::Other), Some("text_delta")) => {
                        self.text
                            .push_str(delta.text.as_deref().unwrap_or_default());
                        Ok(Vec::new())
                    }
                    _ => Ok(Vec::new()),
                }
            }
            "content_block_stop" => {
                let index = event.index.unwrap_or(0);
                let mut sent = self.sent.remove(&index);
                if let (Some(Open::Tool { buffer, .. }), Some(Value::Object(block))) =
                    (self.blocks.get(&index), sent.as_mut())
                    && !buffer.trim().is_empty()
                {
                    match serde_json::from_str::<Value>(buffer) {
                        Ok(input @ Value::Object(_)) => drop(block.insert("input".into(), input)),
                        _ => self.state_lost = true,
                    }
                }
                if self.completed.len() >= MAX_STATE_ITEMS {
                    self.state_lost = true;
                    self.completed.clear();
                } else if let Some(sent) = sent.filter(|_| !self.state_lost) {
                    self.completed.insert(index, sent);
                }
                match self.blocks.remove(&index) {
                    None => Err(StreamError::protocol(format!(
                        "content block {index} stopped but never started"
                    ))),
                    Some(Open::Other) => Ok(Vec::new()),
                    Some(Open::Tool {
                        id,
                        name,
                        input,
                        buffer,
                    }) => {
                        let arguments = if !buffer.trim().is_empty() {
                            // The runtime parses the text once, strictly.
                            CallArguments::Text(buffer)
                        } else {
                            // The start block's `input` is a placeholder `{}`, unless a
                            // server filled it and sent no deltas.
                            CallArguments::Json(
                                input
                                    .filter(Value::is_object)
                                    .unwrap_or_else(|| Value::Object(Map::new())),
                            )
                        };
                        Ok(vec![ToolCall::proposed(id, &name, arguments, &self.names)])
                    }
                }
            }
            "message_delta" => {
                if let Some(reason) = event.delta.and_then(|d| d.stop_reason) {
                    self.stop_reason = Some(reason);
                }
                Ok(Vec::new())
            }
            "message_stop" => {
                self.in_message = false;
                self.open_tool_error()
            }
            "error" => Err(StreamError::Provider {
                message: event.error.and_then(|e| e.message).unwrap_or_default(),
            }),
            _ => Ok(Vec::new()),
        }
    }

    fn open_tool_error(&mut self) -> Result<Vec<ToolCall>, StreamError> {
        let reason = self
            .stop_reason
            .clone()
            .unwrap_or_else(|| "end of stream".to_owned());
        let open = std::mem::take(&mut self.blocks);
        for (_, block) in open {
            if let Open::Tool {
                id, name, buffer, ..
            } = block
            {
                return Err(StreamError::Truncated {
                    reason,
                    call_id: id,
                    name,
                    partial: buffer,
                });
            }
        }
        Ok(Vec::new())
    }

    /// Ends the stream: an error if a tool block was started and never stopped.
    pub fn finish(mut self) -> Result<(), StreamError> {
        self.open_tool_error().map(drop)
    }

    /// All calls of a whole stream, in block order.
    pub fn collect<'a>(
        names: &NameMap,
        events: impl IntoIterator<Item = &'a Value>,
    ) -> Result<Vec<ToolCall>, StreamError> {
        stream::collect(Stream::new(names), events, Stream::push, Stream::finish)
    }
}

/// A whole message as an assistant [`Turn`]: its text blocks joined, its `tool_use` calls, its
/// token usage, and its `content` blocks kept as sent ([`Provider::Anthropic`]) so that
/// [`request`] sends the turn back with every field Anthropic gave (`caller`, thinking
/// signatures, …).
pub fn parse_turn(body: &Value, names: &NameMap) -> Result<Turn, ParseError> {
    let calls = parse_response(body, names)?;
    let message = Message::deserialize(body).map_err(ParseError::malformed)?;
    let texts: Vec<String> = message
        .content
        .unwrap_or_default()
        .into_iter()
        .filter(|b| b.kind == "text")
        .filter_map(|b| b.text)
        .collect();
    let usage = |key: &str| body["usage"][key].as_u64().unwrap_or(0);
    let state = body
        .get("content")
        .filter(|c| c.is_array())
        .map(|c| ProviderState::new(Provider::Anthropic, c.clone()));
    Ok(Turn {
        text: (!texts.is_empty()).then(|| texts.concat()),
        calls,
        usage: Usage {
            // Anthropic counts prompt tokens read from or written to its cache apart.
            input_tokens: usage("input_tokens")
                .saturating_add(usage("cache_creation_input_tokens"))
                .saturating_add(usage("cache_read_input_tokens")),
            output_tokens: usage("output_tokens"),
        },
        provider: state,
    })
}

/// The body of the next Messages request: `system`, the `messages` of `transcript` and the
/// `tools`, over `options`' settings (`model`, `max_tokens`, `tool_choice`, …).
///
/// A user's words are a `text` block; a user message with no text but whitespace, which
/// Anthropic refuses, is refused here ([`RequestError::EmptyUserMessage`]). An assistant turn read by [`parse_turn`] or
/// [`Stream::provider_state`] is sent back as Anthropic gave it; any other is its text and one
/// `tool_use` block per call. The results of a turn's calls are one user message of
/// `tool_result` blocks in call order, `is_error` set for failures; the user's next words,
/// if they follow at once, are added to that message after the results, as Anthropic asks.
pub fn request(
    transcript: &[crate::model::Message],
    tools: &Advertised,
    options: &RequestOptions,
) -> Result<Value, RequestError> {
    let mut body = Body::new(options, tools, "Anthropic", |t| {
        matches!(t, Target::Anthropic | Target::AnthropicStrict)
    })?;
    let mut messages: Vec<Value> = Vec::new();
    let mut results_open = false;
    for entry in entries(transcript)? {
        match entry {
            Entry::User(text, index) => {
                // "text content blocks must contain non-whitespace text"
                if text.trim().is_empty() {
                    return Err(RequestError::EmptyUserMessage { index });
                }
                let block = json!({"type": "text", "text": text});
                match messages.last_mut() {
                    Some(last) if results_open => push_block(last, block),
                    _ => messages.push(json!({"role": "user", "content": [block]})),
                }
                results_open = false;
            }
            Entry::Assistant {
                turn,
                text,
                calls,
                state,
            } => {
                results_open = false;
                let content = match Entry::state_for(state, Provider::Anthropic) {
                    Some(content) => {
                        let blocks = content
                            .as_array()
                            .ok_or_else(|| bad_state(turn, "is not a list of content blocks"))?;
                        let ids = blocks
                            .iter()
                            .filter(|b| b["type"] == "tool_use")
                            .map(|b| b["id"].as_str());
                        check_ids(turn, ids, calls, "tool_use blocks")?;
                        content.clone()
                    }
                    None => {
                        let mut blocks = Vec::with_capacity(calls.len() + 1);
                        if let Some(text) = text.filter(|t| !t.is_empty()) {
                            blocks.push(json!({"type": "text", "text": text}));
                        }
                        for call in calls {
                            blocks.push(json!({
                                "type": "tool_use",
                                "id": call.wire_id(),
                                "name": call.provider_name(),
                                "input": arguments_object(call)?,
                            }));
                        }
                        Value::Array(blocks)
                    }
                };
                // Anthropic refuses an assistant message with no content.
                if content.as_array().is_some_and(|c| !c.is_empty()) {
                    messages.push(json!({"role": "assistant", "content": content}));
                }
            }
            Entry::Results(pairs) => {
                let blocks: Vec<Value> = pairs
                    .into_iter()
                    .map(|(call, result)| {
                        json!({
                            "type": "tool_result",
                            "tool_use_id": call.wire_id(),
                            "content": WireResult::transcript(result).text(),
                            "is_error": !result.is_ok(),
                        })
                    })
                    .collect();
                messages.push(json!({"role": "user", "content": blocks}));
                results_open = true;
            }
        }
    }
    if let Some(system) = options.system_prompt() {
        body.put("system", Value::from(system))?;
    }
    body.put("messages", Value::Array(messages))?;
    body.tools(tools)?;
    Ok(body.finish())
}

fn push_block(message: &mut Value, block: Value) {
    if let Some(content) = message.get_mut("content").and_then(Value::as_array_mut) {
        content.push(block);
    }
}

/// Anthropic Messages as a [`WireFormat`] (`POST {base}/messages`). Key from
/// `ANTHROPIC_API_KEY`, sent as `x-api-key` with `anthropic-version: 2023-06-01`
/// ([`ANTHROPIC_VERSION`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Format;

/// The `anthropic-version` header sent with every Anthropic request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

impl WireFormat for Format {
    fn name(&self) -> &str {
        "Anthropic"
    }

    fn default_target(&self) -> Target {
        Target::Anthropic
    }

    super::format::module_format!();

    fn results(&self, calls: &[ToolCall], outcomes: &[Outcome]) -> Result<Value, EncodeError> {
        tool_results(calls, outcomes)
    }

    fn default_base_url(&self) -> &str {
        "https://api.anthropic.com/v1"
    }

    fn key_variable(&self) -> &str {
        "ANTHROPIC_API_KEY"
    }

    fn path(&self, _model: &str, _stream: bool) -> String {
        "/messages".to_owned()
    }

    fn headers(&self, key: Option<&str>) -> Vec<(&'static str, String)> {
        let mut headers: Vec<_> = key
            .map(|key| ("x-api-key", key.to_owned()))
            .into_iter()
            .collect();
        headers.push(("anthropic-version", ANTHROPIC_VERSION.to_owned()));
        headers
    }

    fn complete_body(&self, body: &mut Map<String, Value>, model: &str, stream: bool) {
        default(body, "model", Value::from(model));
        body.insert("stream".to_owned(), Value::Bool(stream));
        default(body, "max_tokens", Value::from(4096));
    }

    fn forbid_calls(&self, body: &mut Map<String, Value>) {
        body.insert("tool_choice".to_owned(), json!({"type": "none"}));
    }
}

impl ProviderStream for Stream {
    super::format::module_stream!();

    fn provider_state(&self) -> Option<ProviderState> {
        Stream::provider_state(self)
    }

    fn meta(
        &mut self,
        event: &Value,
        usage: &mut Usage,
        ended: &mut bool,
    ) -> Result<(), StreamError> {
        let counts = match event["type"].as_str() {
            // `{"type": "error", "error": {"type", "message"}}`: refused here; a passing one
            // `push` reports.
            Some("error") => {
                let error = &event["error"];
                return match refused(&error["type"], &error["message"]) {
                    Some(error) => Err(error),
                    None => Ok(()),
                };
            }
            Some("message_start") => &event["message"]["usage"],
            Some("message_delta") => &event["usage"],
            Some("message_stop") => {
                *ended = true;
                return Ok(());
            }
            _ => return Ok(()),
        };
        // Counts are cumulative: the latest of each is the turn's. Prompt tokens read from or
        // written to the cache are counted apart from `input_tokens`.
        let keys = [
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        ];
        for (slot, key) in self.input_counts.iter_mut().zip(keys) {
            if let Some(n) = counts[key].as_u64() {
                *slot = n;
            }
        }
        usage.input_tokens = self
            .input_counts
            .iter()
            .fold(0u64, |sum, n| sum.saturating_add(*n));
        if let Some(output) = counts["output_tokens"].as_u64() {
            usage.output_tokens = output;
        }
        Ok(())
    }
}
