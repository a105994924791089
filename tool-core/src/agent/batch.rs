//! One batch of calls from one model turn: admitted by the agent's guards, run (concurrently,
//! up to the batch policy), and recorded in the transcript in proposal order.

use futures_util::StreamExt as _;

use super::{Agent, Guard, Message, Model, Run, RunEnd, ToolResult};
use crate::CancellationToken;
use crate::approval::PendingApproval;
use crate::call::ToolCall;
use crate::context::Context;
use crate::outcome::{Code, Outcome};
use crate::provenance::Provenance;
use crate::repair::RepairModel;

/// Where one proposed call stands in its batch.
enum Slot {
    /// Answered without running: replayed, or refused by a guard.
    Done(ToolResult),
    /// Admitted to run.
    Run(ToolCall),
    /// Waiting for a decision on its approval.
    Pending(PendingApproval),
}

impl<M: Model, R: RepairModel> Agent<M, R> {
    /// Runs the unanswered calls of the last turn; `Some` when the run must end.
    pub(super) async fn run_batch(
        &self,
        run: &mut Run,
        calls: Vec<ToolCall>,
        cx: &Context,
    ) -> Option<RunEnd> {
        let (slots, mut end) = self.admit(run, calls, cx);
        let outcomes = self.execute(&slots, cx).await;
        run.usage += self.repair.model().take_usage();
        let pending = record(run, slots, outcomes, &self.terminal_tools, &mut end);
        if !pending.is_empty() {
            return Some(RunEnd::AwaitingApproval(pending));
        }
        end
    }

    /// The agent's guards, call by call in proposal order: a call answered before (replay), a
    /// repeated call, the run's tool-call budget, the tool's quota, a pending approval; the
    /// calls that pass are admitted to run.
    fn admit(
        &self,
        run: &mut Run,
        calls: Vec<ToolCall>,
        cx: &Context,
    ) -> (Vec<Slot>, Option<RunEnd>) {
        let mut end: Option<RunEnd> = None;
        let mut slots = Vec::with_capacity(calls.len());
        for call in calls {
            if let Some(recorded) = self.recorded.get(&call.call_id) {
                slots.push(Slot::Done(recorded.clone()));
                continue;
            }
            let times = run.identical.entry(call.identity()).or_default();
            *times += 1;
            if let Some(limit) = self.max_identical_calls
                && *times > limit
            {
                let times = *times;
                slots.push(Slot::Done(refusal(
                    &call,
                    Code::RepeatedCall,
                    format!(
                        "this exact call was already made {limit} time(s); it was not run again"
                    ),
                )));
                end.get_or_insert(RunEnd::Guard(Guard::RepeatedCall {
                    tool: call.name.clone(),
                    times,
                }));
                continue;
            }
            if let Some(limit) = self.max_tool_calls
                && run.tool_calls >= limit
            {
                slots.push(Slot::Done(refusal(
                    &call,
                    Code::BudgetExhausted,
                    format!("the run's budget of {limit} tool calls is used up; answer with what you have"),
                )));
                end.get_or_insert(RunEnd::Guard(Guard::MaxToolCalls(limit)));
                continue;
            }
            if let Some(&quota) = self.tool_quotas.get(&call.name) {
                let used = run.per_tool.entry(call.name.clone()).or_default();
                if *used >= quota {
                    slots.push(Slot::Done(refusal(
                        &call,
                        Code::BudgetExhausted,
                        format!("`{}` may be called {quota} time(s) per run; use another tool or answer", call.name),
                    )));
                    continue;
                }
                *used += 1;
            }
            if let Some(approvals) = &self.approvals
                && self
                    .runtime()
                    .registry()
                    .get(&call.name)
                    .is_some_and(|info| info.requires_approval())
                && !approvals.has_decision(&call.call_id)
            {
                slots.push(Slot::Pending(PendingApproval {
                    call_id: call.call_id.clone(),
                    tool: call.name.clone(),
                    arguments: call.arguments_text().into_owned(),
                    principal: cx.principal().to_owned(),
                }));
                continue;
            }
            run.tool_calls += 1;
            slots.push(Slot::Run(call));
        }
        (slots, end)
    }

    /// Runs the admitted calls through the repair loop and the runtime, at most
    /// `concurrency` at once; the outcomes in proposal order.
    async fn execute(&self, slots: &[Slot], cx: &Context) -> Vec<(Outcome, Option<String>)> {
        // Run the admitted calls, at most `concurrency` at once, results in proposal order.
        // A child of the run's token: cancelling the run still cancels the batch.
        let batch_cx = self.batch.cancel_siblings.then(|| {
            let token: CancellationToken = cx.cancellation().child_token();
            (cx.with_cancellation(token.clone()), token)
        });
        let call_cx = batch_cx.as_ref().map_or(cx, |(derived, _)| derived);
        let to_run: Vec<ToolCall> = slots
            .iter()
            .filter_map(|slot| match slot {
                Slot::Run(call) => Some(call.clone()),
                _ => None,
            })
            .collect();
        futures_util::stream::iter(to_run)
            .map(|call| {
                let token = batch_cx.as_ref().map(|(_, token)| token.clone());
                async move {
                    let repaired = self
                        .repair
                        .call(&call.call_id, &call.name, call.arguments(), call_cx)
                        .await;
                    let repaired_arguments = repaired.repaired_arguments().map(str::to_owned);
                    let outcome = repaired.into_outcome();
                    if let Some(token) = token
                        && !outcome.is_ok()
                    {
                        token.cancel();
                    }
                    (outcome, repaired_arguments)
                }
            })
            .buffered(self.batch.concurrency)
            .collect()
            .await
    }
}

/// The transcript entries of a batch, in proposal order; the calls waiting for approval.
fn record(
    run: &mut Run,
    slots: Vec<Slot>,
    outcomes: Vec<(Outcome, Option<String>)>,
    terminal_tools: &[String],
    end: &mut Option<RunEnd>,
) -> Vec<PendingApproval> {
    let mut outcomes = outcomes.into_iter();
    let mut pending = Vec::new();
    for slot in slots {
        let result = match slot {
            Slot::Done(result) => result,
            Slot::Pending(approval) => {
                pending.push(approval);
                continue;
            }
            Slot::Run(call) => match outcomes.next() {
                Some((outcome, repaired_arguments)) => {
                    let mut result = result_of(&call, &outcome);
                    result.repaired_arguments = repaired_arguments;
                    run.outcomes.push(outcome);
                    result
                }
                None => refusal(
                    &call,
                    Code::OutcomeUnknown,
                    "the call's outcome was lost".into(),
                ),
            },
        };
        if result.is_ok() && terminal_tools.contains(&result.tool) {
            end.get_or_insert(RunEnd::Guard(Guard::TerminalTool(result.tool.clone())));
        }
        run.transcript.push(Message::Tool(result));
    }
    pending
}

/// The transcript entry for a call's outcome, with its provenance
/// ([`Outcome::provenance`]).
fn result_of(call: &ToolCall, outcome: &Outcome) -> ToolResult {
    let (code, content) = match outcome.result() {
        Ok(output) => (None, output.as_str().to_owned()),
        Err(failure) => (Some(failure.code()), failure.message().to_owned()),
    };
    ToolResult {
        call_id: call.call_id.clone(),
        tool: call.name.clone(),
        code,
        content,
        repaired_arguments: None,
        provenance: outcome.provenance(),
    }
}

fn refusal(call: &ToolCall, code: Code, message: String) -> ToolResult {
    ToolResult {
        call_id: call.call_id.clone(),
        tool: call.name.clone(),
        code: Some(code),
        content: message,
        repaired_arguments: None,
        provenance: Provenance::runtime(),
    }
}
