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
/// `has_provider_id: false`, `provider_call_id` and `thought_signature`.
///
/// # Call ids
///
/// [`call_id`](Self::call_id) is the key the runtime and its [ledger](crate::ledger) know the
/// call by, so it must not repeat, in this process or any other. A provider's own id is used
/// when it looks unique. A call that came without one (Gemini often sends none), with an empty
/// one, or with one that does not look unique gets an id made here instead: `call_` and 96
/// random bits. An id does not look unique when it repeats another call's id in the same turn
/// (or, for a turn read by an HTTP model, an earlier turn's), or when it is only a
/// position: a short number at its end after a separator or a short word, as in `0`,
/// `call_0`, `call1` or `functions.get_s3_url:1` (servers that number the calls of each
/// response, as vLLM and llama.cpp can). The provider's id is then kept as
/// [`provider_call_id`](Self::provider_call_id), and results go back to the provider under it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "Saved", into = "Saved")]
pub struct ToolCall {
    pub(crate) call_id: String,
    pub(crate) name: String,
    pub(crate) provider_name: String,
    pub(crate) arguments: CallArguments,
    pub(crate) id_from_provider: bool,
    /// The provider's id, when `call_id` was made here in its place.
    pub(crate) replaced_id: Option<String>,
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
            replaced_id: None,
            thought_signature: None,
        }
    }

    /// The id the runtime, the ledger and the transcript know the call by: the provider's id
    /// (OpenAI Chat `tool_calls[].id`, Responses `call_id`, not the `fc_` item id, Anthropic
    /// `tool_use.id`, Gemini `functionCall.id`), or one made here when the provider sent none
    /// or one that does not look unique (see [Call ids](Self#call-ids)).
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The id the provider gave the call, which its result must carry back: the
    /// [`call_id`](Self::call_id), or the provider's own id when the call id was made here in
    /// its place. `None` when the provider gave none (Gemini, which then matches results by
    /// name and position).
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_core::providers::{NameMap, openai_chat};
    ///
    /// // A server that numbers the calls of each response.
    /// let message = json!({"role": "assistant", "tool_calls": [{"id": "call_0", "type": "function",
    ///     "function": {"name": "search", "arguments": "{}"}}]});
    /// let calls = openai_chat::parse_response(&message, &NameMap::default())?;
    /// assert_ne!(calls[0].call_id(), "call_0");
    /// assert_eq!(calls[0].provider_call_id(), Some("call_0"));
    /// # Ok::<(), tool_core::providers::ParseError>(())
    /// ```
    pub fn provider_call_id(&self) -> Option<&str> {
        match &self.replaced_id {
            Some(id) => Some(id),
            None => self.id_from_provider.then_some(self.call_id.as_str()),
        }
    }

    #[cfg_attr(not(feature = "providers"), allow(dead_code))] // used by the wire formats
    /// The id written for the provider: [`provider_call_id`](Self::provider_call_id), or the
    /// call id when the provider gave none (a turn sent to another provider than the one that
    /// proposed it).
    pub(crate) fn wire_id(&self) -> &str {
        self.provider_call_id().unwrap_or(&self.call_id)
    }

    #[cfg_attr(not(feature = "providers"), allow(dead_code))] // used by the wire formats
    /// Gives the call an id made here when its own does not look unique: it is empty, a
    /// position, or one of `taken` (ids of other calls of the turn, or of earlier turns). The
    /// provider's id is kept for its result. Returns whether the id was replaced.
    pub(crate) fn make_id_unique(&mut self, taken: impl Fn(&str) -> bool) -> bool {
        if !self.id_from_provider || self.replaced_id.is_some() {
            // Made here already.
            return false;
        }
        if !looks_positional(&self.call_id) && !taken(&self.call_id) {
            return false;
        }
        self.replaced_id = Some(std::mem::replace(&mut self.call_id, fresh_call_id()));
        self.id_from_provider = false;
        true
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

    /// Whether the [`call_id`](Self::call_id) is the provider's. It is not when the provider
    /// sent none (Gemini often does not; its results are then sent without an id and matched
    /// by name and position), or when the provider's id did not look unique and was replaced
    /// (see [`provider_call_id`](Self::provider_call_id)).
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
    /// The provider's id when `call_id` was made in its place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    provider_call_id: Option<String>,
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
            id_from_provider: saved.has_provider_id && saved.provider_call_id.is_none(),
            replaced_id: saved.provider_call_id,
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
            provider_call_id: call.replaced_id,
            thought_signature: call.thought_signature,
        }
    }
}

/// Whether `id` is empty or only a position: a number of at most six digits at its end that
/// follows a separator (`0`, `call_0`, `functions.get_s3_url:1`) or a short word of letters
/// (`call1`, `c1`). Ids made to be unique mix digits and letters throughout (`call_JMW3k…`,
/// `toolu_01A0…`, a UUID); a random one whose digits happen to fall at its end
/// (`call_kQzBwXyUvT81`) runs them on from a long mix of letters.
#[cfg_attr(not(feature = "providers"), allow(dead_code))] // used by the wire formats
fn looks_positional(id: &str) -> bool {
    let rest = id.trim_end_matches(|c: char| c.is_ascii_digit());
    let digits = id.len() - rest.len();
    if id.is_empty() || rest.is_empty() {
        return true;
    }
    if digits == 0 || digits > 6 {
        return false;
    }
    !rest.ends_with(|c: char| c.is_alphanumeric())
        || (rest.len() <= 8 && rest.bytes().all(|b| b.is_ascii_alphabetic()))
}

/// An id for a call whose own cannot serve: `call_` and 96 random bits as hex; the time and a
/// counter when the system has no randomness to give.
#[cfg_attr(not(feature = "providers"), allow(dead_code))] // used by the wire formats
pub(crate) fn fresh_call_id() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let mut bytes = [0u8; 12];
    if getrandom::fill(&mut bytes).is_err() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        bytes[..8].copy_from_slice(&now.to_le_bytes());
        bytes[8..].copy_from_slice(&COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    }
    format!("call_{}", crate::digest::hex(&bytes))
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
        // A positional id, replaced by one made here.
        let mut numbered = ToolCall::new("call_0", "get_weather", "{}");
        assert!(numbered.make_id_unique(|_| false));
        assert_eq!(numbered.provider_call_id(), Some("call_0"));
        for call in [gemini, text, string, numbered] {
            let saved = serde_json::to_value(&call).unwrap();
            let back: ToolCall = serde_json::from_value(saved.clone()).unwrap();
            assert_eq!(back, call, "{saved}");
        }
    }

    #[test]
    fn only_ids_that_are_empty_or_a_position_look_positional() {
        for id in [
            "",
            "0",
            "12",
            "call_0",
            "tool-12",
            "functions.search:1",
            "functions.get_s3_url:0",
            "call1",
            "c1",
        ] {
            assert!(looks_positional(id), "{id:?}");
        }
        for id in [
            "call_a",
            "call_JMW3kq8Y",
            "call_kQzBwXyUvT81",
            "toolu_01A09q90qw90lq9",
            "8f14e45f-ceea-4670-9dd0-1f2b3c4d5e6f",
        ] {
            assert!(!looks_positional(id), "{id:?}");
        }
        assert!(!looks_positional(&fresh_call_id()));
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
