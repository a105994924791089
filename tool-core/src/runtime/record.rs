//! Stage 9: one span field and one event per call, then the outcome to the
//! [`Observer`](crate::observe::Observer).
//!
//! Argument values are never logged above `DEBUG`. The event that says how a call ended
//! (`INFO` for a refusal, `WARN` for a failed or doubtful execution) carries only the code,
//! inside the `tool_call` span with the tool, the call id and the runtime's id; for invalid
//! arguments it adds the keyword of each violation. The violations' pointers are logged at
//! `DEBUG` only: a pointer names the property it goes through, and the name of a map's key or
//! of an unknown field is the model's to choose, so it is an argument value too. A failure's
//! operator detail
//! (a handler's [`ToolError::with_detail`](crate::registry::ToolError::with_detail), a policy's
//! [`Denied`](crate::Denied) reason, a panic message) is written by code that may quote the
//! arguments, so it is logged only at `DEBUG`, as an event of its own; it is always in the
//! outcome ([`Failure::detail`](crate::Failure::detail)), under the same ids.

use crate::contract::error::ArgumentErrors;
use crate::outcome::{Code, Outcome};

pub(super) fn record(span: &tracing::Span, outcome: &Outcome) {
    span.record("outcome", outcome.code().map_or("ok", Code::as_str));
    span.record("elapsed_us", outcome.elapsed().as_micros() as u64);
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
                tracing::debug!(parent: span, code, violations = ?Locations(errors), "where the arguments were refused");
            } else if matches!(failure.code(), Code::ExecutionFailed | Code::OutcomeUnknown) {
                tracing::warn!(parent: span, code, "tool call failed");
            } else {
                tracing::info!(parent: span, code, "tool call refused");
            }
            if let Some(detail) = failure.detail() {
                tracing::debug!(parent: span, code, detail, "detail of the tool call's failure");
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
