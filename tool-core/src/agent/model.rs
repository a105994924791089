//! The model side of the agent loop, and two stand-ins: a script and a recording.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Mutex;

use super::transcript::{Message, Turn};
use crate::registry::ToolInfo;
use crate::repair::ModelError;
use crate::sync::lock;

/// A chat model that can propose tool calls. One method: given the transcript and the tools it
/// may call, return the next assistant turn.
pub trait Model: Send + Sync {
    /// The next turn.
    fn respond(
        &self,
        request: &ModelRequest<'_>,
    ) -> impl Future<Output = Result<Turn, ModelError>> + Send;
}

/// What the model is given for one step.
#[derive(Debug, Clone)]
pub struct ModelRequest<'a> {
    pub(crate) transcript: &'a [Message],
    pub(crate) tools: Vec<&'a ToolInfo>,
    pub(crate) step: u32,
}

impl<'a> ModelRequest<'a> {
    /// The transcript so far.
    pub fn transcript(&self) -> &'a [Message] {
        self.transcript
    }

    /// The tools the model may call: empty for the final wrap-up turn after a guard ended
    /// the run.
    pub fn tools(&self) -> &[&'a ToolInfo] {
        &self.tools
    }

    /// The step number: 1 for the first model call of the run.
    pub fn step(&self) -> u32 {
        self.step
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
                Message::Assistant { text, calls, usage } => Some(Turn {
                    text: text.clone(),
                    calls: calls.clone(),
                    usage: *usage,
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
            step: request.step,
            transcript_len: request.transcript.len(),
            tools: request.tools.iter().map(|t| t.name().to_owned()).collect(),
        });
        let turn = lock(&self.turns)
            .pop_front()
            .ok_or_else(|| ModelError::new("the script has no more turns"));
        std::future::ready(turn)
    }
}
