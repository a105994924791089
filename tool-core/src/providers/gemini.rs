//! Gemini: `functionCall` parts (whole, or streamed with Vertex `partialArgs`), results back
//! as `functionResponse` parts.
//!
//! Gemini often sends no call id. Such a call gets an id made here, `call_` and 96 random
//! bits, so that it is unique across processes and restarts (see
//! [Call ids](crate::ToolCall#call-ids)), used only to pair the outcome with its call; the
//! `functionResponse` then carries no id, and Gemini matches results to calls by name and
//! position, so results are always sent in call order. A call's `thoughtSignature` is kept on the
//! [`ToolCall`] for the model turn that must be sent back unchanged.
//!
//! ```
//! use serde_json::json;
//! use tool_core::providers::{NameMap, gemini};
//!
//! let response = json!({"responseId": "r1", "candidates": [{"content": {"role": "model", "parts": [
//!     {"functionCall": {"name": "search", "args": {"q": "rust"}}}]}}]});
//! let calls = gemini::parse_response(&response, &NameMap::default())?;
//! assert!(calls[0].call_id().starts_with("call_"));
//! assert_eq!(calls[0].provider_call_id(), None);
//! # Ok::<(), tool_core::providers::ParseError>(())
//! ```

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::advertise::Advertised;
use super::call::{CallArguments, ParseError, ToolCall, make_ids_unique};
use super::encode::{EncodeError, WireResult, pair};
use super::format::{ProviderStream, WireFormat, error_event};
use super::names::NameMap;
use super::request::{
    Body, Entry, RequestError, RequestOptions, arguments_object, bad_state, entries,
};
use super::stream::{self, Caps, MAX_STATE_ITEMS, StreamError};
use super::target::Target;
use crate::model::{Provider, ProviderState, Turn, Usage};
use crate::{Outcome, contract::MAX_DEPTH};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Response {
    #[serde(default)]
    candidates: Option<Vec<Candidate>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    content: Option<Content>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Content {
    #[serde(default)]
    parts: Option<Vec<Part>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Part {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    thought: Option<bool>,
    #[serde(default)]
    function_call: Option<FunctionCall>,
    #[serde(default)]
    thought_signature: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FunctionCall {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    args: Option<Value>,
    #[serde(default)]
    partial_args: Option<Vec<PartialArg>>,
    #[serde(default)]
    will_continue: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PartialArg {
    #[serde(default)]
    json_path: Option<String>,
    #[serde(default)]
    string_value: Option<String>,
    #[serde(default)]
    number_value: Option<serde_json::Number>,
    #[serde(default)]
    bool_value: Option<bool>,
    #[serde(default)]
    null_value: Option<Value>,
    #[serde(default)]
    will_continue: Option<bool>,
}

/// A call as Gemini proposed it: with an id made here when Gemini sent none (or an empty
/// one), and the part's `thoughtSignature`.
fn make_call(
    id: Option<String>,
    provider_name: &str,
    args: Value,
    signature: Option<String>,
    names: &NameMap,
) -> ToolCall {
    let args = CallArguments::Json(args);
    let mut call = match id.filter(|id| !id.is_empty()) {
        Some(id) => ToolCall::proposed(id, provider_name, args, names),
        None => ToolCall::proposed_without_id(provider_name, args, names),
    };
    call.thought_signature = signature;
    call
}

fn first_candidate(response: Response) -> Option<Candidate> {
    response
        .candidates
        .unwrap_or_default()
        .into_iter()
        .find(|c| c.index.unwrap_or(0) == 0)
}

/// The `functionCall` parts of a response's first candidate (or of one `content`), in order.
pub fn parse_response(body: &Value, names: &NameMap) -> Result<Vec<ToolCall>, ParseError> {
    let parts = if body.get("candidates").is_some() {
        let response = Response::deserialize(body).map_err(ParseError::malformed)?;
        first_candidate(response)
            .and_then(|c| c.content)
            .and_then(|c| c.parts)
    } else {
        Content::deserialize(body)
            .map_err(ParseError::malformed)?
            .parts
    };
    let mut calls = Vec::new();
    for part in parts.unwrap_or_default() {
        let Some(call) = part.function_call else {
            continue;
        };
        let index = calls.len();
        let name = call.name.ok_or(ParseError::MissingField {
            index,
            field: "functionCall.name",
        })?;
        let args = call.args.unwrap_or_else(|| Value::Object(Map::new()));
        calls.push(make_call(
            call.id,
            &name,
            args,
            part.thought_signature,
            names,
        ));
    }
    make_ids_unique(&mut calls, &HashSet::new());
    Ok(calls)
}

/// The user turn answering `calls`: one `functionResponse` part per call, in call order,
/// named as the provider named the call, with its `id` when the call had one. An output is
/// `{"output": …}`, a failure `{"error": {"code", "message"}}`.
pub fn function_responses(calls: &[ToolCall], outcomes: &[Outcome]) -> Result<Value, EncodeError> {
    let parts: Vec<Value> = pair(calls, outcomes)?
        .into_iter()
        .map(|(call, outcome)| {
            let response = WireResult::outcome(outcome).value();
            let mut function_response = Map::new();
            if let Some(id) = call.provider_call_id() {
                function_response.insert("id".to_owned(), Value::from(id));
            }
            function_response.insert("name".to_owned(), Value::from(call.provider_name()));
            function_response.insert("response".to_owned(), response);
            json!({ "functionResponse": function_response })
        })
        .collect();
    Ok(json!({ "role": "user", "parts": parts }))
}

/// A whole response (or one `content`) as an assistant [`Turn`]: its answer text (thought
/// parts left out), its calls, its token usage (thinking tokens counted as output), and the
/// candidate's `parts` kept as sent ([`Provider::Gemini`]), so that [`request`] sends every
/// `thoughtSignature` back on the part that carried it.
pub fn parse_turn(body: &Value, names: &NameMap) -> Result<Turn, ParseError> {
    let calls = parse_response(body, names)?;
    let parts = if let Some(candidates) = body.get("candidates") {
        candidates
            .as_array()
            .and_then(|list| list.iter().find(|c| c["index"].as_u64().unwrap_or(0) == 0))
            .and_then(|c| c["content"]["parts"].as_array())
    } else {
        body["parts"].as_array()
    };
    let mut text: Option<String> = None;
    for part in parts.into_iter().flatten() {
        if part["thought"] != true
            && let Some(more) = part["text"].as_str()
        {
            text.get_or_insert_with(String::new).push_str(more);
        }
    }
    let usage = |key: &str| body["usageMetadata"][key].as_u64().unwrap_or(0);
    Ok(Turn {
        text,
        calls,
        usage: Usage {
            input_tokens: usage("promptTokenCount"),
            output_tokens: usage("candidatesTokenCount")
                .saturating_add(usage("thoughtsTokenCount")),
        },
        provider: parts.map(|parts| {
            let parts = parts.iter().filter(|p| worth_sending(p)).cloned().collect();
            ProviderState::new(Provider::Gemini, Value::Array(parts))
        }),
    })
}

/// The body of the next `generateContent` request: `systemInstruction`, the `contents` of
/// `transcript` and the `tools`, over `options`' settings (`generationConfig`, `toolConfig`, …).
///
/// A user's words are a `user` content with a text part; an empty user message, which Gemini
/// refuses, is refused here ([`RequestError::EmptyUserMessage`]). An assistant turn read by
/// [`parse_turn`] or [`Stream::provider_state`] is a `model` content with its parts as sent,
/// each `thoughtSignature` on its own part; any other is its text and one `functionCall` part
/// per call, carrying the call's signature ([`ToolCall::thought_signature`]). The results of a
/// turn are one `user` content of `functionResponse` parts in call order (see
/// [`function_responses`]): `{"output": …}`, or `{"error": {"code", "message"}}`.
pub fn request(
    transcript: &[crate::model::Message],
    tools: &Advertised,
    options: &RequestOptions,
) -> Result<Value, RequestError> {
    let mut body = Body::new(options, tools, "Gemini", |t| {
        matches!(t, Target::GeminiJsonSchema | Target::GeminiOpenApi)
    })?;
    let mut contents: Vec<Value> = Vec::new();
    for entry in entries(transcript)? {
        match entry {
            Entry::User(text, index) => {
                // Gemini refuses an empty text part.
                if text.is_empty() {
                    return Err(RequestError::EmptyUserMessage { index });
                }
                contents.push(json!({"role": "user", "parts": [{"text": text}]}));
            }
            Entry::Assistant {
                turn,
                text,
                calls,
                state,
            } => {
                let parts = match Entry::state_for(state, Provider::Gemini) {
                    Some(content) => {
                        let parts = content
                            .as_array()
                            .ok_or_else(|| bad_state(turn, "is not a list of parts"))?;
                        let sent: Vec<Option<&str>> = parts
                            .iter()
                            .filter_map(|p| p.get("functionCall"))
                            .map(|c| c["name"].as_str())
                            .collect();
                        let expected: Vec<Option<&str>> =
                            calls.iter().map(|c| Some(c.provider_name())).collect();
                        if sent != expected {
                            return Err(bad_state(
                                turn,
                                "has functionCall parts that are not the turn's calls",
                            ));
                        }
                        parts.clone()
                    }
                    None => {
                        let mut parts = Vec::with_capacity(calls.len() + 1);
                        if let Some(text) = text.filter(|t| !t.is_empty()) {
                            parts.push(json!({"text": text}));
                        }
                        for call in calls {
                            arguments_object(call)?;
                            parts.push(call_part(call));
                        }
                        parts
                    }
                };
                if !parts.is_empty() {
                    contents.push(json!({"role": "model", "parts": parts}));
                }
            }
            Entry::Results(pairs) => {
                let parts: Vec<Value> = pairs
                    .into_iter()
                    .map(|(call, result)| {
                        let response = WireResult::transcript(result).value();
                        let mut function_response = Map::new();
                        if let Some(id) = call.provider_call_id() {
                            function_response.insert("id".into(), Value::from(id));
                        }
                        function_response.insert("name".into(), Value::from(call.provider_name()));
                        function_response.insert("response".into(), response);
                        json!({ "functionResponse": function_response })
                    })
                    .collect();
                contents.push(json!({"role": "user", "parts": parts}));
            }
        }
    }
    if let Some(system) = options.system_prompt() {
        body.put("systemInstruction", json!({"parts": [{"text": system}]}))?;
    }
    body.put("contents", Value::Array(contents))?;
    body.tools(tools)?;
    Ok(body.finish())
}

/// The bytes of a `thoughtSignature`. Gemini sends signatures in standard base64, and clients
/// may send them back in the URL-safe alphabet (python-genai does), with or without padding:
/// two signatures are the same when their bytes are, whatever the text. `None` when the text
/// is not base64.
///
/// ```
/// use tool_core::providers::gemini::signature_bytes;
///
/// assert_eq!(signature_bytes("a+/b"), signature_bytes("a-_b"));
/// assert_eq!(signature_bytes("aGk="), Some(b"hi".to_vec()));
/// assert_eq!(signature_bytes("a-/b"), None); // both alphabets at once
/// ```
pub fn signature_bytes(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end_matches('=');
    let standard = text.contains(['+', '/']);
    let url_safe = text.contains(['-', '_']);
    if standard && url_safe {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut buffer = 0u32;
    let mut bits = 0;
    for byte in text.bytes() {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        buffer = (buffer << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
            buffer &= (1 << bits) - 1;
        }
    }
    // A lone sixth of a byte is not base64; leftover bits must be zero.
    if bits >= 6 || buffer != 0 {
        return None;
    }
    Some(out)
}

#[derive(Debug)]
struct Open {
    id: Option<String>,
    name: String,
    signature: Option<String>,
    args: Value,
    continuing: HashSet<String>,
    bytes: usize,
}

/// Tool calls out of a streamed response. A whole `functionCall` (Gemini Developer API) is a
/// call at once. With Vertex's `streamFunctionCallArguments`, `{name, willContinue: true}`
/// opens a call, `partialArgs` entries (JSONPath, typed value, `willContinue` to concatenate
/// strings) fill its arguments, and a `functionCall` with nothing more to say closes it.
///
/// A `partialArgs` path may be at most [`MAX_DEPTH`] segments long, so the arguments built
/// are never nested deeper than the runtime's parser accepts; a longer path ends the stream
/// with [`StreamError::Protocol`].
#[derive(Debug)]
pub struct Stream {
    names: NameMap,
    caps: Caps,
    open: Option<Open>,
    text: String,
    parts: Vec<Value>,
    state_lost: bool,
}

impl Stream {
    /// An accumulator decoding names with `names`, capping each call at
    /// [`DEFAULT_MAX_CALL_BYTES`](super::DEFAULT_MAX_CALL_BYTES).
    pub fn new(names: &NameMap) -> Self {
        Stream {
            names: names.clone(),
            caps: Caps::default(),
            open: None,
            text: String::new(),
            parts: Vec::new(),
            state_lost: false,
        }
    }

    /// Caps each call's streamed arguments (the values and paths of its `partialArgs`) at
    /// `bytes`.
    pub fn max_call_bytes(mut self, bytes: usize) -> Self {
        self.caps.set_max_call_bytes(bytes);
        self
    }

    /// Gives up on the stream (with [`StreamError::TimedOut`]) when a chunk arrives more than
    /// `limit` after the first one. Pair it with a read timeout for a stream that stalls.
    pub fn max_duration(mut self, limit: std::time::Duration) -> Self {
        self.caps.set_max_duration(limit);
        self
    }

    /// The answer text so far (thought parts are not included).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The model turn's parts so far, in order, for the next request: text and thought parts
    /// as sent (each with its `thoughtSignature`; empty text without one left out), each
    /// completed call as one whole `functionCall` part with its signature; `None` before the
    /// first part, or when the turn has more than [`MAX_STATE_ITEMS`] parts. Store it with the
    /// assistant turn ([`Turn::provider`]) so that [`request`] sends it back.
    pub fn provider_state(&self) -> Option<ProviderState> {
        (!self.state_lost && !self.parts.is_empty())
            .then(|| ProviderState::new(Provider::Gemini, Value::Array(self.parts.clone())))
    }

    /// Takes one chunk (a `GenerateContentResponse`); returns the calls it completes. After an
    /// error, drop the stream.
    pub fn push(&mut self, chunk: &Value) -> Result<Vec<ToolCall>, StreamError> {
        self.caps.chunk()?;
        let raw_parts: Vec<Value> = chunk["candidates"]
            .as_array()
            .and_then(|list| list.iter().find(|c| c["index"].as_u64().unwrap_or(0) == 0))
            .and_then(|c| c["content"]["parts"].as_array())
            .cloned()
            .unwrap_or_default();
        let response =
            Response::deserialize(chunk).map_err(|e| StreamError::protocol(e.to_string()))?;
        let Some(candidate) = first_candidate(response) else {
            return Ok(Vec::new());
        };
        let mut done = Vec::new();
        let parts = candidate.content.and_then(|c| c.parts).unwrap_or_default();
        for (i, part) in parts.into_iter().enumerate() {
            let raw = raw_parts.get(i);
            if let Some(call) = part.function_call {
                let whole = call.name.as_ref().is_some_and(|n| !n.is_empty())
                    && call.partial_args.is_none()
                    && call.will_continue != Some(true);
                if let Some(complete) = self.function_call(call, part.thought_signature)? {
                    let part = match raw {
                        Some(raw) if whole => raw.clone(),
                        _ => call_part(&complete),
                    };
                    self.keep(part);
                    done.push(complete);
                }
            } else {
                if let Some(raw) = raw.filter(|raw| worth_sending(raw)) {
                    self.keep(raw.clone());
                }
                if let Some(text) = part.text
                    && part.thought != Some(true)
                {
                    self.text.push_str(&text);
                }
            }
        }
        if let Some(reason) = candidate.finish_reason
            && let Some(open) = self.open.take()
        {
            return Err(truncated(&reason, open));
        }
        Ok(done)
    }

    fn function_call(
        &mut self,
        call: FunctionCall,
        signature: Option<String>,
    ) -> Result<Option<ToolCall>, StreamError> {
        let continues = call.will_continue == Some(true);
        if let Some(name) = call.name.filter(|n| !n.is_empty()) {
            if self.open.is_some() {
                return Err(StreamError::protocol(format!(
                    "call to `{name}` began before the previous call ended"
                )));
            }
            let mut open = Open {
                id: call.id,
                name,
                signature,
                args: call.args.unwrap_or_else(|| Value::Object(Map::new())),
                continuing: HashSet::new(),
                bytes: 0,
            };
            if let Some(entries) = call.partial_args {
                self.apply(&mut open, entries)?;
            }
            if continues {
                self.open = Some(open);
                return Ok(None);
            }
            return Ok(Some(self.close(open)));
        }
        let Some(mut open) = self.open.take() else {
            if call.partial_args.is_some() {
                return Err(StreamError::protocol("partialArgs with no call open"));
            }
            // A closing `functionCall: {}` with nothing open: nothing to do.
            return Ok(None);
        };
        if open.signature.is_none() {
            open.signature = signature;
        }
        if let Some(entries) = call.partial_args {
            self.apply(&mut open, entries)?;
        }
        if continues {
            self.open = Some(open);
            return Ok(None);
        }
        Ok(Some(self.close(open)))
    }

    /// Keeps a part for the provider state, up to [`MAX_STATE_ITEMS`].
    fn keep(&mut self, part: Value) {
        if self.parts.len() >= MAX_STATE_ITEMS {
            self.state_lost = true;
            self.parts.clear();
        } else if !self.state_lost {
            self.parts.push(part);
        }
    }

    fn close(&self, open: Open) -> ToolCall {
        make_call(open.id, &open.name, open.args, open.signature, &self.names)
    }

    fn apply(&self, open: &mut Open, entries: Vec<PartialArg>) -> Result<(), StreamError> {
        for entry in entries {
            let path = entry.json_path.unwrap_or_default();
            let segments = parse_json_path(&path)?;
            let (value, size) = if let Some(text) = entry.string_value {
                let size = text.len();
                (Value::String(text), size)
            } else if let Some(number) = entry.number_value {
                (Value::Number(number), 8)
            } else if let Some(flag) = entry.bool_value {
                (Value::Bool(flag), 5)
            } else if entry.null_value.is_some() {
                (Value::Null, 4)
            } else {
                continue;
            };
            open.bytes += size + path.len();
            self.caps.check(open.bytes, open.id.as_deref())?;
            let append = open.continuing.contains(&path);
            set_at(&mut open.args, &segments, value, append)?;
            if entry.will_continue == Some(true) {
                open.continuing.insert(path);
            } else {
                open.continuing.remove(&path);
            }
        }
        Ok(())
    }

    /// Ends the stream: an error if a call was opened and never closed.
    pub fn finish(mut self) -> Result<(), StreamError> {
        match self.open.take() {
            Some(open) => Err(truncated("end of stream", open)),
            None => Ok(()),
        }
    }

    /// All calls of a whole stream, in order.
    pub fn collect<'a>(
        names: &NameMap,
        chunks: impl IntoIterator<Item = &'a Value>,
    ) -> Result<Vec<ToolCall>, StreamError> {
        stream::collect(Stream::new(names), chunks, Stream::push, Stream::finish)
    }
}

/// Whether a part says anything: the empty text a stream often ends with does not (and Gemini
/// refuses an empty text part), unless it carries a signature.
fn worth_sending(part: &Value) -> bool {
    part.get("thoughtSignature").is_some() || part.get("text").is_none_or(|text| text != "")
}

/// A completed call as one whole `functionCall` part.
fn call_part(call: &ToolCall) -> Value {
    let mut function_call = Map::new();
    if let Some(id) = call.provider_call_id() {
        function_call.insert("id".into(), Value::from(id));
    }
    function_call.insert("name".into(), Value::from(call.provider_name()));
    if let Some(args) = call.arguments_value() {
        function_call.insert("args".into(), args);
    }
    let mut part = Map::new();
    part.insert("functionCall".into(), Value::Object(function_call));
    if let Some(signature) = call.thought_signature() {
        part.insert("thoughtSignature".into(), Value::from(signature));
    }
    Value::Object(part)
}

fn truncated(reason: &str, open: Open) -> StreamError {
    StreamError::Truncated {
        reason: reason.to_owned(),
        call_id: open.id.unwrap_or_default(),
        name: open.name,
        partial: open.args.to_string(),
    }
}

#[derive(Debug, PartialEq)]
enum Segment {
    Key(String),
    Index(usize),
}

/// `$.a.b[0]['c d']` into segments (the RFC 9535 subset Gemini emits), at most
/// [`MAX_DEPTH`] of them: each segment is one level of the value built.
fn parse_json_path(path: &str) -> Result<Vec<Segment>, StreamError> {
    let bad = || StreamError::protocol(format!("unsupported JSONPath {path:?}"));
    let mut rest = path.strip_prefix('$').ok_or_else(bad)?;
    let mut segments = Vec::new();
    while !rest.is_empty() {
        if segments.len() == MAX_DEPTH as usize {
            return Err(StreamError::protocol(format!(
                "partialArgs path nests deeper than {MAX_DEPTH} levels"
            )));
        }
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            if end == 0 {
                return Err(bad());
            }
            segments.push(Segment::Key(after[..end].to_owned()));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            if let Some(quoted) = after.strip_prefix('\'').or_else(|| after.strip_prefix('"')) {
                let quote = after.as_bytes()[0] as char;
                let mut key = String::new();
                let mut chars = quoted.char_indices();
                let mut end = None;
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some((_, escaped)) = chars.next() {
                                key.push(escaped);
                            }
                        }
                        c if c == quote => {
                            end = Some(i);
                            break;
                        }
                        c => key.push(c),
                    }
                }
                let end = end.ok_or_else(bad)?;
                rest = quoted[end + 1..].strip_prefix(']').ok_or_else(bad)?;
                segments.push(Segment::Key(key));
            } else {
                let end = after.find(']').ok_or_else(bad)?;
                let index = after[..end].trim().parse().map_err(|_| bad())?;
                segments.push(Segment::Index(index));
                rest = &after[end + 1..];
            }
        } else {
            return Err(bad());
        }
    }
    Ok(segments)
}

/// Puts `value` at `segments` under `root`, creating containers; a string continuation is
/// appended to the string already there.
fn set_at(
    root: &mut Value,
    segments: &[Segment],
    value: Value,
    append: bool,
) -> Result<(), StreamError> {
    let mut node = root;
    for segment in segments {
        node = match segment {
            Segment::Key(key) => {
                if !node.is_object() {
                    *node = Value::Object(Map::new());
                }
                match node {
                    Value::Object(map) => map.entry(key.clone()).or_insert(Value::Null),
                    _ => return Err(changed_type()),
                }
            }
            Segment::Index(index) => {
                if !node.is_array() {
                    *node = Value::Array(Vec::new());
                }
                let Value::Array(items) = node else {
                    return Err(changed_type());
                };
                if *index > items.len() {
                    return Err(StreamError::protocol(format!(
                        "array index {index} skips positions"
                    )));
                }
                if *index == items.len() {
                    items.push(Value::Null);
                }
                &mut items[*index]
            }
        };
    }
    match (node, value) {
        (Value::String(existing), Value::String(more)) if append => existing.push_str(&more),
        (slot, value) => *slot = value,
    }
    Ok(())
}

fn changed_type() -> StreamError {
    StreamError::protocol("argument container changed type")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_json_paths() {
        assert_eq!(
            parse_json_path("$.recipe.ingredients[0]['amount x']").unwrap(),
            [
                Segment::Key("recipe".into()),
                Segment::Key("ingredients".into()),
                Segment::Index(0),
                Segment::Key("amount x".into())
            ]
        );
        assert!(parse_json_path("location").is_err());
        assert!(parse_json_path("$..a").is_err());
        let at_limit = format!("${}", "[0]".repeat(MAX_DEPTH as usize));
        assert_eq!(parse_json_path(&at_limit).unwrap().len(), 127);
        assert!(parse_json_path(&format!("{at_limit}.a")).is_err());
    }

    #[test]
    fn builds_arguments_from_partial_values() {
        let mut root = Value::Object(Map::new());
        let path = parse_json_path("$.a[0].b").unwrap();
        set_at(&mut root, &path, Value::from("Bo"), false).unwrap();
        set_at(&mut root, &path, Value::from("ston"), true).unwrap();
        set_at(
            &mut root,
            &parse_json_path("$.n").unwrap(),
            Value::from(3),
            false,
        )
        .unwrap();
        assert_eq!(root, json!({"a": [{"b": "Boston"}], "n": 3}));
        assert!(
            set_at(
                &mut root,
                &parse_json_path("$.a[5]").unwrap(),
                Value::Null,
                false
            )
            .is_err()
        );
    }
}

/// Gemini `generateContent` as a [`WireFormat`]
/// (`POST {base}/models/{model}:streamGenerateContent?alt=sse`, or `:generateContent` whole).
/// Key from `GEMINI_API_KEY`, sent as `x-goog-api-key`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Format;

impl WireFormat for Format {
    fn name(&self) -> &str {
        "Gemini"
    }

    fn default_target(&self) -> Target {
        Target::GeminiJsonSchema
    }

    super::format::module_format!();

    fn results(&self, calls: &[ToolCall], outcomes: &[Outcome]) -> Result<Value, EncodeError> {
        function_responses(calls, outcomes)
    }

    fn default_base_url(&self) -> &str {
        "https://generativelanguage.googleapis.com/v1beta"
    }

    fn key_variable(&self) -> &str {
        "GEMINI_API_KEY"
    }

    fn path(&self, model: &str, stream: bool) -> String {
        if stream {
            format!("/models/{model}:streamGenerateContent?alt=sse")
        } else {
            format!("/models/{model}:generateContent")
        }
    }

    fn headers(&self, key: Option<&str>) -> Vec<(&'static str, String)> {
        key.map(|key| ("x-goog-api-key", key.to_owned()))
            .into_iter()
            .collect()
    }

    /// The model is in the path and streaming in the method: the body names neither.
    fn complete_body(&self, _body: &mut Map<String, Value>, _model: &str, _stream: bool) {}

    fn forbid_calls(&self, body: &mut Map<String, Value>) {
        body.insert(
            "toolConfig".to_owned(),
            json!({"functionCallingConfig": {"mode": "NONE"}}),
        );
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
        // An error arrives as a chunk with an `error` member, which `push` would pass over as
        // a chunk with nothing in it.
        let error = &event["error"];
        if error.is_object() {
            return Err(error_event(&error["status"], &error["message"]));
        }
        let counts = &event["usageMetadata"];
        if counts.is_object() {
            let count = |key: &str| counts[key].as_u64().unwrap_or(0);
            *usage = Usage {
                input_tokens: count("promptTokenCount"),
                output_tokens: count("candidatesTokenCount")
                    .saturating_add(count("thoughtsTokenCount")),
            };
        }
        if event["candidates"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|candidate| candidate["finishReason"].is_string())
        {
            *ended = true;
        }
        Ok(())
    }
}
