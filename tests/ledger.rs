//! The ledger: the rules every store keeps (`ledger_suite.rs`), on the in-memory ledger, and
//! what the runtime does with one: replays, conflicts, calls in flight or in doubt, shared
//! quotas and approval nonces, paused runs, and the audit trail.

#[path = "ledger_suite.rs"]
mod suite;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use tool_core::agent::{self, Agent, RunEnd};
use tool_core::ledger::{
    AuditKind, ClaimKey, Ledger, MemoryLedger, Reconciled, Resolution, verify,
};
use tool_core::model::{Message, Turn};
use tool_core::testing::ScriptedTurns;
use tool_core::{
    Code, Context, Denied, Effect, Registry, Runtime, Tool, ToolCall, ToolDef,
    approval::Approvals,
    registry::{ToolError, ToolInfo},
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_memory_ledger_keeps_every_rule() {
    suite::check(Arc::new(MemoryLedger::new()), "memory").await;
}

/// Charge a card.
#[derive(Tool, Debug)]
struct Charge {
    /// The card number.
    card: String,
    /// Amount in cents.
    cents: u64,
}

const CHARGE: &str = r#"{"card":"4111-1111-1111-1111","cents":500}"#;

/// What the handlers do, shared by every runtime of a test (they stand for one service).
#[derive(Default)]
struct Bank {
    runs: AtomicUsize,
    /// When set, a charge waits for it before it returns.
    gate: Option<Arc<Notify>>,
    /// When set, a charge never returns (its process is taken to die while it runs).
    hang: bool,
}

fn registry(bank: &Arc<Bank>, effect: Effect) -> Registry {
    let bank = Arc::clone(bank);
    let charge = move |args: Charge, _cx: &Context| {
        let bank = Arc::clone(&bank);
        async move {
            bank.runs.fetch_add(1, Ordering::SeqCst);
            if let Some(gate) = &bank.gate {
                gate.notified().await;
            }
            if bank.hang {
                std::future::pending::<()>().await;
            }
            if args.cents > 10_000 {
                return Err(ToolError::public("the card was declined"));
            }
            Ok(serde_json::json!({ "charged": args.cents }))
        }
    };
    let mut registry = Registry::new();
    registry
        .register(
            ToolDef::new(charge)
                .effect(effect)
                .timeout(Duration::from_millis(100)),
        )
        .unwrap();
    registry
}

fn runtime(bank: &Arc<Bank>, ledger: &Arc<MemoryLedger>) -> Runtime {
    Runtime::builder(registry(bank, Effect::NonIdempotent))
        .ledger(Arc::clone(ledger))
        .lease_grace(Duration::ZERO)
        .build()
}

fn alice() -> Context {
    Context::builder("alice")
        .tenant("acme")
        .scope("run-1")
        .build()
}

#[tokio::test]
async fn a_resent_call_is_replayed_from_the_ledger_and_runs_once() {
    let bank = Arc::new(Bank::default());
    let ledger = Arc::new(MemoryLedger::new());
    // Two runtimes on one ledger: a restart, or two workers.
    let (first, second) = (runtime(&bank, &ledger), runtime(&bank, &ledger));

    let ran = first.invoke("call_1", "charge", CHARGE, &alice()).await;
    assert_eq!(ran.output().unwrap().as_str(), r#"{"charged":500}"#);
    assert!(!ran.is_replay());
    let again = second.invoke("call_1", "charge", CHARGE, &alice()).await;
    assert!(again.is_replay());
    assert_eq!(again.result(), ran.result());
    assert_eq!(bank.runs.load(Ordering::SeqCst), 1);

    // The same id for another call is refused, whatever differs, and nothing runs.
    let other = r#"{"card":"4111-1111-1111-1111","cents":900}"#;
    let conflict = second.invoke("call_1", "charge", other, &alice()).await;
    assert_eq!(conflict.code(), Some(Code::CallIdConflict));
    assert_eq!(
        conflict.failure().unwrap().detail(),
        Some("the arguments differ from the first claim")
    );
    let mallory = Context::builder("mallory")
        .tenant("acme")
        .scope("run-1")
        .build();
    let stolen = second.invoke("call_1", "charge", CHARGE, &mallory).await;
    assert_eq!(stolen.code(), Some(Code::CallIdConflict));
    assert_eq!(bank.runs.load(Ordering::SeqCst), 1);

    // Key order and spelling are not a difference: the digest is of the validated value.
    let respelled = r#"{ "cents": 5e2, "card": "4111-1111-1111-1111" }"#;
    let replayed = second.invoke("call_1", "charge", respelled, &alice()).await;
    assert!(replayed.is_replay(), "{replayed:?}");

    // The same id in another scope is another call.
    let elsewhere = Context::builder("alice")
        .tenant("acme")
        .scope("run-2")
        .build();
    let fresh = second.invoke("call_1", "charge", CHARGE, &elsewhere).await;
    assert!(fresh.is_ok() && !fresh.is_replay());
    assert_eq!(bank.runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_failure_is_replayed_with_its_code_and_message() {
    let bank = Arc::new(Bank::default());
    let ledger = Arc::new(MemoryLedger::new());
    let runtime = runtime(&bank, &ledger);
    let big = r#"{"card":"4111-1111-1111-1111","cents":50000}"#;
    let failed = runtime.invoke("call_1", "charge", big, &alice()).await;
    assert_eq!(failed.code(), Some(Code::ExecutionFailed));
    let replayed = runtime.invoke("call_1", "charge", big, &alice()).await;
    assert!(replayed.is_replay());
    assert_eq!(replayed.failure(), failed.failure());
    assert_eq!(bank.runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn refusals_before_the_claim_take_no_claim() {
    let bank = Arc::new(Bank::default());
    let ledger = Arc::new(MemoryLedger::new());
    let runtime = runtime(&bank, &ledger);
    let invalid = runtime
        .invoke("call_1", "charge", r#"{"card":"x"}"#, &alice())
        .await;
    assert_eq!(invalid.code(), Some(Code::InvalidArguments));
    // Fixed and sent again with the same id: it runs (only a claimed call is bound).
    let fixed = runtime.invoke("call_1", "charge", CHARGE, &alice()).await;
    assert!(fixed.is_ok() && !fixed.is_replay(), "{fixed:?}");
}

#[tokio::test]
async fn idempotency_keys_give_one_outcome_across_requests() {
    let bank = Arc::new(Bank::default());
    let ledger = Arc::new(MemoryLedger::new());
    let runtime = runtime(&bank, &ledger);
    let keyed = alice().with_idempotency_key("order-77");
    let first = runtime.invoke("call_1", "charge", CHARGE, &keyed).await;
    assert!(first.is_ok());
    // A retried request: another call id, another scope, the same key and call.
    let retry = Context::builder("alice")
        .tenant("acme")
        .scope("run-9")
        .idempotency_key("order-77")
        .build();
    let second = runtime.invoke("call_7", "charge", CHARGE, &retry).await;
    assert!(second.is_replay());
    assert_eq!(second.call_id(), "call_7");
    assert_eq!(second.result(), first.result());

    let other = r#"{"card":"4111-1111-1111-1111","cents":700}"#;
    let conflict = runtime.invoke("call_8", "charge", other, &retry).await;
    assert_eq!(conflict.code(), Some(Code::IdempotencyConflict));
    assert_eq!(bank.runs.load(Ordering::SeqCst), 1);

    // Keys are scoped by tenant.
    let globex = Context::builder("alice")
        .tenant("globex")
        .idempotency_key("order-77")
        .build();
    assert!(
        !runtime
            .invoke("call_9", "charge", other, &globex)
            .await
            .is_replay()
    );
    assert_eq!(bank.runs.load(Ordering::SeqCst), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_still_running_elsewhere_is_refused_as_in_flight() {
    let gate = Arc::new(Notify::new());
    let bank = Arc::new(Bank {
        gate: Some(Arc::clone(&gate)),
        ..Bank::default()
    });
    let ledger = Arc::new(MemoryLedger::new());
    let runtime = Runtime::builder(registry(&bank, Effect::NonIdempotent))
        .ledger(Arc::clone(&ledger))
        .build();
    let running = {
        let runtime = runtime.clone();
        tokio::spawn(async move { runtime.invoke("call_1", "charge", CHARGE, &alice()).await })
    };
    while bank.runs.load(Ordering::SeqCst) == 0 {
        tokio::task::yield_now().await;
    }
    let second = runtime.invoke("call_1", "charge", CHARGE, &alice()).await;
    assert_eq!(second.code(), Some(Code::CallInFlight));
    gate.notify_one();
    assert!(running.await.unwrap().is_ok());
    let third = runtime.invoke("call_1", "charge", CHARGE, &alice()).await;
    assert!(third.is_replay());
    assert_eq!(bank.runs.load(Ordering::SeqCst), 1);
}

/// Starts a charge that never returns and drops it while it runs, as a process that dies in
/// the middle of a handler leaves it: claimed, no outcome.
async fn interrupt(runtime: &Runtime, bank: &Arc<Bank>) {
    let cx = alice();
    let call = runtime.invoke("call_1", "charge", CHARGE, &cx);
    tokio::pin!(call);
    while bank.runs.load(Ordering::SeqCst) == 0 {
        tokio::select! {
            _ = &mut call => panic!("the hanging charge ended"),
            () = tokio::task::yield_now() => {}
        }
    }
    // Dropped here. Its lease is the tool's 100 ms timeout with no grace.
}

#[tokio::test]
async fn an_interrupted_call_is_in_doubt_until_the_application_reconciles_it() {
    let bank = Arc::new(Bank {
        hang: true,
        ..Bank::default()
    });
    let ledger = Arc::new(MemoryLedger::new());
    let runtime = runtime(&bank, &ledger);
    interrupt(&runtime, &bank).await;
    tokio::time::sleep(Duration::from_millis(150)).await;

    let doubt = runtime.invoke("call_1", "charge", CHARGE, &alice()).await;
    assert_eq!(doubt.code(), Some(Code::OutcomeUnknown));
    assert_eq!(
        bank.runs.load(Ordering::SeqCst),
        1,
        "never run again by itself"
    );

    let unsettled = ledger.unsettled("run-1").await.unwrap();
    assert_eq!(unsettled.len(), 1);
    assert_eq!(unsettled[0].key, ClaimKey::call("run-1", "call_1"));
    assert_eq!(&*unsettled[0].binding.tool, "charge");
    let settled = Resolution::Completed(r#"{"charged":500}"#.into());
    assert_eq!(
        ledger.reconcile(&unsettled[0], &settled).await.unwrap(),
        Reconciled::Settled
    );
    let replayed = runtime.invoke("call_1", "charge", CHARGE, &alice()).await;
    assert!(replayed.is_replay());
    assert_eq!(replayed.output().unwrap().as_str(), r#"{"charged":500}"#);
    assert_eq!(bank.runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_interrupted_idempotent_call_runs_again_only_when_allowed() {
    for (rerun, runs) in [(false, 1), (true, 2)] {
        let bank = Arc::new(Bank {
            hang: true,
            ..Bank::default()
        });
        let ledger = Arc::new(MemoryLedger::new());
        let runtime = Runtime::builder(registry(&bank, Effect::Idempotent))
            .ledger(Arc::clone(&ledger))
            .lease_grace(Duration::ZERO)
            .rerun_interrupted(rerun)
            .build();
        interrupt(&runtime, &bank).await;
        tokio::time::sleep(Duration::from_millis(150)).await;
        let again = runtime.invoke("call_1", "charge", CHARGE, &alice()).await;
        assert_eq!(bank.runs.load(Ordering::SeqCst), runs, "rerun = {rerun}");
        if rerun {
            // It ran, hung again and was stopped by its timeout: an idempotent timeout.
            assert_eq!(again.code(), Some(Code::Timeout));
        } else {
            assert_eq!(again.code(), Some(Code::OutcomeUnknown));
        }
    }
}

/// The effect an interrupted call was claimed with, not the one its tool (or its
/// `effect_from`) gives now, decides whether it may run again: a charge claimed as
/// non-idempotent may have happened, whatever a later deployment declares.
#[tokio::test]
async fn an_interrupted_call_is_rerun_by_the_effect_it_was_claimed_with() {
    let bank = Arc::new(Bank {
        hang: true,
        ..Bank::default()
    });
    let ledger = Arc::new(MemoryLedger::new());
    interrupt(&runtime(&bank, &ledger), &bank).await;
    tokio::time::sleep(Duration::from_millis(150)).await;
    let redeployed = Runtime::builder(registry(&bank, Effect::Idempotent))
        .ledger(Arc::clone(&ledger))
        .lease_grace(Duration::ZERO)
        .rerun_interrupted(true)
        .build();
    let again = redeployed
        .invoke("call_1", "charge", CHARGE, &alice())
        .await;
    assert_eq!(again.code(), Some(Code::OutcomeUnknown), "{again:?}");
    assert_eq!(
        bank.runs.load(Ordering::SeqCst),
        1,
        "never run again by itself"
    );
    assert_eq!(ledger.unsettled("run-1").await.unwrap().len(), 1);
}

#[tokio::test]
async fn quotas_are_counted_in_the_ledger_for_every_runtime_on_it() {
    let bank = Arc::new(Bank::default());
    let ledger = Arc::new(MemoryLedger::new());
    let worker = || {
        Runtime::builder(registry(&bank, Effect::NonIdempotent))
            .ledger(Arc::clone(&ledger))
            .max_calls(2)
            .build()
    };
    let (a, b) = (worker(), worker());
    assert!(a.invoke("c1", "charge", CHARGE, &alice()).await.is_ok());
    assert!(b.invoke("c2", "charge", CHARGE, &alice()).await.is_ok());
    // A replay takes nothing.
    assert!(b.invoke("c1", "charge", CHARGE, &alice()).await.is_replay());
    let over = a.invoke("c3", "charge", CHARGE, &alice()).await;
    assert_eq!(over.code(), Some(Code::BudgetExhausted));
    assert_eq!(bank.runs.load(Ordering::SeqCst), 2);
    // Another scope has its own count.
    let other = Context::builder("alice").scope("run-2").build();
    assert!(a.invoke("c3", "charge", CHARGE, &other).await.is_ok());
}

#[tokio::test]
async fn every_decision_is_audited_with_digests_and_never_argument_values() {
    let bank = Arc::new(Bank::default());
    let ledger = Arc::new(MemoryLedger::new());
    let runtime = Runtime::builder(registry(&bank, Effect::NonIdempotent))
        .ledger(Arc::clone(&ledger))
        .authorize(|_: &ToolInfo, cx: &Context| {
            if cx.principal() == "mallory" {
                Err(Denied::new("on the deny list"))
            } else {
                Ok(())
            }
        })
        .build();
    let mallory = Context::builder("mallory").scope("run-1").build();
    runtime.invoke("c1", "refund", CHARGE, &alice()).await;
    runtime
        .invoke(
            "c2",
            "charge",
            r#"{"card":"4111-1111-1111-1111"}"#,
            &alice(),
        )
        .await;
    runtime.invoke("c3", "charge", CHARGE, &mallory).await;
    runtime.invoke("c4", "charge", CHARGE, &alice()).await;
    runtime.invoke("c4", "charge", CHARGE, &alice()).await;

    let trail = ledger.trail("run-1").await.unwrap();
    verify(&trail, None).unwrap();
    let decisions: Vec<(&str, &str, Option<&str>)> = trail
        .iter()
        .map(|r| {
            (
                &*r.event.call_id,
                r.event.kind.as_str(),
                r.event.code.map(Code::as_str),
            )
        })
        .collect();
    assert_eq!(
        decisions,
        [
            ("c1", "refused", Some("unknown_tool")),
            ("c2", "refused", Some("invalid_arguments")),
            ("c3", "denied", Some("unauthorized")),
            ("c4", "authorized", None),
            ("c4", "admitted", None),
            ("c4", "executed", None),
            ("c4", "outcome", None),
            ("c4", "authorized", None),
            ("c4", "replayed", None),
        ]
    );
    let admitted = trail
        .iter()
        .find(|r| r.event.kind == AuditKind::Admitted)
        .unwrap();
    assert_eq!(admitted.event.digest.as_ref().map(|d| d.len()), Some(64));
    // Decisions made before the claim carry no digest; the claim and what follows it do.
    let digests: Vec<bool> = trail.iter().map(|r| r.event.digest.is_some()).collect();
    assert_eq!(
        digests,
        [false, false, false, false, true, true, true, false, true]
    );
    assert_eq!(&*trail[2].event.principal, "mallory");
    let exported = serde_json::to_string(&trail).unwrap();
    // The card number: digits and dashes, which no hash, digest or time spells.
    assert!(
        !exported.contains("4111-1111"),
        "an argument value reached the trail"
    );
}

const KEY: &[u8] = b"an example key of at least 32 bytes!";

/// A runtime whose `charge` needs a receipt from its own `Approvals`, which use their nonces
/// in `ledger` when given one.
fn approving(bank: &Arc<Bank>, ledger: Option<&Arc<MemoryLedger>>) -> (Runtime, Arc<Approvals>) {
    let mut registry = Registry::new();
    let bank = Arc::clone(bank);
    let charge = move |args: Charge, _cx: &Context| {
        bank.runs.fetch_add(1, Ordering::SeqCst);
        async move { Ok::<_, ToolError>(serde_json::json!({ "charged": args.cents })) }
    };
    registry
        .register(ToolDef::new(charge).requires_approval())
        .unwrap();
    let approvals = Approvals::new(KEY, &registry).unwrap();
    let approvals = Arc::new(match ledger {
        Some(ledger) => approvals.with_ledger(Arc::clone(ledger)),
        None => approvals,
    });
    let runtime = Runtime::builder(registry)
        .approver(approvals.verifier())
        .build();
    (runtime, approvals)
}

#[tokio::test]
async fn an_approval_receipt_is_used_once_across_instances_sharing_a_ledger() {
    let bank = Arc::new(Bank::default());
    let pending = tool_core::approval::PendingApproval {
        call_id: "c1".into(),
        tool: "charge".into(),
        arguments: CHARGE.into(),
        principal: "alice".into(),
    };
    let alice = Context::builder("alice").build();

    // Alone, an instance accepts only the receipts it issued.
    let (runtime_a, approvals_a) = approving(&bank, None);
    let (runtime_b, approvals_b) = approving(&bank, None);
    let receipt = approvals_a
        .approve(&runtime_a, &pending, "bob", Duration::from_secs(600))
        .unwrap();
    approvals_b.submit(receipt);
    let refused = runtime_b.invoke("c1", "charge", CHARGE, &alice).await;
    assert_eq!(refused.code(), Some(Code::ApprovalDenied));

    // Sharing a ledger: issued by A, used at B, then refused at A.
    let ledger = Arc::new(MemoryLedger::new());
    let (runtime_a, approvals_a) = approving(&bank, Some(&ledger));
    let (runtime_b, approvals_b) = approving(&bank, Some(&ledger));
    let receipt = approvals_a
        .approve(&runtime_a, &pending, "bob", Duration::from_secs(600))
        .unwrap();
    approvals_b.submit(receipt.clone());
    let ran = runtime_b.invoke("c1", "charge", CHARGE, &alice).await;
    assert!(ran.is_ok(), "{ran:?}");
    approvals_a.submit(receipt);
    let reused = runtime_a.invoke("c1", "charge", CHARGE, &alice).await;
    assert_eq!(reused.code(), Some(Code::ApprovalDenied));
    assert_eq!(
        reused.failure().unwrap().detail(),
        Some("the receipt was already used")
    );
    assert_eq!(bank.runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_paused_run_is_stored_in_the_ledger_and_resumed_by_another_instance() {
    let bank = Arc::new(Bank::default());
    let ledger = Arc::new(MemoryLedger::new());
    let model = || {
        ScriptedTurns::new()
            .turn(Turn::calls([ToolCall::new("c1", "charge", CHARGE)]))
            .turn(Turn::answer("Charged."))
    };
    let alice = Context::builder("alice").scope("run-1").build();
    let start = vec![Message::User {
        text: "Charge the card.".into(),
    }];

    // The first instance pauses for approval and stores the run.
    let (runtime, approvals) = approving(&bank, Some(&ledger));
    let agent_a = Agent::new(runtime, model()).approvals(Arc::clone(&approvals));
    let paused = agent_a.run(start, &alice).await;
    let RunEnd::AwaitingApproval(pending) = &paused.end else {
        panic!("{:?}", paused.end);
    };
    agent::store_run(&*ledger, alice.scope(), "run-1", &paused.transcript)
        .await
        .unwrap();

    // Another instance loads it, gets the approval, and resumes.
    let (runtime, approvals) = approving(&bank, Some(&ledger));
    let transcript = agent::load_run(&*ledger, alice.scope(), "run-1")
        .await
        .unwrap()
        .expect("the run was stored");
    assert_eq!(transcript, paused.transcript);
    let receipt = approvals
        .approve(&runtime, &pending[0], "bob", Duration::from_secs(600))
        .unwrap();
    approvals.submit(receipt);
    let agent_b = Agent::new(runtime, model()).approvals(Arc::clone(&approvals));
    // The scripted model answers from its first turn on; the resumed run needs only the
    // pending call's result and then the answer.
    let resumed = agent_b.run(transcript, &alice).await;
    assert_eq!(bank.runs.load(Ordering::SeqCst), 1);
    assert!(
        resumed.outcomes.iter().all(|o| o.is_ok()),
        "{:?}",
        resumed.outcomes
    );
    agent::remove_run(&*ledger, alice.scope(), "run-1")
        .await
        .unwrap();
    assert_eq!(
        agent::load_run(&*ledger, "run-1", "run-1").await.unwrap(),
        None
    );

    // A stored text that is not a transcript is an error, not a partial run.
    ledger
        .store_run("run-1", "broken", Some("{\"nope\":1}"))
        .await
        .unwrap();
    assert!(agent::load_run(&*ledger, "run-1", "broken").await.is_err());
}

#[tokio::test]
async fn the_memory_ledger_is_bounded() {
    use tool_core::ledger::{Claimed, Recorded};
    let ledger = MemoryLedger::with_capacity(2);
    for scope in ["s1", "s2", "s3"] {
        let claim = suite::claim(scope, "call_1", "refund", "aa");
        assert_eq!(
            ledger.claim(&claim).await.unwrap(),
            Claimed::New { attempt: 1 }
        );
        let done = Recorded::Output("1".into());
        assert!(ledger.settle(&claim.key, 1, &done, &[]).await.unwrap());
    }
    // The oldest settled claim and the oldest scope's trail are forgotten; the rest stay.
    let first = suite::claim("s1", "call_1", "refund", "aa");
    assert_eq!(
        ledger.claim(&first).await.unwrap(),
        Claimed::New { attempt: 1 }
    );
    let third = suite::claim("s3", "call_1", "refund", "aa");
    assert!(matches!(
        ledger.claim(&third).await.unwrap(),
        Claimed::Replay(_)
    ));
    assert_eq!(ledger.trail("s2").await.unwrap().len(), 0);
    assert!(!ledger.trail("s3").await.unwrap().is_empty());
    verify(&ledger.trail("s1").await.unwrap(), None).unwrap();
}
