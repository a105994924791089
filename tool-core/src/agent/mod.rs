//! The agent loop: ask the model, run the calls it proposes through the runtime (and the
//! repair loop), record the results in the transcript, and repeat until the model answers
//! without calls or a guard ends the run.
//!
//! Steps are counted from 1: the first model call of a run is step 1, so `max_steps(3)` allows
//! three model calls and stops before a fourth. The optional wrap-up turn after a guard fires
//! (see [`Agent::wrap_up`]) is not counted.

mod batch;
mod cost;
mod stored;

use std::collections::HashMap;
use std::sync::Arc;

use tracing::Instrument as _;

pub use cost::Prices;
pub use stored::{load_run, remove_run, store_run};

use crate::approval::{Approvals, PendingApproval};
use crate::call::ToolCall;
use crate::context::{Context, Stopped};
use crate::model::{Message, Model, ModelError, ModelRequest, ToolResult, Turn, Usage};
use crate::outcome::{Code, Outcome};
use crate::repair::{RepairLoop, RepairModel, RepairPolicy, RepairRequest};
use crate::runtime::Runtime;

/// Why a run ended before the model answered on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Guard {
    /// `max_steps` model calls were made.
    MaxSteps(u32),
    /// The run's tool-call budget was used up and the model asked for more.
    MaxToolCalls(u32),
    /// The context's deadline passed.
    Deadline,
    /// The context was cancelled.
    Cancelled,
    /// The token budget was used up.
    TokenBudget {
        /// The budget.
        limit: u64,
        /// Tokens used.
        used: u64,
    },
    /// The money budget was used up: the run's tokens, priced with the agent's [`Prices`],
    /// came to at least the budget. Amounts are in millionths of the prices' currency unit.
    CostBudget {
        /// The budget.
        limit_micros: u64,
        /// What the run's tokens cost.
        spent_micros: u64,
    },
    /// The model proposed the same call (tool and canonical arguments) too many times.
    RepeatedCall {
        /// The tool.
        tool: String,
        /// How many times the call was proposed.
        times: u32,
    },
    /// A terminal tool succeeded.
    TerminalTool(String),
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RunEnd {
    /// The model answered without proposing calls.
    Answered,
    /// A guard ended the run.
    Guard(Guard),
    /// The model failed to respond.
    ModelFailed(String),
    /// Calls need approval: approve or deny them, then [`Agent::run`] again with the
    /// transcript to resume.
    AwaitingApproval(Vec<PendingApproval>),
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// The transcript, complete up to where the run ended.
    pub transcript: Vec<Message>,
    /// How it ended.
    pub end: RunEnd,
    /// Model calls made, this run and the ones it resumed.
    pub steps: u32,
    /// Tool calls admitted to the runtime.
    pub tool_calls: u32,
    /// Tokens used.
    pub usage: Usage,
    /// The outcome of every call run by this invocation, in the order they were proposed.
    pub outcomes: Vec<Outcome>,
}

/// How the calls of one step run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchPolicy {
    concurrency: usize,
    cancel_siblings: bool,
}

impl BatchPolicy {
    /// One after the other, in the order proposed (the default).
    pub const SEQUENTIAL: BatchPolicy = BatchPolicy {
        concurrency: 1,
        cancel_siblings: false,
    };

    /// Up to `limit` at once (at least 1). Results stay in the order proposed.
    pub fn concurrent(limit: usize) -> Self {
        BatchPolicy {
            concurrency: limit.max(1),
            cancel_siblings: false,
        }
    }

    /// When one call of the batch fails, cancel the others: running ones are stopped (their
    /// outcome says so), waiting ones never start. By default each call stands alone.
    pub fn cancel_siblings_on_failure(mut self, cancel: bool) -> Self {
        self.cancel_siblings = cancel;
        self
    }
}

/// A [`RepairModel`] that never repairs: with it, refused arguments go back to the model in
/// the transcript and its next step proposes a fix.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoRepair;

impl RepairModel for NoRepair {
    fn repair(
        &self,
        _: &RepairRequest<'_>,
    ) -> impl std::future::Future<Output = Result<String, ModelError>> + Send {
        std::future::ready(Err(ModelError::new("repairs are not enabled")))
    }
}

/// Runs a model against a runtime's tools, under guards.
///
/// ```
/// use tool_core::agent::{Agent, RunEnd};
/// use tool_core::model::{Message, Turn};
/// use tool_core::ToolCall;
/// use tool_core::testing::ScriptedTurns;
/// use tool_core::{Context, Registry, Runtime, ToolDef, registry::ToolError};
/// # use tool_core::{Argument, Tool};
/// # /// Adds two numbers.
/// # #[derive(Tool, Debug)]
/// # struct Add { a: i64, b: i64 }
/// # #[derive(Argument, serde::Serialize)]
/// # struct Sum { sum: i64 }
/// # async fn add(args: Add, _: &Context) -> Result<Sum, ToolError> { Ok(Sum { sum: args.a + args.b }) }
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let mut registry = Registry::new();
/// registry.register(ToolDef::new(add)).unwrap();
/// let model = ScriptedTurns::new()
///     .turn(Turn::calls([ToolCall::new("c1", "add", r#"{"a":2,"b":3}"#)]))
///     .turn(Turn::answer("2 + 3 = 5"));
/// let agent = Agent::new(Runtime::new(registry), model).max_steps(4);
///
/// let start = vec![Message::User { text: "What is 2 + 3?".into() }];
/// let report = agent.run(start, &Context::builder("user-1").build()).await;
/// assert_eq!(report.end, RunEnd::Answered);
/// assert_eq!(report.steps, 2);
/// assert_eq!(report.transcript.len(), 4); // user, call, result, answer
/// # });
/// ```
#[derive(Debug)]
pub struct Agent<M, R = NoRepair> {
    repair: RepairLoop<R>,
    model: M,
    max_steps: Option<u32>,
    max_tool_calls: Option<u32>,
    tool_quotas: HashMap<String, u32>,
    token_budget: Option<u64>,
    cost_budget: Option<(u64, Prices)>,
    max_identical_calls: Option<u32>,
    terminal_tools: Vec<String>,
    wrap_up: bool,
    batch: BatchPolicy,
    approvals: Option<Arc<Approvals>>,
    recorded: HashMap<String, ToolResult>,
}

impl<M: Model> Agent<M, NoRepair> {
    /// An agent over `runtime` asking `model`. Without guards set, a run ends only when the
    /// model answers, the context's deadline passes or it is cancelled; set
    /// [`max_steps`](Self::max_steps).
    pub fn new(runtime: Runtime, model: M) -> Self {
        let repair = RepairLoop::new(runtime, NoRepair).policy(RepairPolicy::single_pass());
        Agent {
            repair,
            model,
            max_steps: None,
            max_tool_calls: None,
            tool_quotas: HashMap::new(),
            token_budget: None,
            cost_budget: None,
            max_identical_calls: None,
            terminal_tools: Vec::new(),
            wrap_up: false,
            batch: BatchPolicy::SEQUENTIAL,
            approvals: None,
            recorded: HashMap::new(),
        }
    }
}

impl<M: Model, R: RepairModel> Agent<M, R> {
    /// Repairs refused arguments in place with `model` under `policy`, before the call's
    /// result enters the transcript.
    pub fn repair<R2: RepairModel>(self, model: R2, policy: RepairPolicy) -> Agent<M, R2> {
        let runtime = self.repair.runtime().clone();
        Agent {
            repair: RepairLoop::new(runtime, model).policy(policy),
            model: self.model,
            max_steps: self.max_steps,
            max_tool_calls: self.max_tool_calls,
            tool_quotas: self.tool_quotas,
            token_budget: self.token_budget,
            cost_budget: self.cost_budget,
            max_identical_calls: self.max_identical_calls,
            terminal_tools: self.terminal_tools,
            wrap_up: self.wrap_up,
            batch: self.batch,
            approvals: self.approvals,
            recorded: self.recorded,
        }
    }

    /// At most `steps` model calls per run (the first is step 1).
    pub fn max_steps(mut self, steps: u32) -> Self {
        self.max_steps = Some(steps);
        self
    }

    /// At most `calls` tool calls per run; further proposals are refused with
    /// `budget_exhausted` and end the run. How this relates to the runtime's own call limits:
    /// [Budgets](crate::runtime#budgets).
    pub fn max_tool_calls(mut self, calls: u32) -> Self {
        self.max_tool_calls = Some(calls);
        self
    }

    /// At most `calls` calls of `tool` per run; further ones are refused with
    /// `budget_exhausted` (the model can still call other tools). See
    /// [Budgets](crate::runtime#budgets).
    pub fn tool_quota(mut self, tool: impl Into<String>, calls: u32) -> Self {
        self.tool_quotas.insert(tool.into(), calls);
        self
    }

    /// No model call starts once the run has used `tokens` tokens.
    pub fn token_budget(mut self, tokens: u64) -> Self {
        self.token_budget = Some(tokens);
        self
    }

    /// No model call starts once the run's tokens, priced with `prices`, cost `limit_micros`
    /// (millionths of the prices' currency unit: `2_500_000` is 2.50) or more. The tokens are
    /// the ones each turn reports ([`Turn::usage`](crate::model::Turn::usage)).
    ///
    /// ```
    /// use tool_core::agent::{Agent, Prices};
    /// # use tool_core::{Registry, Runtime};
    /// # let model = tool_core::testing::ScriptedTurns::new();
    /// // $2.50 per million input tokens, $10 per million output tokens; stop at $1.
    /// let prices = Prices::per_million(2.50, 10.0);
    /// let agent = Agent::new(Runtime::new(Registry::new()), model).cost_budget(1_000_000, prices);
    /// ```
    pub fn cost_budget(mut self, limit_micros: u64, prices: Prices) -> Self {
        self.cost_budget = Some((limit_micros, prices));
        self
    }

    /// The same call (tool and canonical arguments) may be proposed at most `times` times
    /// (at least 1); one more proposal is refused and ends the run.
    pub fn max_identical_calls(mut self, times: u32) -> Self {
        self.max_identical_calls = Some(times.max(1));
        self
    }

    /// A successful call of `tool` ends the run.
    pub fn terminal_tool(mut self, tool: impl Into<String>) -> Self {
        self.terminal_tools.push(tool.into());
        self
    }

    /// After a guard ends the run (other than cancellation or the deadline), ask the model
    /// once more, offering no tools, so it can tell the user where things stand.
    pub fn wrap_up(mut self, wrap_up: bool) -> Self {
        self.wrap_up = wrap_up;
        self
    }

    /// How the calls of one step run (default [`BatchPolicy::SEQUENTIAL`]).
    pub fn batch(mut self, policy: BatchPolicy) -> Self {
        self.batch = policy;
        self
    }

    /// Calls to tools that require approval pause the run until a receipt or a denial for
    /// them is given to `approvals`. Install [`Approvals::verifier`] in the runtime too.
    pub fn approvals(mut self, approvals: Arc<Approvals>) -> Self {
        self.approvals = Some(approvals);
        self
    }

    /// Serves the results recorded in `transcript` instead of running those calls again:
    /// with `testing::ScriptedTurns::from_transcript` (feature `test-util`) this replays a
    /// recorded run.
    pub fn replaying(mut self, transcript: &[Message]) -> Self {
        self.recorded = transcript
            .iter()
            .filter_map(|message| match message {
                Message::Tool(result) => Some((result.call_id.clone(), result.clone())),
                _ => None,
            })
            .collect();
        self
    }

    /// The runtime calls go through.
    pub fn runtime(&self) -> &Runtime {
        self.repair.runtime()
    }

    /// The model.
    pub fn model(&self) -> &M {
        &self.model
    }

    /// The model asked for repairs.
    pub fn repair_model(&self) -> &R {
        self.repair.model()
    }

    /// Runs from `transcript` until the model answers or a guard fires. A transcript that
    /// ends with calls that have no result yet (a paused run) resumes with those calls;
    /// calls that already have a result are never run again.
    ///
    /// The run is an `invoke_agent` span, each model step a `chat` span inside it and each
    /// call an `execute_tool` span (see [Spans and events](crate::observe#spans-and-events)).
    pub async fn run(&self, transcript: Vec<Message>, cx: &Context) -> RunReport {
        let span = tracing::info_span!(
            "invoke_agent",
            gen_ai.operation.name = "invoke_agent",
            otel.name = "invoke_agent",
            otel.kind = "internal",
            gen_ai.usage.input_tokens = tracing::field::Empty,
            gen_ai.usage.output_tokens = tracing::field::Empty,
            tool_core.agent.steps = tracing::field::Empty,
            tool_core.agent.tool_calls = tracing::field::Empty,
            tool_core.agent.end = tracing::field::Empty,
            error.type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        );
        let report = self
            .run_traced(transcript, cx)
            .instrument(span.clone())
            .await;
        if !span.is_disabled() {
            span.record("gen_ai.usage.input_tokens", int(report.usage.input_tokens));
            span.record(
                "gen_ai.usage.output_tokens",
                int(report.usage.output_tokens),
            );
            span.record("tool_core.agent.steps", i64::from(report.steps));
            span.record("tool_core.agent.tool_calls", i64::from(report.tool_calls));
            span.record("tool_core.agent.end", end_name(&report.end));
            if let RunEnd::ModelFailed(_) = report.end {
                span.record("error.type", "model_failed");
                span.record("otel.status_code", "error");
            }
        }
        report
    }

    /// One model call, as a `chat` span.
    async fn step(
        &self,
        request: &ModelRequest<'_>,
        cx: &Context,
    ) -> Result<Result<Turn, ModelError>, Stopped> {
        let span = crate::observe::chat_span(request.step);
        let result = cx
            .bounded(self.model.respond(request))
            .instrument(span.clone())
            .await;
        let recorded = match &result {
            Ok(Ok(turn)) => Ok(crate::observe::ChatEnd {
                input_tokens: turn.usage.input_tokens,
                output_tokens: turn.usage.output_tokens,
                calls: turn.calls.len(),
            }),
            Ok(Err(_)) => Err("model_error"),
            Err(Stopped::Cancelled) => Err("cancelled"),
            Err(Stopped::Deadline) => Err("deadline"),
        };
        crate::observe::record_chat(&span, recorded);
        result
    }

    async fn run_traced(&self, transcript: Vec<Message>, cx: &Context) -> RunReport {
        let mut run = Run::from_transcript(transcript);
        let end = loop {
            let pending = run.unanswered();
            if !pending.is_empty() {
                if let Some(end) = self.run_batch(&mut run, pending, cx).await {
                    break end;
                }
                continue;
            }
            if let Some(end) = self.before_step(&run, cx) {
                break end;
            }
            let step = run.steps + 1;
            let turn = {
                let tools = self.runtime().visible_tools(cx);
                let request = ModelRequest {
                    transcript: &run.transcript,
                    tools: tools.clone(),
                    declared: tools,
                    answer_only: false,
                    step,
                    context: Some(cx),
                };
                self.step(&request, cx).await
            };
            let turn = match turn {
                Ok(Ok(turn)) => turn,
                Ok(Err(error)) => break RunEnd::ModelFailed(error.to_string()),
                Err(Stopped::Cancelled) => break RunEnd::Guard(Guard::Cancelled),
                Err(Stopped::Deadline) => break RunEnd::Guard(Guard::Deadline),
            };
            run.steps = step;
            run.usage += turn.usage;
            let answered = turn.calls.is_empty();
            run.transcript.push(Message::Assistant {
                text: turn.text,
                calls: turn.calls,
                usage: turn.usage,
                provider: turn.provider,
            });
            if answered {
                break RunEnd::Answered;
            }
        };
        if self.wrap_up
            && let RunEnd::Guard(guard) = &end
            && !matches!(guard, Guard::Cancelled | Guard::Deadline)
        {
            self.wrap_up_turn(&mut run, cx).await;
        }
        RunReport {
            transcript: run.transcript,
            end,
            steps: run.steps,
            tool_calls: run.tool_calls,
            usage: run.usage,
            outcomes: run.outcomes,
        }
    }

    /// The guards checked before each model call.
    fn before_step(&self, run: &Run, cx: &Context) -> Option<RunEnd> {
        if cx.is_cancelled() {
            return Some(RunEnd::Guard(Guard::Cancelled));
        }
        if cx
            .deadline()
            .is_some_and(|d| d <= tokio::time::Instant::now())
        {
            return Some(RunEnd::Guard(Guard::Deadline));
        }
        if let Some(limit) = self.max_steps
            && run.steps >= limit
        {
            return Some(RunEnd::Guard(Guard::MaxSteps(limit)));
        }
        if let Some(limit) = self.token_budget
            && run.usage.total() >= limit
        {
            let used = run.usage.total();
            return Some(RunEnd::Guard(Guard::TokenBudget { limit, used }));
        }
        if let Some((limit, prices)) = self.cost_budget {
            let spent = prices.cost_micros(run.usage);
            if spent >= limit {
                return Some(RunEnd::Guard(Guard::CostBudget {
                    limit_micros: limit,
                    spent_micros: spent,
                }));
            }
        }
        None
    }

    async fn wrap_up_turn(&self, run: &mut Run, cx: &Context) {
        let request = ModelRequest {
            transcript: &run.transcript,
            tools: Vec::new(),
            declared: self.runtime().visible_tools(cx),
            answer_only: true,
            step: run.steps + 1,
            context: Some(cx),
        };
        // Bounded by the run like every model call: a stopped run gets no wrap-up text.
        if let Ok(Ok(turn)) = self.step(&request, cx).await {
            run.usage += turn.usage;
            // Calls proposed without tools on offer are dropped: the run is over.
            run.transcript.push(Message::Assistant {
                text: turn.text,
                calls: Vec::new(),
                usage: turn.usage,
                // State that carries the dropped calls would send calls with no results.
                provider: if turn.calls.is_empty() {
                    turn.provider
                } else {
                    None
                },
            });
        }
    }
}

/// A count as a signed attribute: the OpenTelemetry attribute type for integers.
fn int(count: u64) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

/// How a run ended, as the `tool_core.agent.end` attribute of its span.
fn end_name(end: &RunEnd) -> &'static str {
    match end {
        RunEnd::Answered => "answered",
        RunEnd::Guard(Guard::MaxSteps(_)) => "max_steps",
        RunEnd::Guard(Guard::MaxToolCalls(_)) => "max_tool_calls",
        RunEnd::Guard(Guard::Deadline) => "deadline",
        RunEnd::Guard(Guard::Cancelled) => "cancelled",
        RunEnd::Guard(Guard::TokenBudget { .. }) => "token_budget",
        RunEnd::Guard(Guard::CostBudget { .. }) => "cost_budget",
        RunEnd::Guard(Guard::RepeatedCall { .. }) => "repeated_call",
        RunEnd::Guard(Guard::TerminalTool(_)) => "terminal_tool",
        RunEnd::ModelFailed(_) => "model_failed",
        RunEnd::AwaitingApproval(_) => "awaiting_approval",
    }
}

/// A run's state, rebuilt from its transcript.
struct Run {
    transcript: Vec<Message>,
    steps: u32,
    tool_calls: u32,
    usage: Usage,
    per_tool: HashMap<String, u32>,
    identical: HashMap<String, u32>,
    outcomes: Vec<Outcome>,
}

impl Run {
    fn from_transcript(transcript: Vec<Message>) -> Self {
        let mut run = Run {
            transcript: Vec::new(),
            steps: 0,
            tool_calls: 0,
            usage: Usage::default(),
            per_tool: HashMap::new(),
            identical: HashMap::new(),
            outcomes: Vec::new(),
        };
        let mut proposed: HashMap<&str, &ToolCall> = HashMap::new();
        for message in &transcript {
            match message {
                Message::Assistant { calls, usage, .. } => {
                    run.steps += 1;
                    run.usage += *usage;
                    for call in calls {
                        proposed.insert(&call.call_id, call);
                    }
                }
                Message::Tool(result) => {
                    // Calls that reached the runtime count against the budgets.
                    if !matches!(
                        result.code,
                        Some(Code::BudgetExhausted | Code::RepeatedCall)
                    ) {
                        run.tool_calls += 1;
                        *run.per_tool.entry(result.tool.clone()).or_default() += 1;
                    }
                    if let Some(call) = proposed.get(result.call_id.as_str()) {
                        *run.identical.entry(call.identity()).or_default() += 1;
                    }
                }
                Message::User { .. } => {}
            }
        }
        run.transcript = transcript;
        run
    }

    /// Calls of the last assistant turn that have no result yet.
    fn unanswered(&self) -> Vec<ToolCall> {
        let Some(last) = self
            .transcript
            .iter()
            .rposition(|m| matches!(m, Message::Assistant { .. }))
        else {
            return Vec::new();
        };
        let Message::Assistant { calls, .. } = &self.transcript[last] else {
            return Vec::new();
        };
        let answered: Vec<&str> = self.transcript[last..]
            .iter()
            .filter_map(|m| match m {
                Message::Tool(result) => Some(result.call_id.as_str()),
                _ => None,
            })
            .collect();
        calls
            .iter()
            .filter(|call| !answered.contains(&call.call_id.as_str()))
            .cloned()
            .collect()
    }
}
