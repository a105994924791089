//! Stage 9: the call's span fields and one event per call, then the outcome to the
//! [`Observer`](crate::observe::Observer). Also the `execute_tool` span itself and the events
//! the stages emit inside it (see [Spans and events](crate::observe#spans-and-events)).
//!
//! Argument values are never logged above `DEBUG`. The event that says how a call ended
//! (`INFO` for a refusal, `WARN` for a failed or doubtful execution) carries only the code,
//! inside the `execute_tool` span with the tool, the call id and the runtime's id; for invalid
//! arguments it adds the keyword of each violation. The violations' pointers are logged at
//! `DEBUG` only, under the target [`CONTENT_TARGET`]: a pointer names the property it goes
//! through, and the name of a map's key or of an unknown field is the model's to choose, so it
//! is an argument value too. A failure's operator detail
//! (a handler's [`ToolError::with_detail`](crate::registry::ToolError::with_detail), a policy's
//! [`Denied`](crate::Denied) reason, a panic message) is written by code that may quote the
//! arguments, so it is logged only at `DEBUG`, as an event of its own under the same target;
//! it is always in the outcome ([`Failure::detail`](crate::Failure::detail)), under the same
//! ids. The stage events (`DEBUG`) carry no value, pointer or model-chosen name unless content
//! capture is on ([`set_capture_content`](crate::observe::set_capture_content)).

use std::fmt;

use serde_json::Value;

use crate::contract::arguments::Arguments;
use crate::contract::error::ArgumentErrors;
use crate::observe::{CONTENT_TARGET, captures_content};
use crate::outcome::InvocationId;
use crate::outcome::{Code, Outcome};

/// The `execute_tool` span of one call: `registered` is the tool's name when `tool` names a
/// registered tool.
pub(super) fn span(
    registered: Option<&str>,
    tool: &str,
    call_id: &str,
    id: InvocationId,
) -> tracing::Span {
    tracing::info_span!(
        "execute_tool",
        // The name of a tool that does not exist is the model's to choose.
        gen_ai.tool.name = registered.or_else(|| captures_content().then_some(tool)),
        gen_ai.tool.call.id = call_id,
        id = %id,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.type = "function",
        otel.name = %SpanName(registered),
        otel.kind = "internal",
        error.type = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
        elapsed_us = tracing::field::Empty,
        gen_ai.tool.call.arguments = tracing::field::Empty,
        gen_ai.tool.call.result = tracing::field::Empty,
    )
}

/// Records the arguments on the call's span when content capture is on.
pub(super) fn arguments(span: &tracing::Span, arguments: Arguments<'_>) {
    if span.is_disabled() || !captures_content() {
        return;
    }
    match arguments {
        Arguments::Text(text) => {
            span.record("gen_ai.tool.call.arguments", text);
        }
        // Written out only when shallow enough to write without deep recursion.
        Arguments::Json(value) if !deeper_than(value, crate::contract::MAX_DEPTH) => {
            span.record("gen_ai.tool.call.arguments", tracing::field::display(value));
        }
        Arguments::Json(_) => {}
    }
}

/// One stage's decision, as a `DEBUG` event inside the call's span.
pub(super) fn stage(decision: &'static str) {
    tracing::debug!(gen_ai.tool.stage = decision, "{decision}");
}

/// The `refused` stage event: the count of violations, and their pointers only when content
/// capture is on.
pub(super) fn refused(errors: &ArgumentErrors) {
    if captures_content() {
        tracing::debug!(
            gen_ai.tool.stage = "refused",
            violations = errors.len(),
            pointers = ?Locations(errors),
            "refused"
        );
    } else {
        tracing::debug!(
            gen_ai.tool.stage = "refused",
            violations = errors.len(),
            "refused"
        );
    }
}

/// `execute_tool {name}`, or `execute_tool` for a name that is no registered tool.
struct SpanName<'a>(Option<&'a str>);

impl fmt::Display for SpanName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(name) => write!(f, "execute_tool {name}"),
            None => f.write_str("execute_tool"),
        }
    }
}

/// Whether `value` nests arrays and objects deeper than `max`, found without recursion.
fn deeper_than(value: &Value, max: u32) -> bool {
    let mut stack = vec![(value, 0u32)];
    while let Some((value, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        if depth + 1 > max {
            return true;
        }
        stack.extend(children.map(|child| (child, depth + 1)));
    }
    false
}

pub(super) fn record(span: &tracing::Span, outcome: &Outcome) {
    span.record(
        "elapsed_us",
        i64::try_from(outcome.elapsed().as_micros()).unwrap_or(i64::MAX),
    );
    if let Some(code) = outcome.code() {
        span.record("error.type", code.as_str());
        span.record("otel.status_code", "error");
    } else if let Some(output) = outcome.output()
        && !span.is_disabled()
        && captures_content()
    {
        span.record("gen_ai.tool.call.result", output.as_str());
    }
    if outcome.is_replay() {
        tracing::info!(parent: span, "tool call answered from the ledger; nothing ran");
        return;
    }
    match outcome.failure() {
        None => tracing::debug!(parent: span, "tool call succeeded"),
        Some(failure) => {
            let code = failure.code().as_str();
            if let Some(errors) = failure.errors() {
                // Rendered only if a subscriber takes the event.
                tracing::info!(parent: span, code, keywords = ?Keywords(errors), "tool call refused");
                tracing::debug!(target: CONTENT_TARGET, parent: span, code, violations = ?Locations(errors), "where the arguments were refused");
            } else if matches!(failure.code(), Code::ExecutionFailed | Code::OutcomeUnknown) {
                tracing::warn!(parent: span, code, "tool call failed");
            } else {
                tracing::info!(parent: span, code, "tool call refused");
            }
            if let Some(detail) = failure.detail() {
                tracing::debug!(target: CONTENT_TARGET, parent: span, code, detail, "detail of the tool call's failure");
            }
        }
    }
}

/// The keyword of each violation: `["enum"]`.
struct Keywords<'a>(&'a ArgumentErrors);

impl std::fmt::Debug for Keywords<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|v| v.keyword().to_string()))
            .finish()
    }
}

/// The pointer and keyword of each violation, without the values: `["/units enum"]`.
struct Locations<'a>(&'a ArgumentErrors);

impl std::fmt::Debug for Locations<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(
                self.0
                    .iter()
                    .map(|v| format!("{} {}", v.pointer(), v.keyword())),
            )
            .finish()
    }
}
