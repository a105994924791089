//! What the streaming accumulators share: their errors, their [`Caps`] (bytes in each call's
//! arguments, time for the whole stream) and the loop of their `collect`.
//!
//! Every accumulator follows the same rules:
//!
//! - a call is yielded only when the provider says its arguments are complete (OpenAI Chat's
//!   `finish_reason`, Responses' `function_call_arguments.done`, `output_item.done` or the
//!   final output of `response.completed`, Anthropic's `content_block_stop`, Gemini's closing
//!   `functionCall`), never because the text so far happens to parse;
//! - each call's arguments are held under a byte cap as they accumulate (argument text, and the
//!   values and paths of Gemini's `partialArgs`), and a stream over it is aborted at once with
//!   [`StreamError::TooLarge`], which maps to the runtime's `input_too_large`; arguments that
//!   arrive as a value already parsed with their chunk (Anthropic's start-block `input`, the
//!   `args` of a whole Gemini `functionCall`) are not counted;
//! - no call's arguments nest deeper than [`MAX_DEPTH`](crate::contract::MAX_DEPTH): streamed text is
//!   left to the runtime's parser, which refuses deeper text, and a value built from Gemini's
//!   `partialArgs` paths is refused with [`StreamError::Protocol`] as soon as a path is longer;
//! - the work is linear in the bytes received; unknown fields and events are ignored.

use std::fmt;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::call::ToolCall;
use crate::Code;

/// The default cap on one call's arguments: the runtime's default input cap, 1 MiB.
pub const DEFAULT_MAX_CALL_BYTES: usize = crate::Runtime::DEFAULT_MAX_BYTES;

/// The most blocks, items or parts a stream keeps for its provider state (see each stream's
/// `provider_state`): a turn with more keeps none, and the next request writes it from its text
/// and calls.
pub const MAX_STATE_ITEMS: usize = 1024;

/// A stream that cannot yield (more) calls.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamError {
    /// A call's arguments grew past the cap; the stream should be dropped.
    TooLarge {
        /// The call id, when it is known yet.
        call_id: Option<String>,
        /// The cap, in bytes.
        limit: usize,
    },
    /// The stream ended, or the provider stopped (`max_tokens`, `length`), while a call's
    /// arguments were incomplete. The call is not yielded.
    Truncated {
        /// Why, as the provider said (`"max_tokens"`), or `"end of stream"`.
        reason: String,
        /// The incomplete call's id.
        call_id: String,
        /// Its name as sent.
        name: String,
        /// The arguments received so far.
        partial: String,
    },
    /// Events that break the provider's protocol (a second `message_start` mid-message, a
    /// fragment for a call never opened).
    Protocol {
        /// What happened.
        reason: String,
    },
    /// The provider sent an error event that another attempt may not meet (overloaded, a
    /// rate limit, a server error).
    Provider {
        /// Its message.
        message: String,
    },
    /// The provider sent an error event saying it refuses the request: another attempt would
    /// meet it again.
    Refused {
        /// The kind of error, as the provider named it (`"invalid_request_error"`).
        kind: String,
        /// Its message.
        message: String,
    },
    /// The stream ran longer than its time cap (see `max_duration` on each accumulator).
    TimedOut {
        /// The cap.
        limit: Duration,
    },
}

impl StreamError {
    /// The runtime code this error corresponds to: `input_too_large` for
    /// [`TooLarge`](Self::TooLarge), `timeout` for [`TimedOut`](Self::TimedOut).
    pub fn code(&self) -> Option<Code> {
        match self {
            StreamError::TooLarge { .. } => Some(Code::InputTooLarge),
            StreamError::TimedOut { .. } => Some(Code::Timeout),
            _ => None,
        }
    }

    pub(crate) fn protocol(reason: impl Into<String>) -> Self {
        StreamError::Protocol {
            reason: reason.into(),
        }
    }
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamError::TooLarge { call_id, limit } => match call_id {
                Some(id) => write!(f, "the arguments of call {id:?} exceed {limit} bytes"),
                None => write!(f, "a call's arguments exceed {limit} bytes"),
            },
            StreamError::Truncated {
                reason,
                call_id,
                name,
                partial,
            } => write!(
                f,
                "call {call_id:?} to `{name}` was cut off ({reason}) after {} bytes of arguments",
                partial.len()
            ),
            StreamError::Protocol { reason } => write!(f, "stream protocol error: {reason}"),
            StreamError::Provider { message } => {
                write!(f, "the provider reported an error: {message}")
            }
            StreamError::Refused { kind, message } => {
                write!(f, "the provider refused the request ({kind}): {message}")
            }
            StreamError::TimedOut { limit } => {
                write!(f, "the stream ran longer than {} ms", limit.as_millis())
            }
        }
    }
}

impl std::error::Error for StreamError {}

/// The limits of a stream of a model's reply, written once for every reader of one (the
/// providers' accumulators, the text-call stream, the HTTP client): bytes in each call, bytes
/// in the whole reply, and the time the whole stream may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    max_call_bytes: usize,
    max_total_bytes: usize,
    max_duration: Option<Duration>,
}

impl Default for Limits {
    /// Calls capped at [`DEFAULT_MAX_CALL_BYTES`]; the reply and its time not capped.
    fn default() -> Self {
        Limits {
            max_call_bytes: DEFAULT_MAX_CALL_BYTES,
            max_total_bytes: usize::MAX,
            max_duration: None,
        }
    }
}

#[cfg_attr(not(feature = "text-calls"), allow(dead_code))] // some used by the text dialects only
impl Limits {
    pub(crate) fn set_max_call_bytes(&mut self, bytes: usize) {
        self.max_call_bytes = bytes;
    }

    pub(crate) fn set_max_total_bytes(&mut self, bytes: usize) {
        self.max_total_bytes = bytes;
    }

    pub(crate) fn set_max_duration(&mut self, limit: Duration) {
        self.max_duration = Some(limit);
    }

    /// The cap on one call's bytes.
    #[cfg(feature = "http")]
    pub(crate) fn max_call_bytes(&self) -> usize {
        self.max_call_bytes
    }

    /// The cap on the whole reply.
    #[cfg(feature = "http")]
    pub(crate) fn max_total_bytes(&self) -> usize {
        self.max_total_bytes
    }

    /// The call cap, when a call of `bytes` is over it.
    pub(crate) fn call_over(&self, bytes: usize) -> Option<usize> {
        (bytes > self.max_call_bytes).then_some(self.max_call_bytes)
    }

    /// The cap on the whole reply, when a reply of `bytes` is over it.
    pub(crate) fn total_over(&self, bytes: usize) -> Option<usize> {
        (bytes > self.max_total_bytes).then_some(self.max_total_bytes)
    }
}

/// A stream's [`Limits`] and its clock, started by the first chunk.
#[derive(Debug, Default)]
pub(crate) struct Caps {
    limits: Limits,
    started: Option<Instant>,
}

#[cfg_attr(not(feature = "text-calls"), allow(dead_code))] // some used by the text dialects only
impl Caps {
    /// Caps with these limits, the clock not started.
    pub(crate) fn new(limits: Limits) -> Self {
        Caps {
            limits,
            started: None,
        }
    }

    /// The limits.
    pub(crate) fn limits(&self) -> &Limits {
        &self.limits
    }

    pub(crate) fn set_max_call_bytes(&mut self, bytes: usize) {
        self.limits.set_max_call_bytes(bytes);
    }

    pub(crate) fn set_max_total_bytes(&mut self, bytes: usize) {
        self.limits.set_max_total_bytes(bytes);
    }

    pub(crate) fn set_max_duration(&mut self, limit: Duration) {
        self.limits.set_max_duration(limit);
    }

    /// Called first on every chunk: starts the clock at the first one, and gives the time
    /// cap once it has passed since.
    pub(crate) fn time_over(&mut self) -> Option<Duration> {
        let limit = self.limits.max_duration?;
        let started = *self.started.get_or_insert_with(Instant::now);
        (started.elapsed() > limit).then_some(limit)
    }

    /// Called first on every chunk: fails once the time cap has passed since the first one.
    pub(crate) fn chunk(&mut self) -> Result<(), StreamError> {
        match self.time_over() {
            Some(limit) => Err(StreamError::TimedOut { limit }),
            None => Ok(()),
        }
    }

    /// Fails when a call's arguments come to `bytes`, over the cap.
    pub(crate) fn check(&self, bytes: usize, call_id: Option<&str>) -> Result<(), StreamError> {
        match self.limits.call_over(bytes) {
            Some(limit) => Err(StreamError::TooLarge {
                call_id: call_id.map(str::to_owned),
                limit,
            }),
            None => Ok(()),
        }
    }

    /// Appends a fragment to a call's argument text, within the cap.
    pub(crate) fn append(
        &self,
        arguments: &mut String,
        fragment: &str,
        call_id: Option<&str>,
    ) -> Result<(), StreamError> {
        self.check(arguments.len() + fragment.len(), call_id)?;
        arguments.push_str(fragment);
        Ok(())
    }

    /// Replaces a call's argument text (with a provider's final copy), within the cap.
    pub(crate) fn replace(
        &self,
        arguments: &mut String,
        text: &str,
        call_id: Option<&str>,
    ) -> Result<(), StreamError> {
        arguments.clear();
        self.append(arguments, text, call_id)
    }
}

/// The builder methods of an accumulator's [`Caps`] (held in its `caps` field), written once
/// for every accumulator; `$what` says what a call's bytes are.
macro_rules! caps_builders {
    ($what:literal) => {
        #[doc = concat!("Caps each call's ", $what, " at `bytes`.")]
        pub fn max_call_bytes(mut self, bytes: usize) -> Self {
            self.caps.set_max_call_bytes(bytes);
            self
        }

        /// Gives up on the stream (with [`StreamError::TimedOut`]) when a chunk arrives more
        /// than `limit` after the first one. Pair it with a read timeout for a stream that
        /// stalls.
        pub fn max_duration(mut self, limit: std::time::Duration) -> Self {
            self.caps.set_max_duration(limit);
            self
        }
    };
}
pub(crate) use caps_builders;

/// Every call of a whole stream: each event pushed in order, then the end checked. The
/// `collect` of every accumulator.
pub(crate) fn collect<'a, S>(
    mut stream: S,
    events: impl IntoIterator<Item = &'a Value>,
    push: fn(&mut S, &Value) -> Result<Vec<ToolCall>, StreamError>,
    finish: fn(S) -> Result<(), StreamError>,
) -> Result<Vec<ToolCall>, StreamError> {
    let mut calls = Vec::new();
    for event in events {
        calls.extend(push(&mut stream, event)?);
    }
    finish(stream)?;
    Ok(calls)
}
