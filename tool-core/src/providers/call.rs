//! How the providers' parsers build calls, and the errors in reading a response as tool calls.
//! The calls themselves are [`ToolCall`](crate::ToolCall)s, the one call type of every layer.

use std::collections::{HashMap, HashSet};
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
    /// `names` (kept as sent when the map does not know it), and an id made here when the
    /// provider's is empty or only a position (see [Call ids](crate::ToolCall#call-ids)).
    pub(crate) fn proposed(
        call_id: String,
        provider_name: &str,
        arguments: CallArguments,
        names: &NameMap,
    ) -> Self {
        let mut call = ToolCall {
            call_id,
            name: names.resolve(provider_name).to_owned(),
            provider_name: provider_name.to_owned(),
            arguments,
            id_from_provider: true,
            replaced_id: None,
            thought_signature: None,
        };
        call.make_id_unique(|_| false);
        call
    }

    /// A call the provider gave no id: it gets one made here, and its result goes back
    /// without one.
    pub(crate) fn proposed_without_id(
        provider_name: &str,
        arguments: CallArguments,
        names: &NameMap,
    ) -> Self {
        ToolCall {
            call_id: crate::call::fresh_call_id(),
            name: names.resolve(provider_name).to_owned(),
            provider_name: provider_name.to_owned(),
            arguments,
            id_from_provider: false,
            replaced_id: None,
            thought_signature: None,
        }
    }
}

/// Gives every call of one turn whose id does not look unique an id made here (see
/// [Call ids](crate::ToolCall#call-ids)): an empty id, a position, an id two calls of the turn
/// share, or one `earlier` holds (the ids of the transcript's earlier turns).
pub(crate) fn make_ids_unique(calls: &mut [ToolCall], earlier: &HashSet<&str>) {
    let mut count: HashMap<String, usize> = HashMap::with_capacity(calls.len());
    for call in calls.iter().filter(|c| c.id_from_provider) {
        *count.entry(call.call_id.clone()).or_default() += 1;
    }
    for call in calls.iter_mut() {
        call.make_id_unique(|id| earlier.contains(id) || count.get(id).is_some_and(|n| *n > 1));
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
