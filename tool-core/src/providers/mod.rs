//! Provider adapters: tools advertised to OpenAI (Chat and Responses), Anthropic and Gemini in
//! each one's schema dialect, their tool calls read back into one [`ToolCall`] form (whole
//! responses and streams), and [`Outcome`](crate::Outcome)s written back as each provider's
//! result messages.
//!
//! The canonical contract is never replaced. A tool's input schema stays what the registry
//! holds; [`advertise`](fn@advertise) derives each provider's copy and reports, as a list of [`Loss`]es, what
//! the copy no longer says (a `maxLength` OpenAI strict does not enforce, a `default` Gemini
//! is not shown, an open object Anthropic strict closes). The runtime validates every call
//! against the canonical schema whatever the provider was shown, so a lowering can only ever
//! make a provider propose calls the runtime refuses, never let one through.
//!
//! The way through one turn:
//!
//! | step | function |
//! |---|---|
//! | advertise the registry's tools: names mapped, schemas lowered, limits checked | [`advertise`](fn@advertise) → [`Advertised::to_json`] |
//! | read the calls of a response, in proposal order | [`openai_chat::parse_response`], [`openai_responses::parse_response`], [`anthropic::parse_response`], [`gemini::parse_response`] |
//! | or of a stream, each call only once its arguments are complete | [`SseDecoder`] / [`json_lines`], then `openai_chat::Stream` and the like |
//! | undo OpenAI strict's nulls for optional fields | [`ToolCall::remove_strict_nulls`] |
//! | run each call | [`Runtime::invoke`](crate::Runtime::invoke)`(call.call_id(), call.name(), call.arguments(), &cx)` |
//! | answer the calls, in call order | [`openai_chat::tool_messages`], [`openai_responses::output_items`], [`anthropic::tool_results`], [`gemini::function_responses`] |
//! | or keep the turn (with [`ProviderState`](crate::model::ProviderState)) and results in a transcript | [`openai_chat::parse_turn`], [`openai_responses::parse_turn`], [`anthropic::parse_turn`], [`gemini::parse_turn`], or each stream's `provider_state` |
//! | write the next request from the transcript | [`openai_chat::request`], [`openai_responses::request`], [`anthropic::request`], [`gemini::request`] |
//!
//! A call's [`call_id`](ToolCall::call_id) is unique across processes: where the provider's id
//! is missing, empty, only a position or shared with another call of the response, the call
//! gets an id made here and results go back under the provider's
//! ([`ToolCall::provider_call_id`]; see [Call ids](ToolCall#call-ids)). A stream sees its
//! calls one at a time, so only the Chat Completions stream, which completes them together,
//! also replaces ids shared within the turn; the HTTP models do it for every provider, and
//! for ids an earlier turn of the transcript used.
//!
//! Wire formats are read with small serde types of this module's own rather than a provider
//! SDK: they name only the fields a tool call needs, ignore every other field (recorded
//! streams carry `obfuscation`, `caller`, `thoughtSignature`, and new fields appear often), and
//! add no dependency. The formats follow the providers' documentation and recorded traffic
//! (`PROVIDERS.md` in the project's shared notes).

mod advertise;
pub mod anthropic;
mod call;
mod dialect;
mod encode;
mod format;
pub mod gemini;
mod limits;
mod loss;
mod lower;
mod names;
mod nulls;
pub mod openai_chat;
pub mod openai_responses;
mod request;
mod sse;
pub(crate) mod stream;
mod target;

pub(crate) use crate::call::ToolCall;
pub use advertise::{AdvertiseError, Advertised, Lowered, advertise};
pub use call::ParseError;
#[cfg(feature = "http")]
pub(crate) use call::make_ids_unique;
pub use encode::EncodeError;
pub use format::{TurnStream, WireFormat};
pub use limits::LimitError;
pub use loss::{Loss, LossKind, LowerError};
#[cfg(feature = "mcp")]
pub(crate) use lower::client_schema;
pub use names::{NameError, NameMap, NameRule};
pub use nulls::remove_strict_nulls;
pub use request::{RequestError, RequestOptions};
pub use sse::{SseDecoder, SseEvent, json_lines, sse_events};
pub use stream::{DEFAULT_MAX_CALL_BYTES, MAX_STATE_ITEMS, StreamError};
pub use target::{Target, ToolSpec};
