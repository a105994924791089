//! The model's side of the repair loop: [`RepairModel`] is asked for new arguments with a
//! [`RepairRequest`] and answers with text or a [`ModelError`].

use std::future::Future;

use serde_json::Value;

use crate::ArgumentErrors;
use crate::model::{ModelError, Usage};

/// The model side of the repair loop: given what was wrong, return new argument text.
///
/// Adapters for real providers send [`RepairRequest::feedback`] (or their own rendering of
/// [`RepairRequest::errors`]) back to the model as the tool result and return the arguments of
/// its next call to the same tool. `testing::ScriptedModel` (feature `test-util`)
/// answers from a queue, for tests and demos.
pub trait RepairModel: Send + Sync {
    /// New arguments for `request.tool()`, as JSON text (or free text, for calls that were
    /// extracted from free text).
    fn repair(
        &self,
        request: &RepairRequest<'_>,
    ) -> impl Future<Output = Result<String, ModelError>> + Send;

    /// The tokens the model has spent on repairs since this was last called, taken so that
    /// each is counted once. The agent loop adds them to the run's usage after each batch, so
    /// its token and cost budgets count repairs too. The default reports none.
    fn take_usage(&self) -> Usage {
        Usage::default()
    }
}

/// What the model is asked to fix.
#[derive(Debug, Clone, Copy)]
pub struct RepairRequest<'a> {
    pub(super) tool: &'a str,
    pub(super) schema: &'a Value,
    pub(super) previous: &'a str,
    pub(super) errors: &'a ArgumentErrors,
    pub(super) feedback: &'a str,
    pub(super) attempt: u32,
    pub(super) max_attempts: u32,
    pub(super) hint: Option<&'a str>,
}

impl<'a> RepairRequest<'a> {
    /// The tool being called.
    pub fn tool(&self) -> &'a str {
        self.tool
    }

    /// The input schema the model was shown.
    pub fn schema(&self) -> &'a Value {
        self.schema
    }

    /// The argument text that was refused.
    pub fn previous(&self) -> &'a str {
        self.previous
    }

    /// The violations, with their JSON Pointers and keywords (all of them counted, the first
    /// held in full: see [`ArgumentErrors`]).
    pub fn errors(&self) -> &'a ArgumentErrors {
        self.errors
    }

    /// The violations rendered as a short message for the model, with the hint, if any. The
    /// violations take at most [`ArgumentErrors::MAX_SHOWN`] lines, then one line counting the
    /// rest by keyword.
    pub fn feedback(&self) -> &'a str {
        self.feedback
    }

    /// The number of the attempt being asked for: 2 for the first repair.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The most attempts this call may take, the first included.
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The tool's repair hint from the [`RepairPolicy`](crate::repair::RepairPolicy), if it has one.
    pub fn hint(&self) -> Option<&'a str> {
        self.hint
    }
}

impl<M: RepairModel> RepairModel for std::sync::Arc<M> {
    fn repair(
        &self,
        request: &RepairRequest<'_>,
    ) -> impl Future<Output = Result<String, ModelError>> + Send {
        (**self).repair(request)
    }

    fn take_usage(&self) -> Usage {
        (**self).take_usage()
    }
}
