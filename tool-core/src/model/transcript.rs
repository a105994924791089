//! The transcript of a run: what was said, proposed and returned, in order. It is plain data
//! (serde), so a run can be stored, resumed from and replayed.

use std::ops::AddAssign;

use serde::{Deserialize, Serialize};

use crate::call::ToolCall;
use crate::outcome::Code;
use crate::provenance::Provenance;

/// One entry of a run's transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// The user's (or application's) words.
    User {
        /// The text.
        text: String,
    },
    /// One model turn: text, proposed calls, or both.
    Assistant {
        /// What the model said.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// The calls it proposed, in its order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        calls: Vec<ToolCall>,
        /// Tokens the turn used.
        #[serde(default)]
        usage: Usage,
        /// What the provider gave with the turn that it needs back unchanged (reasoning items,
        /// signatures, extra block fields); `None` for a turn from any other source.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider: Option<ProviderState>,
    },
    /// The result of one proposed call, as the model will read it.
    Tool(ToolResult),
}

/// The result of a proposed call: its output or a refusal the model can read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The call id it answers.
    pub call_id: String,
    /// The tool proposed.
    pub tool: String,
    /// The failure's code; `None` when the call produced an output. Written as `"ok"` or the
    /// code's stable string (`"invalid_arguments"`, `"budget_exhausted"`, …) in a saved
    /// transcript.
    #[serde(with = "result_code")]
    pub code: Option<Code>,
    /// The output JSON text, or the failure's public message ([`Failure::message`], which
    /// stays short however many violations the arguments have).
    ///
    /// [`Failure::message`]: crate::Failure::message
    pub content: String,
    /// When the repair loop fixed the proposed arguments: the arguments that ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repaired_arguments: Option<String>,
    /// Who wrote `content` and whether it is trusted (see [`provenance`](crate::provenance)).
    #[serde(default)]
    pub provenance: Provenance,
}

impl ToolResult {
    /// Whether the call produced an output.
    pub fn is_ok(&self) -> bool {
        self.code.is_none()
    }
}

/// A result's code in a saved transcript: `"ok"` or the failure code's stable string.
mod result_code {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::outcome::Code;

    pub(super) fn serialize<S: Serializer>(
        code: &Option<Code>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(code.map_or("ok", Code::as_str))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Code>, D::Error> {
        let text = String::deserialize(deserializer)?;
        if text == "ok" {
            return Ok(None);
        }
        text.parse().map(Some).map_err(serde::de::Error::custom)
    }
}

/// Token counts reported by the model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens, those served from a prompt cache included (Anthropic's cache reads and
    /// writes are added to its `input_tokens`; OpenAI's and Gemini's prompt counts already
    /// hold them), so no prompt token of a turn goes uncounted.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
}

impl Usage {
    /// Input and output together.
    pub fn total(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
    }
}

/// What a model returns for one step.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    /// Text for the user.
    pub text: Option<String>,
    /// Proposed calls.
    pub calls: Vec<ToolCall>,
    /// Tokens used.
    pub usage: Usage,
    /// What the provider needs back unchanged with this turn in the next request; recorded on
    /// the transcript's assistant message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<ProviderState>,
}

/// A provider's API: the one name for it across the crate. The wire formats of
/// [`providers`](crate::providers) read and write its turns, an `HttpModel` (feature `http`)
/// speaks it, and a [`ProviderState`] names the one it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI Chat Completions (and compatible servers).
    #[serde(rename = "openai_chat")]
    OpenAiChat,
    /// OpenAI Responses.
    #[serde(rename = "openai_responses")]
    OpenAiResponses,
    /// Anthropic Messages.
    #[serde(rename = "anthropic")]
    Anthropic,
    /// Gemini `generateContent`.
    #[serde(rename = "gemini")]
    Gemini,
}

impl Provider {
    /// Every provider.
    pub const ALL: [Provider; 4] = [
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Anthropic,
        Provider::Gemini,
    ];

    /// The provider's name in messages (`"OpenAI Chat"`).
    pub fn name(self) -> &'static str {
        match self {
            Provider::OpenAiChat => "OpenAI Chat",
            Provider::OpenAiResponses => "OpenAI Responses",
            Provider::Anthropic => "Anthropic",
            Provider::Gemini => "Gemini",
        }
    }
}

/// An assistant turn as one provider sent it, kept opaque so that the next request to the
/// same provider can send it back unchanged: Anthropic's `content` blocks (with `caller`,
/// `thinking` signatures and every other field), OpenAI Responses' `output` items (reasoning
/// with `encrypted_content`, messages, calls), Gemini's model `parts` (each `thoughtSignature`
/// on the part that carried it).
///
/// The rest of the transcript stays provider-neutral. A request to another provider ignores
/// the state and writes the turn from its text and calls. It is saved with the transcript as
/// `{"wire": "anthropic", "content": …}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderState {
    #[serde(rename = "wire")]
    provider: Provider,
    content: serde_json::Value,
}

impl ProviderState {
    /// The turn's `content` as `provider` sent it.
    pub fn new(provider: Provider, content: serde_json::Value) -> Self {
        ProviderState { provider, content }
    }

    /// The provider it was read from.
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// The content as sent.
    pub fn content(&self) -> &serde_json::Value {
        &self.content
    }
}

impl Turn {
    /// A turn that only answers.
    pub fn answer(text: impl Into<String>) -> Self {
        Turn {
            text: Some(text.into()),
            ..Turn::default()
        }
    }

    /// A turn that proposes `calls`.
    pub fn calls(calls: impl IntoIterator<Item = ToolCall>) -> Self {
        Turn {
            calls: calls.into_iter().collect(),
            ..Turn::default()
        }
    }

    /// The same turn, with what its provider needs back (see [`ProviderState`]).
    pub fn with_provider(mut self, state: Option<ProviderState>) -> Self {
        self.provider = state;
        self
    }

    /// The same turn, reporting `input` and `output` tokens.
    pub fn with_usage(mut self, input: u64, output: u64) -> Self {
        self.usage = Usage {
            input_tokens: input,
            output_tokens: output,
        };
        self
    }
}
