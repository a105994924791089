//! The runtime: one entry point, [`Runtime::invoke`], that turns a proposed call into exactly
//! one [`Outcome`] through a fixed order of stages. Each stage has its own file in this folder.
//!
//! | # | stage | file | refuses with |
//! |---|---|---|---|
//! | 0 | correlate: the call id is short enough and, without a ledger, was not used in this runtime (within the retention); with a ledger, it is not empty unless the context has an idempotency key (`claim.rs`) | `correlate.rs` | `call_id_too_long`, `duplicate_call_id`, `missing_call_id` |
//! | 1 | resolve the name in the [`Registry`] (the allow-list) | `resolve.rs` | `unknown_tool` |
//! | 2 | input byte cap (and nesting depth, for arguments that arrive parsed) | `input.rs` | `input_too_large`, `invalid_arguments` |
//! | 3 | parse and validate into the tool's argument type, every violation | `input.rs` | `invalid_arguments` |
//! | 4 | authorize: the runtime's [`Authorize`] policy, then the tool's typed check | `authorize.rs` | `unauthorized` |
//! | 5 | approve, for tools that require it | `approve.rs` | `approval_denied`, `approval_expired` |
//! | 6 | admit: cancellation, deadline, concurrency caps (waiting), then call quotas | `admit.rs` | `cancelled`, `timeout`, `budget_exhausted` |
//! | 6b | with a [ledger](crate::ledger): claim the call (scope and call id, or idempotency key), taking the quotas in the same step; a call claimed before is replayed (nothing runs) or refused | `claim.rs` | `call_id_conflict`, `idempotency_conflict`, `call_in_flight`, `outcome_unknown`, `budget_exhausted`, `ledger_unavailable` |
//! | 7 | execute under the timeout and cancellation; panics are caught | `execute.rs` | `execution_failed`, `timeout`, `cancelled`, `outcome_unknown` |
//! | 8 | serialize the output under its byte cap, then validate that text against the output schema | `output.rs` | `output_too_large`, `invalid_output` |
//! | 8b | with a ledger: record the outcome of the claim (a failure to record leaves the claim in doubt, never re-run by itself) | `claim.rs` | |
//! | 9 | record: trace the outcome and hand it to the [`Observer`] | `record.rs` | |
//!
//! The claim comes after approval, so a tool that requires approval is approved again when
//! its call is proposed again: with [`Approvals`](crate::approval::Approvals), whose receipts are used
//! once, a resent call is then refused (`approval_denied`) rather than replayed; either way it
//! does not run twice.
//!
//! With a ledger, every decision also goes to its audit trail: refusals before the claim
//! (with their code), `authorized`, `approved`, the claim's answer (`admitted`, `replayed` or
//! a refusal), then `executed` and the `outcome`. Digests stand for the arguments; their
//! values are never recorded.
//!
//! Each stage sees only calls every earlier stage let through: an invalid call is never
//! authorized, an unauthorized one never approved or run. Stages 3 and 4 run inside the
//! registry's typed code, so the typed value goes from the parser to the tool's own check and to
//! the handler without leaving it; the runtime's policy (stage 4) sees the tool and the
//! [`Context`], and the approver (stage 5) sees the arguments as JSON (read again from the
//! validated text, or a copy of the value when they arrived parsed). Stage 8 is the last step of
//! the call's work (the registry's typed code serializes and checks the output), so it runs
//! under stage 7's panic catching; `output.rs` turns its errors into failures.
//!
//! # Budgets
//!
//! What bounds a run's calls, in one place:
//!
//! - [`RuntimeBuilder::max_calls`]: calls admitted over this runtime's life, all tools together
//!   (stage 6, `budget_exhausted`).
//! - [`ToolDef::max_calls`](crate::ToolDef::max_calls): the same, for one tool (stage 6).
//! - [`Agent::max_tool_calls`](crate::agent::Agent::max_tool_calls): tool calls in one agent
//!   run; a batch is admitted up to it, the rest get `budget_exhausted` results without
//!   reaching the runtime, and the run ends.
//! - [`Agent::tool_quota`](crate::agent::Agent::tool_quota): calls of one tool in one agent
//!   run; further ones get `budget_exhausted` results and the model may go on with other tools.
//!
//! The runtime's two count executions admitted by stage 6, whoever proposes them; the agent's
//! two count what one run asks for, so a fresh run with the same runtime starts from zero
//! while the runtime's counts go on. With a [ledger](crate::ledger), the runtime's two are
//! counted in the ledger per [scope](crate::Context::scope) instead of in the runtime: every
//! runtime on the same store shares them, a restart does not reset them, and a replayed call
//! takes nothing.
//!
//! Waits inside a run (approval, a concurrency slot, a model's answer in the repair and agent
//! loops) all end when the [`Context`] is cancelled or its deadline passes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::time::Instant;
use tracing::Instrument as _;

use crate::context::{CallScope, Context, Stopped};
use crate::contract::arguments::Arguments;
use crate::ledger::{AuditKind, Ledger};
use crate::observe::{Event, Observer};
use crate::outcome::{Code, Failure, InvocationId, Outcome, Output};
use crate::provenance::Provenance;
use crate::recent::Recent;
use crate::registry::kind::Policy;
use crate::{
    Registry,
    registry::{Refusal, ToolInfo},
};

mod admit;
mod approve;
mod authorize;
mod claim;
mod correlate;
mod execute;
mod input;
mod output;
mod record;
mod resolve;

pub use approve::{Approval, ApprovalFuture, ApprovalRequest, Approver};
pub use authorize::Authorize;

/// Turns proposed tool calls into outcomes, enforcing the registry, the policies and the limits.
///
/// A runtime holds the state of one session or run: the call ids seen (each may be used
/// once), the call quotas, the concurrency caps. Create one per run from a shared
/// `Arc<Registry>`; cloning a runtime shares its state. It must be used inside a Tokio runtime
/// (timeouts use Tokio's timer).
///
/// # Call ids
///
/// A call id is at most [`DEFAULT_MAX_CALL_ID_BYTES`](Self::DEFAULT_MAX_CALL_ID_BYTES) (256)
/// bytes long unless [`RuntimeBuilder::max_call_id_bytes`] says otherwise; a longer one ends
/// as `call_id_too_long` before anything else is looked at, and is not remembered. Provider
/// ids are far shorter (OpenAI allows 64 characters); over MCP the JSON-RPC request id is the
/// call id, so the same limit holds there.
///
/// To refuse a reused id, the runtime remembers the most recent
/// [`DEFAULT_CALL_ID_RETENTION`](Self::DEFAULT_CALL_ID_RETENTION) (16,384) distinct call ids
/// ([`RuntimeBuilder::call_id_retention`]): at most about 4 MiB with ids of the maximum length.
/// An id is forgotten once that many newer ids were seen; a duplicate of a forgotten id is not
/// recognized and runs as a new call. The check catches a provider or client resending a
/// recent call, not a replay from long ago. For calls whose effect must happen once per id,
/// across restarts and workers, give the runtime a [ledger](crate::ledger)
/// ([`RuntimeBuilder::ledger`]): it claims each call durably and answers a reused id with the
/// first call's outcome. The ids must then be unique across processes and restarts: those the
/// [providers](crate::providers)' parsers and the HTTP models make for
/// calls that came without a usable one are random (see [Call ids](crate::ToolCall#call-ids)),
/// and an empty id is refused as `missing_call_id`, since every call without one would share
/// one record (an idempotency key in the context keys the call instead).
///
/// ```
/// use tool_core::{Code, Context, Registry, Runtime, ToolDef, registry::ToolError};
/// # use tool_core::{Argument, Tool};
/// # /// Current weather.
/// # #[derive(Tool, Debug)]
/// # struct GetWeather { city: String }
/// # #[derive(Argument, serde::Serialize)]
/// # struct Weather { celsius: f64 }
///
/// async fn get_weather(args: GetWeather, _cx: &Context) -> Result<Weather, ToolError> {
///     Ok(Weather { celsius: 21.5 })
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let mut registry = Registry::new();
/// registry.register(ToolDef::new(get_weather)).unwrap();
/// let runtime = Runtime::new(registry);
/// let cx = Context::builder("user-1").build();
///
/// let outcome = runtime.invoke("call_1", "get_weather", r#"{"city":"Paris"}"#, &cx).await;
/// assert_eq!(outcome.output().unwrap().as_str(), r#"{"celsius":21.5}"#);
///
/// let outcome = runtime.invoke("call_2", "get_wether", "{}", &cx).await;
/// assert_eq!(outcome.code(), Some(Code::UnknownTool));
/// # });
/// ```
#[derive(Clone)]
pub struct Runtime {
    shared: Arc<Shared>,
}

pub(crate) struct Shared {
    registry: Arc<Registry>,
    tools: Vec<ToolState>,
    timeout: Duration,
    max_input_bytes: usize,
    max_output_bytes: usize,
    concurrency: Option<Semaphore>,
    max_calls: Option<u64>,
    calls: AtomicU64,
    max_call_id_bytes: usize,
    seen: Mutex<Recent<()>>,
    authorize: Option<Box<dyn Authorize>>,
    approver: Option<Box<dyn Approver>>,
    observer: Option<Arc<dyn Observer>>,
    ledger: Option<Arc<dyn Ledger>>,
    /// Each tool's contract hash, for the ledger's claims (empty without a ledger).
    contracts: Vec<String>,
    rerun_interrupted: bool,
    lease_grace: Duration,
    seed: u64,
    counter: AtomicU64,
}

struct ToolState {
    concurrency: Option<Semaphore>,
    calls: AtomicU64,
}

/// The call being run, as the stages see it.
pub(crate) struct CallRef<'a> {
    id: InvocationId,
    call_id: &'a Arc<str>,
    state: &'a ToolState,
}

impl Runtime {
    /// Default time one call may run: 30 seconds.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
    /// Default cap on arguments and on outputs, as JSON text: 1 MiB.
    pub const DEFAULT_MAX_BYTES: usize = 1 << 20;
    /// Default cap on the length of a call id: 256 bytes.
    pub const DEFAULT_MAX_CALL_ID_BYTES: usize = 256;
    /// Default number of distinct call ids remembered to refuse a reuse: the most recent
    /// 16,384.
    pub const DEFAULT_CALL_ID_RETENTION: usize = 16_384;

    /// A runtime with the default limits and no policies (every valid call is authorized,
    /// tools requiring approval are refused).
    pub fn new(registry: impl Into<Arc<Registry>>) -> Self {
        Runtime::builder(registry).build()
    }

    /// Configures a runtime.
    pub fn builder(registry: impl Into<Arc<Registry>>) -> RuntimeBuilder {
        RuntimeBuilder {
            registry: registry.into(),
            timeout: Runtime::DEFAULT_TIMEOUT,
            max_input_bytes: Runtime::DEFAULT_MAX_BYTES,
            max_output_bytes: Runtime::DEFAULT_MAX_BYTES,
            max_concurrency: None,
            max_calls: None,
            max_call_id_bytes: Runtime::DEFAULT_MAX_CALL_ID_BYTES,
            call_id_retention: Runtime::DEFAULT_CALL_ID_RETENTION,
            authorize: None,
            approver: None,
            observer: None,
            ledger: None,
            rerun_interrupted: false,
            lease_grace: claim::DEFAULT_LEASE_GRACE,
        }
    }

    /// The registry this runtime serves.
    pub fn registry(&self) -> &Registry {
        &self.shared.registry
    }

    /// The ledger calls are claimed in, if one was set.
    pub fn ledger(&self) -> Option<&Arc<dyn Ledger>> {
        self.shared.ledger.as_ref()
    }

    /// Runs one proposed call through every stage (see the [module docs](self)) and returns
    /// its single outcome. Never panics, whatever the input or the handler does.
    ///
    /// `call_id` is the call's id ([`ToolCall::call_id`](crate::ToolCall::call_id)), echoed in
    /// the outcome. A non-empty id is accepted once among the recent ids the runtime
    /// remembers, and only up to its length limit (see [Call ids](Runtime#call-ids)). An empty
    /// id is not checked without a ledger; with one it is refused as `missing_call_id` unless
    /// the context has an idempotency key.
    pub async fn invoke<'a>(
        &self,
        call_id: &str,
        tool: &str,
        arguments: impl Into<Arguments<'a>>,
        cx: &Context,
    ) -> Outcome {
        let started = Instant::now();
        let shared = &*self.shared;
        let id = InvocationId(
            shared
                .seed
                .wrapping_add(shared.counter.fetch_add(1, Ordering::Relaxed)),
        );
        let span = tracing::info_span!(
            "tool_call",
            tool = %tool,
            call_id = %resolve::truncate(call_id, shared.max_call_id_bytes),
            id = %id,
            outcome = tracing::field::Empty,
            elapsed_us = tracing::field::Empty,
        );
        let call_id: Arc<str> = Arc::from(call_id);
        let index = shared.registry.index(tool);
        let mut replayed = false;
        let result = self
            .run(
                id,
                &call_id,
                index,
                tool,
                arguments.into(),
                cx,
                &mut replayed,
            )
            .instrument(span.clone())
            .await;
        let (tool, source) = match index {
            Some(index) => {
                let info = shared.registry.at(index).info();
                (Arc::clone(&info.name), info.provenance())
            }
            None => (Arc::from(tool), Provenance::runtime()),
        };
        let outcome = Outcome {
            id,
            call_id,
            tool,
            result,
            elapsed: started.elapsed(),
            replayed,
            source,
        };
        record::record(&span, &outcome);
        if let Some(observer) = &shared.observer {
            observer.on_event(Event::Outcome(&outcome));
        }
        outcome
    }

    /// Runs only the input stages (resolve, input byte cap, validation) on a proposal: no
    /// policy is consulted, nothing is executed or recorded, and the call id is not used up.
    /// The repair loop uses it to decide whether to ask the model again.
    pub fn check<'a>(
        &self,
        tool: &str,
        arguments: impl Into<Arguments<'a>>,
    ) -> Result<(), Failure> {
        let shared = &*self.shared;
        let Some(index) = shared.registry.index(tool) else {
            return Err(resolve::unknown_tool(&shared.registry, tool));
        };
        let tool = shared.registry.at(index);
        let arguments = arguments.into();
        input::cap(shared, tool.info(), arguments)?;
        tool.check(arguments).map_err(input::invalid)
    }

    /// Stages 0 to 8, in the order of the table in the [module docs](self); each returns
    /// early with the call's failure. With a ledger, a call refused before its claim is
    /// audited as refused, and a claimed call's outcome is recorded.
    #[allow(clippy::too_many_arguments)]
    async fn run(
        &self,
        id: InvocationId,
        call_id: &Arc<str>,
        index: Option<usize>,
        tool: &str,
        arguments: Arguments<'_>,
        cx: &Context,
        replayed: &mut bool,
    ) -> Result<Output, Failure> {
        let shared = &*self.shared;
        let Some(ledger) = shared.ledger.as_deref() else {
            return self
                .stages(id, call_id, index, tool, arguments, cx, None)
                .await;
        };
        let mut decisions = Some(claim::Decisions::new());
        let result = self
            .stages(
                id,
                call_id,
                index,
                tool,
                arguments,
                cx,
                Some((ledger, &mut decisions, replayed)),
            )
            .await;
        if let (Some(decisions), Err(failure)) = (decisions, &result) {
            // Refused before the claim (the claim took the decisions otherwise).
            let audited_id = if call_id.len() > shared.max_call_id_bytes {
                ""
            } else {
                call_id
            };
            decisions
                .refused(ledger, cx, audited_id, tool, failure)
                .await;
        }
        result
    }

    #[allow(clippy::too_many_arguments)]
    async fn stages(
        &self,
        id: InvocationId,
        call_id: &Arc<str>,
        index: Option<usize>,
        tool: &str,
        arguments: Arguments<'_>,
        cx: &Context,
        mut ledger: Option<(&dyn Ledger, &mut Option<claim::Decisions>, &mut bool)>,
    ) -> Result<Output, Failure> {
        let shared = &*self.shared;
        correlate::correlate(shared, call_id)?;
        if ledger.is_some() {
            claim::require_id(call_id, cx)?;
        }
        let Some(index) = index else {
            return Err(resolve::unknown_tool(&shared.registry, tool));
        };
        let tool = shared.registry.at(index);
        let info = tool.info();
        let call = CallRef {
            id,
            call_id,
            state: &shared.tools[index],
        };
        input::cap(shared, info, arguments)?;

        // The handler's own context: its progress is reported under this call, and it is
        // cancelled when the call ends.
        let scope = Arc::new(CallScope::new(
            id,
            Arc::clone(call_id),
            Arc::clone(&info.name),
            shared.observer.clone(),
        ));
        let call_cx = cx.for_call(Arc::clone(&scope));
        let policy = shared
            .authorize
            .as_deref()
            .map(|policy| move |info: &ToolInfo, cx: &Context| policy.authorize(info, cx));
        let work = tool
            .prepare(
                arguments,
                cx,
                policy.as_ref().map(|policy| policy as Policy<'_>),
                call_cx,
                output::limit(shared, info),
            )
            .map_err(|refusal| match refusal {
                Refusal::Invalid(errors) => input::invalid(errors),
                Refusal::Denied(denied) => authorize::unauthorized(denied, info, &call),
                Refusal::EffectPanicked(what) => Failure::new(
                    Code::ExecutionFailed,
                    format!(
                        "`{}` failed before it ran (reference {})",
                        info.name, call.id
                    ),
                )
                .with_detail(format!("its effect_from function panicked: {what}")),
            })?;
        let note =
            |ledger: &mut Option<(&dyn Ledger, &mut Option<claim::Decisions>, &mut bool)>, kind| {
                if let Some((_, Some(decisions), _)) = ledger {
                    decisions.push(cx, call_id, &info.name, kind, None);
                }
            };
        note(&mut ledger, AuditKind::Authorized);

        if info.settings.requires_approval {
            // Boxed so the rare wait does not enlarge every call's future.
            Box::pin(approve::approve(shared, info, &call, arguments, cx)).await?;
            note(&mut ledger, AuditKind::Approved);
        }

        let _permits = admit::admit(shared, &call, cx).await?;
        let Some((ledger, decisions, replayed)) = ledger else {
            admit::take_quotas(shared, info, &call)?;
            let text = execute::execute(shared, info, &call, &scope, work, cx).await?;
            return Ok(Output { text });
        };
        let decisions = decisions.take().unwrap_or_else(claim::Decisions::new);
        let contract = &shared.contracts[index];
        let held = match claim::claim(
            shared,
            ledger,
            info,
            work.effect,
            &call,
            contract,
            arguments,
            cx,
            decisions,
        )
        .await?
        {
            claim::Admission::Run(held) => held,
            claim::Admission::Replay(result) => {
                *replayed = true;
                return result;
            }
        };
        let result = execute::execute(shared, info, &call, &scope, work, cx)
            .await
            .map(|text| Output { text });
        claim::settle(ledger, held, info, call_id, &result, cx).await;
        result
    }
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("registry", &self.shared.registry)
            .field("timeout", &self.shared.timeout)
            .field("max_calls", &self.shared.max_calls)
            .finish_non_exhaustive()
    }
}

/// Configures a [`Runtime`].
pub struct RuntimeBuilder {
    registry: Arc<Registry>,
    timeout: Duration,
    max_input_bytes: usize,
    max_output_bytes: usize,
    max_concurrency: Option<usize>,
    max_calls: Option<u64>,
    max_call_id_bytes: usize,
    call_id_retention: usize,
    authorize: Option<Box<dyn Authorize>>,
    approver: Option<Box<dyn Approver>>,
    observer: Option<Arc<dyn Observer>>,
    ledger: Option<Arc<dyn Ledger>>,
    rerun_interrupted: bool,
    lease_grace: Duration,
}

impl RuntimeBuilder {
    /// How long one call may run unless its tool sets its own timeout (default 30 s). The
    /// run's deadline in the [`Context`] also bounds every call.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Cap on arguments as JSON text, unless the tool sets its own (default 1 MiB).
    pub fn max_input_bytes(mut self, bytes: usize) -> Self {
        self.max_input_bytes = bytes;
        self
    }

    /// Cap on outputs as JSON text, unless the tool sets its own (default 1 MiB).
    pub fn max_output_bytes(mut self, bytes: usize) -> Self {
        self.max_output_bytes = bytes;
        self
    }

    /// At most `limit` calls run at once across all tools; others wait their turn (bounded
    /// by the run's deadline and cancellation). A limit of 0 is taken as 1, so calls cannot
    /// wait forever.
    pub fn max_concurrency(mut self, limit: usize) -> Self {
        self.max_concurrency = Some(limit);
        self
    }

    /// At most `limit` calls run over the runtime's life; later ones are `budget_exhausted`.
    /// See [Budgets](self#budgets).
    pub fn max_calls(mut self, limit: u64) -> Self {
        self.max_calls = Some(limit);
        self
    }

    /// Cap on the length of a call id in bytes (default 256); a longer id ends as
    /// `call_id_too_long` and is not remembered.
    pub fn max_call_id_bytes(mut self, bytes: usize) -> Self {
        self.max_call_id_bytes = bytes;
        self
    }

    /// How many distinct call ids are remembered to refuse a reuse (default 16,384, the most
    /// recent ones). A reused id that was already forgotten runs as a new call; 0 turns the
    /// check off. Memory is at most `count` ids of up to
    /// [`max_call_id_bytes`](Self::max_call_id_bytes) each.
    pub fn call_id_retention(mut self, count: usize) -> Self {
        self.call_id_retention = count;
        self
    }

    /// The authorization policy consulted for every valid call (default: allow).
    pub fn authorize(mut self, policy: impl Authorize) -> Self {
        self.authorize = Some(Box::new(policy));
        self
    }

    /// The approver for tools that require approval (default: none, so they are refused).
    pub fn approver(mut self, approver: impl Approver) -> Self {
        self.approver = Some(Box::new(approver));
        self
    }

    /// Receives progress and outcome events.
    pub fn observer(mut self, observer: impl Observer) -> Self {
        self.observer = Some(Arc::new(observer));
        self
    }

    /// Claims every call in `ledger` before it runs and records its outcome there, shared by
    /// every runtime (in this process or another) that uses the same store: see the
    /// [`ledger`](crate::ledger) module for what that guarantees. With a ledger, a reused call
    /// id is answered by the ledger (a replay, a conflict, in flight) instead of
    /// `duplicate_call_id`, and the call quotas ([`max_calls`](Self::max_calls),
    /// [`ToolDef::max_calls`](crate::ToolDef::max_calls)) are counted in the ledger per
    /// [scope](crate::Context::scope).
    pub fn ledger<L: Ledger>(mut self, ledger: Arc<L>) -> Self {
        self.ledger = Some(ledger);
        self
    }

    /// Whether a read-only or idempotent call whose earlier attempt was interrupted (claimed,
    /// no outcome, its lease passed) is run again when it is proposed again (default: no, it
    /// is `outcome_unknown` until reconciled, like a non-idempotent one). Non-idempotent calls
    /// are never run again by themselves.
    pub fn rerun_interrupted(mut self, rerun: bool) -> Self {
        self.rerun_interrupted = rerun;
        self
    }

    /// How long a claim outlives its call's time limit before its holder is taken for dead
    /// (default 10 s). A claim's lease is the call's timeout (bounded by the run's deadline)
    /// plus this grace; until it passes, a second claim of the same id is `call_in_flight`.
    pub fn lease_grace(mut self, grace: Duration) -> Self {
        self.lease_grace = grace;
        self
    }

    /// The runtime.
    pub fn build(self) -> Runtime {
        let tools = self
            .registry
            .tools()
            .map(|info| ToolState {
                concurrency: info.settings.max_concurrency.map(admit::permits),
                calls: AtomicU64::new(0),
            })
            .collect();
        let seed = {
            use std::hash::{BuildHasher, Hasher};
            std::collections::hash_map::RandomState::new()
                .build_hasher()
                .finish()
        };
        let contracts = match &self.ledger {
            Some(_) => self
                .registry
                .tools()
                .map(|info| crate::digest::contract_hash(info.input_schema()))
                .collect(),
            None => Vec::new(),
        };
        Runtime {
            shared: Arc::new(Shared {
                registry: self.registry,
                tools,
                timeout: self.timeout,
                max_input_bytes: self.max_input_bytes,
                max_output_bytes: self.max_output_bytes,
                concurrency: self.max_concurrency.map(admit::permits),
                max_calls: self.max_calls,
                calls: AtomicU64::new(0),
                max_call_id_bytes: self.max_call_id_bytes,
                seen: Mutex::new(Recent::new(self.call_id_retention)),
                authorize: self.authorize,
                approver: self.approver,
                observer: self.observer,
                contracts,
                ledger: self.ledger,
                rerun_interrupted: self.rerun_interrupted,
                lease_grace: self.lease_grace,
                seed,
                counter: AtomicU64::new(0),
            }),
        }
    }
}

impl std::fmt::Debug for RuntimeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeBuilder")
            .field("registry", &self.registry)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// The failure for a wait that the run's cancellation or deadline cut short.
fn stopped(stop: Stopped, message: &'static str) -> Failure {
    match stop {
        Stopped::Cancelled => Failure::new(Code::Cancelled, message),
        Stopped::Deadline => Failure::new(Code::Timeout, message),
    }
}
