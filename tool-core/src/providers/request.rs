//! The next request from a transcript: what the four builders
//! ([`openai_chat::request`](super::openai_chat::request),
//! [`openai_responses::request`](super::openai_responses::request),
//! [`anthropic::request`](super::anthropic::request), [`gemini::request`](super::gemini::request))
//! share: their options, their errors, and the walk that pairs each assistant turn's calls with
//! their results.
//!
//! An assistant turn that carries a [`ProviderState`] for the builder's own wire format is sent
//! back as the provider gave it (reasoning items, signatures, every block field); any other
//! turn is written from its text and calls. Results are sent in call order, one per call; a
//! failure is marked where the provider has a flag for it (Anthropic `is_error`, Gemini
//! `error`) and is always written as `code: message`.

use std::fmt;

use serde_json::{Map, Value};

use super::advertise::Advertised;
use super::target::Target;
use crate::ToolCall;
use crate::model::{Message, Provider, ProviderState, ToolResult};

/// What a request needs besides the transcript and the tools: the system prompt and the
/// provider's own settings (`model`, `max_tokens`, `tool_choice`, `stream`,
/// `generationConfig`, …), copied to the top level of the body as given.
///
/// ```
/// use serde_json::json;
/// use tool_core::providers::RequestOptions;
///
/// let options = RequestOptions::new()
///     .system("You are terse.")
///     .setting("model", json!("claude-haiku-4-5"))
///     .setting("max_tokens", json!(1024));
/// assert_eq!(options.system_prompt(), Some("You are terse."));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestOptions {
    system: Option<String>,
    settings: Map<String, Value>,
}

impl RequestOptions {
    /// No system prompt, no settings.
    pub fn new() -> Self {
        RequestOptions::default()
    }

    /// The system prompt: Chat's first `system` message, Responses' `instructions`,
    /// Anthropic's `system`, Gemini's `systemInstruction`.
    pub fn system(mut self, text: impl Into<String>) -> Self {
        self.system = Some(text.into());
        self
    }

    /// A top-level field of the body. A key the builder writes itself (`messages`, `input`,
    /// `contents`, `tools`, the system field) is refused when the body is built.
    pub fn setting(mut self, key: impl Into<String>, value: Value) -> Self {
        self.settings.insert(key.into(), value);
        self
    }

    /// The system prompt, if set.
    pub fn system_prompt(&self) -> Option<&str> {
        self.system.as_deref()
    }
}

/// A transcript that cannot be written as the next request.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequestError {
    /// The tools were advertised for another provider.
    WrongTarget {
        /// The provider the body is for.
        provider: &'static str,
        /// The target the tools were advertised for.
        target: Target,
    },
    /// A setting names a field the builder writes.
    ReservedSetting {
        /// The key.
        key: String,
    },
    /// A call has no result before the next turn (or the end of the transcript); providers
    /// refuse a request with an unanswered call.
    MissingResult {
        /// The call id.
        call_id: String,
    },
    /// A result answers no call of the turn before it.
    UnmatchedResult {
        /// The result's call id.
        call_id: String,
    },
    /// A call's arguments are not a JSON object, which Anthropic and Gemini require.
    ArgumentsNotAnObject {
        /// The call id.
        call_id: String,
    },
    /// A user message has no text (Anthropic: no text but whitespace), which the provider
    /// refuses. Leave the message out of the transcript, or give it words.
    EmptyUserMessage {
        /// Its position in the transcript, counting from 0.
        index: usize,
    },
    /// An assistant turn's provider state does not have the provider's shape, or names other
    /// calls than the turn's.
    BadProviderState {
        /// Which turn, counting assistant turns from 0.
        turn: usize,
        /// What is wrong.
        reason: String,
    },
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestError::WrongTarget { provider, target } => {
                write!(
                    f,
                    "a {provider} request cannot carry tools advertised for {target}"
                )
            }
            RequestError::ReservedSetting { key } => {
                write!(
                    f,
                    "the setting {key:?} is a field the request builder writes"
                )
            }
            RequestError::MissingResult { call_id } => {
                write!(f, "call {call_id:?} has no result before the next turn")
            }
            RequestError::UnmatchedResult { call_id } => {
                write!(
                    f,
                    "the result for {call_id:?} answers no call of the turn before it"
                )
            }
            RequestError::ArgumentsNotAnObject { call_id } => {
                write!(f, "the arguments of call {call_id:?} are not a JSON object")
            }
            RequestError::EmptyUserMessage { index } => {
                write!(
                    f,
                    "the user message {index} of the transcript has no text, which the provider refuses"
                )
            }
            RequestError::BadProviderState { turn, reason } => {
                write!(f, "assistant turn {turn}: provider state {reason}")
            }
        }
    }
}

impl std::error::Error for RequestError {}

/// One step of the conversation as the builders write it.
pub(crate) enum Entry<'a> {
    /// A user's words, and the message's position in the transcript.
    User(&'a str, usize),
    Assistant {
        /// Counting assistant turns from 0, for errors.
        turn: usize,
        text: Option<&'a str>,
        calls: &'a [ToolCall],
        state: Option<&'a ProviderState>,
    },
    /// The results of the turn before, in call order.
    Results(Vec<(&'a ToolCall, &'a ToolResult)>),
}

impl<'a> Entry<'a> {
    /// The assistant turn's state when it was read from `provider`.
    pub(crate) fn state_for(
        state: Option<&'a ProviderState>,
        provider: Provider,
    ) -> Option<&'a Value> {
        state
            .filter(|s| s.provider() == provider)
            .map(ProviderState::content)
    }
}

/// The transcript as entries: each assistant turn followed by the results of all its calls.
pub(crate) fn entries(transcript: &[Message]) -> Result<Vec<Entry<'_>>, RequestError> {
    let mut out = Vec::with_capacity(transcript.len());
    let mut calls: &[ToolCall] = &[];
    let mut results: Vec<&ToolResult> = Vec::new();
    let mut turn = 0;
    for (index, message) in transcript.iter().enumerate() {
        match message {
            Message::User { text } => {
                flush(&mut out, &mut calls, &mut results)?;
                out.push(Entry::User(text, index));
            }
            Message::Assistant {
                text,
                calls: proposed,
                provider,
                ..
            } => {
                flush(&mut out, &mut calls, &mut results)?;
                out.push(Entry::Assistant {
                    turn,
                    text: text.as_deref(),
                    calls: proposed,
                    state: provider.as_ref(),
                });
                turn += 1;
                calls = proposed;
            }
            Message::Tool(result) => results.push(result),
        }
    }
    flush(&mut out, &mut calls, &mut results)?;
    Ok(out)
}

fn flush<'a>(
    out: &mut Vec<Entry<'a>>,
    calls: &mut &'a [ToolCall],
    results: &mut Vec<&'a ToolResult>,
) -> Result<(), RequestError> {
    let mut used = vec![false; results.len()];
    let mut pairs = Vec::with_capacity(calls.len());
    for call in calls.iter() {
        let found = results
            .iter()
            .enumerate()
            .position(|(i, r)| !used[i] && r.call_id == call.call_id());
        let Some(index) = found else {
            return Err(RequestError::MissingResult {
                call_id: call.call_id().to_owned(),
            });
        };
        used[index] = true;
        pairs.push((call, results[index]));
    }
    if let Some(index) = used.iter().position(|u| !u) {
        return Err(RequestError::UnmatchedResult {
            call_id: results[index].call_id.clone(),
        });
    }
    if !pairs.is_empty() {
        out.push(Entry::Results(pairs));
    }
    *calls = &[];
    results.clear();
    Ok(())
}

/// A call's arguments as the JSON object Anthropic and Gemini take.
pub(crate) fn arguments_object(call: &ToolCall) -> Result<Value, RequestError> {
    match call.arguments_value() {
        Some(value @ Value::Object(_)) => Ok(value),
        _ => Err(RequestError::ArgumentsNotAnObject {
            call_id: call.call_id().to_owned(),
        }),
    }
}

/// The body's top level: the settings, then the builder's own fields, which no setting may
/// name.
pub(crate) struct Body {
    map: Map<String, Value>,
}

impl Body {
    pub(crate) fn new(
        options: &RequestOptions,
        tools: &Advertised,
        provider: &'static str,
        accepts: impl Fn(Target) -> bool,
    ) -> Result<Self, RequestError> {
        if !accepts(tools.target()) {
            return Err(RequestError::WrongTarget {
                provider,
                target: tools.target(),
            });
        }
        Ok(Body {
            map: options.settings.clone(),
        })
    }

    pub(crate) fn put(&mut self, key: &str, value: Value) -> Result<(), RequestError> {
        if self.map.contains_key(key) {
            return Err(RequestError::ReservedSetting {
                key: key.to_owned(),
            });
        }
        self.map.insert(key.to_owned(), value);
        Ok(())
    }

    /// The tools, when there are any.
    pub(crate) fn tools(&mut self, tools: &Advertised) -> Result<(), RequestError> {
        if self.map.contains_key("tools") {
            return Err(RequestError::ReservedSetting {
                key: "tools".to_owned(),
            });
        }
        if !tools.tools().is_empty() {
            self.map.insert("tools".to_owned(), tools.to_json());
        }
        Ok(())
    }

    pub(crate) fn finish(self) -> Value {
        Value::Object(self.map)
    }
}

/// The ids of the calls of `turn`'s state, checked against the turn's calls.
pub(crate) fn check_ids<'a>(
    turn: usize,
    in_state: impl IntoIterator<Item = Option<&'a str>>,
    calls: &[ToolCall],
    what: &str,
) -> Result<(), RequestError> {
    let in_state: Vec<Option<&str>> = in_state.into_iter().collect();
    let expected: Vec<Option<&str>> = calls.iter().map(|c| Some(c.wire_id())).collect();
    if in_state != expected {
        return Err(RequestError::BadProviderState {
            turn,
            reason: format!(
                "has {} {what} that are not the turn's {} calls",
                in_state.len(),
                calls.len()
            ),
        });
    }
    Ok(())
}

pub(crate) fn bad_state(turn: usize, reason: &str) -> RequestError {
    RequestError::BadProviderState {
        turn,
        reason: reason.to_owned(),
    }
}
