//! The model side of the agent loop: the one-method [`Model`] trait and what it is given.

use std::future::Future;

use super::ModelError;
use super::transcript::{Message, Turn};
use crate::context::Context;
use crate::registry::ToolInfo;

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
    pub(crate) declared: Vec<&'a ToolInfo>,
    pub(crate) answer_only: bool,
    pub(crate) step: u32,
    pub(crate) context: Option<&'a Context>,
}

impl<'a> ModelRequest<'a> {
    /// A request for the turn after `transcript`, offering `tools` (declared too): step 1,
    /// not the wrap-up turn, outside a run. For a model's own tests, or a wrapper that asks
    /// another model on its own.
    ///
    /// ```
    /// use tool_core::model::{Message, ModelRequest};
    /// use tool_core::{Registry, Context};
    ///
    /// let registry = Registry::new();
    /// let transcript = [Message::User { text: "Hello".into() }];
    /// let cx = Context::builder("user-1").build();
    /// let request = ModelRequest::new(&transcript, registry.tools().collect())
    ///     .with_step(3)
    ///     .with_context(&cx);
    /// assert_eq!(request.transcript().len(), 1);
    /// assert_eq!(request.step(), 3);
    /// assert!(!request.answer_only());
    /// assert!(request.tools().is_empty() && request.declared_tools().is_empty());
    /// assert_eq!(request.context().map(Context::principal), Some("user-1"));
    /// ```
    pub fn new(transcript: &'a [Message], tools: Vec<&'a ToolInfo>) -> Self {
        ModelRequest {
            transcript,
            declared: tools.clone(),
            tools,
            answer_only: false,
            step: 1,
            context: None,
        }
    }

    /// Declares `tools` besides those offered (see [`declared_tools`](Self::declared_tools)).
    pub fn with_declared_tools(mut self, tools: Vec<&'a ToolInfo>) -> Self {
        self.declared = tools;
        self
    }

    /// Makes it the wrap-up turn after a guard ended the run: no tools are offered (see
    /// [`answer_only`](Self::answer_only)).
    pub fn with_answer_only(mut self) -> Self {
        self.answer_only = true;
        self.tools.clear();
        self
    }

    /// Sets the step number (see [`step`](Self::step)).
    pub fn with_step(mut self, step: u32) -> Self {
        self.step = step;
        self
    }

    /// Sets the run's context (see [`context`](Self::context)).
    pub fn with_context(mut self, context: &'a Context) -> Self {
        self.context = Some(context);
        self
    }

    /// The transcript so far.
    pub fn transcript(&self) -> &'a [Message] {
        self.transcript
    }

    /// The tools the model may call: empty for the final wrap-up turn after a guard ended
    /// the run.
    pub fn tools(&self) -> &[&'a ToolInfo] {
        &self.tools
    }

    /// Whether this is the wrap-up turn after a guard ended the run: the model is to answer in
    /// text, and calls it proposes are dropped.
    pub fn answer_only(&self) -> bool {
        self.answer_only
    }

    /// Every tool of the runtime, on the wrap-up turn too. A provider that must see the tools
    /// the transcript's calls used (Anthropic refuses `tool_use` blocks in a request that
    /// defines no tools) declares these and forbids calls instead of leaving them out.
    pub fn declared_tools(&self) -> &[&'a ToolInfo] {
        &self.declared
    }

    /// The step number: 1 for the first model call of the run.
    pub fn step(&self) -> u32 {
        self.step
    }

    /// The run's context: its deadline and cancellation bound the model call too (the agent
    /// stops waiting for a model at either; a model that makes requests of its own should
    /// end them there). `None` outside a run.
    pub fn context(&self) -> Option<&'a Context> {
        self.context
    }
}
