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

mod streaming;

pub use streaming::Stream;

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
