//! The call ledger: what makes a call safe to repeat, kept where every worker and every
//! restart can see it.
//!
//! A runtime built with [`RuntimeBuilder::ledger`](crate::runtime::RuntimeBuilder::ledger) claims each
//! call in the ledger before it runs and records its outcome after, so:
//!
//! - **Exactly-once admission.** A call is claimed as (scope, call id) together with the tool,
//!   a hash of its input contract, a digest of its validated arguments (canonical JSON) and the
//!   principal. A second claim of the same id gets the recorded outcome back and nothing runs
//!   (a *replay*, [`Outcome::is_replay`](crate::Outcome::is_replay)); a claim of the same id for
//!   another tool, other arguments, another contract or another principal is refused as
//!   `call_id_conflict`; a claim while the first is still running is refused as
//!   `call_in_flight` (it does not wait: the caller retries, and then gets the replay).
//! - **Crashes.** A claim whose holder died keeps no outcome. Once its lease has passed (the
//!   call's time limit plus a grace period), a non-idempotent call is `outcome_unknown` and is
//!   never run again by itself: [`Ledger::reconcile`] settles it (it completed with this output,
//!   it did not happen, or it is safe to retry). A read-only or idempotent call may be run again
//!   when the runtime allows it
//!   ([`RuntimeBuilder::rerun_interrupted`](crate::runtime::RuntimeBuilder::rerun_interrupted)).
//! - **Idempotency keys** ([`ContextBuilder::idempotency_key`](crate::ContextBuilder::idempotency_key)):
//!   an application's key, scoped by tenant, claimed instead of the call id. The same key with
//!   the same call gives the same outcome; with another call it is refused as
//!   `idempotency_conflict`.
//! - **Shared limits.** The runtime's and the tools' call quotas are counted in the ledger,
//!   per scope, in the same step as the claim; approval nonces are used once
//!   ([`Ledger::use_nonce`]); a paused agent run can be stored for another process to resume
//!   ([`Ledger::store_run`]).
//! - **Audit trail.** Every stage decision is appended per scope, with digests and never
//!   argument values, each record carrying the hash of the one before; [`verify`] finds an
//!   edited, removed, inserted or reordered record. The record that settles a call carries
//!   the digest of its outcome, and a trail read from the ledger carries the digest of the
//!   outcome the ledger holds now, so an outcome edited in the store, which replays would
//!   return, fails verification at that record too.
//!
//! Three ledgers implement the trait: [`MemoryLedger`] (bounded, one process),
//! `SqliteLedger` (one file, feature `sqlite`) and `PostgresLedger` (many workers and
//! machines, feature `postgres`).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::Effect;
pub use crate::canonical::canonical_json;
use crate::digest::hex;
pub use crate::digest::sha256_hex;
use crate::outcome::Code;

mod audit;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;

pub use audit::{AuditEvent, AuditKind, AuditRecord, GENESIS, TrailError, verify};
pub use memory::MemoryLedger;
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use postgres::PostgresLedger;
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub use sqlite::{SqliteLedger, SqliteLedgerBuilder, Synchronous};

/// The future a [`Ledger`] method returns.
pub type LedgerFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, LedgerError>> + Send + 'a>>;

/// Where calls are claimed, settled and audited. See the [module docs](self) for what the
/// runtime asks of it and in which order.
///
/// Every method is one atomic step: a claim with its quotas and audit records is taken
/// entirely or not at all, whatever other processes do at the same time.
pub trait Ledger: Send + Sync + 'static {
    /// Claims `claim.key`: a new claim (taking one unit of each quota), or the reason the
    /// call must not run now. The claim's audit events, and the ledger's own record of its
    /// decision, are appended in the same step.
    fn claim<'a>(&'a self, claim: &'a Claim) -> LedgerFuture<'a, Claimed>;

    /// Records the outcome of the attempt `attempt` of a claim, with its audit events.
    /// Returns `false` (and records nothing) when that attempt no longer holds the claim: it
    /// was settled already, reconciled, or taken over after its lease passed.
    ///
    /// The last `outcome` event of `audit` is the record that settles the call (see
    /// [`settling`]): the ledger sets its [`output`](AuditEvent::output) to the outcome's
    /// digest, and adds such a record when `audit` has none.
    fn settle<'a>(
        &'a self,
        key: &'a ClaimKey,
        attempt: u32,
        outcome: &'a Recorded,
        audit: &'a [AuditEvent],
    ) -> LedgerFuture<'a, bool>;

    /// Appends audit events that belong to no claim (calls refused before admission).
    fn append<'a>(&'a self, scope: &'a str, audit: &'a [AuditEvent]) -> LedgerFuture<'a, ()>;

    /// Settles the interrupted attempt `listed` (as [`unsettled`](Ledger::unsettled) listed
    /// it), as the application decides, and appends a `reconciled` record.
    ///
    /// Only that attempt is settled: when the claim has moved on since it was listed (the
    /// attempt was settled or reconciled, or a later attempt holds the claim), nothing changes
    /// and the answer says what happened instead, so a reconciliation repeated from an old
    /// listing cannot settle, or release, a call that is running again.
    fn reconcile<'a>(
        &'a self,
        listed: &'a Unsettled,
        resolution: &'a Resolution,
    ) -> LedgerFuture<'a, Reconciled>;

    /// The claims of `scope` without an outcome whose lease has passed: the calls waiting to
    /// be reconciled, oldest first.
    fn unsettled<'a>(&'a self, scope: &'a str) -> LedgerFuture<'a, Vec<Unsettled>>;

    /// The audit trail of `scope`, in order.
    fn trail<'a>(&'a self, scope: &'a str) -> LedgerFuture<'a, Vec<AuditRecord>>;

    /// Uses a one-time nonce: `true` the first time, `false` ever after (until `expires`,
    /// after which the nonce may be forgotten; whatever it protected must be refused by then).
    fn use_nonce<'a>(&'a self, nonce: &'a str, expires: SystemTime) -> LedgerFuture<'a, bool>;

    /// Stores a paused run's state (a serialized transcript) under `scope` and `run`, or
    /// removes it with `None`.
    fn store_run<'a>(
        &'a self,
        scope: &'a str,
        run: &'a str,
        state: Option<&'a str>,
    ) -> LedgerFuture<'a, ()>;

    /// The stored state of a paused run.
    fn load_run<'a>(&'a self, scope: &'a str, run: &'a str) -> LedgerFuture<'a, Option<String>>;
}

/// A shared ledger is a ledger: `Arc<dyn Ledger>` (or `Arc<SqliteLedger>`...) can be handed
/// wherever one is taken.
impl<L: Ledger + ?Sized> Ledger for std::sync::Arc<L> {
    fn claim<'a>(&'a self, claim: &'a Claim) -> LedgerFuture<'a, Claimed> {
        (**self).claim(claim)
    }

    fn settle<'a>(
        &'a self,
        key: &'a ClaimKey,
        attempt: u32,
        outcome: &'a Recorded,
        audit: &'a [AuditEvent],
    ) -> LedgerFuture<'a, bool> {
        (**self).settle(key, attempt, outcome, audit)
    }

    fn append<'a>(&'a self, scope: &'a str, audit: &'a [AuditEvent]) -> LedgerFuture<'a, ()> {
        (**self).append(scope, audit)
    }

    fn reconcile<'a>(
        &'a self,
        listed: &'a Unsettled,
        resolution: &'a Resolution,
    ) -> LedgerFuture<'a, Reconciled> {
        (**self).reconcile(listed, resolution)
    }

    fn unsettled<'a>(&'a self, scope: &'a str) -> LedgerFuture<'a, Vec<Unsettled>> {
        (**self).unsettled(scope)
    }

    fn trail<'a>(&'a self, scope: &'a str) -> LedgerFuture<'a, Vec<AuditRecord>> {
        (**self).trail(scope)
    }

    fn use_nonce<'a>(&'a self, nonce: &'a str, expires: SystemTime) -> LedgerFuture<'a, bool> {
        (**self).use_nonce(nonce, expires)
    }

    fn store_run<'a>(
        &'a self,
        scope: &'a str,
        run: &'a str,
        state: Option<&'a str>,
    ) -> LedgerFuture<'a, ()> {
        (**self).store_run(scope, run, state)
    }

    fn load_run<'a>(&'a self, scope: &'a str, run: &'a str) -> LedgerFuture<'a, Option<String>> {
        (**self).load_run(scope, run)
    }
}

/// What a claim is keyed by.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ClaimKey {
    /// Whether `id` is a provider's call id or an application's idempotency key.
    pub kind: KeyKind,
    /// The scope of the id: the context's [`scope`](crate::Context::scope) for call ids, its
    /// tenant for idempotency keys.
    pub scope: Arc<str>,
    /// The call id or the idempotency key.
    pub id: Arc<str>,
}

impl ClaimKey {
    /// The key of a provider's call id in a scope.
    pub fn call(scope: impl Into<Arc<str>>, call_id: impl Into<Arc<str>>) -> Self {
        ClaimKey {
            kind: KeyKind::CallId,
            scope: scope.into(),
            id: call_id.into(),
        }
    }

    /// The key of an application's idempotency key for a tenant.
    pub fn idempotency(tenant: impl Into<Arc<str>>, key: impl Into<Arc<str>>) -> Self {
        ClaimKey {
            kind: KeyKind::IdempotencyKey,
            scope: tenant.into(),
            id: key.into(),
        }
    }
}

/// The two kinds of [`ClaimKey`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyKind {
    /// A provider's call id, unique within a scope.
    CallId,
    /// An application's idempotency key, unique within a tenant.
    IdempotencyKey,
}

impl KeyKind {
    /// `"call_id"` or `"idempotency_key"`, as stored.
    pub const fn as_str(self) -> &'static str {
        match self {
            KeyKind::CallId => "call_id",
            KeyKind::IdempotencyKey => "idempotency_key",
        }
    }

    /// The kind of a stored string.
    pub fn parse(text: &str) -> Option<KeyKind> {
        match text {
            "call_id" => Some(KeyKind::CallId),
            "idempotency_key" => Some(KeyKind::IdempotencyKey),
            _ => None,
        }
    }
}

/// What is bound to a claim: a second claim of the same key must match it exactly to be
/// replayed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binding {
    /// The tool's name.
    pub tool: Arc<str>,
    /// SHA-256 (hex) of the tool's input schema as exact canonical JSON.
    pub contract: Arc<str>,
    /// SHA-256 (hex) of the validated arguments as exact canonical JSON.
    pub arguments: Arc<str>,
    /// The principal the call runs for.
    pub principal: Arc<str>,
}

impl Binding {
    /// What differs between this binding and `other`, for the conflict's message: `"tool"`,
    /// `"arguments"`, `"contract"` or `"principal"`, the first that differs.
    pub fn difference(&self, other: &Binding) -> Option<&'static str> {
        if self.tool != other.tool {
            Some("tool")
        } else if self.arguments != other.arguments {
            Some("arguments")
        } else if self.contract != other.contract {
            Some("contract")
        } else if self.principal != other.principal {
            Some("principal")
        } else {
            None
        }
    }
}

/// A request to claim a call before it runs.
#[derive(Debug, Clone)]
pub struct Claim {
    /// The key claimed.
    pub key: ClaimKey,
    /// The call id (also when the key is an idempotency key), for the audit trail.
    pub call_id: Arc<str>,
    /// The scope whose audit trail and quotas the call belongs to.
    pub scope: Arc<str>,
    /// What the claim binds.
    pub binding: Binding,
    /// The tool's declared effect.
    pub effect: Effect,
    /// How long the claim is held without an outcome before its holder is taken for dead.
    pub lease: Duration,
    /// Whether an interrupted attempt of a read-only or idempotent call may be run again.
    pub rerun_interrupted: bool,
    /// Quotas the new claim takes one unit of, all or none.
    pub quotas: Vec<Quota>,
    /// Decisions made before the claim (authorized, approved), appended with it.
    pub audit: Vec<AuditEvent>,
}

/// A call quota counted in the ledger: at most `limit` claims per scope under `name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quota {
    /// `"calls"` for the runtime's quota, `"calls:<tool>"` for a tool's.
    pub name: String,
    /// The most claims allowed.
    pub limit: u64,
}

/// The answer to a [`Claim`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Claimed {
    /// The call is claimed: run it, then [`settle`](Ledger::settle) this attempt (1 for a
    /// first claim, more when an interrupted one was taken over).
    New {
        /// The attempt number.
        attempt: u32,
    },
    /// The call completed before: this is its outcome; nothing runs.
    Replay(Recorded),
    /// The key was claimed for another call.
    Conflict {
        /// What differs: `"tool"`, `"arguments"`, `"contract"` or `"principal"`.
        differs: &'static str,
    },
    /// The key is held by a call that is still running (its lease has not passed).
    InFlight,
    /// The key's holder stopped without an outcome and the call may have had effects: it
    /// waits for [`reconcile`](Ledger::reconcile).
    Unknown,
    /// A quota is used up: its name.
    Exhausted(String),
}

/// A call's terminal outcome as the ledger keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Recorded {
    /// The checked output, as JSON text.
    Output(String),
    /// The failure: its code, message and operator detail.
    Failure {
        /// The stable code.
        code: Code,
        /// The message the model saw.
        message: String,
        /// The operator's detail.
        detail: Option<String>,
    },
}

impl Recorded {
    /// `"ok"` or the failure's code.
    pub fn status(&self) -> &'static str {
        match self {
            Recorded::Output(_) => "ok",
            Recorded::Failure { code, .. } => code.as_str(),
        }
    }

    /// The outcome from its stored parts: `status` (`"ok"` or a code) and `body` (the output
    /// text, or the failure's message), with the failure's `detail`.
    pub fn from_parts(
        status: &str,
        body: String,
        detail: Option<String>,
    ) -> Result<Recorded, LedgerError> {
        if status == "ok" {
            return Ok(Recorded::Output(body));
        }
        let code = status
            .parse::<Code>()
            .map_err(|_| LedgerError::new(format!("stored outcome has unknown code {status:?}")))?;
        Ok(Recorded::Failure {
            code,
            message: body,
            detail,
        })
    }

    /// The output text or the failure's message.
    pub fn body(&self) -> &str {
        match self {
            Recorded::Output(text) => text,
            Recorded::Failure { message, .. } => message,
        }
    }

    /// The failure's detail.
    pub fn detail(&self) -> Option<&str> {
        match self {
            Recorded::Output(_) => None,
            Recorded::Failure { detail, .. } => detail.as_deref(),
        }
    }

    /// SHA-256 (hex) of the outcome: its status, body and detail, each length-prefixed. The
    /// record that settles a call carries it in the audit trail
    /// ([`AuditEvent::output`]).
    pub fn digest(&self) -> String {
        let mut hasher = Sha256::new();
        hasher.update(b"tool-core recorded outcome v1");
        for part in [Some(self.status()), Some(self.body()), self.detail()] {
            match part {
                None => hasher.update([0]),
                Some(text) => {
                    hasher.update([1]);
                    hasher.update((text.len() as u64).to_be_bytes());
                    hasher.update(text.as_bytes());
                }
            }
        }
        hex(&hasher.finalize())
    }
}

/// How the application settles a claim that has no outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Resolution {
    /// The call's effect happened, and this is its output (JSON text): later claims replay it.
    Completed(String),
    /// The call's effect did not happen: later claims replay an `execution_failed` failure
    /// with this message.
    DidNotHappen(String),
    /// Nothing is in doubt: the next claim runs the call again.
    Retry,
}

impl Resolution {
    /// `"completed"`, `"did_not_happen"` or `"retry"`, as audited.
    pub fn as_str(&self) -> &'static str {
        match self {
            Resolution::Completed(_) => "completed",
            Resolution::DidNotHappen(_) => "did_not_happen",
            Resolution::Retry => "retry",
        }
    }

    /// The outcome later claims replay, or `None` to run the call again.
    pub fn recorded(&self) -> Option<Recorded> {
        match self {
            Resolution::Completed(output) => Some(Recorded::Output(output.clone())),
            Resolution::DidNotHappen(message) => Some(Recorded::Failure {
                code: Code::ExecutionFailed,
                message: message.clone(),
                detail: Some("reconciled: the call did not happen".into()),
            }),
            Resolution::Retry => None,
        }
    }
}

/// A claim without an outcome whose lease has passed.
///
/// Its `attempt` and `claimed_at` name the interrupted attempt:
/// [`reconcile`](Ledger::reconcile) settles that attempt and no other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsettled {
    /// The claim's key.
    pub key: ClaimKey,
    /// The call id of its last attempt.
    pub call_id: String,
    /// What the claim binds.
    pub binding: Binding,
    /// The attempt that was interrupted.
    pub attempt: u32,
    /// When that attempt was claimed.
    pub claimed_at: SystemTime,
}

/// The answer to [`Ledger::reconcile`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reconciled {
    /// The listed attempt was settled as resolved.
    Settled,
    /// The listed attempt was settled before, by its own outcome arriving late or by an
    /// earlier reconciliation; nothing changed.
    AlreadySettled,
    /// A later attempt holds the claim now (the call was retried, and may be running);
    /// nothing changed. List the unsettled claims again to see whether it needs reconciling.
    MovedOn {
        /// The attempt that holds the claim.
        attempt: u32,
    },
    /// No claim has this key: it was never claimed, or it was forgotten (purged, or beyond
    /// the memory ledger's capacity); nothing changed.
    NotFound,
}

impl Reconciled {
    /// What a ledger answers for the stored claim of the key `listed` names: its attempt,
    /// when that attempt was claimed (in milliseconds since the Unix epoch, as stored), and
    /// whether it is settled. `None` means the listed attempt is the one waiting: settle it.
    pub fn check(
        listed: &Unsettled,
        attempt: u32,
        claimed_at: i64,
        settled: bool,
    ) -> Option<Reconciled> {
        if attempt != listed.attempt || claimed_at != unix_millis(listed.claimed_at) {
            Some(Reconciled::MovedOn { attempt })
        } else if settled {
            Some(Reconciled::AlreadySettled)
        } else {
            None
        }
    }
}

/// A ledger that could not answer: the store is unreachable, or what it holds is not what
/// this crate wrote. The runtime refuses the call (`ledger_unavailable`) and runs nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerError {
    message: String,
}

impl LedgerError {
    /// An error with its message.
    pub fn new(message: impl Into<String>) -> Self {
        LedgerError {
            message: message.into(),
        }
    }

    /// What went wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for LedgerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LedgerError {}

/// Milliseconds since the Unix epoch (0 before it, saturating far after).
pub fn unix_millis(time: SystemTime) -> i64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |elapsed| {
        i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
    })
}

/// The time `millis` milliseconds after the Unix epoch (the epoch for negative values).
pub fn from_unix_millis(millis: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(millis).unwrap_or(0))
}

/// The effect as stored: `"read_only"`, `"idempotent"` or `"non_idempotent"`.
pub fn parse_effect(text: &str) -> Option<Effect> {
    match text {
        "read_only" => Some(Effect::ReadOnly),
        "idempotent" => Some(Effect::Idempotent),
        "non_idempotent" => Some(Effect::NonIdempotent),
        _ => None,
    }
}

/// What a ledger decides for a key that already has a claim, whatever its store: the one
/// rule every implementation applies, so they cannot disagree.
///
/// `held` is the stored claim: its binding, the effect it was claimed with (`held_effect`),
/// its outcome if settled, and whether its lease has passed. `None` from this function means
/// the new claim takes over the key (a retry after reconciliation, or the rerun of an
/// interrupted call); store it with [`taken_over_effect`].
///
/// An interrupted call is run again only when both the attempt that was interrupted and the
/// new one are read-only or idempotent: the interrupted attempt's effect says what may have
/// happened already (the tool, or what its
/// [`effect_from`](crate::ToolDef::effect_from) says of the arguments, may have changed
/// since), and the new one's what running again may do.
pub fn decide(
    claim: &Claim,
    held: &Binding,
    held_effect: Effect,
    outcome: Option<Recorded>,
    released: bool,
    lease_passed: bool,
) -> Option<Claimed> {
    if let Some(differs) = held.difference(&claim.binding) {
        return Some(Claimed::Conflict { differs });
    }
    if released {
        return None;
    }
    if let Some(outcome) = outcome {
        return Some(Claimed::Replay(outcome));
    }
    if !lease_passed {
        return Some(Claimed::InFlight);
    }
    if claim.rerun_interrupted && claim.effect.wider(held_effect) != Effect::NonIdempotent {
        return None;
    }
    Some(Claimed::Unknown)
}

/// The effect a claim that [`decide`] let take over a key is stored with: the new claim's
/// after a reconciliation released the key (nothing is in doubt), else the wider of the two,
/// since the interrupted attempt's effects may still be happening.
pub fn taken_over_effect(claim: &Claim, held_effect: Effect, released: bool) -> Effect {
    if released {
        claim.effect
    } else {
        claim.effect.wider(held_effect)
    }
}

/// The events a ledger appends when it settles a claim with `outcome`: `audit`, whose last
/// `outcome` event (or, when it has none, one added at the end for the claim's call) carries
/// the outcome's digest; with the index of that settling event.
pub fn settling(
    audit: &[AuditEvent],
    outcome: &Recorded,
    call: impl FnOnce() -> AuditEvent,
) -> (Vec<AuditEvent>, usize) {
    let mut events = audit.to_vec();
    let at = settling_at(audit);
    if at == events.len() {
        let mut added = call();
        added.kind = AuditKind::Outcome;
        added.code = match outcome {
            Recorded::Output(_) => None,
            Recorded::Failure { code, .. } => Some(*code),
        };
        events.push(added);
    }
    events[at].output = Some(outcome.digest());
    (events, at)
}

/// The index of the settling event among the events [`settling`] makes of `audit`: its last
/// `outcome` event, or one past its end.
pub fn settling_at(audit: &[AuditEvent]) -> usize {
    audit
        .iter()
        .rposition(|e| e.kind == AuditKind::Outcome)
        .unwrap_or(audit.len())
}

/// An outcome a ledger holds, as [`held_outcomes`] checks it against the trail.
#[derive(Debug, Clone)]
pub struct HeldOutcome {
    /// The sequence number of the record that settled it, in the claim's scope, as the claim
    /// notes it; `None` when the claim notes none (it was settled before its ledger kept
    /// outcome digests in the trail).
    pub seq: Option<u64>,
    /// The call id of the claim's attempt, which that record names too.
    pub call_id: String,
    /// The outcome, as stored now.
    pub outcome: Recorded,
}

/// Puts into `trail` (one scope's, in order) the digest of each outcome the ledger holds for
/// it, on the record that settled it, so that [`verify`] finds a record whose outcome was
/// edited since. An outcome that names a record the trail does not have, or one about
/// another call, is an error: the store was changed by something other than this crate.
///
/// Pass every settled claim of the scope, also those that name no record: such a claim is
/// checked against the records that settled its call id and that no other claim names. When
/// there are some, its outcome must be one of theirs, or the latest of them is reported as
/// edited; so removing a claim's pointer to its record does not hide an edited outcome. When
/// there are none, the claim was settled before the trail kept outcome digests, and there is
/// nothing to check it against.
pub fn held_outcomes(
    trail: &mut [AuditRecord],
    held: impl IntoIterator<Item = HeldOutcome>,
) -> Result<(), LedgerError> {
    let mut named = std::collections::BTreeSet::new();
    let mut unnamed = Vec::new();
    for held in held {
        let Some(seq) = held.seq else {
            unnamed.push(held);
            continue;
        };
        let Ok(at) = trail.binary_search_by_key(&seq, |r| r.seq) else {
            return Err(LedgerError::new(format!(
                "the outcome stored for call {:?} names audit record {}, which its trail does \
                 not have",
                held.call_id, seq
            )));
        };
        let event = &mut trail[at].event;
        if *event.call_id != *held.call_id {
            return Err(LedgerError::new(format!(
                "the outcome stored for call {:?} names audit record {}, which is about \
                 another call",
                held.call_id, seq
            )));
        }
        event.output = Some(held.outcome.digest());
        named.insert(at);
    }
    if unnamed.is_empty() {
        return Ok(());
    }
    // The records that settled a call, by call id, that no claim names: one of them settled
    // each claim that names none, unless that claim is older than outcome digests.
    let mut settlers: std::collections::HashMap<&str, Vec<usize>> =
        std::collections::HashMap::new();
    for (at, record) in trail.iter().enumerate() {
        let settles = matches!(
            record.event.kind,
            AuditKind::Outcome | AuditKind::Reconciled
        );
        if settles && record.event.output.is_some() && !named.contains(&at) {
            settlers.entry(&*record.event.call_id).or_default().push(at);
        }
    }
    let mut edited = Vec::new();
    for held in &unnamed {
        let Some(candidates) = settlers.get(held.call_id.as_str()) else {
            continue;
        };
        let digest = held.outcome.digest();
        let recorded = |at: &usize| trail[*at].event.output.as_deref() == Some(digest.as_str());
        if !candidates.iter().any(recorded)
            && let Some(&latest) = candidates.last()
        {
            edited.push((latest, digest));
        }
    }
    for (at, digest) in edited {
        trail[at].event.output = Some(digest);
    }
    Ok(())
}

/// The audit kind a claim's answer is recorded as.
pub fn claimed_kind(claimed: &Claimed) -> (AuditKind, Option<Code>) {
    match claimed {
        Claimed::New { .. } => (AuditKind::Admitted, None),
        Claimed::Replay(_) => (AuditKind::Replayed, None),
        Claimed::Conflict { .. } => (AuditKind::Refused, Some(Code::CallIdConflict)),
        Claimed::InFlight => (AuditKind::Refused, Some(Code::CallInFlight)),
        Claimed::Unknown => (AuditKind::Refused, Some(Code::OutcomeUnknown)),
        Claimed::Exhausted(_) => (AuditKind::Refused, Some(Code::BudgetExhausted)),
    }
}

/// The audit event recording a ledger's answer to `claim`.
pub fn claim_event(claim: &Claim, claimed: &Claimed) -> AuditEvent {
    let (kind, code, note) = claim_decision(claim, claimed);
    AuditEvent {
        call_id: claim.call_id.clone(),
        tool: claim.binding.tool.clone(),
        kind,
        code,
        digest: Some(claim.binding.arguments.clone()),
        principal: claim.binding.principal.clone(),
        output: None,
        note,
    }
}

/// The kind, code and note of the event [`claim_event`] makes.
pub(crate) fn claim_decision(
    claim: &Claim,
    claimed: &Claimed,
) -> (AuditKind, Option<Code>, Option<String>) {
    let (kind, mut code) = claimed_kind(claimed);
    if code == Some(Code::CallIdConflict) && claim.key.kind == KeyKind::IdempotencyKey {
        code = Some(Code::IdempotencyConflict);
    }
    let note = match claimed {
        Claimed::New { attempt } if *attempt > 1 => Some(format!("attempt {attempt}")),
        Claimed::Conflict { differs } => Some(format!("conflict: {differs}")),
        Claimed::Exhausted(quota) => Some(format!("quota {quota}")),
        _ => None,
    };
    (kind, code, note)
}
