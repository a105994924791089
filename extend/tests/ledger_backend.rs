//! A call ledger written from scratch, outside the crate, through `tool_core::ledger::Ledger`
//! and the rules and helpers tool-core makes public for ledgers (`decide`, `settling`,
//! `Reconciled::check`, `AuditRecord::chain`, `held_outcomes`), passing the conformance suite
//! the crate's own ledgers pass (`tool_core::testing::ledger_suite`), and its check that an
//! outcome edited in the store fails verification.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use tool_core::Effect;
use tool_core::ledger::{
    AuditEvent, AuditKind, AuditRecord, Binding, Claim, ClaimKey, Claimed, HeldOutcome, Ledger,
    LedgerError, LedgerFuture, Reconciled, Recorded, Resolution, Unsettled, claim_event, decide,
    held_outcomes, settling, taken_over_effect, unix_millis, verify,
};
use tool_core::testing::ledger_suite::{self, Edit};

/// Every claim, trail, quota count, nonce and run in plain maps behind one lock: each method
/// is one step under it, which is what makes a claim with its quotas and records atomic.
#[derive(Debug, Default)]
struct MapLedger {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    claims: HashMap<ClaimKey, Held>,
    /// Each scope's chain, in order.
    trails: HashMap<String, Vec<AuditRecord>>,
    /// Claims taken, by scope and quota name.
    quotas: HashMap<(String, String), u64>,
    nonces: HashMap<String, SystemTime>,
    runs: HashMap<(String, String), String>,
}

/// A claim as stored.
#[derive(Debug)]
struct Held {
    call_id: Arc<str>,
    scope: Arc<str>,
    binding: Binding,
    /// The effect it was claimed with, which decides whether its interruption may be rerun.
    effect: Effect,
    attempt: u32,
    claimed_at: SystemTime,
    lease_until: SystemTime,
    outcome: Option<Recorded>,
    /// Reconciled as safe to retry: the next claim takes it over.
    released: bool,
    /// The sequence number of the record that settled it.
    settled_by: Option<u64>,
}

impl Held {
    fn settled(&self) -> bool {
        self.outcome.is_some() || self.released
    }

    /// An event about its call, to be given its kind.
    fn event(&self, kind: AuditKind) -> AuditEvent {
        AuditEvent {
            call_id: self.call_id.clone(),
            tool: self.binding.tool.clone(),
            kind,
            code: None,
            digest: Some(self.binding.arguments.clone()),
            principal: self.binding.principal.clone(),
            note: None,
            output: None,
        }
    }
}

impl State {
    /// Chains `events` onto `scope`'s trail; the sequence number of the first.
    fn append(&mut self, scope: &str, events: impl IntoIterator<Item = AuditEvent>) -> u64 {
        let trail = self.trails.entry(scope.to_owned()).or_default();
        let first = trail.len() as u64 + 1;
        let at = unix_millis(SystemTime::now());
        for event in events {
            let prev = trail.last().map(|r| (r.seq, r.hash.as_str()));
            let record = AuditRecord::chain(scope, prev, at, event);
            trail.push(record);
        }
        first
    }

    /// One unit of each of the claim's quotas, all or none: the name of one used up.
    fn take_quotas(&mut self, claim: &Claim) -> Result<(), String> {
        let key = |name: &str| (claim.scope.to_string(), name.to_owned());
        for quota in &claim.quotas {
            if self.quotas.get(&key(&quota.name)).copied().unwrap_or(0) >= quota.limit {
                return Err(quota.name.clone());
            }
        }
        for quota in &claim.quotas {
            *self.quotas.entry(key(&quota.name)).or_default() += 1;
        }
        Ok(())
    }

    fn claim(&mut self, claim: &Claim, now: SystemTime) -> Claimed {
        let (attempt, effect) = match self.claims.get(&claim.key) {
            None => (1, claim.effect),
            Some(held) => match decide(
                claim,
                &held.binding,
                held.effect,
                held.outcome.clone(),
                held.released,
                held.lease_until <= now,
            ) {
                Some(answer) => {
                    self.record_claim(claim, &answer);
                    return answer;
                }
                None => (
                    held.attempt.saturating_add(1),
                    taken_over_effect(claim, held.effect, held.released),
                ),
            },
        };
        let answer = match self.take_quotas(claim) {
            Err(quota) => Claimed::Exhausted(quota),
            Ok(()) => {
                self.claims.insert(
                    claim.key.clone(),
                    Held {
                        call_id: claim.call_id.clone(),
                        scope: claim.scope.clone(),
                        binding: claim.binding.clone(),
                        effect,
                        attempt,
                        claimed_at: now,
                        // A lease too long for the clock does not pass.
                        lease_until: now.checked_add(claim.lease).unwrap_or(now + YEARS),
                        outcome: None,
                        released: false,
                        settled_by: None,
                    },
                );
                Claimed::New { attempt }
            }
        };
        self.record_claim(claim, &answer);
        answer
    }

    /// The claim's own records, then the ledger's decision.
    fn record_claim(&mut self, claim: &Claim, answer: &Claimed) {
        let events = claim
            .audit
            .iter()
            .cloned()
            .chain([claim_event(claim, answer)]);
        self.append(&claim.scope, events);
    }

    fn settle(
        &mut self,
        key: &ClaimKey,
        attempt: u32,
        outcome: &Recorded,
        audit: &[AuditEvent],
    ) -> bool {
        let Some(held) = self.claims.get_mut(key) else {
            return false;
        };
        if held.attempt != attempt || held.settled() {
            return false;
        }
        let (events, at) = settling(audit, outcome, || held.event(AuditKind::Outcome));
        held.outcome = Some(outcome.clone());
        let scope = held.scope.clone();
        let first = self.append(&scope, events);
        if let Some(held) = self.claims.get_mut(key) {
            held.settled_by = Some(first + at as u64);
        }
        true
    }

    fn reconcile(&mut self, listed: &Unsettled, resolution: &Resolution) -> Reconciled {
        let Some(held) = self.claims.get_mut(&listed.key) else {
            return Reconciled::NotFound;
        };
        let claimed_at = unix_millis(held.claimed_at);
        if let Some(answer) = Reconciled::check(listed, held.attempt, claimed_at, held.settled()) {
            return answer;
        }
        let mut event = held.event(AuditKind::Reconciled);
        event.note = Some(resolution.as_str().to_owned());
        let recorded = resolution.recorded();
        match &recorded {
            Some(outcome) => event.output = Some(outcome.digest()),
            None => held.released = true,
        }
        let settles = recorded.is_some();
        held.outcome = recorded;
        let scope = held.scope.clone();
        let seq = self.append(&scope, [event]);
        if settles && let Some(held) = self.claims.get_mut(&listed.key) {
            held.settled_by = Some(seq);
        }
        Reconciled::Settled
    }

    fn unsettled(&self, scope: &str, now: SystemTime) -> Vec<Unsettled> {
        let mut found: Vec<Unsettled> = self
            .claims
            .iter()
            .filter(|(_, held)| *held.scope == *scope && !held.settled() && held.lease_until <= now)
            .map(|(key, held)| Unsettled {
                key: key.clone(),
                call_id: held.call_id.to_string(),
                binding: held.binding.clone(),
                attempt: held.attempt,
                claimed_at: held.claimed_at,
            })
            .collect();
        found.sort_by(|a, b| (a.claimed_at, &a.key).cmp(&(b.claimed_at, &b.key)));
        found
    }

    /// The trail with the digest of each outcome held now on the record that settled it, so
    /// an outcome changed in the store since fails verification there.
    fn trail(&self, scope: &str) -> Result<Vec<AuditRecord>, LedgerError> {
        let mut trail = self.trails.get(scope).cloned().unwrap_or_default();
        let held = self.claims.values().filter_map(|held| {
            let outcome = held.outcome.clone()?;
            (*held.scope == *scope).then(|| HeldOutcome {
                seq: held.settled_by,
                call_id: held.call_id.to_string(),
                outcome,
            })
        });
        held_outcomes(&mut trail, held)?;
        Ok(trail)
    }

    fn use_nonce(&mut self, nonce: &str, expires: SystemTime, now: SystemTime) -> bool {
        self.nonces.retain(|_, until| *until > now);
        if self.nonces.contains_key(nonce) {
            return false;
        }
        self.nonces.insert(nonce.to_owned(), expires);
        true
    }

    /// Changes a claim of `scope` behind the ledger's back, as someone with access to the
    /// store could.
    fn edit(&mut self, scope: &str, edit: Edit) {
        let call_id = match edit {
            Edit::Body(id, _) | Edit::Status(id, _) | Edit::SettledBy(id, _) => id,
            other => panic!("this store cannot make the edit {other:?}"),
        };
        let held = self
            .claims
            .values_mut()
            .find(|held| *held.scope == *scope && *held.call_id == *call_id)
            .expect("the edited claim is stored");
        let outcome = held.outcome.take().expect("the edited claim is settled");
        let (status, body, detail) = (
            outcome.status(),
            outcome.body().to_owned(),
            outcome.detail().map(str::to_owned),
        );
        held.outcome = Some(
            match edit {
                Edit::Body(_, body) => Recorded::from_parts(status, body.to_owned(), detail),
                Edit::Status(_, status) => Recorded::from_parts(status, body, detail),
                Edit::SettledBy(_, seq) => {
                    held.settled_by = seq.map(|seq| u64::try_from(seq).expect("a sequence number"));
                    Ok(outcome)
                }
                other => panic!("this store cannot make the edit {other:?}"),
            }
            .expect("an outcome the crate can read"),
        );
    }
}

/// Far enough ahead to stand for "never".
const YEARS: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

impl MapLedger {
    fn state(&self) -> MutexGuard<'_, State> {
        // Every step leaves the maps whole before anything in it can panic (the suite's
        // asserts run outside the lock), so a poisoned lock still guards a consistent store.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A ledger answer that is ready now: every step is done under the lock, without waiting.
fn ready<'a, T: Send + 'a>(answer: Result<T, LedgerError>) -> LedgerFuture<'a, T> {
    Box::pin(std::future::ready(answer))
}

impl Ledger for MapLedger {
    fn claim<'a>(&'a self, claim: &'a Claim) -> LedgerFuture<'a, Claimed> {
        ready(Ok(self.state().claim(claim, SystemTime::now())))
    }

    fn settle<'a>(
        &'a self,
        key: &'a ClaimKey,
        attempt: u32,
        outcome: &'a Recorded,
        audit: &'a [AuditEvent],
    ) -> LedgerFuture<'a, bool> {
        ready(Ok(self.state().settle(key, attempt, outcome, audit)))
    }

    fn append<'a>(&'a self, scope: &'a str, audit: &'a [AuditEvent]) -> LedgerFuture<'a, ()> {
        self.state().append(scope, audit.iter().cloned());
        ready(Ok(()))
    }

    fn reconcile<'a>(
        &'a self,
        listed: &'a Unsettled,
        resolution: &'a Resolution,
    ) -> LedgerFuture<'a, Reconciled> {
        ready(Ok(self.state().reconcile(listed, resolution)))
    }

    fn unsettled<'a>(&'a self, scope: &'a str) -> LedgerFuture<'a, Vec<Unsettled>> {
        ready(Ok(self.state().unsettled(scope, SystemTime::now())))
    }

    fn trail<'a>(&'a self, scope: &'a str) -> LedgerFuture<'a, Vec<AuditRecord>> {
        ready(self.state().trail(scope))
    }

    fn use_nonce<'a>(&'a self, nonce: &'a str, expires: SystemTime) -> LedgerFuture<'a, bool> {
        ready(Ok(self.state().use_nonce(
            nonce,
            expires,
            SystemTime::now(),
        )))
    }

    fn store_run<'a>(
        &'a self,
        scope: &'a str,
        run: &'a str,
        state: Option<&'a str>,
    ) -> LedgerFuture<'a, ()> {
        let key = (scope.to_owned(), run.to_owned());
        let mut store = self.state();
        match state {
            Some(text) => store.runs.insert(key, text.to_owned()),
            None => store.runs.remove(&key),
        };
        ready(Ok(()))
    }

    fn load_run<'a>(&'a self, scope: &'a str, run: &'a str) -> LedgerFuture<'a, Option<String>> {
        let key = (scope.to_owned(), run.to_owned());
        ready(Ok(self.state().runs.get(&key).cloned()))
    }
}

#[tokio::test]
async fn a_ledger_of_our_own_keeps_every_rule() {
    let ledger = Arc::new(MapLedger::default());
    ledger_suite::check(Arc::clone(&ledger), "ext").await;

    // The suite ran to its end on this store: each part left its scope's trail, whole, and the
    // last part, 64 racing ids, admitted each exactly once.
    for part in ["replay", "keys", "crash", "stale", "quota", "race"] {
        let trail = ledger.trail(&format!("ext-{part}")).await.unwrap();
        assert!(!trail.is_empty(), "{part}");
        verify(&trail, None).unwrap();
    }
    let race = ledger.trail("ext-race").await.unwrap();
    let admitted = race
        .iter()
        .filter(|r| r.event.kind == AuditKind::Admitted)
        .count();
    assert_eq!(admitted, 64);
    let until = SystemTime::now() + Duration::from_secs(60);
    assert!(!ledger.use_nonce("ext-nonce", until).await.unwrap());

    // One store, checked again under another prefix: nothing of the first run leaks in.
    ledger_suite::check(Arc::clone(&ledger), "again").await;
}

#[tokio::test]
async fn an_outcome_edited_in_its_store_fails_verification() {
    let ledger = MapLedger::default();
    ledger_suite::edited_outcomes_fail_verification(&ledger, |edit| {
        ledger.state().edit("s", edit);
        std::future::ready(())
    })
    .await;
}
