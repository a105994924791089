//! The runtime: one entry point, [`Runtime::invoke`], that turns a proposed call into exactly
//! one [`Outcome`](crate::Outcome) through a fixed order of stages. Each stage has its own file in this folder.
//!
//! | # | stage | file | refuses with |
//! |---|---|---|---|
//! | 0 | correlate: the call id is short enough and, without a ledger, was not used in this runtime (within the retention); with a ledger, it is not empty unless the context has an idempotency key (`claim.rs`) | `correlate.rs` | `call_id_too_long`, `duplicate_call_id`, `missing_call_id` |
//! | 1 | resolve the name in the [`Registry`] (the allow-list) | `resolve.rs` | `unknown_tool` |
//! | 2 | input byte cap (and nesting depth, for arguments that arrive parsed) | `input.rs` | `input_too_large`, `invalid_arguments` |
//! | 3 | parse and validate into the tool's argument type, every violation | `input.rs` | `invalid_arguments` |
//! | 4 | authorize: the runtime's [`Authorize`] policies (runtime-wide, then the tenant's), then the tool's typed checks, in [this order](crate::authz#order); a policy's wait is bounded by the run | `authorize.rs` | `unauthorized`, `cancelled`, `timeout` |
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
//! the handler without leaving it; the runtime's policies (stage 4) see the tool, the
//! [`Context`](crate::Context), the validated arguments and the call's resource
//! ([`authz::Request`](crate::authz::Request)), and the approver (stage 5) sees the arguments as JSON (read again from the
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
//! loops) all end when the [`Context`](crate::Context) is cancelled or its deadline passes.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::Registry;
use crate::context::Stopped;
use crate::ledger::Ledger;
use crate::observe::Observer;
use crate::outcome::{Code, Failure, InvocationId};
use crate::recent::Recent;

mod admit;
mod approve;
mod authorize;
mod claim;
mod correlate;
mod execute;
mod input;
pub(crate) mod invoke;
mod output;
mod record;
mod resolve;

pub use crate::authz::Authorize;
pub use approve::{Approval, ApprovalFuture, ApprovalRequest, Approver};
pub(crate) use invoke::Runtime;

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
    policies: authorize::Policies,
    approver: Option<Box<dyn Approver>>,
    observer: Option<Arc<dyn Observer>>,
    ledger: Option<Arc<dyn Ledger>>,
    /// Each tool's contract hash, for the ledger's claims (empty without a ledger).
    contracts: Vec<Arc<str>>,
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
    policies: authorize::Policies,
    approver: Option<Box<dyn Approver>>,
    observer: Option<Arc<dyn Observer>>,
    ledger: Option<Arc<dyn Ledger>>,
    rerun_interrupted: bool,
    lease_grace: Duration,
}

impl RuntimeBuilder {
    /// How long one call may run unless its tool sets its own timeout (default 30 s). The
    /// run's deadline in the [`Context`](crate::Context) also bounds every call.
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

    /// Adds an authorization policy consulted for every valid call (default: none, so every
    /// valid call is authorized). Each call adds one, never replacing an earlier one: all must
    /// allow, in the order they were added, before the tenant's policies and the tool's own
    /// checks (see [the order](crate::authz#order)).
    pub fn authorize(mut self, policy: impl Authorize) -> Self {
        self.policies.global.push(Box::new(policy));
        self
    }

    /// Adds an authorization policy for the calls whose [`Context::tenant`](crate::Context::tenant)
    /// is `tenant`, asked after the runtime-wide ones; each call adds one, never replacing an
    /// earlier one. Calls of other tenants, or without one, are not asked to it.
    pub fn authorize_tenant(mut self, tenant: impl Into<String>, policy: impl Authorize) -> Self {
        self.policies
            .tenants
            .entry(tenant.into())
            .or_default()
            .push(Box::new(policy));
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
                .map(|info| Arc::from(crate::digest::contract_hash(info.input_schema())))
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
                policies: self.policies,
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
