//! How the providers' parsers build calls, and the errors in reading a response as tool calls.
//! The calls themselves are [`ToolCall`](crate::ToolCall)s, the one call type of every layer.

use std::fmt;

use super::names::NameMap;
pub(crate) use crate::call::{CallArguments, ToolCall};

/// Provider-side constructors: how the parsers and streams build the one call type.
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

impl ToolCall {
    /// A call as a provider proposed it: `provider_name` decoded to the registry name with
    /// `names` (kept as sent when the map does not know it).
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
