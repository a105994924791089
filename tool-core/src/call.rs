//! The one type of a proposed tool call, shared by every layer: providers parse into it, the
//! agent records it, the repair loop and the runtime run it.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::contract::arguments::Arguments;

/// A call's arguments as the provider sent them: JSON text (OpenAI, a streamed Anthropic
/// buffer) or a parsed object (Anthropic, Gemini). Kept as sent so that the runtime's one
/// strict parse sees the text (duplicate keys, depth) when there is text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CallArguments {
    /// JSON text.
    Text(String),
    /// A parsed value.
    Json(Value),
}

/// A tool call proposed by a model: what a provider's parser or stream yields, what the agent's
/// transcript records, what the repair loop and the runtime run. In proposal order, ready for
/// [`Runtime::invoke`](crate::Runtime::invoke):
///
/// ```no_run
/// # async fn run(runtime: tool_core::Runtime, calls: Vec<tool_core::ToolCall>, cx: tool_core::Context) {
/// for call in &calls {
///     let outcome = runtime.invoke(call.call_id(), call.name(), call.arguments(), &cx).await;
/// }
/// # }
/// ```
///
/// In a saved transcript it is an object with `call_id`, `name`, `arguments` (a string when
/// the provider sent text, an object when it sent one) and, when they apply, `provider_name`,
/// `has_provider_id: false` and `thought_signature`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "Saved", into = "Saved")]
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
    /// The arguments are text (`&str`, `String`) or a parsed value.
    ///
    /// ```
    /// use tool_core::ToolCall;
    ///
    /// let call = ToolCall::new("call_1", "get_weather", r#"{"city":"Paris"}"#);
    /// assert_eq!(call.name(), "get_weather");
    /// ```
    pub fn new(
        call_id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<CallArguments>,
    ) -> Self {
        let name = name.into();
        ToolCall {
            call_id: call_id.into(),
            provider_name: name.clone(),
            name,
            arguments: arguments.into(),
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

    /// The registry name (decoded with the [`NameMap`](crate::providers::NameMap); as sent when the
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

impl ToolCall {
    /// The arguments as JSON text: as sent, or written from the parsed value.
    pub fn arguments_text(&self) -> Cow<'_, str> {
        match &self.arguments {
            CallArguments::Text(text) => Cow::Borrowed(text),
            CallArguments::Json(value) => Cow::Owned(value.to_string()),
        }
    }

    /// What makes two calls the same call: the tool and the canonical arguments (the trimmed
    /// text when it is not JSON).
    pub(crate) fn identity(&self) -> String {
        // A parsed value is written in canonical form directly; text is parsed first.
        let arguments = match &self.arguments {
            CallArguments::Json(value) => crate::canonical::exact_json(value),
            CallArguments::Text(text) => crate::canonical::canonical_text(text),
        }
        .unwrap_or_else(|| self.arguments_text().trim().to_owned());
        format!("{}\u{0}{}", self.name, arguments)
    }
}

impl From<String> for CallArguments {
    fn from(text: String) -> Self {
        CallArguments::Text(text)
    }
}

impl From<&str> for CallArguments {
    fn from(text: &str) -> Self {
        CallArguments::Text(text.to_owned())
    }
}

impl From<Value> for CallArguments {
    fn from(value: Value) -> Self {
        CallArguments::Json(value)
    }
}

/// A [`ToolCall`] as saved: the provider's spelling of the name and the flags only when they
/// differ from the usual case. `id` is read as `call_id`, as transcripts saved it once.
#[derive(Clone, Serialize, Deserialize)]
struct Saved {
    #[serde(alias = "id")]
    call_id: String,
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    provider_name: Option<String>,
    arguments: CallArguments,
    /// Set when the provider sent a parsed JSON string as the arguments, which would otherwise
    /// read back as text.
    #[serde(default, skip_serializing_if = "is_false")]
    arguments_are_a_string_value: bool,
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    has_provider_id: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    thought_signature: Option<String>,
}

fn yes() -> bool {
    true
}

fn is_true(value: &bool) -> bool {
    *value
}

fn is_false(value: &bool) -> bool {
    !*value
}

impl From<Saved> for ToolCall {
    fn from(saved: Saved) -> Self {
        ToolCall {
            provider_name: saved.provider_name.unwrap_or_else(|| saved.name.clone()),
            call_id: saved.call_id,
            name: saved.name,
            arguments: match saved.arguments {
                CallArguments::Text(text) if saved.arguments_are_a_string_value => {
                    CallArguments::Json(Value::String(text))
                }
                arguments => arguments,
            },
            id_from_provider: saved.has_provider_id,
            thought_signature: saved.thought_signature,
        }
    }
}

impl From<ToolCall> for Saved {
    fn from(call: ToolCall) -> Self {
        Saved {
            provider_name: (call.provider_name != call.name).then_some(call.provider_name),
            call_id: call.call_id,
            name: call.name,
            arguments_are_a_string_value: matches!(
                call.arguments,
                CallArguments::Json(Value::String(_))
            ),
            arguments: call.arguments,
            has_provider_id: call.id_from_provider,
            thought_signature: call.thought_signature,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_saved_call_round_trips_with_what_the_provider_sent() {
        let mut gemini = ToolCall::new("gemini_0", "weather.get", json!({"city": "Paris"}));
        gemini.provider_name = "weather_get".into();
        gemini.id_from_provider = false;
        gemini.thought_signature = Some("c2lnbmF0dXJl".into());
        let text = ToolCall::new("call_1", "get_weather", r#"{"city": "Paris"}"#);
        // Arguments a provider sent as a parsed JSON string (not an object): kept a value.
        let string = ToolCall::new("toolu_1", "get_weather", json!("Paris"));
        for call in [gemini, text, string] {
            let saved = serde_json::to_value(&call).unwrap();
            let back: ToolCall = serde_json::from_value(saved.clone()).unwrap();
            assert_eq!(back, call, "{saved}");
        }
    }

    #[test]
    fn a_plain_call_is_saved_without_the_usual_case() {
        let call = ToolCall::new("call_1", "get_weather", r#"{"city":"Paris"}"#);
        assert_eq!(
            serde_json::to_value(&call).unwrap(),
            json!({"call_id": "call_1", "name": "get_weather", "arguments": r#"{"city":"Paris"}"#})
        );
    }

    #[test]
    fn a_transcript_saved_with_id_still_reads() {
        let call: ToolCall =
            serde_json::from_value(json!({"id": "c1", "name": "add", "arguments": r#"{"a":2}"#}))
                .unwrap();
        assert_eq!(call.call_id(), "c1");
        assert_eq!(call.provider_name(), "add");
        assert!(call.has_provider_id());
        assert_eq!(
            call.raw_arguments(),
            &CallArguments::Text(r#"{"a":2}"#.into())
        );
    }
}
