//! Errors in reading a provider's response as tool calls. The calls themselves are
//! [`ToolCall`](crate::ToolCall)s, the one call type of every layer.

use std::fmt;

pub(crate) use crate::call::{CallArguments, ToolCall};

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
