//! What the runtime tells an observer: progress from running handlers and each call's
//! terminal outcome. (Every call is also a `tracing` span named `tool_call`.)

use crate::outcome::{InvocationId, Outcome};

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
