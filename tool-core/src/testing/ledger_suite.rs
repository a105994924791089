//! The rules every [`Ledger`] must keep, as the runtime relies on them, checked on a store
//! of yours: exactly-once claims, replays and conflicts, interrupted calls and their
//! reconciliation, quotas, nonces, stored runs, U+0000 in every string, the audit trail, and
//! claims racing from many tasks. The ledgers of this crate run the same suite.
//!
//! Call [`check`] from a test with a fresh store. It panics, as a failed assertion does, at
//! the first rule the ledger breaks, saying which. A store whose claims can be edited behind
//! its back (a database) can also run [`edited_outcomes_fail_verification`].
//!
//! ```
//! # tokio::runtime::Builder::new_multi_thread().enable_time().build().unwrap().block_on(async {
//! use std::sync::Arc;
//! use tool_core::ledger::MemoryLedger;
//! use tool_core::testing::ledger_suite;
//!
//! // Your own `Ledger` here, on a store of its own.
//! ledger_suite::check(Arc::new(MemoryLedger::new()), "memory").await;
//! # });
//! ```
//!
//! It needs a Tokio runtime with its timer enabled (`#[tokio::test]` has one).

// A test suite: a broken rule ends the test with a panic naming it, as a failed assertion
// does, and so does a ledger error it did not expect.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::Code;
use crate::Effect;
use crate::ledger::{
    AuditEvent, AuditKind, Binding, Claim, ClaimKey, Claimed, Ledger, Quota, Reconciled, Recorded,
    Resolution, TrailError, Unsettled, verify,
};

mod claims;

use claims::{
    idempotency_keys_are_apart_from_call_ids, interrupted_claims, replay_conflict_and_in_flight,
    stale_reconciliation,
};

/// A claim of `id` in `scope` for `tool` with arguments digest `args`: non-idempotent,
/// principal `user-1`, a lease of 60 s, no quotas, an `authorized` record before it.
pub fn claim(scope: &str, id: &str, tool: &str, args: &str) -> Claim {
    Claim {
        key: ClaimKey::call(scope, id),
        call_id: id.into(),
        scope: scope.into(),
        binding: Binding {
            tool: tool.into(),
            contract: "c".repeat(64).into(),
            arguments: args.into(),
            principal: "user-1".into(),
        },
        effect: Effect::NonIdempotent,
        lease: Duration::from_secs(60),
        rerun_interrupted: false,
        quotas: Vec::new(),
        audit: vec![event(id, tool, AuditKind::Authorized, None)],
    }
}

/// Claims `claim` anew with a lease of zero, which has passed when this returns: its holder is
/// as good as dead.
async fn claim_lost(ledger: &dyn Ledger, claim: &mut Claim) {
    claim.lease = Duration::ZERO;
    assert_eq!(
        ledger.claim(claim).await.unwrap(),
        Claimed::New { attempt: 1 }
    );
    tokio::time::sleep(Duration::from_millis(5)).await;
}

/// An audit event about call `id` of `tool`, for principal `user-1`.
pub fn event(id: &str, tool: &str, kind: AuditKind, code: Option<Code>) -> AuditEvent {
    AuditEvent {
        call_id: id.into(),
        tool: tool.into(),
        kind,
        code,
        digest: None,
        principal: "user-1".into(),
        note: None,
        output: None,
    }
}

fn output(text: &str) -> Recorded {
    Recorded::Output(text.to_owned())
}

/// The listing of `key` among `scope`'s unsettled claims.
async fn listed(ledger: &dyn Ledger, scope: &str, key: &ClaimKey) -> Unsettled {
    let unsettled = ledger.unsettled(scope).await.unwrap();
    match unsettled.into_iter().find(|u| u.key == *key) {
        Some(listed) => listed,
        None => panic!("{key:?} is not listed as unsettled"),
    }
}

/// Checks every rule on `ledger`, in scopes named after `prefix` (so one store can be checked
/// more than once, under different prefixes). Panics at the first rule broken.
pub async fn check<L: Ledger>(ledger: Arc<L>, prefix: &str) {
    replay_conflict_and_in_flight(&*ledger, &format!("{prefix}-replay")).await;
    idempotency_keys_are_apart_from_call_ids(&*ledger, &format!("{prefix}-keys")).await;
    interrupted_claims(&*ledger, &format!("{prefix}-crash")).await;
    stale_reconciliation(&*ledger, &format!("{prefix}-stale")).await;
    quotas(&*ledger, &format!("{prefix}-quota")).await;
    nonces_and_runs(&*ledger, prefix).await;
    nul_characters(&*ledger, &format!("{prefix}-nul")).await;
    trail(&*ledger, &format!("{prefix}-replay")).await;
    racing_claims(ledger, &format!("{prefix}-race")).await;
}

async fn quotas(ledger: &dyn Ledger, scope: &str) {
    let quota = |mut c: Claim| {
        c.quotas = vec![
            Quota {
                name: "calls:refund".into(),
                limit: 2,
            },
            Quota {
                name: "calls".into(),
                limit: 3,
            },
        ];
        c
    };
    for id in ["a", "b"] {
        let c = quota(claim(scope, id, "refund", "aa"));
        assert_eq!(ledger.claim(&c).await.unwrap(), Claimed::New { attempt: 1 });
        assert!(ledger.settle(&c.key, 1, &output("1"), &[]).await.unwrap());
        // A replay runs nothing and takes nothing.
        assert_eq!(
            ledger.claim(&c).await.unwrap(),
            Claimed::Replay(output("1"))
        );
    }
    let third = quota(claim(scope, "c", "refund", "aa"));
    assert_eq!(
        ledger.claim(&third).await.unwrap(),
        Claimed::Exhausted("calls:refund".into())
    );
    // The refused claim took nothing: another tool still has the run's last unit.
    let mut other = quota(claim(scope, "d", "lookup", "aa"));
    other.quotas.remove(0);
    assert_eq!(
        ledger.claim(&other).await.unwrap(),
        Claimed::New { attempt: 1 }
    );
    let mut last = quota(claim(scope, "e", "lookup", "aa"));
    last.quotas.remove(0);
    assert_eq!(
        ledger.claim(&last).await.unwrap(),
        Claimed::Exhausted("calls".into())
    );
    // Quotas are per scope.
    let fresh = quota(claim(&format!("{scope}-2"), "c", "refund", "aa"));
    assert_eq!(
        ledger.claim(&fresh).await.unwrap(),
        Claimed::New { attempt: 1 }
    );
}

async fn nonces_and_runs(ledger: &dyn Ledger, prefix: &str) {
    let until = SystemTime::now() + Duration::from_secs(600);
    let nonce = format!("{prefix}-nonce");
    assert!(ledger.use_nonce(&nonce, until).await.unwrap());
    assert!(!ledger.use_nonce(&nonce, until).await.unwrap());

    let scope = format!("{prefix}-runs");
    assert_eq!(ledger.load_run(&scope, "run-1").await.unwrap(), None);
    ledger
        .store_run(&scope, "run-1", Some("[1]"))
        .await
        .unwrap();
    ledger
        .store_run(&scope, "run-1", Some("[1,2]"))
        .await
        .unwrap();
    assert_eq!(
        ledger.load_run(&scope, "run-1").await.unwrap().as_deref(),
        Some("[1,2]")
    );
    assert_eq!(ledger.load_run(&scope, "run-2").await.unwrap(), None);
    ledger.store_run(&scope, "run-1", None).await.unwrap();
    assert_eq!(ledger.load_run(&scope, "run-1").await.unwrap(), None);
}

/// U+0000 in names, ids, messages and scopes is kept like any other character, and so is the
/// character a store may use to escape it; none is confused with another.
async fn nul_characters(ledger: &dyn Ledger, prefix: &str) {
    let scope = format!("{prefix}\0scope");
    let mut refused = event(
        "call\0one",
        "to\0ol",
        AuditKind::Refused,
        Some(Code::UnknownTool),
    );
    refused.note = Some("\0".into());
    let marked = event(
        "\u{ffff}call\\0",
        "\u{ffff}",
        AuditKind::Refused,
        Some(Code::UnknownTool),
    );
    ledger
        .append(&scope, &[refused.clone(), marked.clone()])
        .await
        .unwrap();

    let mut nul = claim(&scope, "call\0two", "re\0fund", "aa");
    nul.binding.principal = "user\0".into();
    assert_eq!(
        ledger.claim(&nul).await.unwrap(),
        Claimed::New { attempt: 1 }
    );
    // Ids that an escaping store could confuse with it are other calls.
    for id in [
        "call",
        "call\u{fffd}two",
        "\u{ffff}call\\0two",
        "call\\0two",
    ] {
        let other = claim(&scope, id, "re\0fund", "aa");
        assert_eq!(
            ledger.claim(&other).await.unwrap(),
            Claimed::New { attempt: 1 },
            "{id:?}"
        );
    }
    let failure = Recorded::Failure {
        code: Code::ExecutionFailed,
        message: "no card \0 on file".into(),
        detail: Some("\0".into()),
    };
    assert!(
        ledger
            .settle(&nul.key, 1, &failure, &[refused.clone()])
            .await
            .unwrap()
    );
    assert_eq!(ledger.claim(&nul).await.unwrap(), Claimed::Replay(failure));

    let mut lost = claim(&scope, "call\0three", "re\0fund", "aa");
    claim_lost(ledger, &mut lost).await;
    let waiting = listed(ledger, &scope, &lost.key).await;
    assert_eq!(waiting.call_id, "call\0three");
    assert_eq!(waiting.binding, lost.binding);
    assert_eq!(
        ledger
            .reconcile(&waiting, &Resolution::Completed("\"\\u0000\"".into()))
            .await
            .unwrap(),
        Reconciled::Settled
    );

    let trail = ledger.trail(&scope).await.unwrap();
    verify(&trail, None).expect("the trail verifies");
    assert_eq!(trail[0].event, refused);
    assert_eq!(trail[1].event, marked);
    assert_eq!(trail[0].scope, scope);
    assert!(
        trail
            .iter()
            .any(|r| &*r.event.call_id == "call\0two" && r.event.kind == AuditKind::Admitted)
    );
    assert!(
        trail
            .iter()
            .any(|r| &*r.event.call_id == "call\0three" && r.event.kind == AuditKind::Reconciled)
    );

    ledger
        .store_run(&scope, "run\0", Some("[\"\0\"]"))
        .await
        .unwrap();
    assert_eq!(
        ledger.load_run(&scope, "run\0").await.unwrap().as_deref(),
        Some("[\"\0\"]")
    );
    assert_eq!(ledger.load_run(&scope, "run").await.unwrap(), None);
    let until = SystemTime::now() + Duration::from_secs(600);
    assert!(
        ledger
            .use_nonce(&format!("{prefix}\0nonce"), until)
            .await
            .unwrap()
    );
    assert!(
        ledger
            .use_nonce(&format!("{prefix}nonce"), until)
            .await
            .unwrap()
    );
    assert!(
        !ledger
            .use_nonce(&format!("{prefix}\0nonce"), until)
            .await
            .unwrap()
    );
}

async fn trail(ledger: &dyn Ledger, scope: &str) {
    ledger
        .append(
            scope,
            &[event(
                "call_x",
                "nope",
                AuditKind::Refused,
                Some(Code::UnknownTool),
            )],
        )
        .await
        .unwrap();
    let trail = ledger.trail(scope).await.unwrap();
    let head = verify(&trail, None).expect("the trail verifies").unwrap();
    let kinds: Vec<(&str, AuditKind)> = trail
        .iter()
        .map(|r| (&*r.event.call_id, r.event.kind))
        .collect();
    // The first call: authorized and admitted in one step, the outcome, the in-flight refusal
    // in between, then replays.
    assert_eq!(kinds[0], ("call_1", AuditKind::Authorized));
    assert_eq!(kinds[1], ("call_1", AuditKind::Admitted));
    assert_eq!(kinds[2], ("call_1", AuditKind::Authorized));
    assert_eq!(kinds[3], ("call_1", AuditKind::Refused));
    assert_eq!(trail[3].event.code, Some(Code::CallInFlight));
    assert_eq!(kinds[4], ("call_1", AuditKind::Outcome));
    // The record that settles a call carries the digest of its outcome; no other does.
    assert_eq!(
        trail[4].event.output,
        Some(output(r#"{"refunded":true}"#).digest())
    );
    assert!(trail[..4].iter().all(|r| r.event.output.is_none()));
    // A settlement given no outcome record gets one: call_2's failure.
    let failed = Recorded::Failure {
        code: Code::ExecutionFailed,
        message: "card declined".into(),
        detail: Some("gateway said 402".into()),
    };
    let settled_2: Vec<_> = trail
        .iter()
        .filter(|r| &*r.event.call_id == "call_2" && r.event.kind == AuditKind::Outcome)
        .collect();
    assert_eq!(settled_2.len(), 1, "{trail:#?}");
    assert_eq!(settled_2[0].event.output, Some(failed.digest()));
    assert_eq!(settled_2[0].event.code, Some(Code::ExecutionFailed));
    assert_eq!(settled_2[0].event.digest.as_deref(), Some("aa"));
    assert_eq!(kinds[6], ("call_1", AuditKind::Replayed));
    assert!(
        trail
            .iter()
            .any(|r| r.event.code == Some(Code::CallIdConflict)
                && r.event.note.as_deref() == Some("conflict: arguments"))
    );
    assert_eq!(kinds.last(), Some(&("call_x", AuditKind::Refused)));
    assert!(trail.iter().all(|r| r.scope == scope));

    // Edited, removed, inserted, reordered, truncated: each is found.
    let mut edited = trail.clone();
    edited[2].event.code = Some(Code::Unauthorized);
    assert_eq!(verify(&edited, None), Err(TrailError::Edited { seq: 3 }));
    let mut removed = trail.clone();
    removed.remove(2);
    assert!(matches!(
        verify(&removed, None),
        Err(TrailError::Gap { expected: 3, .. })
    ));
    let mut reordered = trail.clone();
    reordered.swap(1, 2);
    let (a, b) = (reordered[1].seq, reordered[2].seq);
    reordered[1].seq = b;
    reordered[2].seq = a;
    assert!(verify(&reordered, None).is_err());
    let mut inserted = trail.clone();
    let mut forged = trail[1].clone();
    forged.event.principal = "intruder".into();
    forged.hash = forged.compute_hash();
    inserted.insert(2, forged);
    assert!(verify(&inserted, None).is_err());
    let truncated = &trail[..trail.len() - 1];
    assert!(matches!(
        verify(truncated, Some(&head)),
        Err(TrailError::Truncated { .. })
    ));
    assert_eq!(verify(&[], None), Ok(None));
    assert!(
        ledger
            .trail(&format!("{scope}-none"))
            .await
            .unwrap()
            .is_empty()
    );
}

/// 16 tasks race to claim 64 ids, each id 4 times: exactly one claim of each wins.
async fn racing_claims<L: Ledger>(ledger: Arc<L>, scope: &str) {
    let mut tasks = Vec::new();
    for task in 0..16 {
        let ledger = Arc::clone(&ledger);
        let scope = scope.to_owned();
        tasks.push(tokio::spawn(async move {
            let mut won = Vec::new();
            for i in 0..16 {
                let id = format!("call_{}", (task * 16 + i) % 64);
                let c = claim(&scope, &id, "refund", "aa");
                if let Claimed::New { attempt } = ledger.claim(&c).await.unwrap() {
                    assert_eq!(attempt, 1);
                    assert!(ledger.settle(&c.key, 1, &output(&id), &[]).await.unwrap());
                    won.push(id);
                }
            }
            won
        }));
    }
    let mut won = Vec::new();
    for task in tasks {
        won.extend(task.await.unwrap());
    }
    won.sort();
    let before = won.len();
    won.dedup();
    assert_eq!(before, won.len(), "an id was claimed twice");
    assert_eq!(won.len(), 64, "every id was claimed once");
    verify(&ledger.trail(scope).await.unwrap(), None).expect("the raced trail verifies");
}

/// A change to a stored claim made behind the ledger's back, by someone with access to its
/// store. Each names the claim by its call id. More kinds of edit may be added: a store that
/// cannot make one should fail the test that asks for it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Edit {
    /// Sets the outcome's body (the output text, or the failure's message).
    Body(&'static str, &'static str),
    /// Sets the outcome's status (`ok` or a failure code).
    Status(&'static str, &'static str),
    /// Points the claim at another record as the one that settled it, or at none.
    SettledBy(&'static str, Option<i64>),
}

/// An outcome edited in the store, which replays would return, fails verification at the
/// record that settled it, however the claim's other columns were changed to hide it. `edit`
/// applies an [`Edit`] to `ledger`'s store; `ledger` must have nothing in scope `s`.
pub async fn edited_outcomes_fail_verification<L, F, Fut>(ledger: &L, edit: F)
where
    L: Ledger,
    F: Fn(Edit) -> Fut,
    Fut: Future<Output = ()>,
{
    let c = claim("s", "call_1", "refund", "aa");
    assert_eq!(ledger.claim(&c).await.unwrap(), Claimed::New { attempt: 1 });
    let done = output(r#"{"refunded":10}"#);
    let audit = [event("call_1", "refund", AuditKind::Outcome, None)];
    assert!(ledger.settle(&c.key, 1, &done, &audit).await.unwrap());
    // U+0000 in the id: a store that escapes it must find the claim all the same.
    let mut lost = claim("s", "call\0two", "refund", "aa");
    claim_lost(ledger, &mut lost).await;
    let waiting = listed(ledger, "s", &lost.key).await;
    let by_hand = Resolution::Completed(r#"{"refunded":20}"#.into());
    assert_eq!(
        ledger.reconcile(&waiting, &by_hand).await.unwrap(),
        Reconciled::Settled
    );
    let trail = ledger.trail("s").await.unwrap();
    let head = verify(&trail, None).unwrap().unwrap();
    let settled: Vec<u64> = trail
        .iter()
        .filter(|r| r.event.output.is_some())
        .map(|r| r.seq)
        .collect();
    assert_eq!(settled, [3, 6], "{trail:#?}");
    assert_eq!(trail[2].event.output, Some(done.digest()));
    let verified = || async { verify(&ledger.trail("s").await.unwrap(), Some(&head)) };

    for (id, seq, original) in [
        ("call_1", 3, r#"{"refunded":10}"#),
        ("call\0two", 6, r#"{"refunded":20}"#),
    ] {
        edit(Edit::Body(id, r#"{"refunded":1000}"#)).await;
        assert_eq!(verified().await, Err(TrailError::Edited { seq }), "{id:?}");
        // Without its pointer to the record that settled it, the claim is checked against
        // the record that settled its call.
        edit(Edit::SettledBy(id, None)).await;
        assert_eq!(
            verified().await,
            Err(TrailError::Edited { seq }),
            "{id:?} without its pointer"
        );
        edit(Edit::Body(id, original)).await;
        assert_eq!(
            verified().await,
            Ok(Some(head.clone())),
            "{id:?}: an outcome as it was verifies, pointer or not"
        );
        edit(Edit::SettledBy(id, Some(i64::try_from(seq).unwrap()))).await;
    }
    assert_eq!(verified().await, Ok(Some(head.clone())));
    // The status is covered too.
    edit(Edit::Status("call_1", "execution_failed")).await;
    assert_eq!(verified().await, Err(TrailError::Edited { seq: 3 }));
    edit(Edit::SettledBy("call_1", None)).await;
    assert_eq!(verified().await, Err(TrailError::Edited { seq: 3 }));
    edit(Edit::Status("call_1", "ok")).await;
    assert_eq!(verified().await, Ok(Some(head.clone())));
    // An outcome that names a record the trail does not have is an error.
    edit(Edit::SettledBy("call_1", Some(99))).await;
    let error = ledger.trail("s").await.unwrap_err();
    assert!(error.message().contains("audit record 99"), "{error}");
}
