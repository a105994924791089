//! Counts of what happened to calls in the repair loop, per tool and overall: as a snapshot,
//! and exported through the `metrics` crate's facade so any installed exporter picks them up.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Counts of the calls that went through a [`RepairLoop`](crate::repair::RepairLoop): how many were
/// valid on the first pass, repaired, or failed, and how many attempts they took. It is fed
/// only by the repair loops it is handed to ([`RepairLoop::metrics`](crate::repair::RepairLoop::metrics));
/// calls made with [`Runtime::invoke`](crate::Runtime::invoke) directly are not counted (an
/// [`Observer`](crate::observe::Observer) sees every outcome). Cheap to clone: the clones share the
/// counts.
///
/// Every call of a repair loop (and so of an [`Agent`](crate::agent::Agent)), whether or not a
/// `Metrics` is attached, also updates these counters of the `metrics` facade, labelled with
/// `tool`: `tool_calls_total`, `tool_calls_first_pass_total`, `tool_calls_repaired_total`,
/// `tool_call_attempts_total`, and `tool_calls_failed_total` (also labelled with `reason`, the
/// outcome code: refusals and failures by code); and the histogram `tool_call_attempts`. The
/// first-pass, repair and failure rates per tool are the ratios of these counters to
/// `tool_calls_total`. Models over HTTP (feature `http`) add the GenAI conventions'
/// `gen_ai.client.operation.duration` (seconds) and `gen_ai.client.token.usage` (by
/// `gen_ai.token.type`) histograms, labelled with the operation, the provider and the model
/// the application configured.
///
/// Only the names of registered tools become `tool` labels and snapshot entries. A call to any
/// other name (a model may invent a new one on every call) is counted under the one shared
/// name [`Metrics::UNREGISTERED`], so the number of series and entries is bounded by the
/// registry: at most one per registered tool, plus one.
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    state: Arc<Mutex<MetricsSnapshot>>,
}

/// The counts at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetricsSnapshot {
    /// Every tool together.
    pub overall: Counts,
    /// Per registered tool name. Calls to names that are not registered tools are counted
    /// together under [`Metrics::UNREGISTERED`].
    pub tools: BTreeMap<String, Counts>,
}

/// Counts for one tool or for all of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    /// Calls that went through the loop.
    pub calls: u64,
    /// Calls whose first arguments were valid.
    pub first_pass: u64,
    /// Calls whose arguments became valid after at least one repair.
    pub repaired: u64,
    /// Calls whose outcome was not a success, whatever the stage.
    pub failed: u64,
    /// `failed`, by outcome code (`"invalid_arguments"`, `"unknown_tool"`, …).
    pub failed_by: BTreeMap<&'static str, u64>,
    /// Argument texts checked, the first included.
    pub attempts: u64,
}

impl Counts {
    /// `first_pass / calls` (0 when there were no calls).
    pub fn first_pass_rate(&self) -> f64 {
        ratio(self.first_pass, self.calls)
    }

    /// `repaired / calls`.
    pub fn repaired_rate(&self) -> f64 {
        ratio(self.repaired, self.calls)
    }

    /// `failed / calls`.
    pub fn failure_rate(&self) -> f64 {
        ratio(self.failed, self.calls)
    }

    /// `attempts / calls`.
    pub fn mean_attempts(&self) -> f64 {
        ratio(self.attempts, self.calls)
    }

    fn add(&mut self, call: &CallRecord<'_>) {
        self.calls += 1;
        self.attempts += u64::from(call.attempts);
        if call.first_pass {
            self.first_pass += 1;
        }
        if call.repaired {
            self.repaired += 1;
        }
        if let Some(code) = call.failed {
            self.failed += 1;
            *self.failed_by.entry(code).or_default() += 1;
        }
    }
}

fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// What the repair loop reports about one call.
pub(crate) struct CallRecord<'a> {
    /// The tool's name, `None` when the call named no registered tool.
    pub(crate) tool: Option<&'a str>,
    pub(crate) attempts: u32,
    pub(crate) first_pass: bool,
    pub(crate) repaired: bool,
    pub(crate) failed: Option<&'static str>,
}

impl Metrics {
    /// The `tool` label and snapshot key shared by every call to a name that is not a
    /// registered tool. It holds a space, which a registered tool's name cannot, so it never
    /// mixes with a real tool.
    pub const UNREGISTERED: &'static str = "<unregistered tool>";

    /// Empty counts.
    pub fn new() -> Self {
        Metrics::default()
    }

    /// The counts now.
    pub fn snapshot(&self) -> MetricsSnapshot {
        crate::sync::lock(&self.state).clone()
    }

    pub(crate) fn record(&self, call: &CallRecord<'_>) {
        let tool = call.tool.unwrap_or(Metrics::UNREGISTERED);
        let mut state = crate::sync::lock(&self.state);
        state.overall.add(call);
        match state.tools.get_mut(tool) {
            Some(counts) => counts.add(call),
            None => state.tools.entry(tool.to_owned()).or_default().add(call),
        }
    }
}

/// Updates the `metrics` facade's counters for one call of the repair loop (with or without a
/// [`Metrics`] handle attached); `name` is the registered tool's name, shared by every label.
pub(crate) fn emit(call: &CallRecord<'_>, name: Option<&std::sync::Arc<str>>) {
    let tool = match name {
        Some(name) => ::metrics::SharedString::from_shared(Arc::clone(name)),
        None => ::metrics::SharedString::const_str(Metrics::UNREGISTERED),
    };
    ::metrics::counter!("tool_calls_total", "tool" => tool.clone()).increment(1);
    ::metrics::counter!("tool_call_attempts_total", "tool" => tool.clone())
        .increment(u64::from(call.attempts));
    ::metrics::histogram!("tool_call_attempts", "tool" => tool.clone())
        .record(f64::from(call.attempts));
    if call.first_pass {
        ::metrics::counter!("tool_calls_first_pass_total", "tool" => tool.clone()).increment(1);
    }
    if call.repaired {
        ::metrics::counter!("tool_calls_repaired_total", "tool" => tool.clone()).increment(1);
    }
    if let Some(reason) = call.failed {
        ::metrics::counter!("tool_calls_failed_total", "tool" => tool, "reason" => reason)
            .increment(1);
    }
}

/// What one model call (a `chat` operation) reports to the `metrics` facade, by the GenAI
/// conventions.
#[cfg(feature = "http")]
pub(crate) struct ChatRecord<'a> {
    pub(crate) provider: &'static str,
    pub(crate) model: &'a str,
    pub(crate) seconds: f64,
    /// The tokens, when the call succeeded.
    pub(crate) usage: Option<crate::model::Usage>,
    /// The `error.type` when it failed.
    pub(crate) error: Option<&'static str>,
}

/// Records `gen_ai.client.operation.duration` and, for a call that answered,
/// `gen_ai.client.token.usage` (once per token type).
#[cfg(feature = "http")]
pub(crate) fn emit_chat(chat: &ChatRecord<'_>) {
    let model = chat.model.to_owned();
    match chat.error {
        None => ::metrics::histogram!(
            "gen_ai.client.operation.duration",
            "gen_ai.operation.name" => "chat",
            "gen_ai.provider.name" => chat.provider,
            "gen_ai.request.model" => model.clone(),
        )
        .record(chat.seconds),
        Some(error) => ::metrics::histogram!(
            "gen_ai.client.operation.duration",
            "gen_ai.operation.name" => "chat",
            "gen_ai.provider.name" => chat.provider,
            "gen_ai.request.model" => model.clone(),
            "error.type" => error,
        )
        .record(chat.seconds),
    }
    if let Some(usage) = chat.usage {
        for (kind, tokens) in [
            ("input", usage.input_tokens),
            ("output", usage.output_tokens),
        ] {
            ::metrics::histogram!(
                "gen_ai.client.token.usage",
                "gen_ai.operation.name" => "chat",
                "gen_ai.provider.name" => chat.provider,
                "gen_ai.request.model" => model.clone(),
                "gen_ai.token.type" => kind,
            )
            .record(tokens as f64);
        }
    }
}
