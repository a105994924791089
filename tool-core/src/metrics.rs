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
/// Each recorded call also updates these `metrics` counters, labelled with `tool`:
/// `tool_calls_total`, `tool_calls_first_pass_total`, `tool_calls_repaired_total`,
/// `tool_call_attempts_total`, and `tool_calls_failed_total` (also labelled with `reason`, the
/// outcome code); and the histogram `tool_call_attempts`.
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
        {
            let mut state = crate::sync::lock(&self.state);
            state.overall.add(call);
            match state.tools.get_mut(tool) {
                Some(counts) => counts.add(call),
                None => state.tools.entry(tool.to_owned()).or_default().add(call),
            }
        }
        let tool = tool.to_owned();
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
}
