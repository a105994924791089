//! Stand-ins for models, for tests, examples and replays: [`ScriptedModel`] answers repair
//! requests from a queue, [`ScriptedTurns`] plays an agent's turns from a queue or from a
//! recorded transcript. Both record what they were asked. And [`ledger_suite`]: the rules a
//! [`Ledger`](crate::ledger::Ledger) of your own must keep, checked on it.
//!
//! Enabled by the `test-util` feature:
//!
//! ```toml
//! [dev-dependencies]
//! tool-core = { version = "0.1", features = ["test-util"] }
//! ```

pub mod ledger_suite;

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Mutex;

use crate::ArgumentErrors;
use crate::model::ModelError;
use crate::model::{Message, Model, ModelRequest, Turn};
use crate::repair::{RepairModel, RepairRequest};
use crate::sync::lock;

/// A [`RepairModel`] that answers from a queue and records every request: for tests, demos
/// and replays.
///
/// ```
/// use tool_core::testing::ScriptedModel;
///
/// let model = ScriptedModel::new()
///     .answer(r#"{"city": "Paris"}"#)
///     .fail("rate limited");
/// assert_eq!(model.remaining(), 2);
/// assert!(model.requests().is_empty());
/// ```
#[derive(Debug, Default)]
pub struct ScriptedModel {
    answers: Mutex<VecDeque<Result<String, ModelError>>>,
    requests: Mutex<Vec<RecordedRequest>>,
}

/// A repair request as [`ScriptedModel`] recorded it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RecordedRequest {
    /// The tool.
    pub tool: String,
    /// The refused argument text.
    pub previous: String,
    /// The violations.
    pub errors: ArgumentErrors,
    /// The rendered feedback.
    pub feedback: String,
    /// The attempt asked for.
    pub attempt: u32,
    /// The bound on attempts.
    pub max_attempts: u32,
    /// The hint, if any.
    pub hint: Option<String>,
}

impl ScriptedModel {
    /// A model with no answers queued.
    pub fn new() -> Self {
        ScriptedModel::default()
    }

    /// Queues an answer.
    pub fn answer(self, text: impl Into<String>) -> Self {
        self.push(Ok(text.into()));
        self
    }

    /// Queues a failure.
    pub fn fail(self, message: impl Into<String>) -> Self {
        self.push(Err(ModelError::new(message)));
        self
    }

    /// Queues an answer on a shared model.
    pub fn push(&self, answer: Result<String, ModelError>) {
        lock(&self.answers).push_back(answer);
    }

    /// How many queued answers are left.
    pub fn remaining(&self) -> usize {
        lock(&self.answers).len()
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.requests).clone()
    }
}

impl RepairModel for ScriptedModel {
    fn repair(
        &self,
        request: &RepairRequest<'_>,
    ) -> impl Future<Output = Result<String, ModelError>> + Send {
        lock(&self.requests).push(RecordedRequest {
            tool: request.tool().to_owned(),
            previous: request.previous().to_owned(),
            errors: request.errors().clone(),
            feedback: request.feedback().to_owned(),
            attempt: request.attempt(),
            max_attempts: request.max_attempts(),
            hint: request.hint().map(str::to_owned),
        });
        let answer = lock(&self.answers)
            .pop_front()
            .unwrap_or_else(|| Err(ModelError::new("the script has no more answers")));
        std::future::ready(answer)
    }
}

/// A step as [`ScriptedTurns`] saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenStep {
    /// The step number.
    pub step: u32,
    /// How many transcript entries it was given.
    pub transcript_len: usize,
    /// The names of the tools it was offered.
    pub tools: Vec<String>,
    /// Whether it was the wrap-up turn ([`ModelRequest::answer_only`]).
    pub answer_only: bool,
    /// The names of the tools declared ([`ModelRequest::declared_tools`]).
    pub declared: Vec<String>,
}

/// A [`Model`] that plays queued turns in order and records what it was asked: for tests,
/// examples and replays. When the queue is empty it fails.
#[derive(Debug, Default)]
pub struct ScriptedTurns {
    turns: Mutex<VecDeque<Turn>>,
    seen: Mutex<Vec<SeenStep>>,
}

impl ScriptedTurns {
    /// No turns queued.
    pub fn new() -> Self {
        ScriptedTurns::default()
    }

    /// Queues a turn.
    pub fn turn(self, turn: Turn) -> Self {
        lock(&self.turns).push_back(turn);
        self
    }

    /// The turns of a recorded transcript's assistant messages, in order: replaying them
    /// reproduces the run.
    pub fn from_transcript(transcript: &[Message]) -> Self {
        let turns = transcript
            .iter()
            .filter_map(|message| match message {
                Message::Assistant {
                    text,
                    calls,
                    usage,
                    provider,
                } => Some(Turn {
                    text: text.clone(),
                    calls: calls.clone(),
                    usage: *usage,
                    provider: provider.clone(),
                }),
                _ => None,
            })
            .collect();
        ScriptedTurns {
            turns: Mutex::new(turns),
            seen: Mutex::new(Vec::new()),
        }
    }

    /// Every step asked so far.
    pub fn seen(&self) -> Vec<SeenStep> {
        lock(&self.seen).clone()
    }

    /// Turns not yet played.
    pub fn remaining(&self) -> usize {
        lock(&self.turns).len()
    }
}

impl Model for ScriptedTurns {
    fn respond(
        &self,
        request: &ModelRequest<'_>,
    ) -> impl Future<Output = Result<Turn, ModelError>> + Send {
        lock(&self.seen).push(SeenStep {
            step: request.step(),
            transcript_len: request.transcript().len(),
            tools: request
                .tools()
                .iter()
                .map(|t| t.name().to_owned())
                .collect(),
            answer_only: request.answer_only(),
            declared: request
                .declared_tools()
                .iter()
                .map(|t| t.name().to_owned())
                .collect(),
        });
        let turn = lock(&self.turns)
            .pop_front()
            .ok_or_else(|| ModelError::new("the script has no more turns"));
        std::future::ready(turn)
    }
}
