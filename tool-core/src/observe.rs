//! What the runtime tells an observer: progress from running handlers and each call's
//! terminal outcome; and the `tracing` spans and events every call, model step and agent run
//! emits, named after the OpenTelemetry semantic conventions for generative AI.
//!
//! # Spans and events
//!
//! The names and attributes follow the OpenTelemetry GenAI semantic conventions, version
//! 1.37.0 (the `gen_ai` attribute registry, the `execute_tool`, `chat` and `invoke_agent`
//! spans, and the `gen_ai.client.*` metrics); attributes of this crate's own are under
//! `tool_core.`. The crate emits them through `tracing` and `metrics` only: a
//! `tracing-opentelemetry` layer turns the spans into OpenTelemetry spans (the `otel.name`,
//! `otel.kind` and `otel.status_code` fields set the span's name, kind and status), and
//! without a subscriber each costs a check of an atomic.
//!
//! | Span | Opened by | Attributes |
//! |------|-----------|------------|
//! | `invoke_agent` | each [`Agent::run`](crate::agent::Agent::run) | `gen_ai.operation.name`, `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`, `tool_core.agent.steps`, `tool_core.agent.tool_calls`, `tool_core.agent.end`, `error.type` |
//! | `chat {model}` | each model step of a run, and each model call of an HTTP model outside one | `gen_ai.operation.name`, `gen_ai.provider.name`, `gen_ai.request.model`, `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`, `gen_ai.response.finish_reasons`, `tool_core.step`, `tool_core.calls`, `error.type` |
//! | `execute_tool {tool}` | each [`Runtime::invoke`](crate::Runtime::invoke) | `gen_ai.operation.name`, `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.type`, `id` (the runtime's [`InvocationId`]), `error.type` (the outcome [`Code`](crate::Code)), `elapsed_us` |
//! | `tools/call` | each MCP `tools/call` the server answers (features `mcp` and `otel`), a child of the client's span when it sent a `traceparent` in `_meta` | `mcp.method.name` |
//!
//! Inside `execute_tool`, a `DEBUG` event for each decision, in order, its message the decision
//! and its `gen_ai.tool.stage` field too: `validated` or `refused` (with `violations`, their
//! count), `authorized` or `denied`, `approved`, `claimed` or `replayed`; the outcome's own
//! event follows. The repair loop adds a `repaired on attempt n` event (with
//! `gen_ai.tool.name`, `gen_ai.tool.call.id` and `attempt`) to the span it runs in, the
//! `invoke_agent` span of an agent. The provider and the model of a `chat` span are known to
//! models over HTTP (`tool_core::http::HttpModel`, feature `http`), which record
//! them; a scripted or custom model's step is named `chat`. Streamed, an HTTP model's step
//! gets a `first chunk` event (`tool_core.time_to_first_chunk_s`) when the first bytes of the
//! response arrive. The finish reason is `tool_calls` when the turn proposed calls and `stop`
//! otherwise. The OpenTelemetry span of a step is renamed `chat {model}` once the HTTP model
//! knows the model only with the `otel` feature (the layer takes `otel.name` only before a
//! span is first entered); without it the span keeps the name `chat`.
//!
//! None of them carries an argument value, a result, a violation's pointer (it names a key the
//! model chose) or the name of a tool that is not registered, unless the application turns
//! [content capture](set_capture_content) on. The events that quote such things for the
//! operator (a refusal's pointers, a failure's detail) have the target
//! [`CONTENT_TARGET`]: a layer exporting `tool_core` at `DEBUG` leaves them out with a
//! filter such as `tool_core=debug,tool_core::content=off`.
//!
//! # Trace context across processes
//!
//! With the `otel` feature and a propagator installed in `opentelemetry::global` (W3C
//! `TraceContextPropagator`), models over HTTP send the current step's `traceparent` (and
//! `tracestate`) with each request, and the MCP server continues the trace a client names in a
//! `tools/call` request's `_meta.traceparent`. Without the feature nothing is sent or read.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::outcome::{InvocationId, Outcome};

/// The `tracing` target of the events whose fields may quote arguments or names the model
/// chose: a refusal's pointers and a failure's operator detail, at `DEBUG`.
pub const CONTENT_TARGET: &str = "tool_core::content";

static CAPTURE_CONTENT: AtomicBool = AtomicBool::new(false);

/// Turns content capture on or off for the whole process (off by default).
///
/// With it on, the `execute_tool` span also carries `gen_ai.tool.call.arguments` and
/// `gen_ai.tool.call.result` (the result text of a successful call), its `refused` event the
/// violations' pointers, and a call to a name that is no registered tool that name as
/// `gen_ai.tool.name`. The conventions make these opt-in because they hold what the model and
/// the tools said; an application usually ties the switch to the
/// `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` environment variable.
pub fn set_capture_content(capture: bool) {
    CAPTURE_CONTENT.store(capture, Ordering::Relaxed);
}

/// Whether content capture is on ([`set_capture_content`]).
pub fn captures_content() -> bool {
    CAPTURE_CONTENT.load(Ordering::Relaxed)
}

/// A `chat` span for model step `step`, its provider and model left for the model to record.
pub(crate) fn chat_span(step: u32) -> tracing::Span {
    tracing::info_span!(
        "chat",
        gen_ai.operation.name = "chat",
        otel.name = "chat",
        otel.kind = "client",
        gen_ai.provider.name = tracing::field::Empty,
        gen_ai.request.model = tracing::field::Empty,
        gen_ai.usage.input_tokens = tracing::field::Empty,
        gen_ai.usage.output_tokens = tracing::field::Empty,
        gen_ai.response.finish_reasons = tracing::field::Empty,
        tool_core.step = step,
        tool_core.calls = tracing::field::Empty,
        error.type = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
    )
}

/// The `chat` span the current code runs in, if it runs in one.
#[cfg(feature = "http")]
pub(crate) fn current_chat_span() -> Option<tracing::Span> {
    let span = tracing::Span::current();
    span.metadata()
        .is_some_and(|meta| meta.name() == "chat" && meta.target() == module_path!())
        .then_some(span)
}

/// The W3C trace context headers (`traceparent`, `tracestate`) of the current span, by the
/// propagator installed in `opentelemetry::global`: none without one, or outside a span an
/// OpenTelemetry layer records.
#[cfg(all(feature = "otel", feature = "http"))]
pub(crate) fn trace_headers() -> Vec<(String, String)> {
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;

    struct Headers(Vec<(String, String)>);
    impl opentelemetry::propagation::Injector for Headers {
        fn set(&mut self, key: &str, value: String) {
            self.0.push((key.to_owned(), value));
        }
    }
    let cx = tracing::Span::current().context();
    let mut headers = Headers(Vec::new());
    opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.inject_context(&cx, &mut headers);
    });
    headers.0
}

/// Makes the trace context a caller sent (`traceparent`, and `tracestate` if any) the parent
/// of `span`, by the propagator installed in `opentelemetry::global`. A malformed value is
/// ignored: the span starts a trace of its own.
#[cfg(all(feature = "otel", feature = "mcp"))]
pub(crate) fn continue_trace(span: &tracing::Span, traceparent: &str, tracestate: Option<&str>) {
    use opentelemetry::trace::TraceContextExt as _;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;

    let mut carrier = std::collections::HashMap::new();
    carrier.insert("traceparent".to_owned(), traceparent.to_owned());
    if let Some(state) = tracestate {
        carrier.insert("tracestate".to_owned(), state.to_owned());
    }
    let parent =
        opentelemetry::global::get_text_map_propagator(|propagator| propagator.extract(&carrier));
    if parent.span().span_context().is_valid() {
        // Refused only once the span has started, which it has not.
        let _ = span.set_parent(parent);
    }
}

/// A count as a signed attribute: the OpenTelemetry attribute type for integers.
fn int(count: u64) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

/// What a model step answered, as its `chat` span records it.
pub(crate) struct ChatEnd {
    pub(crate) input_tokens: u64,
    pub(crate) output_tokens: u64,
    pub(crate) calls: usize,
}

/// Records how a model step ended on its `chat` span: the turn's usage, calls and finish
/// reason, or the `error.type`.
pub(crate) fn record_chat(span: &tracing::Span, result: Result<ChatEnd, &'static str>) {
    if span.is_disabled() {
        return;
    }
    match result {
        Ok(end) => {
            span.record("gen_ai.usage.input_tokens", int(end.input_tokens));
            span.record("gen_ai.usage.output_tokens", int(end.output_tokens));
            span.record("tool_core.calls", int(end.calls as u64));
            // The reason as the turn tells it: it proposed calls, or it answered.
            let reason = if end.calls == 0 { "stop" } else { "tool_calls" };
            span.record("gen_ai.response.finish_reasons", reason);
        }
        Err(error) => {
            span.record("error.type", error);
            span.record("otel.status_code", "error");
        }
    }
}

/// Receives [`Event`]s as they happen. Any `Fn(Event<'_>) + Send + Sync` closure is an observer.
///
/// For one call, progress events arrive in order with increasing `seq` and `progress`, all
/// before the call's [`Event::Outcome`], and nothing arrives after it.
pub trait Observer: Send + Sync + 'static {
    /// Handles one event. Called on the task running the call; keep it quick.
    fn on_event(&self, event: Event<'_>);
}

impl<F: Fn(Event<'_>) + Send + Sync + 'static> Observer for F {
    fn on_event(&self, event: Event<'_>) {
        self(event);
    }
}

/// Something that happened to a call.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Event<'a> {
    /// A running handler reported progress.
    Progress(&'a Progress<'a>),
    /// The call's terminal outcome; the last event for this call.
    Outcome(&'a Outcome),
}

/// A progress report from a running handler.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress<'a> {
    pub(crate) id: InvocationId,
    pub(crate) call_id: &'a str,
    pub(crate) tool: &'a str,
    pub(crate) seq: u64,
    pub(crate) progress: f64,
    pub(crate) total: Option<f64>,
    pub(crate) message: Option<&'a str>,
}

impl<'a> Progress<'a> {
    /// The runtime's id of the call.
    pub fn id(&self) -> InvocationId {
        self.id
    }

    /// The provider's id of the call.
    pub fn call_id(&self) -> &'a str {
        self.call_id
    }

    /// The tool running.
    pub fn tool(&self) -> &'a str {
        self.tool
    }

    /// 1 for the first report of this call, then 2, 3, …
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// How far the work is; larger than in every earlier report of this call.
    pub fn progress(&self) -> f64 {
        self.progress
    }

    /// The value of `progress` at completion, when the handler knows it.
    pub fn total(&self) -> Option<f64> {
        self.total
    }

    /// A short human-readable status from the handler.
    pub fn message(&self) -> Option<&'a str> {
        self.message
    }
}
