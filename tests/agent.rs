//! The agent loop: guards, parallel batches, repairs, approval receipts, resume and replay.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use examples::{CreateInvoice, GetWeather, create_invoice, get_weather};
use tool_core::Code;
use tool_core::ToolCall;
use tool_core::agent::{Agent, BatchPolicy, Guard, RunEnd};
use tool_core::model::{Message, Turn};
use tool_core::testing::{ScriptedModel, ScriptedTurns};
use tool_core::{
    Argument, Context, Effect, Registry, Runtime, Tool, ToolDef, approval::Approvals,
    registry::ToolError, repair::RepairPolicy,
};

const WEATHER: &str = r#"{"city":"Paris","units":"celsius"}"#;
const INVOICE: &str = r#"{"customerId":"cus_42","amount":120.5,"currency":"EUR"}"#;
const KEY: &[u8] = b"an example key of at least 32 bytes!";

fn user() -> Context {
    Context::builder("alice").build()
}

fn start() -> Vec<Message> {
    vec![Message::User {
        text: "Weather in Paris, then invoice cus_42.".into(),
    }]
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

/// `get_weather` and `create_invoice`, counting executions.
fn registry(runs: &Arc<AtomicUsize>, invoice_needs_approval: bool) -> Registry {
    let (a, b) = (Arc::clone(runs), Arc::clone(runs));
    let weather = move |args: GetWeather, cx: &Context| {
        a.fetch_add(1, Ordering::SeqCst);
        let cx = cx.clone();
        async move { get_weather(args, &cx).await }
    };
    let invoice = move |args: CreateInvoice, cx: &Context| {
        b.fetch_add(1, Ordering::SeqCst);
        let cx = cx.clone();
        async move { create_invoice(args, &cx).await }
    };
    let mut registry = Registry::new();
    registry
        .register(ToolDef::new(weather).effect(Effect::ReadOnly))
        .unwrap();
    let invoice = ToolDef::new(invoice);
    let invoice = if invoice_needs_approval {
        invoice.requires_approval()
    } else {
        invoice
    };
    registry.register(invoice).unwrap();
    registry
}

fn runtime(runs: &Arc<AtomicUsize>) -> Runtime {
    Runtime::new(registry(runs, false))
}

/// A model that asks for the weather forever, with fresh call ids.
fn endless(turns: usize) -> ScriptedTurns {
    (0..turns).fold(ScriptedTurns::new(), |model, i| {
        let city = format!(r#"{{"city":"City{i}","units":"celsius"}}"#);
        model.turn(Turn::calls([call(&format!("w{i}"), "get_weather", &city)]))
    })
}

#[tokio::test]
async fn a_run_ends_when_the_model_answers() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedTurns::new()
        .turn(Turn::calls([call("c1", "get_weather", WEATHER)]).with_usage(100, 20))
        .turn(Turn::answer("It is 19.5 °C in Paris.").with_usage(150, 10));
    let agent = Agent::new(runtime(&runs), model).max_steps(5);
    let report = agent.run(start(), &user()).await;
    assert_eq!(report.end, RunEnd::Answered);
    assert_eq!(report.steps, 2);
    assert_eq!(report.tool_calls, 1);
    assert_eq!(report.usage.total(), 280);
    // The result was in the transcript before the second step read it.
    let seen = agent.model().seen();
    assert_eq!(seen[0].step, 1);
    assert_eq!(seen[1].transcript_len, 3);
    let Message::Tool(result) = &report.transcript[2] else {
        panic!("{:?}", report.transcript);
    };
    assert_eq!(
        (
            result.call_id.as_str(),
            result.code.map_or("ok", Code::as_str)
        ),
        ("c1", "ok")
    );
}

#[tokio::test]
async fn max_steps_counts_the_first_model_call_as_step_one() {
    // The model answers at step 3: allowed with max_steps(3)...
    let script = || {
        ScriptedTurns::new()
            .turn(Turn::calls([call("a", "get_weather", WEATHER)]))
            .turn(Turn::calls([call("b", "get_weather", WEATHER)]))
            .turn(Turn::answer("done"))
    };
    let runs = Arc::new(AtomicUsize::new(0));
    let report = Agent::new(runtime(&runs), script())
        .max_steps(3)
        .run(start(), &user())
        .await;
    assert_eq!(report.end, RunEnd::Answered);
    assert_eq!(report.steps, 3);
    // ...and stopped before it with max_steps(2).
    let agent = Agent::new(runtime(&runs), script()).max_steps(2);
    let report = agent.run(start(), &user()).await;
    assert_eq!(report.end, RunEnd::Guard(Guard::MaxSteps(2)));
    assert_eq!(report.steps, 2);
    assert_eq!(
        agent.model().remaining(),
        1,
        "the third turn was never asked for"
    );
    // The partial transcript is kept: user, call, result, call, result.
    assert_eq!(report.transcript.len(), 5);
}

#[tokio::test]
async fn the_tool_call_budget_admits_k_of_n_and_ends_the_run() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedTurns::new().turn(Turn::calls([
        call("a", "get_weather", r#"{"city":"A","units":"celsius"}"#),
        call("b", "get_weather", r#"{"city":"B","units":"celsius"}"#),
        call("c", "get_weather", r#"{"city":"C","units":"celsius"}"#),
    ]));
    let report = Agent::new(runtime(&runs), model)
        .max_tool_calls(2)
        .run(start(), &user())
        .await;
    assert_eq!(report.end, RunEnd::Guard(Guard::MaxToolCalls(2)));
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    let codes: Vec<_> = report
        .transcript
        .iter()
        .filter_map(|m| match m {
            Message::Tool(r) => Some((r.call_id.as_str(), r.code.map_or("ok", Code::as_str))),
            _ => None,
        })
        .collect();
    assert_eq!(codes, [("a", "ok"), ("b", "ok"), ("c", "budget_exhausted")]);
}

#[tokio::test]
async fn a_tool_quota_refuses_that_tool_only() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedTurns::new()
        .turn(Turn::calls([
            call("a", "get_weather", WEATHER),
            call("b", "get_weather", r#"{"city":"Lyon","units":"celsius"}"#),
            call("c", "create_invoice", INVOICE),
        ]))
        .turn(Turn::answer("done"));
    let report = Agent::new(runtime(&runs), model)
        .tool_quota("get_weather", 1)
        .run(start(), &user())
        .await;
    assert_eq!(report.end, RunEnd::Answered);
    let codes: Vec<_> = report
        .transcript
        .iter()
        .filter_map(|m| match m {
            Message::Tool(r) => Some(r.code.map_or("ok", Code::as_str)),
            _ => None,
        })
        .collect();
    assert_eq!(codes, ["ok", "budget_exhausted", "ok"]);
}

#[tokio::test]
async fn the_deadline_and_cancellation_stop_the_run() {
    let runs = Arc::new(AtomicUsize::new(0));
    let expired = Context::builder("alice").timeout(Duration::ZERO).build();
    let report = Agent::new(runtime(&runs), endless(3))
        .run(start(), &expired)
        .await;
    assert_eq!(report.end, RunEnd::Guard(Guard::Deadline));
    assert_eq!(report.steps, 0);

    let token = tool_core::CancellationToken::new();
    token.cancel();
    let cancelled = Context::builder("alice").cancellation(token).build();
    let report = Agent::new(runtime(&runs), endless(3))
        .run(start(), &cancelled)
        .await;
    assert_eq!(report.end, RunEnd::Guard(Guard::Cancelled));
}

/// A model that never answers.
struct Silent;

impl tool_core::model::Model for Silent {
    async fn respond(
        &self,
        _: &tool_core::model::ModelRequest<'_>,
    ) -> Result<Turn, tool_core::model::ModelError> {
        std::future::pending().await
    }
}

#[tokio::test(start_paused = true)]
async fn the_deadline_ends_a_model_call_that_outlives_it() {
    let runs = Arc::new(AtomicUsize::new(0));
    let cx = Context::builder("alice")
        .timeout(Duration::from_secs(5))
        .build();
    let agent = Agent::new(runtime(&runs), Silent);
    let run = agent.run(start(), &cx);
    // Ten times the deadline: with the clock paused this elapses at once unless the run waits
    // for ever.
    let report = tokio::time::timeout(Duration::from_secs(50), run)
        .await
        .expect("the run ends at its deadline");
    assert_eq!(report.end, RunEnd::Guard(Guard::Deadline));
    assert_eq!(report.steps, 0);
}

#[tokio::test]
async fn the_token_budget_stops_the_next_step() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = (0..5).fold(ScriptedTurns::new(), |m, i| {
        m.turn(
            Turn::calls([call(
                &format!("w{i}"),
                "get_weather",
                &format!(r#"{{"city":"C{i}","units":"celsius"}}"#),
            )])
            .with_usage(500, 100),
        )
    });
    let report = Agent::new(runtime(&runs), model)
        .token_budget(1000)
        .run(start(), &user())
        .await;
    assert_eq!(
        report.end,
        RunEnd::Guard(Guard::TokenBudget {
            limit: 1000,
            used: 1200
        })
    );
    assert_eq!(report.steps, 2);
}

#[tokio::test]
async fn repeating_the_same_call_ends_the_run() {
    let runs = Arc::new(AtomicUsize::new(0));
    // The same call three times: key order, spacing and 1.0 vs 1 do not make it different.
    let model = ScriptedTurns::new()
        .turn(Turn::calls([call("a", "get_weather", WEATHER)]))
        .turn(Turn::calls([call(
            "b",
            "get_weather",
            r#"{ "units": "celsius", "city": "Paris" }"#,
        )]))
        .turn(Turn::calls([call("c", "get_weather", WEATHER)]));
    let report = Agent::new(runtime(&runs), model)
        .max_identical_calls(2)
        .run(start(), &user())
        .await;
    assert_eq!(
        report.end,
        RunEnd::Guard(Guard::RepeatedCall {
            tool: "get_weather".into(),
            times: 3
        })
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_terminal_tool_ends_the_run_and_wrap_up_gets_no_tools() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedTurns::new()
        .turn(Turn::calls([call("i", "create_invoice", INVOICE)]))
        .turn(Turn::answer("Invoice created."));
    let agent = Agent::new(runtime(&runs), model)
        .terminal_tool("create_invoice")
        .wrap_up(true);
    let report = agent.run(start(), &user()).await;
    assert_eq!(
        report.end,
        RunEnd::Guard(Guard::TerminalTool("create_invoice".into()))
    );
    let seen = agent.model().seen();
    assert_eq!(seen.len(), 2);
    assert!(
        seen[1].tools.is_empty(),
        "the wrap-up turn is offered no tools"
    );
    assert!(!seen[0].answer_only && seen[1].answer_only);
    // The tools stay declared, for providers that need them to read the earlier calls.
    assert_eq!(seen[1].declared, seen[0].tools);
    assert!(!seen[1].declared.is_empty());
    assert!(matches!(
        report.transcript.last(),
        Some(Message::Assistant { text: Some(text), .. }) if text == "Invoice created."
    ));
}

/// Waits `millis` and reports concurrency.
#[derive(Tool, Debug)]
struct Sleep {
    /// How long.
    millis: u64,
    /// Fail instead of finishing.
    #[serde(default)]
    fail: bool,
}

#[derive(Argument, serde::Serialize)]
struct Slept {
    millis: u64,
}

fn sleepy(peak: &Arc<(AtomicUsize, AtomicUsize)>, order: &Arc<Mutex<Vec<u64>>>) -> Runtime {
    let (peak, order) = (Arc::clone(peak), Arc::clone(order));
    let handler = move |args: Sleep, _: &Context| {
        let (peak, order) = (Arc::clone(&peak), Arc::clone(&order));
        async move {
            let now = peak.0.fetch_add(1, Ordering::SeqCst) + 1;
            peak.1.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(args.millis)).await;
            peak.0.fetch_sub(1, Ordering::SeqCst);
            order.lock().unwrap().push(args.millis);
            if args.fail {
                return Err(ToolError::public("failed on purpose"));
            }
            Ok(Slept {
                millis: args.millis,
            })
        }
    };
    let mut registry = Registry::new();
    registry
        .register(ToolDef::new(handler).effect(Effect::Idempotent))
        .unwrap();
    Runtime::new(registry)
}

fn sleeps(specs: &[(&str, u64, bool)]) -> Turn {
    Turn::calls(specs.iter().map(|(id, millis, fail)| {
        call(
            id,
            "sleep",
            &format!(r#"{{"millis":{millis},"fail":{fail}}}"#),
        )
    }))
}

#[tokio::test(start_paused = true)]
async fn parallel_calls_keep_proposal_order_under_a_cap() {
    let peak = Arc::new((AtomicUsize::new(0), AtomicUsize::new(0)));
    let order = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedTurns::new()
        .turn(sleeps(&[
            ("a", 40, false),
            ("b", 10, false),
            ("c", 30, false),
            ("d", 20, false),
        ]))
        .turn(Turn::answer("done"));
    let report = Agent::new(sleepy(&peak, &order), model)
        .batch(BatchPolicy::concurrent(2))
        .run(start(), &user())
        .await;
    assert_eq!(report.end, RunEnd::Answered);
    assert_eq!(peak.1.load(Ordering::SeqCst), 2);
    // Completed out of order...
    assert_ne!(*order.lock().unwrap(), [40, 10, 30, 20]);
    // ...recorded in proposal order.
    let ids: Vec<_> = report
        .transcript
        .iter()
        .filter_map(|m| match m {
            Message::Tool(r) => Some(r.call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["a", "b", "c", "d"]);
}

#[tokio::test(start_paused = true)]
async fn a_failure_can_cancel_its_siblings() {
    let run = |cancel: bool| async move {
        let peak = Arc::new((AtomicUsize::new(0), AtomicUsize::new(0)));
        let order = Arc::new(Mutex::new(Vec::new()));
        let model = ScriptedTurns::new()
            .turn(sleeps(&[
                ("slow", 1000, false),
                ("bad", 5, true),
                ("late", 10, false),
            ]))
            .turn(Turn::answer("done"));
        let policy = BatchPolicy::concurrent(2).cancel_siblings_on_failure(cancel);
        let report = Agent::new(sleepy(&peak, &order), model)
            .batch(policy)
            .run(start(), &user())
            .await;
        report
            .transcript
            .iter()
            .filter_map(|m| match m {
                Message::Tool(r) => Some(r.code.map_or("ok", Code::as_str)),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(run(false).await, ["ok", "execution_failed", "ok"]);
    assert_eq!(
        run(true).await,
        ["cancelled", "execution_failed", "cancelled"]
    );
}

#[tokio::test]
async fn refused_arguments_are_repaired_before_they_reach_the_transcript() {
    let runs = Arc::new(AtomicUsize::new(0));
    let broken = r#"{"customerId":"cus_42","amount":"120.5","currency":"dollars"}"#;
    let model = ScriptedTurns::new()
        .turn(Turn::calls([call("i", "create_invoice", broken)]))
        .turn(Turn::answer("done"));
    let agent = Agent::new(runtime(&runs), model).repair(
        ScriptedModel::new().answer(INVOICE),
        RepairPolicy::default(),
    );
    let report = agent.run(start(), &user()).await;
    let Message::Tool(result) = &report.transcript[2] else {
        panic!();
    };
    assert_eq!(result.code, None);
    assert_eq!(result.repaired_arguments.as_deref(), Some(INVOICE));
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    // Without repairs, the refusal goes back to the model, which fixes the call itself.
    let model = ScriptedTurns::new()
        .turn(Turn::calls([call("i", "create_invoice", broken)]))
        .turn(Turn::calls([call("j", "create_invoice", INVOICE)]))
        .turn(Turn::answer("done"));
    let report = Agent::new(runtime(&runs), model)
        .run(start(), &user())
        .await;
    let Message::Tool(result) = &report.transcript[2] else {
        panic!();
    };
    assert_eq!(result.code, Some(Code::InvalidArguments));
    assert!(result.content.contains("- /amount: expected number"));
    assert_eq!(report.end, RunEnd::Answered);
}

/// A runtime whose `create_invoice` needs a receipt, and the approvals that verify it.
fn approved(runs: &Arc<AtomicUsize>) -> (Runtime, Arc<Approvals>) {
    let registry = registry(runs, true);
    let approvals = Arc::new(Approvals::new(KEY, &registry).unwrap());
    let runtime = Runtime::builder(registry)
        .approver(approvals.verifier())
        .build();
    (runtime, approvals)
}

#[tokio::test]
async fn a_run_pauses_for_approval_and_resumes_without_rerunning_calls() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (runtime, approvals) = approved(&runs);
    let model = ScriptedTurns::new()
        .turn(Turn::calls([
            call("w", "get_weather", WEATHER),
            call("i", "create_invoice", INVOICE),
        ]))
        .turn(Turn::answer("Done."));
    let agent = Agent::new(runtime, model).approvals(Arc::clone(&approvals));
    let paused = agent.run(start(), &user()).await;
    let RunEnd::AwaitingApproval(pending) = &paused.end else {
        panic!("{:?}", paused.end);
    };
    assert_eq!(pending.len(), 1);
    assert_eq!(
        (pending[0].call_id.as_str(), pending[0].principal.as_str()),
        ("i", "alice")
    );
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "the weather call ran; the invoice waits"
    );

    // Later, perhaps in another process: the transcript is plain data.
    let stored = serde_json::to_string(&paused.transcript).unwrap();
    let receipt = approvals
        .approve(
            agent.runtime(),
            &pending[0],
            "manager-bob",
            Duration::from_secs(600),
        )
        .unwrap();
    approvals.submit(receipt);
    let transcript: Vec<Message> = serde_json::from_str(&stored).unwrap();
    let resumed = agent.run(transcript, &user()).await;
    assert_eq!(resumed.end, RunEnd::Answered);
    assert_eq!(
        runs.load(Ordering::SeqCst),
        2,
        "only the invoice ran on resume"
    );
    let codes: Vec<_> = resumed
        .transcript
        .iter()
        .filter_map(|m| match m {
            Message::Tool(r) => Some((r.call_id.as_str(), r.code.map_or("ok", Code::as_str))),
            _ => None,
        })
        .collect();
    assert_eq!(codes, [("w", "ok"), ("i", "ok")]);
}

#[tokio::test]
async fn receipts_are_bound_to_the_exact_call() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (runtime, approvals) = approved(&runs);
    let pending = tool_core::approval::PendingApproval {
        call_id: "i1".into(),
        tool: "create_invoice".into(),
        arguments: INVOICE.into(),
        principal: "alice".into(),
    };
    let receipt = approvals
        .approve(&runtime, &pending, "bob", Duration::from_secs(600))
        .unwrap();

    // Changed arguments: refused.
    approvals.submit(receipt.clone());
    let changed = r#"{"customerId":"cus_42","amount":999,"currency":"EUR"}"#;
    let outcome = runtime
        .invoke("i1", "create_invoice", changed, &user())
        .await;
    assert_eq!(outcome.code(), Some(Code::ApprovalDenied));
    assert_eq!(
        outcome.failure().unwrap().detail(),
        Some("the arguments differ from the approved ones")
    );

    // Another principal: refused.
    let mut other = receipt.clone();
    other.call_id = "i2".into();
    approvals.submit(other);
    let mallory = Context::builder("mallory").build();
    let outcome = runtime
        .invoke("i2", "create_invoice", INVOICE, &mallory)
        .await;
    assert_eq!(
        outcome.failure().unwrap().detail(),
        Some("the receipt's signature does not match"),
        "editing a field breaks the signature"
    );

    // A receipt approved for alice does not let mallory run the call.
    let for_alice = approvals
        .approve(
            &runtime,
            &tool_core::approval::PendingApproval {
                call_id: "i4".into(),
                ..pending.clone()
            },
            "bob",
            Duration::from_secs(600),
        )
        .unwrap();
    approvals.submit(for_alice);
    let outcome = runtime
        .invoke("i4", "create_invoice", INVOICE, &mallory)
        .await;
    assert_eq!(
        outcome.failure().unwrap().detail(),
        Some("the receipt is for another principal")
    );

    // The exact call: approved, and only once.
    let fresh = Runtime::builder(registry(&runs, true))
        .approver(approvals.verifier())
        .build();
    approvals.submit(receipt.clone());
    let outcome = runtime
        .invoke("i1b", "create_invoice", INVOICE, &user())
        .await;
    assert_eq!(
        outcome.code(),
        Some(Code::ApprovalDenied),
        "the receipt names call i1"
    );
    let ok = fresh.invoke("i1", "create_invoice", INVOICE, &user()).await;
    assert!(ok.is_ok(), "{ok:?}");
    let again = Runtime::builder(registry(&runs, true))
        .approver(approvals.verifier())
        .build();
    // A used receipt is forgotten; bringing a copy back does not make it usable again.
    approvals.submit(receipt.clone());
    let reused = again.invoke("i1", "create_invoice", INVOICE, &user()).await;
    assert_eq!(
        reused.failure().unwrap().detail(),
        Some("the receipt was already used")
    );
    let bob = Context::builder("bob").build();
    let wrong = fresh.invoke("i9", "create_invoice", INVOICE, &bob).await;
    assert_eq!(wrong.code(), Some(Code::ApprovalDenied));

    // Expired.
    let short = approvals
        .approve(
            &runtime,
            &tool_core::approval::PendingApproval {
                call_id: "i3".into(),
                ..pending.clone()
            },
            "bob",
            Duration::ZERO,
        )
        .unwrap();
    approvals.submit(short);
    let outcome = runtime
        .invoke("i3", "create_invoice", INVOICE, &user())
        .await;
    assert_eq!(outcome.code(), Some(Code::ApprovalExpired));

    // Approving re-checks the arguments.
    let invalid = tool_core::approval::PendingApproval {
        arguments: r#"{"customerId":"","amount":-1,"currency":"EUR"}"#.into(),
        ..pending
    };
    assert!(
        approvals
            .approve(&runtime, &invalid, "bob", Duration::from_secs(60))
            .is_err()
    );
    assert!(Approvals::new(b"short".to_vec(), &Registry::new()).is_err());
}

/// Deletes a post.
#[derive(Tool, Debug)]
struct DeletePost {
    /// The post: a 64-bit snowflake id.
    post_id: u64,
    /// A signed offset.
    shift: i64,
}

#[derive(Argument, serde::Serialize)]
struct Deleted {
    post_id: u64,
    shift: i64,
}

/// A runtime whose `delete_post` needs a receipt and records what its handler received.
fn snowflakes(received: &Arc<Mutex<Vec<(u64, i64)>>>) -> (Runtime, Arc<Approvals>) {
    let received = Arc::clone(received);
    let handler = move |args: DeletePost, _: &Context| {
        received.lock().unwrap().push((args.post_id, args.shift));
        async move {
            Ok::<_, ToolError>(Deleted {
                post_id: args.post_id,
                shift: args.shift,
            })
        }
    };
    let mut registry = Registry::new();
    registry
        .register(ToolDef::new(handler).requires_approval())
        .unwrap();
    let approvals = Arc::new(Approvals::new(KEY, &registry).unwrap());
    let runtime = Runtime::builder(registry)
        .approver(approvals.verifier())
        .build();
    (runtime, approvals)
}

#[tokio::test]
async fn receipts_bind_large_integers_exactly() {
    let received = Arc::new(Mutex::new(Vec::new()));
    let (runtime, approvals) = snowflakes(&received);
    let post = |id: &str, shift: &str| format!(r#"{{"post_id":{id},"shift":{shift}}}"#);
    // (approved, then called): as doubles each pair is one number.
    let refused = [
        // A 64-bit snowflake id and one 100 above it.
        (
            post("1800000000000000000", "0"),
            post("1800000000000000100", "0"),
        ),
        // 2^53 and 2^53 + 1, both ways.
        (post("9007199254740992", "0"), post("9007199254740993", "0")),
        (post("9007199254740993", "0"), post("9007199254740992", "0")),
        (
            post("1", "-9007199254740993"),
            post("1", "-9007199254740992"),
        ),
        (
            post("18446744073709551615", "0"),
            post("18446744073709551614", "0"),
        ),
    ];
    for (i, (approved, called)) in refused.iter().enumerate() {
        let call_id = format!("p{i}");
        let pending = tool_core::approval::PendingApproval {
            call_id: call_id.clone(),
            tool: "delete_post".into(),
            arguments: approved.clone(),
            principal: "alice".into(),
        };
        let receipt = approvals
            .approve(&runtime, &pending, "bob", Duration::from_secs(600))
            .unwrap();
        approvals.submit(receipt);
        let outcome = runtime
            .invoke(&call_id, "delete_post", called.as_str(), &user())
            .await;
        assert_eq!(
            outcome.failure().and_then(|f| f.detail()),
            Some("the arguments differ from the approved ones"),
            "approved {approved}, called {called}: {outcome:?}"
        );
    }
    assert!(received.lock().unwrap().is_empty(), "no handler ran");

    // The same values run, however they are spelled.
    let same = [
        (
            post("1800000000000000000", "0"),
            post("1800000000000000000", "0"),
            (1_800_000_000_000_000_000, 0),
        ),
        (
            post("9007199254740993", "-9007199254740993"),
            r#"{ "shift": -9007199254740993, "post_id": 9007199254740993 }"#.to_owned(),
            (9_007_199_254_740_993, -9_007_199_254_740_993),
        ),
        (
            post("1800000000000000000", "0"),
            post("1.8e18", "0.0"),
            (1_800_000_000_000_000_000, 0),
        ),
    ];
    for (i, (approved, called, values)) in same.iter().enumerate() {
        let call_id = format!("s{i}");
        let pending = tool_core::approval::PendingApproval {
            call_id: call_id.clone(),
            tool: "delete_post".into(),
            arguments: approved.clone(),
            principal: "alice".into(),
        };
        let receipt = approvals
            .approve(&runtime, &pending, "bob", Duration::from_secs(600))
            .unwrap();
        approvals.submit(receipt);
        let outcome = runtime
            .invoke(&call_id, "delete_post", called.as_str(), &user())
            .await;
        assert!(
            outcome.is_ok(),
            "approved {approved}, called {called}: {outcome:?}"
        );
        assert_eq!(received.lock().unwrap().pop(), Some(*values));
    }
}

#[tokio::test]
async fn calls_differing_only_in_a_large_integer_are_not_repeats() {
    // As doubles the two ids are one number: the repeated-call guard refused the second call.
    let received = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&received);
    let handler = move |args: DeletePost, _: &Context| {
        seen.lock().unwrap().push((args.post_id, args.shift));
        async move {
            Ok::<_, ToolError>(Deleted {
                post_id: args.post_id,
                shift: args.shift,
            })
        }
    };
    let mut registry = Registry::new();
    registry.register(ToolDef::new(handler)).unwrap();
    let model = ScriptedTurns::new()
        .turn(Turn::calls([
            call(
                "a",
                "delete_post",
                r#"{"post_id":1800000000000000000,"shift":0}"#,
            ),
            call(
                "b",
                "delete_post",
                r#"{"post_id":1800000000000000100,"shift":0}"#,
            ),
        ]))
        .turn(Turn::answer("Deleted both."));
    let report = Agent::new(Runtime::new(registry), model)
        .max_identical_calls(1)
        .run(start(), &user())
        .await;
    assert_eq!(report.end, RunEnd::Answered);
    assert_eq!(
        *received.lock().unwrap(),
        [
            (1_800_000_000_000_000_000, 0),
            (1_800_000_000_000_000_100, 0)
        ]
    );
}

#[tokio::test]
async fn approvals_forget_a_decision_once_it_is_used_or_expired() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (runtime, approvals) = approved(&runs);
    let pending = tool_core::approval::PendingApproval {
        call_id: "i1".into(),
        tool: "create_invoice".into(),
        arguments: INVOICE.into(),
        principal: "alice".into(),
    };
    let receipt = approvals
        .approve(&runtime, &pending, "bob", Duration::from_secs(600))
        .unwrap();
    approvals.submit(receipt.clone());
    assert!(approvals.has_decision("i1"));
    let outcome = runtime
        .invoke("i1", "create_invoice", INVOICE, &user())
        .await;
    assert!(outcome.is_ok(), "{outcome:?}");
    assert!(!approvals.has_decision("i1"), "a used receipt is gone");

    // A copy of the used receipt brought back later is still refused.
    approvals.submit(receipt);
    let fresh = Runtime::builder(registry(&runs, true))
        .approver(approvals.verifier())
        .build();
    let replayed = fresh.invoke("i1", "create_invoice", INVOICE, &user()).await;
    assert_eq!(
        replayed.failure().and_then(|f| f.detail()),
        Some("the receipt was already used")
    );
    assert!(!approvals.has_decision("i1"));

    // A denial is gone once the call it refused was dispatched.
    approvals.deny("d1", "not this month");
    assert!(approvals.has_decision("d1"));
    let denied = runtime
        .invoke("d1", "create_invoice", INVOICE, &user())
        .await;
    assert_eq!(
        denied.failure().and_then(|f| f.detail()),
        Some("not this month")
    );
    assert!(!approvals.has_decision("d1"), "a used denial is gone");

    // An expired receipt is no decision: the call has to be approved again.
    let short = approvals
        .approve(
            &runtime,
            &tool_core::approval::PendingApproval {
                call_id: "e1".into(),
                ..pending
            },
            "bob",
            Duration::ZERO,
        )
        .unwrap();
    approvals.submit(short);
    assert!(!approvals.has_decision("e1"), "an expired receipt is gone");
}

/// The resident set size of this process, in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Memory over a million approve, submit and run cycles (Linux; run it with
/// `cargo test -p tests --test agent -- --ignored --nocapture approvals_memory`).
#[tokio::test]
#[ignore = "a measurement: a million approvals take a while"]
async fn approvals_memory_stays_flat_over_a_million_approvals() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (runtime, approvals) = approved(&runs);
    let cx = user();
    let mut marks = Vec::new();
    for i in 0..1_000_000u32 {
        let pending = tool_core::approval::PendingApproval {
            call_id: format!("call_{i}"),
            tool: "create_invoice".into(),
            arguments: INVOICE.into(),
            principal: "alice".into(),
        };
        let receipt = approvals
            .approve(&runtime, &pending, "bob", Duration::from_secs(600))
            .unwrap();
        approvals.submit(receipt);
        let outcome = runtime
            .invoke(&pending.call_id, "create_invoice", INVOICE, &cx)
            .await;
        assert!(outcome.is_ok(), "{outcome:?}");
        if matches!(i + 1, 50_000 | 100_000 | 250_000 | 500_000 | 1_000_000) {
            marks.push((i + 1, rss_kib()));
            println!("after {:>9} approvals: VmRSS {:>7} KiB", i + 1, rss_kib());
        }
    }
    let (_, warm) = marks[1];
    let (_, end) = marks[marks.len() - 1];
    assert!(
        end.saturating_sub(warm) < 8 * 1024,
        "memory grew from {warm} KiB after 100k approvals to {end} KiB after 1M"
    );
}

#[tokio::test]
async fn a_recorded_run_replays_without_executing_anything() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedTurns::new()
        .turn(Turn::calls([call("w", "get_weather", WEATHER)]).with_usage(10, 5))
        .turn(Turn::calls([call("i", "create_invoice", INVOICE)]).with_usage(20, 5))
        .turn(Turn::answer("All done.").with_usage(30, 5));
    let live = Agent::new(runtime(&runs), model)
        .run(start(), &user())
        .await;
    assert_eq!(runs.load(Ordering::SeqCst), 2);

    let replayed = Agent::new(
        runtime(&runs),
        ScriptedTurns::from_transcript(&live.transcript),
    )
    .replaying(&live.transcript)
    .run(start(), &user())
    .await;
    assert_eq!(replayed.transcript, live.transcript);
    assert_eq!(replayed.end, live.end);
    assert_eq!(replayed.usage, live.usage);
    assert_eq!(runs.load(Ordering::SeqCst), 2, "nothing ran again");
}

#[tokio::test]
async fn the_model_is_offered_only_the_tools_the_principal_is_shown() {
    let runs = Arc::new(AtomicUsize::new(0));
    let runtime = Runtime::builder(registry(&runs, false))
        .authorize(
            |tool: &tool_core::registry::ToolInfo, cx: &Context| match cx.principal() {
                "bob" if tool.effect() != Effect::ReadOnly => {
                    Err(tool_core::Denied::new("bob only reads"))
                }
                _ => Ok(()),
            },
        )
        .build();

    let model = ScriptedTurns::new().turn(Turn::answer("Hello."));
    let agent = Agent::new(runtime.clone(), model);
    agent.run(start(), &user()).await;
    let seen = agent.model().seen();
    assert_eq!(seen[0].tools, ["get_weather", "create_invoice"]);

    // Bob's model never sees `create_invoice`; a call it makes up is refused, not run.
    let model = ScriptedTurns::new()
        .turn(Turn::calls([call("c1", "create_invoice", INVOICE)]))
        .turn(Turn::answer("I cannot do that."));
    let agent = Agent::new(runtime, model).max_steps(5);
    let report = agent.run(start(), &Context::builder("bob").build()).await;
    let seen = agent.model().seen();
    assert_eq!(seen[0].tools, ["get_weather"]);
    assert_eq!(seen[0].declared, ["get_weather"]);
    assert_eq!(seen[1].tools, ["get_weather"]);
    assert_eq!(report.end, RunEnd::Answered);
    assert_eq!(report.outcomes[0].code(), Some(Code::Unauthorized));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}
