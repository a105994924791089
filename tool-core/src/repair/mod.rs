//! The repair loop: when a model's arguments are refused, tell it exactly which fields were
//! wrong and let it try again, a bounded number of times, before the call runs at most once.

use std::borrow::Cow;

use serde_json::Value;

use crate::ArgumentErrors;
use crate::canonical::same_json;
use crate::context::{Context, Stopped};
use crate::contract::arguments::{Arguments, deeper_than};
use crate::metrics::{CallRecord, Metrics};
use crate::model::ModelError;
use crate::outcome::{Code, Outcome};
use crate::runtime::Runtime;

mod feedback;
mod model;
mod policy;

use feedback::{feedback, not_json};
pub use model::{RepairModel, RepairRequest};
pub use policy::{RepairPolicy, RepairPolicyError};

/// How the repair loop ended for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RepairEnd {
    /// The first arguments were valid.
    FirstPass,
    /// Arguments became valid after at least one repair.
    Repaired,
    /// Every attempt was refused.
    Exhausted,
    /// The model sent the same refused arguments again (compared canonically), so asking
    /// again would not help.
    NotConverging,
    /// The model failed to answer (the message says why), or the run ended while waiting.
    ModelFailed(String),
    /// The call failed before validation (an unknown tool, arguments over the byte cap): no
    /// repair was asked for.
    NotRepairable,
}

/// The result of one call through the repair loop.
#[derive(Debug, Clone)]
pub struct Repaired {
    outcome: Outcome,
    attempts: u32,
    end: RepairEnd,
    repaired_arguments: Option<String>,
}

impl Repaired {
    /// The call's single terminal outcome. When every attempt was refused, it is
    /// `invalid_arguments` with the last attempt's violations; when those are not the
    /// violations the model was last shown (its last answer was refused for something else),
    /// the failure's [`detail`](crate::Failure::detail) holds the ones it was shown.
    pub fn outcome(&self) -> &Outcome {
        &self.outcome
    }

    /// Takes the outcome out.
    pub fn into_outcome(self) -> Outcome {
        self.outcome
    }

    /// Argument texts checked, the first included.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// How the loop ended.
    pub fn end(&self) -> &RepairEnd {
        &self.end
    }

    /// The arguments that passed after a repair (what the handler received), when the call
    /// was repaired.
    pub fn repaired_arguments(&self) -> Option<&str> {
        self.repaired_arguments.as_deref()
    }
}

/// Runs calls through a [`Runtime`], asking a [`RepairModel`] to fix refused arguments.
///
/// For each call: check the arguments (without running anything); if they are refused and the
/// [`RepairPolicy`] allows another attempt, send the model the violations and check its answer;
/// once they pass, invoke the tool (so the handler runs at most once, and only on valid
/// arguments); otherwise invoke with the last arguments so the call still gets its one terminal
/// outcome. An unknown tool costs no model call. If the model sends back the same arguments it
/// was told were wrong, the loop stops.
///
/// A model's repair answer may wrap its arguments in prose or a ```` ```json ```` fence: the
/// one JSON object in it is taken, as [`extract_json_object`](crate::extract::extract_json_object)
/// finds it. An answer with no object, or with several, is refused and the reason sent back.
///
/// ```
/// use tool_core::{Context, Registry, Runtime, ToolDef, metrics::Metrics, repair::{RepairEnd, RepairLoop}, registry::ToolError};
/// use tool_core::testing::ScriptedModel;
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
/// let model = ScriptedModel::new().answer(r#"{"a": 2, "b": 3}"#);
/// let metrics = Metrics::new();
/// let repair = RepairLoop::new(Runtime::new(registry), model).metrics(metrics.clone());
///
/// let cx = Context::builder("user-1").build();
/// let result = repair.call("call_1", "add", r#"{"a": 2, "b": "3"}"#, &cx).await;
/// assert_eq!(result.end(), &RepairEnd::Repaired);
/// assert_eq!(result.attempts(), 2);
/// assert_eq!(result.outcome().output().unwrap().as_str(), r#"{"sum":5}"#);
/// let requests = repair.model().requests();
/// assert_eq!(requests[0].feedback.lines().nth(1), Some("- /b: expected integer, got string \"3\""));
/// assert_eq!(metrics.snapshot().overall.repaired, 1);
/// # });
/// ```
#[derive(Debug)]
pub struct RepairLoop<M> {
    runtime: Runtime,
    policy: RepairPolicy,
    model: M,
    metrics: Option<Metrics>,
}

impl<M: RepairModel> RepairLoop<M> {
    /// A loop over `runtime` asking `model`, with the default policy (3 attempts).
    pub fn new(runtime: Runtime, model: M) -> Self {
        RepairLoop {
            runtime,
            policy: RepairPolicy::default(),
            model,
            metrics: None,
        }
    }

    /// Replaces the policy.
    pub fn policy(mut self, policy: RepairPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Records every call in `metrics`.
    pub fn metrics(mut self, metrics: Metrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// The runtime calls go through.
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// The model asked for repairs.
    pub fn model(&self) -> &M {
        &self.model
    }

    /// Runs one proposed call whose arguments came in a provider's structured field (JSON
    /// text or a parsed value): those must be exactly one JSON value. The model's repair
    /// answers may hold their one JSON object inside prose.
    pub async fn call<'a>(
        &self,
        call_id: &str,
        tool: &str,
        arguments: impl Into<Arguments<'a>>,
        cx: &Context,
    ) -> Repaired {
        self.drive(call_id, tool, arguments.into(), Mode::Strict, cx)
            .await
    }

    /// Runs one proposed call whose arguments are inside a model's free text (prose, a
    /// ```` ```json ```` fence, a `<tool_call>` tag): the JSON value is found with
    /// [`extract_json`](crate::extract::extract_json) on each attempt, and text with no single JSON
    /// value is refused like invalid arguments, with the reason sent back to the model.
    pub async fn call_free_text(
        &self,
        call_id: &str,
        tool: &str,
        text: &str,
        cx: &Context,
    ) -> Repaired {
        self.drive(call_id, tool, Arguments::Text(text), Mode::FreeText, cx)
            .await
    }

    async fn drive(
        &self,
        call_id: &str,
        tool: &str,
        first: Arguments<'_>,
        mode: Mode,
        cx: &Context,
    ) -> Repaired {
        let Some(info) = self.runtime.registry().get(tool) else {
            let outcome = self.runtime.invoke(call_id, tool, first, cx).await;
            return self.finish(tool, outcome, 1, RepairEnd::NotRepairable);
        };
        let max_attempts = self.policy.attempts_for(tool);
        let hint = self.policy.hint_for(tool);
        let mut attempt: u32 = 1;
        // The violations the model was last asked to fix, and of which attempt.
        let mut shown: Option<(u32, String)> = None;
        // The current attempt: the first as given, later ones as the model's text.
        let mut current: Cow<'_, str> = match first {
            Arguments::Text(text) => Cow::Borrowed(text),
            // Writing a value out walks it recursively: one nested beyond the parser's limit is
            // refused by the check below, and the model is shown no text for it.
            Arguments::Json(value) if deeper_than(value, crate::contract::MAX_DEPTH) => {
                Cow::Borrowed("")
            }
            Arguments::Json(value) => Cow::Owned(value.to_string()),
        };
        loop {
            let arguments = match (attempt, first) {
                (1, Arguments::Json(value)) => Ok(Arguments::Json(value)),
                _ => mode.prepare(&current, attempt).map(Arguments::Text),
            };
            let checked = match arguments {
                Ok(arguments) => self.runtime.check(tool, arguments).map(|()| arguments),
                Err(errors) => Err(crate::Failure::invalid(Code::InvalidArguments, errors)),
            };
            let failure = match checked {
                Ok(arguments) => {
                    let outcome = self.runtime.invoke(call_id, tool, arguments, cx).await;
                    if attempt == 1 {
                        return self.finish(tool, outcome, attempt, RepairEnd::FirstPass);
                    }
                    let mut repaired = self.finish(tool, outcome, attempt, RepairEnd::Repaired);
                    if let Arguments::Text(text) = arguments {
                        repaired.repaired_arguments = Some(text.to_owned());
                    }
                    return repaired;
                }
                Err(failure) => failure,
            };
            let last = Last {
                call_id,
                tool,
                first,
                attempt,
                max_attempts,
                mode,
            };
            let Some(errors) = failure
                .errors()
                .filter(|_| failure.code() == Code::InvalidArguments)
            else {
                return self
                    .conclude(last, &current, shown, RepairEnd::NotRepairable, cx)
                    .await;
            };
            if attempt >= max_attempts {
                return self
                    .conclude(last, &current, shown, RepairEnd::Exhausted, cx)
                    .await;
            }
            let feedback = feedback(tool, errors, attempt, max_attempts, hint);
            shown = Some((attempt, errors.to_string()));
            let request = RepairRequest {
                tool: info.name(),
                schema: info.input_schema(),
                previous: &current,
                errors,
                feedback: &feedback,
                attempt: attempt + 1,
                max_attempts,
                hint,
            };
            let answer = match cx.bounded(self.model.repair(&request)).await {
                Ok(answer) => answer,
                Err(Stopped::Cancelled) => Err(ModelError::new(
                    "the run was cancelled while waiting for the model",
                )),
                Err(Stopped::Deadline) => Err(ModelError::new(
                    "the run's deadline passed while waiting for the model",
                )),
            };
            let answer = match answer {
                Ok(answer) => answer,
                Err(error) => {
                    let end = RepairEnd::ModelFailed(error.to_string());
                    return self.conclude(last, &current, shown, end, cx).await;
                }
            };
            let same = same_arguments(&answer, &current);
            attempt += 1;
            current = Cow::Owned(answer);
            if same {
                let last = Last { attempt, ..last };
                return self
                    .conclude(last, &current, shown, RepairEnd::NotConverging, cx)
                    .await;
            }
        }
    }

    /// Gives a call that will not be repaired further its one terminal outcome, from its last
    /// arguments. A refusal for other violations than those the model was last `shown` carries
    /// those in its detail, so they are not lost.
    async fn conclude(
        &self,
        last: Last<'_>,
        current: &str,
        shown: Option<(u32, String)>,
        end: RepairEnd,
        cx: &Context,
    ) -> Repaired {
        let arguments = match (last.attempt, last.first) {
            (1, Arguments::Json(value)) => Arguments::Json(value),
            _ => Arguments::Text(last.mode.prepare(current, last.attempt).unwrap_or(current)),
        };
        let mut outcome = self
            .runtime
            .invoke(last.call_id, last.tool, arguments, cx)
            .await;
        if let (Some((attempt, shown)), Err(failure)) = (shown, &mut outcome.result)
            && failure.code() == Code::InvalidArguments
            && failure.detail().is_none()
            && failure.message() != shown
        {
            let detail = format!(
                "the model was last shown the violations of attempt {attempt} of {}:\n{shown}",
                last.max_attempts
            );
            *failure = failure.clone().with_detail(detail);
        }
        self.finish(last.tool, outcome, last.attempt, end)
    }

    fn finish(&self, tool: &str, outcome: Outcome, attempts: u32, end: RepairEnd) -> Repaired {
        // Only registered names become labels: invented names would each add series.
        let registered = self.runtime.registry().get(tool).map(|info| &info.name);
        let call = CallRecord {
            tool: registered.is_some().then_some(tool),
            attempts,
            first_pass: end == RepairEnd::FirstPass,
            repaired: end == RepairEnd::Repaired,
            failed: outcome.failure().map(|failure| failure.code().as_str()),
        };
        crate::metrics::emit(&call, registered);
        if let Some(metrics) = &self.metrics {
            metrics.record(&call);
        }
        if end == RepairEnd::Repaired {
            tracing::debug!(
                gen_ai.tool.name = outcome.tool(),
                gen_ai.tool.call.id = outcome.call_id(),
                gen_ai.tool.stage = "repaired",
                attempt = attempts,
                "repaired on attempt {attempts}"
            );
        }
        Repaired {
            outcome,
            attempts,
            end,
            repaired_arguments: None,
        }
    }
}

/// Where a call stands when the loop stops.
#[derive(Clone, Copy)]
struct Last<'a> {
    call_id: &'a str,
    tool: &'a str,
    first: Arguments<'a>,
    attempt: u32,
    max_attempts: u32,
    mode: Mode,
}

/// How the first argument text is read; the model's repair answers are read as
/// [`answer_json`] says in both modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// A provider's structured arguments: the text must be exactly one JSON value.
    Strict,
    /// A model's free text: the one JSON value in it is the arguments.
    FreeText,
}

impl Mode {
    /// The JSON text to validate of attempt `attempt` (1 for the call's own arguments).
    fn prepare(self, text: &str, attempt: u32) -> Result<&str, ArgumentErrors> {
        match self {
            Mode::Strict if attempt == 1 => Ok(text),
            Mode::Strict => answer_json(text),
            Mode::FreeText => crate::extract::extract_json(text)
                .map(|found| found.json())
                .map_err(|error| not_json(error.to_string())),
        }
    }
}

/// The arguments in a repair answer to a structured call: the answer itself when it is
/// written as one object, else the one JSON object inside its prose or fence. Text that
/// opens like an object is left to the parser, whose error says where it breaks.
fn answer_json(text: &str) -> Result<&str, ArgumentErrors> {
    let trimmed = text.trim();
    if trimmed.starts_with('{') && trimmed.ends_with('}') {
        return Ok(text);
    }
    match crate::extract::extract_json_object(text) {
        Ok(found) => Ok(found.json()),
        Err(_) if trimmed.starts_with('{') => Ok(text),
        Err(error) => Err(not_json(error.to_string())),
    }
}

/// Whether `answer` repeats `previous`: equal canonical JSON, or equal text when not JSON.
fn same_arguments(answer: &str, previous: &str) -> bool {
    let read = |text| answer_json(text).or_else(|_| Mode::FreeText.prepare(text, 1));
    let (Ok(answer), Ok(previous)) = (read(answer), read(previous)) else {
        return answer.trim() == previous.trim();
    };
    let parsed = |text: &str| serde_json::from_str::<Value>(text).ok();
    match (parsed(answer), parsed(previous)) {
        (Some(a), Some(b)) => same_json(&a, &b),
        _ => answer.trim() == previous.trim(),
    }
}
