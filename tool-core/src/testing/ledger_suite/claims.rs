//! The rules of claims: replays and conflicts, idempotency keys, interrupted calls and their
//! reconciliation.

use super::*;

pub(super) async fn replay_conflict_and_in_flight(ledger: &dyn Ledger, scope: &str) {
    let first = claim(scope, "call_1", "refund", "aa");
    assert_eq!(
        ledger.claim(&first).await.unwrap(),
        Claimed::New { attempt: 1 }
    );
    assert_eq!(ledger.claim(&first).await.unwrap(), Claimed::InFlight);
    let done = output(r#"{"refunded":true}"#);
    let audit = [event("call_1", "refund", AuditKind::Outcome, None)];
    assert!(ledger.settle(&first.key, 1, &done, &audit).await.unwrap());
    assert!(
        !ledger.settle(&first.key, 1, &done, &audit).await.unwrap(),
        "a claim is settled once"
    );
    assert_eq!(ledger.claim(&first).await.unwrap(), Claimed::Replay(done));

    let mut other = claim(scope, "call_1", "refund", "bb");
    assert_eq!(
        ledger.claim(&other).await.unwrap(),
        Claimed::Conflict {
            differs: "arguments"
        }
    );
    other.binding.arguments = "aa".into();
    other.binding.tool = "charge".into();
    assert_eq!(
        ledger.claim(&other).await.unwrap(),
        Claimed::Conflict { differs: "tool" }
    );
    other.binding.tool = "refund".into();
    other.binding.principal = "user-2".into();
    assert_eq!(
        ledger.claim(&other).await.unwrap(),
        Claimed::Conflict {
            differs: "principal"
        }
    );
    other.binding.principal = "user-1".into();
    other.binding.contract = "d".repeat(64).into();
    assert_eq!(
        ledger.claim(&other).await.unwrap(),
        Claimed::Conflict {
            differs: "contract"
        }
    );

    // A failure is an outcome like any other, replayed with its code, message and detail.
    let failed = claim(scope, "call_2", "refund", "aa");
    assert_eq!(
        ledger.claim(&failed).await.unwrap(),
        Claimed::New { attempt: 1 }
    );
    let failure = Recorded::Failure {
        code: Code::ExecutionFailed,
        message: "card declined".into(),
        detail: Some("gateway said 402".into()),
    };
    assert!(ledger.settle(&failed.key, 1, &failure, &[]).await.unwrap());
    assert_eq!(
        ledger.claim(&failed).await.unwrap(),
        Claimed::Replay(failure)
    );

    // The same id in another scope is another call.
    let elsewhere = claim(&format!("{scope}-other"), "call_1", "refund", "bb");
    assert_eq!(
        ledger.claim(&elsewhere).await.unwrap(),
        Claimed::New { attempt: 1 }
    );
}

pub(super) async fn idempotency_keys_are_apart_from_call_ids(ledger: &dyn Ledger, scope: &str) {
    let by_id = claim(scope, "k-1", "refund", "aa");
    let mut by_key = claim(scope, "call_9", "refund", "aa");
    by_key.key = ClaimKey::idempotency(scope, "k-1");
    assert_eq!(
        ledger.claim(&by_id).await.unwrap(),
        Claimed::New { attempt: 1 }
    );
    assert_eq!(
        ledger.claim(&by_key).await.unwrap(),
        Claimed::New { attempt: 1 }
    );
    assert!(
        ledger
            .settle(&by_key.key, 1, &output("1"), &[])
            .await
            .unwrap()
    );
    // Another request, another call id, the same key and call: the same outcome.
    let mut again = by_key.clone();
    again.call_id = "call_10".into();
    assert_eq!(
        ledger.claim(&again).await.unwrap(),
        Claimed::Replay(output("1"))
    );
    again.binding.arguments = "zz".into();
    assert_eq!(
        ledger.claim(&again).await.unwrap(),
        Claimed::Conflict {
            differs: "arguments"
        }
    );

    // A key of a tenant that is not the scope: the call's records go to the scope's trail,
    // and its claim is listed with the scope's unsettled ones.
    let tenant = format!("{scope}-tenant");
    let mut elsewhere = claim(scope, "call_11", "refund", "bb");
    elsewhere.key = ClaimKey::idempotency(tenant.as_str(), "k-2");
    assert_eq!(
        ledger.claim(&elsewhere).await.unwrap(),
        Claimed::New { attempt: 1 }
    );
    let executed = [event("call_11", "refund", AuditKind::Executed, None)];
    assert!(
        ledger
            .settle(&elsewhere.key, 1, &output("2"), &executed)
            .await
            .unwrap()
    );
    let trail = ledger.trail(scope).await.unwrap();
    assert!(
        trail
            .iter()
            .any(|r| &*r.event.call_id == "call_11" && r.event.kind == AuditKind::Outcome),
        "{trail:?}"
    );
    assert_eq!(ledger.trail(&tenant).await.unwrap(), Vec::new());
    let mut lost = claim(scope, "call_12", "refund", "cc");
    lost.key = ClaimKey::idempotency(tenant.as_str(), "k-3");
    claim_lost(ledger, &mut lost).await;
    let unsettled = ledger.unsettled(scope).await.unwrap();
    assert!(unsettled.iter().any(|u| u.key == lost.key), "{unsettled:?}");
    assert!(ledger.unsettled(&tenant).await.unwrap().is_empty());
}

pub(super) async fn interrupted_claims(ledger: &dyn Ledger, scope: &str) {
    // A lease of zero has passed as soon as it is taken: the holder is as good as dead.
    let mut lost = claim(scope, "call_1", "send_email", "aa");
    claim_lost(ledger, &mut lost).await;
    assert_eq!(ledger.claim(&lost).await.unwrap(), Claimed::Unknown);
    // Rerunning is for calls that are not non-idempotent, whatever the caller asks.
    lost.rerun_interrupted = true;
    assert_eq!(ledger.claim(&lost).await.unwrap(), Claimed::Unknown);

    let unsettled = ledger.unsettled(scope).await.unwrap();
    assert_eq!(unsettled.len(), 1, "{unsettled:?}");
    assert_eq!(unsettled[0].key, lost.key);
    assert_eq!(unsettled[0].call_id, "call_1");
    assert_eq!(unsettled[0].attempt, 1);
    assert_eq!(unsettled[0].binding, lost.binding);

    let completed = Resolution::Completed(r#"{"sent":true}"#.into());
    assert_eq!(
        ledger.reconcile(&unsettled[0], &completed).await.unwrap(),
        Reconciled::Settled
    );
    assert_eq!(
        ledger.reconcile(&unsettled[0], &completed).await.unwrap(),
        Reconciled::AlreadySettled
    );
    assert!(
        !ledger
            .settle(&lost.key, 1, &output("late"), &[])
            .await
            .unwrap(),
        "a reconciled claim does not take a late outcome"
    );
    assert_eq!(
        ledger.claim(&lost).await.unwrap(),
        Claimed::Replay(output(r#"{"sent":true}"#))
    );
    assert!(ledger.unsettled(scope).await.unwrap().is_empty());

    // Reconciled as safe to retry: the next claim runs it, as attempt 2.
    let mut retry = claim(scope, "call_2", "send_email", "aa");
    claim_lost(ledger, &mut retry).await;
    let waiting = listed(ledger, scope, &retry.key).await;
    assert_eq!(
        ledger
            .reconcile(&waiting, &Resolution::Retry)
            .await
            .unwrap(),
        Reconciled::Settled
    );
    retry.lease = Duration::from_secs(60);
    assert_eq!(
        ledger.claim(&retry).await.unwrap(),
        Claimed::New { attempt: 2 }
    );
    assert!(
        ledger
            .settle(&retry.key, 2, &output("2"), &[])
            .await
            .unwrap()
    );

    // Reconciled as not having happened: replayed as a failure.
    let mut never = claim(scope, "call_3", "send_email", "aa");
    claim_lost(ledger, &mut never).await;
    let waiting = listed(ledger, scope, &never.key).await;
    let nothing = Resolution::DidNotHappen("the email was not sent".into());
    assert_eq!(
        ledger.reconcile(&waiting, &nothing).await.unwrap(),
        Reconciled::Settled
    );
    match ledger.claim(&never).await.unwrap() {
        Claimed::Replay(Recorded::Failure { code, message, .. }) => {
            assert_eq!(code, Code::ExecutionFailed);
            assert_eq!(message, "the email was not sent");
        }
        other => panic!("expected a replayed failure, got {other:?}"),
    }

    // An idempotent call may be taken over once its lease passed, and the old attempt can
    // no longer settle it.
    let mut again = claim(scope, "call_4", "lookup", "aa");
    again.effect = Effect::Idempotent;
    again.rerun_interrupted = true;
    claim_lost(ledger, &mut again).await;
    again.lease = Duration::from_secs(60);
    assert_eq!(
        ledger.claim(&again).await.unwrap(),
        Claimed::New { attempt: 2 }
    );
    assert!(
        !ledger
            .settle(&again.key, 1, &output("old"), &[])
            .await
            .unwrap()
    );
    assert!(
        ledger
            .settle(&again.key, 2, &output("new"), &[])
            .await
            .unwrap()
    );
    assert_eq!(
        ledger.claim(&again).await.unwrap(),
        Claimed::Replay(output("new"))
    );
    // Without the runtime's permission it is in doubt like any other.
    let mut kept = claim(scope, "call_5", "lookup", "aa");
    kept.effect = Effect::Idempotent;
    claim_lost(ledger, &mut kept).await;
    assert_eq!(ledger.claim(&kept).await.unwrap(), Claimed::Unknown);

    // The effect the interrupted attempt was claimed with decides, not the new claim's: a
    // call claimed as non-idempotent may have had its effect, whatever it is called now.
    let mut was_unsafe = claim(scope, "call_6", "lookup", "aa");
    claim_lost(ledger, &mut was_unsafe).await;
    was_unsafe.effect = Effect::ReadOnly;
    was_unsafe.rerun_interrupted = true;
    assert_eq!(ledger.claim(&was_unsafe).await.unwrap(), Claimed::Unknown);
    // Claimed read-only and proposed now as non-idempotent: the new attempt could have effects
    // of its own, and is not run by itself either.
    let mut now_unsafe = claim(scope, "call_7", "lookup", "aa");
    now_unsafe.effect = Effect::ReadOnly;
    now_unsafe.rerun_interrupted = true;
    claim_lost(ledger, &mut now_unsafe).await;
    now_unsafe.effect = Effect::NonIdempotent;
    assert_eq!(ledger.claim(&now_unsafe).await.unwrap(), Claimed::Unknown);
    // Once reconciled as safe to retry, nothing of the first attempt is in doubt: the next
    // attempt's own effect decides what its interruption allows.
    let waiting = listed(ledger, scope, &was_unsafe.key).await;
    assert_eq!(
        ledger
            .reconcile(&waiting, &Resolution::Retry)
            .await
            .unwrap(),
        Reconciled::Settled
    );
    assert_eq!(
        ledger.claim(&was_unsafe).await.unwrap(),
        Claimed::New { attempt: 2 }
    );
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert_eq!(
        ledger.claim(&was_unsafe).await.unwrap(),
        Claimed::New { attempt: 3 }
    );
    assert!(
        ledger
            .settle(&was_unsafe.key, 3, &output("3"), &[])
            .await
            .unwrap()
    );

    let mut nobody = waiting;
    nobody.key = ClaimKey::call(scope, "never-claimed");
    assert_eq!(
        ledger.reconcile(&nobody, &Resolution::Retry).await.unwrap(),
        Reconciled::NotFound
    );
}

/// A reconciliation acts on the attempt it was listed with: once that attempt was settled or
/// a later attempt took the claim over, the same listing changes nothing.
pub(super) async fn stale_reconciliation(ledger: &dyn Ledger, scope: &str) {
    let mut lost = claim(scope, "call_1", "send_email", "aa");
    claim_lost(ledger, &mut lost).await;
    let listed = ledger.unsettled(scope).await.unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(
        ledger
            .reconcile(&listed[0], &Resolution::Retry)
            .await
            .unwrap(),
        Reconciled::Settled
    );
    // The retry runs, and is still running when the same listing is acted on again.
    lost.lease = Duration::from_secs(60);
    assert_eq!(
        ledger.claim(&lost).await.unwrap(),
        Claimed::New { attempt: 2 }
    );
    let completed = Resolution::Completed(r#"{"sent":"by hand"}"#.into());
    for resolution in [&completed, &Resolution::Retry] {
        assert_eq!(
            ledger.reconcile(&listed[0], resolution).await.unwrap(),
            Reconciled::MovedOn { attempt: 2 }
        );
    }
    assert_eq!(ledger.claim(&lost).await.unwrap(), Claimed::InFlight);
    // The live attempt's outcome is the one kept.
    assert!(
        ledger
            .settle(&lost.key, 2, &output("sent"), &[])
            .await
            .unwrap()
    );
    assert_eq!(
        ledger.claim(&lost).await.unwrap(),
        Claimed::Replay(output("sent"))
    );
    assert_eq!(
        ledger.reconcile(&listed[0], &completed).await.unwrap(),
        Reconciled::MovedOn { attempt: 2 }
    );

    // An attempt whose outcome arrived after it was listed is settled already.
    let mut late = claim(scope, "call_2", "send_email", "aa");
    claim_lost(ledger, &mut late).await;
    let waiting = ledger.unsettled(scope).await.unwrap();
    assert_eq!(waiting.len(), 1, "{waiting:?}");
    assert!(
        ledger
            .settle(&late.key, 1, &output("late"), &[])
            .await
            .unwrap()
    );
    assert_eq!(
        ledger.reconcile(&waiting[0], &completed).await.unwrap(),
        Reconciled::AlreadySettled
    );
    assert_eq!(
        ledger.claim(&late).await.unwrap(),
        Claimed::Replay(output("late"))
    );
}
