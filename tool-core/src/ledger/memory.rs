//! The ledger in one process's memory: the same rules as the durable ledgers, for one runtime
//! or several in one process, forgotten at exit.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use super::audit::{AuditEvent, AuditKind, AuditRecord};
use super::{
    Binding, Claim, ClaimKey, Claimed, Ledger, LedgerFuture, Reconciled, Recorded, Resolution,
    Unsettled, claim_decision, decide, settling_at, taken_over_effect, unix_millis,
};
use crate::Effect;
use crate::outcome::Code;
use crate::sync::lock;

/// A [`Ledger`] in memory, bounded: it keeps the most recent
/// [`capacity`](Self::with_capacity) settled claims (10,000 by default) and every claim still
/// running; a settled claim that was forgotten is claimed again as new. It keeps the audit
/// trails and quota counts of as many scopes, the most recently started ones: each scope's
/// trail whole, from its first record.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// use tool_core::ledger::{Ledger, MemoryLedger, verify};
///
/// let ledger = MemoryLedger::new();
/// assert!(ledger.use_nonce("n-1", std::time::SystemTime::now() + std::time::Duration::from_secs(60)).await.unwrap());
/// assert!(!ledger.use_nonce("n-1", std::time::SystemTime::now() + std::time::Duration::from_secs(60)).await.unwrap());
/// assert_eq!(verify(&ledger.trail("run-1").await.unwrap(), None), Ok(None));
/// # });
/// ```
pub struct MemoryLedger {
    state: Mutex<State>,
    capacity: usize,
}

type Fast = foldhash::fast::RandomState;

#[derive(Default)]
struct State {
    claims: HashMap<ClaimKey, Entry, Fast>,
    /// Keys in the order they were settled, each with its settlement's stamp, to forget the
    /// oldest beyond the capacity (a stale stamp is a key settled again since).
    settled: VecDeque<(u64, ClaimKey)>,
    next_stamp: u64,
    trails: Trails,
    nonces: HashMap<String, SystemTime>,
    runs: HashMap<(String, String), String>,
}

/// The audit trails and quota counts of the most recently started scopes.
#[derive(Default)]
struct Trails {
    by_scope: HashMap<String, Trail, Fast>,
    /// Quota counts, by scope and then by name.
    counters: HashMap<String, HashMap<String, u64, Fast>, Fast>,
    /// Scopes in the order their trails started, to forget the oldest beyond the capacity.
    scopes: VecDeque<String>,
}

/// A scope's audit records, each kept as its time and decision: its scope is the trail's and
/// its sequence number its place. Their hashes are computed when the trail is read, in order:
/// the same chain as hashing each one as it is appended (its fields are fixed then), without
/// hashing on every call.
#[derive(Default)]
struct Trail {
    events: Vec<Stored>,
    /// The calls its records name, in order: a record names the last call here, or a new one.
    calls: Vec<Arc<Call>>,
    /// The hashes of the first records, as far as a read has chained them.
    hashes: Vec<String>,
}

/// One record of a trail. The fields that name the call are shared with the record before it
/// when they are the same (a call's records follow each other).
struct Stored {
    at: i64,
    /// Its call's place in the trail's calls.
    call: usize,
    /// Whether the record carries its call's arguments digest (a decision made before the
    /// claim shares the claim's call without it).
    digest: bool,
    kind: AuditKind,
    code: Option<Code>,
    note: Option<String>,
    output: Output,
}

struct Call {
    call_id: Arc<str>,
    tool: Arc<str>,
    digest: Option<Arc<str>>,
    principal: Arc<str>,
}

impl Call {
    /// The call `claim` claims.
    fn of(claim: &Claim) -> Arc<Call> {
        let b = &claim.binding;
        Arc::new(Call {
            call_id: Arc::clone(&claim.call_id),
            tool: Arc::clone(&b.tool),
            digest: Some(Arc::clone(&b.arguments)),
            principal: Arc::clone(&b.principal),
        })
    }

    /// Whether `event` is about this call: `Some(true)` with its digest, `Some(false)`
    /// without one.
    fn names(&self, event: &AuditEvent) -> Option<bool> {
        let named = same(&self.call_id, &event.call_id)
            && same(&self.tool, &event.tool)
            && same(&self.principal, &event.principal);
        match (&event.digest, &self.digest) {
            _ if !named => None,
            (None, digest) => Some(digest.is_none()),
            (Some(digest), Some(own)) if same(digest, own) => Some(true),
            (Some(_), _) => None,
        }
    }
}

/// Whether two shared strings are equal, by the pointer first: the runtime hands a call's
/// records the same strings.
fn same(a: &Arc<str>, b: &Arc<str>) -> bool {
    Arc::ptr_eq(a, b) || a == b
}

/// A record's outcome digest: none, known, or that of an outcome held, computed when the trail
/// is first read (the outcome a ledger in memory holds never changes).
enum Output {
    None,
    Digest(String),
    Of(Arc<Recorded>),
}

impl Stored {
    /// The record's event; `call` is the call it names.
    fn event(&mut self, call: &Call) -> AuditEvent {
        if let Output::Of(recorded) = &self.output {
            self.output = Output::Digest(recorded.digest());
        }
        AuditEvent {
            call_id: call.call_id.clone(),
            tool: call.tool.clone(),
            kind: self.kind,
            code: self.code,
            digest: if self.digest {
                call.digest.clone()
            } else {
                None
            },
            principal: call.principal.clone(),
            note: self.note.clone(),
            output: match &self.output {
                Output::Digest(digest) => Some(digest.clone()),
                Output::None | Output::Of(_) => None,
            },
        }
    }
}

impl Trail {
    /// The trail's records with their hashes, chaining those not chained yet.
    fn records(&mut self, scope: &str) -> Vec<AuditRecord> {
        let mut records: Vec<AuditRecord> = Vec::with_capacity(self.events.len());
        let calls = &self.calls;
        for (i, stored) in self.events.iter_mut().enumerate() {
            // A record's call was pushed before it.
            let Some(call) = calls.get(stored.call) else {
                break;
            };
            let prev = records
                .last()
                .map_or_else(|| super::GENESIS.to_owned(), |r| r.hash.clone());
            let mut record = AuditRecord {
                scope: scope.to_owned(),
                seq: i as u64 + 1,
                at: stored.at,
                event: stored.event(call),
                prev,
                hash: String::new(),
            };
            record.hash = match self.hashes.get(i) {
                Some(hash) => hash.clone(),
                None => {
                    let hash = record.compute_hash();
                    self.hashes.push(hash.clone());
                    hash
                }
            };
            records.push(record);
        }
        records
    }

    fn extend<'e>(
        &mut self,
        at: i64,
        events: impl IntoIterator<Item = (&'e AuditEvent, Option<Arc<Recorded>>)>,
    ) {
        for (event, outcome) in events {
            self.push(at, event, outcome);
        }
    }

    /// Appends `claim`'s events and the record of the ledger's answer; returns the call that
    /// record names.
    fn claimed(&mut self, at: i64, claim: &Claim, answer: &Claimed) -> Arc<Call> {
        // The decisions before the claim share its call.
        let call = self.call_of(claim);
        for event in &claim.audit {
            let shared = self.calls[call].names(event).map(|digest| (call, digest));
            self.push_with(at, event, None, shared);
        }
        let (kind, code, note) = claim_decision(claim, answer);
        self.events.push(Stored {
            at,
            call,
            digest: true,
            kind,
            code,
            note,
            output: Output::None,
        });
        Arc::clone(&self.calls[call])
    }

    /// The place of the last call when it is `claim`'s, else of a new one.
    fn call_of(&mut self, claim: &Claim) -> usize {
        let b = &claim.binding;
        match self.calls.last() {
            Some(last)
                if same(&last.call_id, &claim.call_id)
                    && same(&last.tool, &b.tool)
                    && last
                        .digest
                        .as_ref()
                        .is_some_and(|digest| same(digest, &b.arguments))
                    && same(&last.principal, &b.principal) =>
            {
                self.calls.len() - 1
            }
            _ => {
                self.calls.push(Call::of(claim));
                self.calls.len() - 1
            }
        }
    }

    /// Appends `event`, whose outcome digest is that of `outcome` when there is one.
    fn push(&mut self, at: i64, event: &AuditEvent, outcome: Option<Arc<Recorded>>) {
        let last = self.calls.len().checked_sub(1);
        let call = last.and_then(|last| self.calls[last].names(event).map(|digest| (last, digest)));
        self.push_with(at, event, outcome, call);
    }

    /// Appends `event`, naming the call at `call` (with its digest or not) when that is its
    /// call.
    fn push_with(
        &mut self,
        at: i64,
        event: &AuditEvent,
        outcome: Option<Arc<Recorded>>,
        call: Option<(usize, bool)>,
    ) {
        let (call, digest) = match call {
            Some(shared) => shared,
            None => {
                self.calls.push(Arc::new(Call {
                    call_id: event.call_id.clone(),
                    tool: event.tool.clone(),
                    digest: event.digest.clone(),
                    principal: event.principal.clone(),
                }));
                (self.calls.len() - 1, true)
            }
        };
        let output = match (outcome, &event.output) {
            (Some(recorded), _) => Output::Of(recorded),
            (None, Some(digest)) => Output::Digest(digest.clone()),
            (None, None) => Output::None,
        };
        self.events.push(Stored {
            at,
            call,
            digest,
            kind: event.kind,
            code: event.code,
            note: event.note.clone(),
            output,
        });
    }
}

struct Entry {
    /// The call id and the binding's tool, arguments digest and principal, shared with its
    /// audit records.
    call: Arc<Call>,
    /// The claim's scope when it is not its key's (an idempotency key's tenant).
    scope: Option<Arc<str>>,
    /// The binding's contract digest.
    contract: Arc<str>,
    /// The effect it was claimed with.
    effect: Effect,
    attempt: u32,
    claimed_at: SystemTime,
    lease_until: SystemTime,
    outcome: Option<Arc<Recorded>>,
    released: bool,
    /// The stamp of its latest settlement.
    stamp: u64,
}

impl Entry {
    /// The scope of the claim, whose key is `key`.
    fn scope<'e>(&'e self, key: &'e ClaimKey) -> &'e Arc<str> {
        self.scope.as_ref().unwrap_or(&key.scope)
    }

    /// What the call was claimed with.
    fn binding(&self) -> Binding {
        Binding {
            tool: self.call.tool.clone(),
            contract: self.contract.clone(),
            arguments: self.call.digest.clone().unwrap_or_default(),
            principal: self.call.principal.clone(),
        }
    }
}

impl MemoryLedger {
    /// How many settled claims are kept by default: the most recent 10,000.
    pub const DEFAULT_CAPACITY: usize = 10_000;

    /// An empty ledger keeping [`DEFAULT_CAPACITY`](Self::DEFAULT_CAPACITY) settled claims.
    pub fn new() -> Self {
        MemoryLedger::with_capacity(MemoryLedger::DEFAULT_CAPACITY)
    }

    /// An empty ledger keeping the `capacity` most recently settled claims.
    pub fn with_capacity(capacity: usize) -> Self {
        MemoryLedger {
            state: Mutex::new(State::default()),
            capacity,
        }
    }
}

impl Default for MemoryLedger {
    fn default() -> Self {
        MemoryLedger::new()
    }
}

impl std::fmt::Debug for MemoryLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = lock(&self.state);
        f.debug_struct("MemoryLedger")
            .field("claims", &state.claims.len())
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl Trails {
    /// Appends `events` to `scope`'s trail; an event paired with an outcome settles it, and
    /// carries that outcome's digest.
    fn append<'e>(
        &mut self,
        scope: &str,
        events: impl IntoIterator<Item = (&'e AuditEvent, Option<Arc<Recorded>>)>,
        capacity: usize,
    ) {
        self.append_at(unix_millis(SystemTime::now()), scope, events, capacity);
    }

    fn append_at<'e>(
        &mut self,
        at: i64,
        scope: &str,
        events: impl IntoIterator<Item = (&'e AuditEvent, Option<Arc<Recorded>>)>,
        capacity: usize,
    ) {
        if let Some(trail) = self.by_scope.get_mut(scope) {
            trail.extend(at, events);
            return;
        }
        self.start(scope, capacity);
        if let Some(trail) = self.by_scope.get_mut(scope) {
            trail.extend(at, events);
        }
    }

    /// Starts `scope`'s trail, forgetting the oldest beyond the capacity.
    fn start(&mut self, scope: &str, capacity: usize) {
        self.scopes.push_back(scope.to_owned());
        while self.scopes.len() > capacity.max(1) {
            if let Some(old) = self.scopes.pop_front() {
                self.by_scope.remove(&old);
                self.counters.remove(&old);
            }
        }
        self.by_scope.insert(scope.to_owned(), Trail::default());
    }

    /// Appends `claim`'s events and the record of the ledger's answer, what
    /// [`claim_event`](super::claim_event) makes, without building that event; returns the
    /// call that record names.
    fn append_claim(
        &mut self,
        at: SystemTime,
        claim: &Claim,
        answer: &Claimed,
        capacity: usize,
    ) -> Arc<Call> {
        let at = unix_millis(at);
        if let Some(trail) = self.by_scope.get_mut(&*claim.scope) {
            return trail.claimed(at, claim, answer);
        }
        self.start(&claim.scope, capacity);
        match self.by_scope.get_mut(&*claim.scope) {
            Some(trail) => trail.claimed(at, claim, answer),
            None => Call::of(claim),
        }
    }

    fn take_quotas(&mut self, claim: &Claim) -> Result<(), String> {
        if claim.quotas.is_empty() {
            return Ok(());
        }
        let counters = self.counters.entry(claim.scope.to_string()).or_default();
        for quota in &claim.quotas {
            if counters.get(&quota.name).copied().unwrap_or(0) >= quota.limit {
                return Err(quota.name.clone());
            }
        }
        for quota in &claim.quotas {
            *counters.entry(quota.name.clone()).or_default() += 1;
        }
        Ok(())
    }
}

impl State {
    fn settle(&mut self, key: &ClaimKey, capacity: usize) {
        let stamp = self.next_stamp;
        self.next_stamp += 1;
        if let Some(entry) = self.claims.get_mut(key) {
            entry.stamp = stamp;
        }
        self.settled_as(stamp, key, capacity);
    }

    /// Queues `key`, settled with `stamp`, forgetting the oldest settled claims beyond the
    /// capacity.
    fn settled_as(&mut self, stamp: u64, key: &ClaimKey, capacity: usize) {
        self.settled.push_back((stamp, key.clone()));
        while self.settled.len() > capacity {
            let Some((stamp, old)) = self.settled.pop_front() else {
                break;
            };
            // Only if this was its latest settlement (a retried key is queued again).
            if self
                .claims
                .get(&old)
                .is_some_and(|e| e.stamp == stamp && (e.outcome.is_some() || e.released))
            {
                self.claims.remove(&old);
            }
        }
    }
}

impl Ledger for MemoryLedger {
    fn claim<'a>(&'a self, claim: &'a Claim) -> LedgerFuture<'a, Claimed> {
        use std::collections::hash_map::Entry as Slot;
        let now = SystemTime::now();
        let mut guard = lock(&self.state);
        let state = &mut *guard;
        let slot = state.claims.entry(claim.key.clone());
        let (attempt, effect) = match &slot {
            Slot::Vacant(_) => (1, claim.effect),
            Slot::Occupied(held) => {
                let held = held.get();
                let passed = held.lease_until <= now;
                match decide(
                    claim,
                    &held.binding(),
                    held.effect,
                    held.outcome.as_deref().cloned(),
                    held.released,
                    passed,
                ) {
                    None => (
                        held.attempt.saturating_add(1),
                        taken_over_effect(claim, held.effect, held.released),
                    ),
                    Some(answer) => {
                        state
                            .trails
                            .append_claim(now, claim, &answer, self.capacity);
                        return Box::pin(std::future::ready(Ok(answer)));
                    }
                }
            }
        };
        let answer = match state.trails.take_quotas(claim) {
            Err(quota) => Claimed::Exhausted(quota),
            Ok(()) => Claimed::New { attempt },
        };
        let call = state
            .trails
            .append_claim(now, claim, &answer, self.capacity);
        if let Claimed::New { .. } = answer {
            let entry = Entry {
                call,
                scope: (!same(&claim.scope, &claim.key.scope)).then(|| Arc::clone(&claim.scope)),
                contract: Arc::clone(&claim.binding.contract),
                effect,
                attempt,
                claimed_at: now,
                lease_until: lease_until(now, claim.lease),
                outcome: None,
                released: false,
                stamp: u64::MAX,
            };
            slot.insert_entry(entry);
        }
        Box::pin(std::future::ready(Ok(answer)))
    }

    fn settle<'a>(
        &'a self,
        key: &'a ClaimKey,
        attempt: u32,
        outcome: &'a Recorded,
        audit: &'a [AuditEvent],
    ) -> LedgerFuture<'a, bool> {
        let mut guard = lock(&self.state);
        let state = &mut *guard;
        match state.claims.get_mut(key) {
            Some(entry)
                if entry.attempt == attempt && entry.outcome.is_none() && !entry.released =>
            {
                let recorded = Arc::new(outcome.clone());
                entry.outcome = Some(Arc::clone(&recorded));
                let stamp = state.next_stamp;
                state.next_stamp += 1;
                entry.stamp = stamp;
                // The same events as `settling` gives, the digest computed when read.
                let at = settling_at(audit);
                let added = (at == audit.len()).then(|| {
                    let mut added = call_event(entry);
                    added.kind = AuditKind::Outcome;
                    added.code = match outcome {
                        Recorded::Output(_) => None,
                        Recorded::Failure { code, .. } => Some(*code),
                    };
                    added
                });
                let events = audit.iter().chain(added.as_ref()).enumerate();
                state.trails.append(
                    entry.scope(key),
                    events.map(|(i, e)| (e, (i == at).then(|| Arc::clone(&recorded)))),
                    self.capacity,
                );
                state.settled_as(stamp, key, self.capacity);
            }
            _ => return Box::pin(std::future::ready(Ok(false))),
        }
        Box::pin(std::future::ready(Ok(true)))
    }

    fn append<'a>(&'a self, scope: &'a str, audit: &'a [AuditEvent]) -> LedgerFuture<'a, ()> {
        lock(&self.state)
            .trails
            .append(scope, audit.iter().map(|e| (e, None)), self.capacity);
        Box::pin(std::future::ready(Ok(())))
    }

    fn reconcile<'a>(
        &'a self,
        listed: &'a Unsettled,
        resolution: &'a Resolution,
    ) -> LedgerFuture<'a, Reconciled> {
        let key = &listed.key;
        let mut state = lock(&self.state);
        let event = match state.claims.get_mut(key) {
            None => return Box::pin(std::future::ready(Ok(Reconciled::NotFound))),
            Some(entry) => {
                let settled = entry.outcome.is_some() || entry.released;
                let claimed_at = unix_millis(entry.claimed_at);
                if let Some(answer) = Reconciled::check(listed, entry.attempt, claimed_at, settled)
                {
                    return Box::pin(std::future::ready(Ok(answer)));
                }
                let mut event = call_event(entry);
                event.kind = AuditKind::Reconciled;
                event.note = Some(resolution.as_str().to_owned());
                match resolution.recorded() {
                    Some(recorded) => {
                        event.output = Some(recorded.digest());
                        entry.outcome = Some(Arc::new(recorded));
                    }
                    None => entry.released = true,
                }
                (Arc::clone(entry.scope(key)), event)
            }
        };
        state
            .trails
            .append(&event.0, [(&event.1, None)], self.capacity);
        state.settle(key, self.capacity);
        Box::pin(std::future::ready(Ok(Reconciled::Settled)))
    }

    fn unsettled<'a>(&'a self, scope: &'a str) -> LedgerFuture<'a, Vec<Unsettled>> {
        let now = SystemTime::now();
        let state = lock(&self.state);
        let mut found: Vec<Unsettled> = state
            .claims
            .iter()
            .filter(|(key, e)| {
                **e.scope(key) == *scope
                    && e.outcome.is_none()
                    && !e.released
                    && e.lease_until <= now
            })
            .map(|(key, e)| Unsettled {
                key: key.clone(),
                call_id: e.call.call_id.to_string(),
                binding: e.binding(),
                attempt: e.attempt,
                claimed_at: e.claimed_at,
            })
            .collect();
        found.sort_by(|a, b| (a.claimed_at, &a.key).cmp(&(b.claimed_at, &b.key)));
        Box::pin(std::future::ready(Ok(found)))
    }

    fn trail<'a>(&'a self, scope: &'a str) -> LedgerFuture<'a, Vec<AuditRecord>> {
        let mut state = lock(&self.state);
        let trail = match state.trails.by_scope.get_mut(scope) {
            Some(trail) => trail.records(scope),
            None => Vec::new(),
        };
        Box::pin(std::future::ready(Ok(trail)))
    }

    fn use_nonce<'a>(&'a self, nonce: &'a str, expires: SystemTime) -> LedgerFuture<'a, bool> {
        let now = SystemTime::now();
        let mut state = lock(&self.state);
        if state.nonces.len() >= 1024 && state.nonces.len().is_power_of_two() {
            state.nonces.retain(|_, until| *until > now);
        }
        let first = match state.nonces.get(nonce) {
            Some(_) => false,
            None => {
                state.nonces.insert(nonce.to_owned(), expires);
                true
            }
        };
        Box::pin(std::future::ready(Ok(first)))
    }

    fn store_run<'a>(
        &'a self,
        scope: &'a str,
        run: &'a str,
        run_state: Option<&'a str>,
    ) -> LedgerFuture<'a, ()> {
        let mut state = lock(&self.state);
        let key = (scope.to_owned(), run.to_owned());
        match run_state {
            Some(text) => {
                state.runs.insert(key, text.to_owned());
            }
            None => {
                state.runs.remove(&key);
            }
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn load_run<'a>(&'a self, scope: &'a str, run: &'a str) -> LedgerFuture<'a, Option<String>> {
        let found = lock(&self.state)
            .runs
            .get(&(scope.to_owned(), run.to_owned()))
            .cloned();
        Box::pin(std::future::ready(Ok(found)))
    }
}

/// An audit event about the claim's call, to be given its kind.
fn call_event(entry: &Entry) -> AuditEvent {
    AuditEvent {
        call_id: entry.call.call_id.clone(),
        tool: entry.call.tool.clone(),
        kind: AuditKind::Outcome,
        code: None,
        digest: entry.call.digest.clone(),
        principal: entry.call.principal.clone(),
        note: None,
        output: None,
    }
}

/// When a lease taken at `now` passes: a lease too long for the clock never does.
fn lease_until(now: SystemTime, lease: std::time::Duration) -> SystemTime {
    now.checked_add(lease)
        .or_else(|| now.checked_add(std::time::Duration::from_secs(1 << 40)))
        .unwrap_or(now)
}
