//! The common form of a proposed call, whatever provider proposed it.

use std::fmt;

use serde_json::Value;

use super::names::NameMap;
use crate::contract::arguments::Arguments;

/// A call's arguments as the provider sent them: JSON text (OpenAI, a streamed Anthropic
/// buffer) or a parsed object (Anthropic, Gemini). Kept as sent so that the runtime's one
/// strict parse sees the text (duplicate keys, depth) when there is text.
#[derive(Debug, Clone, PartialEq)]
pub enum CallArguments {
    /// JSON text.
    Text(String),
    /// A parsed value.
    Json(Value),
}

impl CallArguments {
    /// OpenAI's `arguments` string (Chat and Responses): the text as sent, or `{}` when it
    /// is empty, which is how some servers say "no arguments".
    pub(crate) fn openai_text(text: String) -> Self {
        CallArguments::Text(if text.is_empty() {
            "{}".to_owned()
        } else {
            text
        })
    }
}

/// A tool call proposed by a model, in proposal order, ready for
/// [`Runtime::invoke`](crate::Runtime::invoke):
///
/// ```no_run
/// # async fn run(runtime: tool_core::Runtime, calls: Vec<tool_core::providers::ToolCall>, cx: tool_core::Context) {
/// for call in &calls {
///     let outcome = runtime.invoke(call.call_id(), call.name(), call.arguments(), &cx).await;
/// }
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub(crate) call_id: String,
    pub(crate) name: String,
    pub(crate) provider_name: String,
    pub(crate) arguments: CallArguments,
    pub(crate) id_from_provider: bool,
    pub(crate) thought_signature: Option<String>,
}

impl ToolCall {
    /// A call from its parts, with `name` both as the provider sent it and as registered.
    pub fn new(
        call_id: impl Into<String>,
        name: impl Into<String>,
        arguments: CallArguments,
    ) -> Self {
        let name = name.into();
        ToolCall {
            call_id: call_id.into(),
            provider_name: name.clone(),
            name,
            arguments,
            id_from_provider: true,
            thought_signature: None,
        }
    }

    /// A call as a provider proposed it: the provider's id, the name decoded with `names`.
    /// Gemini's calls, which may come without an id and with a thought signature, set those
    /// two fields afterwards.
    pub(crate) fn proposed(
        call_id: String,
        provider_name: &str,
        arguments: CallArguments,
        names: &NameMap,
    ) -> Self {
        ToolCall {
            call_id,
            name: names.resolve(provider_name).to_owned(),
            provider_name: provider_name.to_owned(),
            arguments,
            id_from_provider: true,
            thought_signature: None,
        }
    }

    /// The id results are joined on: OpenAI Chat `tool_calls[].id`, Responses `call_id`
    /// (not the `fc_` item id), Anthropic `tool_use.id`, Gemini `functionCall.id` or, when
    /// Gemini sends none, an id made here (see [`has_provider_id`](Self::has_provider_id)).
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The registry name (decoded with the [`NameMap`]; as sent when the
    /// map does not know it).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name as the provider sent it.
    pub fn provider_name(&self) -> &str {
        &self.provider_name
    }

    /// The arguments, as the runtime takes them.
    pub fn arguments(&self) -> Arguments<'_> {
        match &self.arguments {
            CallArguments::Text(text) => Arguments::Text(text),
            CallArguments::Json(value) => Arguments::Json(value),
        }
    }

    /// The arguments as sent.
    pub fn raw_arguments(&self) -> &CallArguments {
        &self.arguments
    }

    /// The arguments parsed into a value (`None` if the text is not JSON).
    pub fn arguments_value(&self) -> Option<Value> {
        match &self.arguments {
            CallArguments::Text(text) => serde_json::from_str(text).ok(),
            CallArguments::Json(value) => Some(value.clone()),
        }
    }

    /// Whether the provider gave the call id. Gemini often does not; its results are then
    /// sent without an id and matched by name and position.
    pub fn has_provider_id(&self) -> bool {
        self.id_from_provider
    }

    /// Gemini's `thoughtSignature` on the part that carried the call, to be sent back
    /// unchanged with the model turn.
    pub fn thought_signature(&self) -> Option<&str> {
        self.thought_signature.as_deref()
    }
}

/// A provider response that could not be read as tool calls.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseError {
    /// The body does not have the provider's shape.
    Malformed {
        /// What was wrong, e.g. `tool_calls[0]: missing field "id"`.
        reason: String,
    },
    /// A call lacks a field the provider always sends.
    MissingField {
        /// Which call, by position.
        index: usize,
        /// The field.
        field: &'static str,
    },
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Malformed { reason } => write!(f, "malformed provider response: {reason}"),
            ParseError::MissingField { index, field } => {
                write!(f, "tool call {index} has no {field}")
            }
        }
    }
}

impl std::error::Error for ParseError {}

impl ParseError {
    pub(crate) fn malformed(reason: impl fmt::Display) -> Self {
        ParseError::Malformed {
            reason: reason.to_string(),
        }
    }
}
