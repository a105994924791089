//! The [`WireFormat`] trait: everything that differs between one provider's API and another's,
//! in one place per provider. [`HttpModel`](crate::http::HttpModel) speaks any implementation,
//! the four built in ([`openai_chat::Format`](super::openai_chat::Format),
//! [`openai_responses::Format`](super::openai_responses::Format),
//! [`anthropic::Format`](super::anthropic::Format), [`gemini::Format`](super::gemini::Format))
//! or one of your own.

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::{
    Advertised, EncodeError, NameMap, ParseError, RequestError, RequestOptions, StreamError,
    Target, ToolCall, anthropic, gemini, openai_chat, openai_responses,
};
use crate::Outcome;
use crate::model::{Message, Provider, ProviderState, Turn, Usage};

/// A provider's wire format: how a request is written from a transcript, how a whole or
/// streamed response is read back as a [`Turn`], how results are answered, which schema
/// dialect tools are advertised in, and where and how the API is reached.
///
/// Implement it to speak an API the crate does not know, often by delegating to a built-in
/// format and changing what differs (an OpenAI-compatible server with its own path or key
/// header, say):
///
/// ```
/// use serde_json::{Map, Value};
/// use tool_core::model::{Message, Turn};
/// use tool_core::providers::{
///     Advertised, EncodeError, NameMap, ParseError, RequestError, RequestOptions, Target,
///     TurnStream, WireFormat, openai_chat,
/// };
/// use tool_core::{Outcome, ToolCall};
///
/// /// OpenAI Chat behind a gateway that wants its key as `api-key`.
/// #[derive(Debug)]
/// struct Gateway;
///
/// impl WireFormat for Gateway {
///     fn name(&self) -> &str {
///         "Gateway"
///     }
///     fn default_target(&self) -> Target {
///         Target::OpenAiChat
///     }
///     fn request(
///         &self,
///         transcript: &[Message],
///         tools: &Advertised,
///         options: &RequestOptions,
///     ) -> Result<Value, RequestError> {
///         openai_chat::Format.request(transcript, tools, options)
///     }
///     fn parse_turn(&self, body: &Value, names: &NameMap) -> Result<Turn, ParseError> {
///         openai_chat::Format.parse_turn(body, names)
///     }
///     fn results(&self, calls: &[ToolCall], outcomes: &[Outcome]) -> Result<Value, EncodeError> {
///         openai_chat::Format.results(calls, outcomes)
///     }
///     fn stream(&self, names: &NameMap, max_call_bytes: usize) -> Box<dyn TurnStream> {
///         openai_chat::Format.stream(names, max_call_bytes)
///     }
///     fn default_base_url(&self) -> &str {
///         "https://gateway.example/v1"
///     }
///     fn key_variable(&self) -> &str {
///         "GATEWAY_KEY"
///     }
///     fn path(&self, _model: &str, _stream: bool) -> String {
///         "/chat/completions".to_owned()
///     }
///     fn headers(&self, key: Option<&str>) -> Vec<(&'static str, String)> {
///         key.map(|key| ("api-key", key.to_owned())).into_iter().collect()
///     }
///     fn complete_body(&self, body: &mut Map<String, Value>, model: &str, stream: bool) {
///         openai_chat::Format.complete_body(body, model, stream);
///     }
///     fn forbid_calls(&self, body: &mut Map<String, Value>) {
///         openai_chat::Format.forbid_calls(body);
///     }
/// }
///
/// assert_eq!(Gateway.headers(Some("k")), [("api-key", "k".to_owned())]);
/// ```
pub trait WireFormat: fmt::Debug + Send + Sync {
    /// The provider's name in messages (`"OpenAI Chat"`).
    fn name(&self) -> &str;

    /// The schema dialect tools are advertised in unless another is chosen.
    fn default_target(&self) -> Target;

    /// The request body for the next turn: the transcript, the advertised tools and the
    /// options, in the provider's shape (before [`complete_body`](Self::complete_body)).
    fn request(
        &self,
        transcript: &[Message],
        tools: &Advertised,
        options: &RequestOptions,
    ) -> Result<Value, RequestError>;

    /// A whole (not streamed) response as a turn.
    fn parse_turn(&self, body: &Value, names: &NameMap) -> Result<Turn, ParseError>;

    /// The provider's answer to `calls`, one result per call in call order.
    fn results(&self, calls: &[ToolCall], outcomes: &[Outcome]) -> Result<Value, EncodeError>;

    /// An accumulator for one streamed response, decoding names with `names` and capping each
    /// call's arguments at `max_call_bytes`.
    fn stream(&self, names: &NameMap, max_call_bytes: usize) -> Box<dyn TurnStream>;

    /// The base URL requests go to unless another is given.
    fn default_base_url(&self) -> &str;

    /// The environment variable the API key is read from unless one is given.
    fn key_variable(&self) -> &str;

    /// The path of the request, after the base URL.
    fn path(&self, model: &str, stream: bool) -> String;

    /// The headers that carry the key (when there is one) and any the API requires.
    fn headers(&self, key: Option<&str>) -> Vec<(&'static str, String)>;

    /// Adds what the request needs that the options did not say: the model, the `stream` flag,
    /// a required `max_tokens`. Values the options set are kept.
    fn complete_body(&self, body: &mut Map<String, Value>, model: &str, stream: bool);

    /// Tells the model to answer in text: the provider's "no tool calls" choice, replacing any
    /// the options set.
    fn forbid_calls(&self, body: &mut Map<String, Value>);
}

/// One streamed response being read: it takes each event's JSON and, once the stream is over,
/// gives the turn.
pub trait TurnStream: fmt::Debug + Send {
    /// Takes one event (a JSON object). A provider's error event fails with
    /// [`StreamError::Provider`] (worth another attempt) or [`StreamError::Refused`] (not).
    /// After an error, drop the stream.
    fn event(&mut self, event: &Value) -> Result<(), StreamError>;

    /// The calls completed so far, in order: each only once the provider has said its
    /// arguments are complete.
    fn calls(&self) -> &[ToolCall];

    /// Whether the provider has said the turn is over; a stream that closes before is cut off.
    fn ended(&self) -> bool;

    /// Marks the turn over: the stream's end marker (`data: [DONE]`) arrived.
    fn end(&mut self);

    /// The whole turn, once the stream is over: an error if a call was left incomplete.
    fn finish(self: Box<Self>) -> Result<Turn, StreamError>;
}

/// The format of each built-in provider.
impl Provider {
    /// The provider's [`WireFormat`].
    pub fn format(self) -> Arc<dyn WireFormat> {
        match self {
            Provider::OpenAiChat => Arc::new(openai_chat::Format),
            Provider::OpenAiResponses => Arc::new(openai_responses::Format),
            Provider::Anthropic => Arc::new(anthropic::Format),
            Provider::Gemini => Arc::new(gemini::Format),
        }
    }
}

/// What a built-in provider's own accumulator adds to [`Streamed`]: its calls, its text, its
/// state, and the usage, end and errors its events carry.
pub(crate) trait ProviderStream: fmt::Debug + Send + 'static {
    /// Takes one event; returns the calls it completes.
    fn push(&mut self, event: &Value) -> Result<Vec<ToolCall>, StreamError>;
    /// Reads the usage, the end of the turn and error events from one event, before `push`.
    fn meta(
        &mut self,
        event: &Value,
        usage: &mut Usage,
        ended: &mut bool,
    ) -> Result<(), StreamError>;
    /// The text so far.
    fn text(&self) -> &str;
    /// What the next request must send back unchanged.
    fn provider_state(&self) -> Option<ProviderState>;
    /// Ends the stream.
    fn finish(self) -> Result<(), StreamError>;
}

/// A built-in provider's accumulator as a [`TurnStream`].
#[derive(Debug)]
pub(crate) struct Streamed<S> {
    stream: S,
    calls: Vec<ToolCall>,
    usage: Usage,
    ended: bool,
}

impl<S> Streamed<S> {
    pub(crate) fn boxed(stream: S) -> Box<dyn TurnStream>
    where
        S: ProviderStream,
    {
        Box::new(Streamed {
            stream,
            calls: Vec::new(),
            usage: Usage::default(),
            ended: false,
        })
    }
}

impl<S: ProviderStream> TurnStream for Streamed<S> {
    fn event(&mut self, event: &Value) -> Result<(), StreamError> {
        self.stream.meta(event, &mut self.usage, &mut self.ended)?;
        let calls = self.stream.push(event)?;
        self.calls.extend(calls);
        Ok(())
    }

    fn calls(&self) -> &[ToolCall] {
        &self.calls
    }

    fn ended(&self) -> bool {
        self.ended
    }

    fn end(&mut self) {
        self.ended = true;
    }

    fn finish(self: Box<Self>) -> Result<Turn, StreamError> {
        let Streamed {
            stream,
            calls,
            usage,
            ended: _,
        } = *self;
        let text = stream.text().to_owned();
        let provider = stream.provider_state();
        stream.finish()?;
        Ok(Turn {
            text: (!text.is_empty()).then_some(text),
            calls,
            usage,
            provider,
        })
    }
}

/// [`StreamError::Refused`] for an error event whose kind another attempt would meet again (a
/// request the provider refuses); `None` for a passing kind (overload, rate limit, server
/// error, timeout) or none named, which the caller reports as [`StreamError::Provider`].
pub(crate) fn refused(kind: &Value, message: &Value) -> Option<StreamError> {
    let kind = kind.as_str()?;
    let passing = matches!(
        kind.to_ascii_lowercase().as_str(),
        "server_error"
            | "rate_limit_exceeded"
            | "rate_limit_error"
            | "overloaded_error"
            | "api_error"
            | "timeout_error"
            | "vector_store_timeout"
            | "internal"
            | "unavailable"
            | "resource_exhausted"
            | "deadline_exceeded"
    );
    (!passing).then(|| StreamError::Refused {
        kind: kind.to_owned(),
        message: message.as_str().unwrap_or("(no message)").to_owned(),
    })
}

/// An error event's error: refused, or else worth another attempt.
pub(crate) fn error_event(kind: &Value, message: &Value) -> StreamError {
    refused(kind, message).unwrap_or_else(|| StreamError::Provider {
        message: message
            .as_str()
            .unwrap_or("an error event with no message")
            .to_owned(),
    })
}

/// Sets `key` unless the options set it.
pub(crate) fn default(body: &mut Map<String, Value>, key: &str, value: Value) {
    body.entry(key.to_owned()).or_insert(value);
}

/// The [`WireFormat`] methods a built-in format takes from its module's functions and stream
/// of the same names (`request`, `parse_turn`, `Stream`).
macro_rules! module_format {
    () => {
        fn request(
            &self,
            transcript: &[$crate::model::Message],
            tools: &$crate::providers::Advertised,
            options: &$crate::providers::RequestOptions,
        ) -> Result<serde_json::Value, $crate::providers::RequestError> {
            request(transcript, tools, options)
        }

        fn parse_turn(
            &self,
            body: &serde_json::Value,
            names: &$crate::providers::NameMap,
        ) -> Result<$crate::model::Turn, $crate::providers::ParseError> {
            parse_turn(body, names)
        }

        fn stream(
            &self,
            names: &$crate::providers::NameMap,
            max_call_bytes: usize,
        ) -> Box<dyn $crate::providers::TurnStream> {
            $crate::providers::format::Streamed::boxed(
                Stream::new(names).max_call_bytes(max_call_bytes),
            )
        }
    };
}
pub(crate) use module_format;

/// The [`ProviderStream`] methods a built-in stream has as its own (`push`, `text`, `finish`).
macro_rules! module_stream {
    () => {
        fn push(
            &mut self,
            event: &serde_json::Value,
        ) -> Result<Vec<$crate::ToolCall>, $crate::providers::StreamError> {
            Stream::push(self, event)
        }

        fn text(&self) -> &str {
            Stream::text(self)
        }

        fn finish(self) -> Result<(), $crate::providers::StreamError> {
            Stream::finish(self)
        }
    };
}
pub(crate) use module_stream;
