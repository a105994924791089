//! The runtime: one outcome per call, every failure kind with its code, stages in order.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use examples::{CreateInvoice, GetWeather, Invoice, Weather, create_invoice, get_weather};
use serde_json::{Value, json};
use tool_core::{
    Argument, Code, Context, Denied, Effect, Registry, Runtime, Tool, ToolDef,
    observe::Event,
    registry::{DynamicTool, RegistryError, ToolError, ToolInfo},
    runtime::{Approval, ApprovalRequest},
};

const VALID_INVOICE: &str = r#"{"customerId":"cus_42","amount":120.5,"currency":"USD"}"#;
const VALID_WEATHER: &str = r#"{"city":"Paris","units":"celsius"}"#;

/// Counts how far calls get through the pipeline.
#[derive(Default)]
struct Probe {
    authorized: AtomicUsize,
    approved: AtomicUsize,
    executed: AtomicUsize,
}

impl Probe {
    fn counts(&self) -> [usize; 3] {
        [
            self.authorized.load(Ordering::SeqCst),
            self.approved.load(Ordering::SeqCst),
            self.executed.load(Ordering::SeqCst),
        ]
    }
}

fn user() -> Context {
    Context::builder("user-1").tenant("acme").build()
}

/// A registry whose `create_invoice` counts executions, and a runtime whose policies count
/// authorizations and approvals. Principals named "mallory" are refused; approvals go to
/// `decision`.
fn probed(
    probe: &Arc<Probe>,
    decision: Approval,
    tool: impl FnOnce(ToolDef<CreateInvoice>) -> ToolDef<CreateInvoice>,
) -> Runtime {
    let counter = Arc::clone(probe);
    let handler = move |args: CreateInvoice, cx: &Context| {
        counter.executed.fetch_add(1, Ordering::SeqCst);
        let cx = cx.clone();
        async move { create_invoice(args, &cx).await }
    };
    let mut registry = Registry::new();
    registry.register(tool(ToolDef::new(handler))).unwrap();
    let authorized = Arc::clone(probe);
    let approved = Arc::clone(probe);
    Runtime::builder(registry)
        .authorize(move |_: &ToolInfo, cx: &Context| {
            authorized.authorized.fetch_add(1, Ordering::SeqCst);
            if cx.principal() == "mallory" {
                Err(Denied::new("mallory is on the deny list"))
            } else {
                Ok(())
            }
        })
        .approver(move |_: ApprovalRequest, _: Context| {
            approved.approved.fetch_add(1, Ordering::SeqCst);
            let decision = decision.clone();
            async move { decision }
        })
        .build()
}

fn weather_runtime(tool: impl FnOnce(ToolDef<GetWeather>) -> ToolDef<GetWeather>) -> Runtime {
    let mut registry = Registry::new();
    registry.register(tool(ToolDef::new(get_weather))).unwrap();
    Runtime::new(registry)
}

#[tokio::test]
async fn valid_call_returns_the_checked_output() {
    let probe = Arc::new(Probe::default());
    let runtime = probed(&probe, Approval::Approved, |t| t);
    let outcome = runtime
        .invoke("call_1", "create_invoice", VALID_INVOICE, &user())
        .await;
    assert_eq!(outcome.code(), None);
    assert_eq!(outcome.call_id(), "call_1");
    assert_eq!(outcome.tool(), "create_invoice");
    assert_eq!(
        outcome.output().unwrap().as_str(),
        r#"{"invoiceId":"inv_call_1","customerId":"cus_42","amount":120.5,"currency":"USD"}"#
    );
    assert_eq!(probe.counts(), [1, 0, 1]);
}

#[tokio::test]
async fn json_arguments_take_the_same_path_as_text() {
    let runtime = weather_runtime(|t| t);
    let cx = user();
    let value: Value = serde_json::from_str(VALID_WEATHER).unwrap();
    let from_value = runtime.invoke("a", "get_weather", &value, &cx).await;
    let from_text = runtime.invoke("b", "get_weather", VALID_WEATHER, &cx).await;
    assert!(from_value.is_ok());
    assert_eq!(from_value.output(), from_text.output());

    let bad = json!({"city": "", "units": "kelvin"});
    let outcome = runtime.invoke("c", "get_weather", &bad, &cx).await;
    assert_eq!(outcome.code(), Some(Code::InvalidArguments));
    assert_eq!(outcome.failure().unwrap().errors().unwrap().len(), 2);
}

#[tokio::test]
async fn registration_takes_name_and_schemas_from_the_types() {
    let mut registry = Registry::new();
    registry.register(ToolDef::new(create_invoice)).unwrap();
    let info = registry.get("create_invoice").unwrap();
    assert_eq!(info.input_schema(), CreateInvoice::input_schema());
    assert_eq!(info.description(), CreateInvoice::description());
    let output = info.output_schema().unwrap();
    assert_eq!(output["properties"]["invoiceId"]["minLength"], json!(1));
    assert_eq!(output["additionalProperties"], json!(false));
    assert_eq!(info.effect(), Effect::NonIdempotent, "the safe default");
}

#[tokio::test]
async fn registering_a_name_twice_is_an_error() {
    let mut registry = Registry::new();
    registry.register(ToolDef::new(create_invoice)).unwrap();
    let error = registry.register(ToolDef::new(create_invoice)).unwrap_err();
    assert_eq!(
        error,
        RegistryError::DuplicateName {
            name: "create_invoice".into()
        }
    );
    let schema = json!({"type": "object"});
    let error = registry
        .register(ToolDef::dynamic(
            DynamicTool::new("create_invoice", "", schema),
            |args: Value, _: &Context| async move { Ok::<_, ToolError>(args) },
        ))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "a tool named `create_invoice` is already registered"
    );
    assert_eq!(registry.len(), 1);
}

#[tokio::test]
async fn unknown_tool_names_the_available_ones() {
    let probe = Arc::new(Probe::default());
    let runtime = probed(&probe, Approval::Approved, |t| t);
    let outcome = runtime
        .invoke("c1", "create_invoise", VALID_INVOICE, &user())
        .await;
    let failure = outcome.failure().unwrap();
    assert_eq!(failure.code(), Code::UnknownTool);
    assert_eq!(
        failure.message(),
        r#"unknown tool "create_invoise"; available: create_invoice"#
    );
    assert_eq!(probe.counts(), [0, 0, 0]);
}

#[tokio::test]
async fn input_too_large_is_refused_before_parsing() {
    let runtime = weather_runtime(|t| t.max_input_bytes(64));
    let long = format!(r#"{{"city":"{}","units":"celsius"}}"#, "x".repeat(100));
    let outcome = runtime.invoke("c1", "get_weather", &long, &user()).await;
    assert_eq!(outcome.code(), Some(Code::InputTooLarge));
    // Not JSON at all, but over the cap: the cap decides first.
    let junk = "{".repeat(65);
    let outcome = runtime.invoke("c2", "get_weather", &junk, &user()).await;
    assert_eq!(outcome.code(), Some(Code::InputTooLarge));
    let value: Value = serde_json::from_str(&long).unwrap();
    let outcome = runtime.invoke("c3", "get_weather", &value, &user()).await;
    assert_eq!(outcome.code(), Some(Code::InputTooLarge));
    let outcome = runtime
        .invoke("c4", "get_weather", VALID_WEATHER, &user())
        .await;
    assert!(outcome.is_ok(), "{outcome:?}");
}

#[tokio::test]
async fn invalid_arguments_never_reach_authorization() {
    let probe = Arc::new(Probe::default());
    let runtime = probed(&probe, Approval::Approved, |t| t.requires_approval());
    let raw = r#"{"customerId":"cus_42","amount":"120.5","currency":"dollars"}"#;
    let outcome = runtime.invoke("c1", "create_invoice", raw, &user()).await;
    let failure = outcome.failure().unwrap();
    assert_eq!(failure.code(), Code::InvalidArguments);
    assert_eq!(
        failure.message(),
        "- /amount: expected number, got string \"120.5\"\n\
         - /currency: must be one of \"USD\", \"EUR\", \"GBP\"; got \"dollars\""
    );
    assert_eq!(failure.errors().unwrap().len(), 2);
    assert_eq!(probe.counts(), [0, 0, 0]);
}

#[tokio::test]
async fn unauthorized_calls_never_reach_approval_or_execution() {
    let probe = Arc::new(Probe::default());
    let runtime = probed(&probe, Approval::Approved, |t| t.requires_approval());
    let mallory = Context::builder("mallory").build();
    let outcome = runtime
        .invoke("c1", "create_invoice", VALID_INVOICE, &mallory)
        .await;
    let failure = outcome.failure().unwrap();
    assert_eq!(failure.code(), Code::Unauthorized);
    // Two faces: the model learns nothing about the policy; the operator learns why.
    assert_eq!(
        failure.message(),
        format!(
            "not authorized to call `create_invoice` (reference {})",
            outcome.id()
        )
    );
    assert!(!failure.message().contains("deny list"));
    assert_eq!(failure.detail(), Some("mallory is on the deny list"));
    assert_eq!(probe.counts(), [1, 0, 0]);
}

#[tokio::test]
async fn the_tools_typed_check_runs_after_the_runtime_policy() {
    let probe = Arc::new(Probe::default());
    let runtime = probed(&probe, Approval::Approved, |t| {
        t.authorize(|args: &CreateInvoice, cx: &Context| {
            if args.amount > 1000.0 && cx.tenant() != Some("bigcorp") {
                Err(Denied::new("over the tenant's limit")
                    .with_message("amounts over 1000 need a manager"))
            } else {
                Ok(())
            }
        })
    });
    let big = r#"{"customerId":"cus_42","amount":5000,"currency":"EUR"}"#;
    let outcome = runtime.invoke("c1", "create_invoice", big, &user()).await;
    let failure = outcome.failure().unwrap();
    assert_eq!(failure.code(), Code::Unauthorized);
    assert!(
        failure
            .message()
            .starts_with("amounts over 1000 need a manager (reference ")
    );
    assert_eq!(probe.counts(), [1, 0, 0]);

    let bigcorp = Context::builder("user-2").tenant("bigcorp").build();
    let outcome = runtime.invoke("c2", "create_invoice", big, &bigcorp).await;
    assert!(outcome.is_ok());
    assert_eq!(probe.counts(), [2, 0, 1]);
}

#[tokio::test]
async fn denied_approval_never_executes() {
    let probe = Arc::new(Probe::default());
    let runtime = probed(
        &probe,
        Approval::Denied("the reviewer said no".into()),
        |t| t.requires_approval(),
    );
    let outcome = runtime
        .invoke("c1", "create_invoice", VALID_INVOICE, &user())
        .await;
    let failure = outcome.failure().unwrap();
    assert_eq!(failure.code(), Code::ApprovalDenied);
    assert_eq!(failure.detail(), Some("the reviewer said no"));
    assert_eq!(probe.counts(), [1, 1, 0]);
}

/// Every way an approval can fail gives the model a reference, the id of the approval request,
/// so the operator can find it.
#[tokio::test(start_paused = true)]
async fn an_approval_refusal_gives_a_reference_to_its_approval_request() {
    let probe = Arc::new(Probe::default());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let denied = probed(
        &probe,
        Approval::Denied("the reviewer said no".into()),
        |t| t.requires_approval(),
    );
    let expired = probed(&probe, Approval::Expired, |t| t.requires_approval());
    let mut registry = Registry::new();
    registry
        .register(ToolDef::new(create_invoice).requires_approval())
        .unwrap();
    let registry = Arc::new(registry);
    let unanswered = {
        let seen = Arc::clone(&seen);
        Runtime::builder(Arc::clone(&registry))
            .approver(move |request: ApprovalRequest, _: Context| {
                seen.lock().unwrap().push(request.id());
                async {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    Approval::Approved
                }
            })
            .build()
    };
    let without_approver = Runtime::new(registry);
    let deadline = Context::builder("user-1")
        .timeout(Duration::from_secs(5))
        .build();
    let cases = [
        (&denied, "call_denied", user(), Code::ApprovalDenied),
        (&expired, "call_expired", user(), Code::ApprovalExpired),
        (
            &unanswered,
            "call_deadline",
            deadline,
            Code::ApprovalExpired,
        ),
        (&without_approver, "call_none", user(), Code::ApprovalDenied),
    ];
    for (runtime, call_id, cx, code) in cases {
        let outcome = runtime
            .invoke(call_id, "create_invoice", VALID_INVOICE, &cx)
            .await;
        let failure = outcome.failure().unwrap();
        assert_eq!(failure.code(), code, "{failure}");
        let reference = format!("(reference {})", outcome.id());
        assert!(failure.message().ends_with(&reference), "{failure}");
        assert!(failure.detail().is_some(), "{failure:?}");
        if code == Code::ApprovalExpired {
            let detail = failure.detail().unwrap();
            assert!(
                detail.contains(&format!("request {}", outcome.id())),
                "{detail}"
            );
        }
        if call_id == "call_deadline" {
            // The reference is the id the approver was asked under.
            assert_eq!(*seen.lock().unwrap(), [outcome.id()]);
        }
    }
    assert_eq!(probe.counts(), [2, 2, 0]);
}

#[tokio::test]
async fn approval_sees_the_validated_arguments_and_approved_calls_run() {
    let seen = Arc::new(Mutex::new(None));
    let record = Arc::clone(&seen);
    let mut registry = Registry::new();
    registry
        .register(ToolDef::new(create_invoice).requires_approval())
        .unwrap();
    let runtime = Runtime::builder(registry)
        .approver(move |request: ApprovalRequest, cx: Context| {
            *record.lock().unwrap() = Some((request.clone(), cx.principal().to_owned()));
            async { Approval::Approved }
        })
        .build();
    let outcome = runtime
        .invoke("c1", "create_invoice", VALID_INVOICE, &user())
        .await;
    assert!(outcome.is_ok());
    let (request, principal) = seen.lock().unwrap().take().unwrap();
    assert_eq!(request.tool(), "create_invoice");
    assert_eq!(request.call_id(), "c1");
    assert_eq!(request.id(), outcome.id());
    assert_eq!(
        request.arguments(),
        &serde_json::from_str::<Value>(VALID_INVOICE).unwrap()
    );
    assert_eq!(principal, "user-1");
}

#[tokio::test]
async fn tools_needing_approval_are_refused_without_an_approver() {
    let mut registry = Registry::new();
    registry
        .register(ToolDef::new(create_invoice).requires_approval())
        .unwrap();
    let runtime = Runtime::new(registry);
    let outcome = runtime
        .invoke("c1", "create_invoice", VALID_INVOICE, &user())
        .await;
    assert_eq!(outcome.code(), Some(Code::ApprovalDenied));
}

#[tokio::test]
async fn expired_approval_never_executes() {
    let probe = Arc::new(Probe::default());
    let runtime = probed(&probe, Approval::Expired, |t| t.requires_approval());
    let outcome = runtime
        .invoke("c1", "create_invoice", VALID_INVOICE, &user())
        .await;
    assert_eq!(outcome.code(), Some(Code::ApprovalExpired));
    assert_eq!(probe.counts(), [1, 1, 0]);
}

#[tokio::test(start_paused = true)]
async fn the_deadline_passing_during_approval_expires_it() {
    let mut registry = Registry::new();
    registry
        .register(ToolDef::new(create_invoice).requires_approval())
        .unwrap();
    let runtime = Runtime::builder(registry)
        .approver(|_: ApprovalRequest, _: Context| async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Approval::Approved
        })
        .build();
    let cx = Context::builder("user-1")
        .timeout(Duration::from_secs(5))
        .build();
    let outcome = runtime
        .invoke("c1", "create_invoice", VALID_INVOICE, &cx)
        .await;
    assert_eq!(outcome.code(), Some(Code::ApprovalExpired));
}

#[tokio::test]
async fn quotas_refuse_calls_beyond_the_budget() {
    let probe = Arc::new(Probe::default());
    let runtime = probed(&probe, Approval::Approved, |t| t.max_calls(2));
    let cx = user();
    let mut codes = Vec::new();
    for i in 0..4 {
        let outcome = runtime
            .invoke(&format!("c{i}"), "create_invoice", VALID_INVOICE, &cx)
            .await;
        codes.push(outcome.code());
    }
    assert_eq!(
        codes,
        [
            None,
            None,
            Some(Code::BudgetExhausted),
            Some(Code::BudgetExhausted)
        ]
    );
    assert_eq!(probe.counts(), [4, 0, 2]);
}

#[tokio::test]
async fn the_runtime_quota_counts_every_tool() {
    let mut registry = Registry::new();
    registry.register(ToolDef::new(create_invoice)).unwrap();
    registry.register(ToolDef::new(get_weather)).unwrap();
    let runtime = Runtime::builder(registry).max_calls(2).build();
    let cx = user();
    let a = runtime.invoke("a", "get_weather", VALID_WEATHER, &cx).await;
    let b = runtime
        .invoke("b", "create_invoice", VALID_INVOICE, &cx)
        .await;
    let c = runtime.invoke("c", "get_weather", VALID_WEATHER, &cx).await;
    assert_eq!(
        [a.code(), b.code(), c.code()],
        [None, None, Some(Code::BudgetExhausted)]
    );
    assert_eq!(
        c.failure().unwrap().message(),
        "the call limit of this run is used up"
    );
}

#[tokio::test(start_paused = true)]
async fn a_slow_read_only_call_times_out() {
    let runtime = weather_runtime(|t| {
        t.effect(Effect::ReadOnly)
            .timeout(Duration::from_millis(250))
    });
    let slow = r#"{"city":"Atlantis","units":"celsius"}"#;
    let outcome = runtime.invoke("c1", "get_weather", slow, &user()).await;
    let failure = outcome.failure().unwrap();
    assert_eq!(failure.code(), Code::Timeout);
    assert!(
        failure.message().contains("it ran longer than 250 ms"),
        "{failure}"
    );
    // The runtime keeps serving.
    let outcome = runtime
        .invoke("c2", "get_weather", VALID_WEATHER, &user())
        .await;
    assert!(outcome.is_ok());
}

#[tokio::test(start_paused = true)]
async fn stopping_non_idempotent_work_is_outcome_unknown() {
    let runtime = weather_runtime(|t| {
        t.effect(Effect::NonIdempotent)
            .timeout(Duration::from_millis(250))
    });
    let slow = r#"{"city":"Atlantis","units":"celsius"}"#;
    let outcome = runtime.invoke("c1", "get_weather", slow, &user()).await;
    let failure = outcome.failure().unwrap();
    assert_eq!(failure.code(), Code::OutcomeUnknown);
    assert!(failure.message().contains("may or may not have happened"));

    let token = tool_core::CancellationToken::new();
    let cx = Context::builder("user-1")
        .cancellation(token.clone())
        .build();
    let cancel = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        token.cancel();
    });
    let outcome = runtime.invoke("c2", "get_weather", slow, &cx).await;
    cancel.await.unwrap();
    assert_eq!(outcome.code(), Some(Code::OutcomeUnknown));
}

#[tokio::test(start_paused = true)]
async fn the_run_deadline_bounds_every_call() {
    let runtime = weather_runtime(|t| t.effect(Effect::Idempotent));
    let cx = Context::builder("user-1")
        .timeout(Duration::from_secs(2))
        .build();
    let slow = r#"{"city":"Atlantis","units":"celsius"}"#;
    let started = tokio::time::Instant::now();
    let outcome = runtime.invoke("c1", "get_weather", slow, &cx).await;
    assert_eq!(outcome.code(), Some(Code::Timeout));
    assert_eq!(started.elapsed(), Duration::from_secs(2));
    // Past the deadline nothing starts.
    let outcome = runtime
        .invoke("c2", "get_weather", VALID_WEATHER, &cx)
        .await;
    let failure = outcome.failure().unwrap();
    assert_eq!(failure.code(), Code::Timeout);
    assert_eq!(
        failure.message(),
        "the run's deadline passed before the call started"
    );
}

/// A read-only tool that waits until cancelled, and records whether work it started saw the
/// signal.
#[derive(Tool, Debug)]
struct Wait {
    /// Seconds to wait.
    seconds: u32,
}

#[derive(Argument, serde::Serialize)]
struct Waited {
    seconds: u32,
}

#[tokio::test(start_paused = true)]
async fn cancellation_reaches_the_handler_and_what_it_started() {
    let observed = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&observed);
    let handler = move |args: Wait, cx: &Context| {
        let token = cx.cancellation().clone();
        let flag = Arc::clone(&flag);
        async move {
            // Work the handler hands off keeps the token and stops cooperatively.
            tokio::spawn(async move {
                token.cancelled().await;
                flag.store(true, Ordering::SeqCst);
            });
            tokio::time::sleep(Duration::from_secs(u64::from(args.seconds))).await;
            Ok::<_, ToolError>(Waited {
                seconds: args.seconds,
            })
        }
    };
    let mut registry = Registry::new();
    registry
        .register(ToolDef::new(handler).effect(Effect::ReadOnly))
        .unwrap();
    let runtime = Runtime::new(registry);

    let token = tool_core::CancellationToken::new();
    let cx = Context::builder("user-1")
        .cancellation(token.clone())
        .build();
    let run = {
        let runtime = runtime.clone();
        let cx = cx.clone();
        tokio::spawn(async move { runtime.invoke("c1", "wait", r#"{"seconds":20}"#, &cx).await })
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    token.cancel();
    let outcome = run.await.unwrap();
    assert_eq!(outcome.code(), Some(Code::Cancelled));
    tokio::task::yield_now().await;
    assert!(observed.load(Ordering::SeqCst));
    // A cancelled run starts nothing more.
    let outcome = runtime.invoke("c2", "wait", r#"{"seconds":0}"#, &cx).await;
    assert_eq!(outcome.code(), Some(Code::Cancelled));
}

/// What the task a handler left behind saw when it woke up after the call had ended.
#[derive(Debug, PartialEq)]
enum Afterwards {
    /// It saw the call stopped and did nothing.
    Stopped,
    /// It did not see the call stopped and committed its work.
    Committed,
}

/// A non-idempotent tool whose handler hands a clone of its context to a task that commits
/// 5 s later unless it sees the call stopped. The handler never asks for the token itself:
/// the attack is work that commits after the runtime already reported `outcome_unknown`.
fn committing(timeout: Duration) -> (Runtime, tokio::sync::mpsc::UnboundedReceiver<Afterwards>) {
    let (report, seen) = tokio::sync::mpsc::unbounded_channel();
    let handler = move |args: Wait, cx: &Context| {
        let cx = cx.clone();
        let report = report.clone();
        async move {
            let task_cx = cx.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_secs(5)).await;
                let afterwards = if task_cx.is_cancelled() {
                    Afterwards::Stopped
                } else {
                    Afterwards::Committed
                };
                let _ = report.send(afterwards);
            });
            tokio::time::sleep(Duration::from_secs(u64::from(args.seconds))).await;
            Ok::<_, ToolError>(Waited {
                seconds: args.seconds,
            })
        }
    };
    let mut registry = Registry::new();
    registry
        .register(
            ToolDef::new(handler)
                .effect(Effect::NonIdempotent)
                .timeout(timeout),
        )
        .unwrap();
    (Runtime::new(registry), seen)
}

#[tokio::test(start_paused = true)]
async fn every_context_clone_observes_the_call_timeout() {
    let (runtime, mut seen) = committing(Duration::from_secs(1));
    let outcome = runtime
        .invoke("c1", "wait", r#"{"seconds":20}"#, &user())
        .await;
    assert_eq!(outcome.code(), Some(Code::OutcomeUnknown));
    assert_eq!(seen.recv().await, Some(Afterwards::Stopped));
}

#[tokio::test(start_paused = true)]
async fn every_context_clone_observes_the_run_deadline() {
    let (runtime, mut seen) = committing(Duration::from_secs(30));
    let cx = Context::builder("user-1")
        .timeout(Duration::from_secs(2))
        .build();
    let outcome = runtime.invoke("c1", "wait", r#"{"seconds":20}"#, &cx).await;
    assert_eq!(outcome.code(), Some(Code::OutcomeUnknown));
    assert_eq!(seen.recv().await, Some(Afterwards::Stopped));
}

#[tokio::test(start_paused = true)]
async fn every_context_clone_observes_an_explicit_cancellation() {
    let (runtime, mut seen) = committing(Duration::from_secs(30));
    let token = tool_core::CancellationToken::new();
    let cx = Context::builder("user-1")
        .cancellation(token.clone())
        .build();
    let cancel = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        token.cancel();
    });
    let outcome = runtime.invoke("c1", "wait", r#"{"seconds":20}"#, &cx).await;
    cancel.await.unwrap();
    assert_eq!(outcome.code(), Some(Code::OutcomeUnknown));
    assert_eq!(seen.recv().await, Some(Afterwards::Stopped));
}

#[tokio::test(start_paused = true)]
async fn a_clone_of_a_finished_call_context_is_cancelled() {
    // A handler that returns at once still leaves its task behind: the call is over for it too.
    let (runtime, mut seen) = committing(Duration::from_secs(30));
    let outcome = runtime
        .invoke("c1", "wait", r#"{"seconds":0}"#, &user())
        .await;
    assert!(outcome.is_ok(), "{outcome:?}");
    assert_eq!(seen.recv().await, Some(Afterwards::Stopped));
}

#[tokio::test]
async fn handler_errors_have_a_public_and_an_operator_face() {
    let runtime = {
        let mut registry = Registry::new();
        registry.register(ToolDef::new(create_invoice)).unwrap();
        Runtime::new(registry)
    };
    let closed = r#"{"customerId":"cus_closed","amount":1,"currency":"GBP"}"#;
    let outcome = runtime
        .invoke("c1", "create_invoice", closed, &user())
        .await;
    let failure = outcome.failure().unwrap();
    assert_eq!(failure.code(), Code::ExecutionFailed);
    assert_eq!(
        failure.message(),
        format!(
            "that customer account is closed (reference {})",
            outcome.id()
        )
    );
    assert_eq!(
        failure.detail(),
        Some("billing API: account cus_closed closed")
    );
}

#[tokio::test]
async fn std_errors_stay_with_the_operator() {
    let handler = |_: GetWeather, _: &Context| async {
        Err::<Weather, _>(std::io::Error::other("connection refused by 10.0.0.7:5432"))
    };
    let mut registry = Registry::new();
    registry.register(ToolDef::new(handler)).unwrap();
    let runtime = Runtime::new(registry);
    let outcome = runtime
        .invoke("c1", "get_weather", VALID_WEATHER, &user())
        .await;
    let failure = outcome.failure().unwrap();
    assert_eq!(failure.code(), Code::ExecutionFailed);
    assert_eq!(
        failure.message(),
        format!("`get_weather` failed (reference {})", outcome.id())
    );
    assert_eq!(
        failure.detail(),
        Some("connection refused by 10.0.0.7:5432")
    );
}

#[tokio::test]
async fn a_panicking_handler_fails_the_call_and_the_runtime_keeps_serving() {
    let handler = |args: GetWeather, cx: &Context| {
        let cx = cx.clone();
        async move {
            if args.city == "Boom" {
                panic!("index out of bounds in the forecast cache");
            }
            get_weather(args, &cx).await
        }
    };
    let mut registry = Registry::new();
    registry.register(ToolDef::new(handler)).unwrap();
    let runtime = Runtime::new(registry);
    let boom = r#"{"city":"Boom","units":"celsius"}"#;
    let outcome = runtime.invoke("c1", "get_weather", boom, &user()).await;
    let failure = outcome.failure().unwrap();
    assert_eq!(failure.code(), Code::ExecutionFailed);
    assert!(!failure.message().contains("index out of bounds"));
    assert_eq!(
        failure.detail(),
        Some("handler panicked: index out of bounds in the forecast cache")
    );
    let outcome = runtime
        .invoke("c2", "get_weather", VALID_WEATHER, &user())
        .await;
    assert!(outcome.is_ok());
}

#[tokio::test]
async fn output_breaking_its_schema_is_not_passed_on() {
    let handler = |args: CreateInvoice, _: &Context| async move {
        Ok::<_, ToolError>(Invoice {
            invoice_id: String::new(),
            customer_id: args.customer_id,
            amount: args.amount,
            currency: args.currency,
        })
    };
    let mut registry = Registry::new();
    registry.register(ToolDef::new(handler)).unwrap();
    let runtime = Runtime::new(registry);
    let outcome = runtime
        .invoke("c1", "create_invoice", VALID_INVOICE, &user())
        .await;
    let failure = outcome.failure().unwrap();
    assert_eq!(failure.code(), Code::InvalidOutput);
    assert!(outcome.output().is_none());
    assert!(!failure.message().contains("invoiceId"));
    assert!(
        failure
            .detail()
            .unwrap()
            .contains("/invoiceId: must be at least 1 character long")
    );
}

#[tokio::test]
async fn output_over_the_cap_is_not_passed_on() {
    let runtime = weather_runtime(|t| t.max_output_bytes(40));
    let outcome = runtime
        .invoke("c1", "get_weather", VALID_WEATHER, &user())
        .await;
    assert_eq!(outcome.code(), Some(Code::OutputTooLarge));
    let runtime = weather_runtime(|t| t.max_output_bytes(200));
    let outcome = runtime
        .invoke("c1", "get_weather", VALID_WEATHER, &user())
        .await;
    assert!(outcome.is_ok());
}

#[tokio::test]
async fn a_repeated_call_id_is_refused_without_execution() {
    let probe = Arc::new(Probe::default());
    let runtime = probed(&probe, Approval::Approved, |t| t);
    let cx = user();
    let first = runtime
        .invoke("call_7", "create_invoice", VALID_INVOICE, &cx)
        .await;
    let second = runtime
        .invoke("call_7", "create_invoice", VALID_INVOICE, &cx)
        .await;
    assert!(first.is_ok());
    assert_eq!(second.code(), Some(Code::DuplicateCallId));
    assert_eq!(second.call_id(), "call_7");
    assert_ne!(first.id(), second.id());
    assert_eq!(probe.counts(), [1, 0, 1]);
    // Providers that send no ids are not refused.
    let a = runtime
        .invoke("", "create_invoice", VALID_INVOICE, &cx)
        .await;
    let b = runtime
        .invoke("", "create_invoice", VALID_INVOICE, &cx)
        .await;
    assert!(a.is_ok() && b.is_ok());
}

#[tokio::test]
async fn an_overlong_call_id_is_refused_and_not_remembered() {
    let runtime = weather_runtime(|t| t);
    let cx = user();
    // The limit is 256 bytes: an id of exactly that length runs.
    let longest = "x".repeat(256);
    let outcome = runtime
        .invoke(&longest, "get_weather", VALID_WEATHER, &cx)
        .await;
    assert!(outcome.is_ok(), "{outcome:?}");

    // 100 calls with 1 MiB ids to a tool that does not exist were all kept for the runtime's
    // life; the same shape arrives over MCP, where the JSON-RPC request id becomes the call
    // id (40 requests with 8 MiB string ids to an unknown tool added 354 MiB to the server).
    for len in [257, 1 << 20, 8 << 20] {
        let id = "y".repeat(len);
        for _ in 0..2 {
            let outcome = runtime.invoke(&id, "no_such_tool", "{}", &cx).await;
            let failure = outcome.failure().unwrap();
            // Refused before anything else, the second time too: it was not remembered.
            assert_eq!(failure.code().as_str(), "call_id_too_long", "{len} bytes");
            assert_eq!(
                failure.message(),
                format!(
                    "the call id is {len} bytes long, over the limit of 256 bytes; this call was not run"
                )
            );
            assert_eq!(
                outcome.call_id().len(),
                len,
                "the outcome still answers the call"
            );
        }
    }
}

#[tokio::test]
async fn call_ids_are_remembered_for_the_documented_retention() {
    let runtime = weather_runtime(|t| t);
    let cx = user();
    let first = runtime
        .invoke("call_0", "get_weather", VALID_WEATHER, &cx)
        .await;
    assert!(first.is_ok());
    // Within the retention (the 16,384 most recent ids) a reuse is refused...
    for i in 1..16_384 {
        let outcome = runtime
            .invoke(&format!("call_{i}"), "no_such_tool", "{}", &cx)
            .await;
        assert_eq!(outcome.code(), Some(Code::UnknownTool));
    }
    let again = runtime
        .invoke("call_0", "get_weather", VALID_WEATHER, &cx)
        .await;
    assert_eq!(again.code(), Some(Code::DuplicateCallId));
    // ...and once 16,384 newer ids were seen, the oldest is forgotten and its id runs again.
    let newer = runtime
        .invoke("call_16384", "no_such_tool", "{}", &cx)
        .await;
    assert_eq!(newer.code(), Some(Code::UnknownTool));
    let forgotten = runtime
        .invoke("call_0", "get_weather", VALID_WEATHER, &cx)
        .await;
    assert!(forgotten.is_ok(), "{forgotten:?}");
    let recent = runtime
        .invoke("call_16384", "get_weather", VALID_WEATHER, &cx)
        .await;
    assert_eq!(recent.code(), Some(Code::DuplicateCallId));
}

/// The resident set size of this process, in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Memory held for call ids (Linux; run it with
/// `cargo test -p tests --test runtime -- --ignored --nocapture call_id_memory`).
#[tokio::test]
#[ignore = "a measurement: a million calls take a while"]
async fn call_id_memory_is_bounded_by_the_retention() {
    let runtime = weather_runtime(|t| t);
    let cx = user();
    let before = rss_kib();
    // The reported attack: 100 calls to a tool that does not exist with 1 MiB ids.
    for i in 0..100u8 {
        let id = char::from(b'a' + i % 26).to_string().repeat(1 << 20);
        let outcome = runtime.invoke(&id, "no_such_tool", "{}", &cx).await;
        assert_eq!(outcome.code(), Some(Code::CallIdTooLong));
    }
    let after_long = rss_kib();
    println!("100 calls with 1 MiB ids: VmRSS {before} -> {after_long} KiB");
    // A million distinct ids of the maximum length: only the retention is kept.
    let mut marks = Vec::new();
    for i in 0..1_000_000u32 {
        let id = format!("{i:0>256}");
        let outcome = runtime.invoke(&id, "no_such_tool", "{}", &cx).await;
        assert_eq!(outcome.code(), Some(Code::UnknownTool));
        if matches!(i + 1, 16_384 | 100_000 | 500_000 | 1_000_000) {
            marks.push(rss_kib());
            println!(
                "after {:>9} ids of 256 bytes: VmRSS {:>7} KiB",
                i + 1,
                rss_kib()
            );
        }
    }
    assert!(after_long.saturating_sub(before) < 16 * 1024);
    assert!(marks[3].saturating_sub(marks[1]) < 8 * 1024);
}

#[tokio::test]
async fn model_arguments_cannot_set_the_trusted_context() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    let handler = move |args: GetWeather, cx: &Context| {
        record
            .lock()
            .unwrap()
            .push((cx.principal().to_owned(), cx.tenant().map(str::to_owned)));
        let cx = cx.clone();
        async move { get_weather(args, &cx).await }
    };
    let mut registry = Registry::new();
    registry.register(ToolDef::new(handler)).unwrap();
    let runtime = Runtime::new(registry);
    let smuggled = r#"{"city":"Paris","units":"celsius","principal":"admin","tenant":"root"}"#;
    let outcome = runtime.invoke("c1", "get_weather", smuggled, &user()).await;
    assert_eq!(outcome.code(), Some(Code::InvalidArguments));
    let outcome = runtime
        .invoke("c2", "get_weather", VALID_WEATHER, &user())
        .await;
    assert!(outcome.is_ok());
    assert_eq!(
        *seen.lock().unwrap(),
        [("user-1".to_owned(), Some("acme".to_owned()))]
    );
}

#[tokio::test(start_paused = true)]
async fn concurrency_caps_hold_per_tool_and_globally() {
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (r, p) = (Arc::clone(&running), Arc::clone(&peak));
    let handler = move |args: Wait, _: &Context| {
        let (running, peak) = (Arc::clone(&r), Arc::clone(&p));
        async move {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(u64::from(args.seconds))).await;
            running.fetch_sub(1, Ordering::SeqCst);
            Ok::<_, ToolError>(Waited {
                seconds: args.seconds,
            })
        }
    };
    let mut registry = Registry::new();
    registry
        .register(ToolDef::new(handler).max_concurrency(2))
        .unwrap();
    let runtime = Runtime::builder(registry).max_concurrency(3).build();
    let cx = user();
    let calls = (0..10).map(|i| {
        let (runtime, cx) = (&runtime, &cx);
        async move {
            runtime
                .invoke(&format!("c{i}"), "wait", r#"{"seconds":5}"#, cx)
                .await
        }
    });
    let outcomes = futures_util::future::join_all(calls).await;
    assert!(outcomes.iter().all(|o| o.is_ok()));
    assert_eq!(peak.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn progress_is_monotonic_and_ends_before_the_outcome() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    let handler = |args: Wait, cx: &Context| {
        let delivered = [
            cx.progress(1.0, Some(3.0), Some("one")),
            cx.progress(1.0, Some(3.0), Some("again")),
            cx.progress(0.5, None, None),
            cx.progress(f64::NAN, None, None),
            cx.progress(2.0, Some(3.0), None),
        ];
        assert_eq!(delivered, [true, false, false, false, true]);
        let cx = cx.clone();
        async move {
            Ok::<_, ToolError>((
                Waited {
                    seconds: args.seconds,
                },
                cx,
            ))
        }
    };
    // Keep the context past the call to try reporting after the outcome.
    let late = Arc::new(Mutex::new(None));
    let keep = Arc::clone(&late);
    let handler = move |args: Wait, cx: &Context| {
        let inner = handler(args, cx);
        let keep = Arc::clone(&keep);
        async move {
            let (waited, cx) = inner.await?;
            *keep.lock().unwrap() = Some(cx);
            Ok::<_, ToolError>(waited)
        }
    };
    let mut registry = Registry::new();
    registry.register(ToolDef::new(handler)).unwrap();
    let runtime = Runtime::builder(registry)
        .observer(move |event: Event<'_>| {
            let line = match event {
                Event::Progress(p) => {
                    format!("progress {} {} {:?}", p.seq(), p.progress(), p.message())
                }
                Event::Outcome(o) => format!("outcome {}", o.code().map_or("ok", Code::as_str)),
                _ => "other".to_owned(),
            };
            sink.lock().unwrap().push(line);
        })
        .build();
    let outcome = runtime
        .invoke("c1", "wait", r#"{"seconds":0}"#, &user())
        .await;
    assert!(outcome.is_ok());
    let cx = late.lock().unwrap().take().unwrap();
    assert!(
        !cx.progress(3.0, Some(3.0), None),
        "no progress after the outcome"
    );
    assert!(
        !user().progress(1.0, None, None),
        "no progress outside a call"
    );
    assert_eq!(
        *events.lock().unwrap(),
        [
            "progress 1 1 Some(\"one\")",
            "progress 2 2 None",
            "outcome ok"
        ]
    );
}

#[tokio::test]
async fn outcome_ids_are_distinct_and_echo_the_call_id() {
    let runtime = weather_runtime(|t| t);
    let cx = user();
    let mut ids = std::collections::HashSet::new();
    for i in 0..50 {
        let call_id = format!("call_{i}");
        let outcome = runtime
            .invoke(&call_id, "get_weather", VALID_WEATHER, &cx)
            .await;
        assert_eq!(outcome.call_id(), call_id);
        assert!(ids.insert(outcome.id()));
    }
}

#[test]
fn codes_are_stable_strings() {
    let codes: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(
        codes,
        [
            "unknown_tool",
            "input_too_large",
            "invalid_arguments",
            "unauthorized",
            "approval_denied",
            "approval_expired",
            "budget_exhausted",
            "timeout",
            "cancelled",
            "execution_failed",
            "invalid_output",
            "output_too_large",
            "duplicate_call_id",
            "outcome_unknown",
            "call_id_too_long",
            "missing_call_id",
            "repeated_call",
            "call_id_conflict",
            "idempotency_conflict",
            "call_in_flight",
            "ledger_unavailable",
            "sandbox_unavailable",
            "resource_exhausted"
        ]
    );
}

#[tokio::test]
async fn concurrency_caps_out_of_range_neither_hang_nor_panic() {
    for cap in [0, usize::MAX] {
        let mut registry = Registry::new();
        registry
            .register(ToolDef::new(get_weather).max_concurrency(cap))
            .unwrap();
        let runtime = Runtime::builder(registry).max_concurrency(cap).build();
        let cx = Context::builder("user-1")
            .timeout(Duration::from_secs(5))
            .build();
        let outcome = runtime
            .invoke("c1", "get_weather", VALID_WEATHER, &cx)
            .await;
        assert!(outcome.is_ok(), "cap {cap}: {outcome:?}");
    }
}

#[tokio::test]
async fn an_empty_call_id_with_a_ledger_is_refused_and_nothing_runs() {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    let handler = move |args: GetWeather, cx: &Context| {
        counter.fetch_add(1, Ordering::SeqCst);
        let cx = cx.clone();
        async move { get_weather(args, &cx).await }
    };
    let mut registry = Registry::new();
    registry.register(ToolDef::new(handler)).unwrap();
    let ledger = Arc::new(tool_core::ledger::MemoryLedger::new());
    let runtime = Runtime::builder(registry)
        .ledger(Arc::clone(&ledger))
        .build();
    for _ in 0..2 {
        let outcome = runtime
            .invoke("", "get_weather", VALID_WEATHER, &user())
            .await;
        assert_eq!(outcome.code(), Some(Code::MissingCallId), "{outcome:?}");
        assert!(!outcome.is_replay());
        assert!(
            outcome
                .result()
                .unwrap_err()
                .message()
                .contains("no call id"),
            "{outcome:?}"
        );
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    // An idempotency key keys the call instead: it runs.
    let keyed = user().with_idempotency_key("order-7");
    let outcome = runtime
        .invoke("", "get_weather", VALID_WEATHER, &keyed)
        .await;
    assert!(outcome.result().is_ok(), "{outcome:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

/// Runs one SQL statement; its effect is read from the statement.
#[derive(Tool, Debug)]
struct RunSql {
    sql: String,
}

fn reads_only(sql: &str) -> bool {
    sql.trim_start()
        .get(..6)
        .is_some_and(|verb| verb.eq_ignore_ascii_case("select"))
}

/// A `run_sql` whose every statement hangs until its timeout, with `tool` applied.
fn hanging_sql(tool: impl FnOnce(ToolDef<RunSql>) -> ToolDef<RunSql>) -> Registry {
    async fn run_sql(_args: RunSql, _cx: &Context) -> Result<u64, ToolError> {
        std::future::pending().await
    }
    let mut registry = Registry::new();
    registry
        .register(tool(
            ToolDef::new(run_sql)
                .timeout(Duration::from_millis(250))
                .effect_from(|args: &RunSql| {
                    if reads_only(&args.sql) {
                        Effect::ReadOnly
                    } else {
                        Effect::NonIdempotent
                    }
                }),
        ))
        .unwrap();
    registry
}

#[tokio::test(start_paused = true)]
async fn a_calls_effect_from_its_arguments_decides_what_its_timeout_means() {
    let registry = hanging_sql(|t| t);
    // Advertised as the widest effect the tool may have.
    assert_eq!(
        registry.get("run_sql").unwrap().effect(),
        Effect::NonIdempotent
    );
    let runtime = Runtime::new(registry);
    let select = json!({ "sql": "SELECT * FROM orders" });
    let outcome = runtime.invoke("c1", "run_sql", &select, &user()).await;
    let failure = outcome.failure().unwrap();
    assert_eq!(failure.code(), Code::Timeout, "{failure}");
    assert!(
        failure.message().contains("it ran longer than 250 ms"),
        "{failure}"
    );

    let update = json!({ "sql": "UPDATE orders SET paid = true" });
    let outcome = runtime.invoke("c2", "run_sql", &update, &user()).await;
    let failure = outcome.failure().unwrap();
    assert_eq!(failure.code(), Code::OutcomeUnknown, "{failure}");

    // Cancellation follows the same effect.
    let token = tool_core::CancellationToken::new();
    let cx = Context::builder("user-1")
        .cancellation(token.clone())
        .build();
    let cancel = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        token.cancel();
    });
    let outcome = runtime.invoke("c3", "run_sql", &select, &cx).await;
    cancel.await.unwrap();
    assert_eq!(outcome.code(), Some(Code::Cancelled));
}

/// A ledger that keeps the effect of every claim it is asked for.
struct EffectsSeen {
    inner: tool_core::ledger::MemoryLedger,
    effects: Mutex<Vec<Effect>>,
}

impl tool_core::ledger::Ledger for EffectsSeen {
    fn claim<'a>(
        &'a self,
        claim: &'a tool_core::ledger::Claim,
    ) -> tool_core::ledger::LedgerFuture<'a, tool_core::ledger::Claimed> {
        self.effects.lock().unwrap().push(claim.effect);
        self.inner.claim(claim)
    }

    fn settle<'a>(
        &'a self,
        key: &'a tool_core::ledger::ClaimKey,
        attempt: u32,
        outcome: &'a tool_core::ledger::Recorded,
        audit: &'a [tool_core::ledger::AuditEvent],
    ) -> tool_core::ledger::LedgerFuture<'a, bool> {
        self.inner.settle(key, attempt, outcome, audit)
    }

    fn append<'a>(
        &'a self,
        scope: &'a str,
        audit: &'a [tool_core::ledger::AuditEvent],
    ) -> tool_core::ledger::LedgerFuture<'a, ()> {
        self.inner.append(scope, audit)
    }

    fn reconcile<'a>(
        &'a self,
        listed: &'a tool_core::ledger::Unsettled,
        resolution: &'a tool_core::ledger::Resolution,
    ) -> tool_core::ledger::LedgerFuture<'a, tool_core::ledger::Reconciled> {
        self.inner.reconcile(listed, resolution)
    }

    fn unsettled<'a>(
        &'a self,
        scope: &'a str,
    ) -> tool_core::ledger::LedgerFuture<'a, Vec<tool_core::ledger::Unsettled>> {
        self.inner.unsettled(scope)
    }

    fn trail<'a>(
        &'a self,
        scope: &'a str,
    ) -> tool_core::ledger::LedgerFuture<'a, Vec<tool_core::ledger::AuditRecord>> {
        self.inner.trail(scope)
    }

    fn use_nonce<'a>(
        &'a self,
        nonce: &'a str,
        expires: std::time::SystemTime,
    ) -> tool_core::ledger::LedgerFuture<'a, bool> {
        self.inner.use_nonce(nonce, expires)
    }

    fn store_run<'a>(
        &'a self,
        scope: &'a str,
        run: &'a str,
        state: Option<&'a str>,
    ) -> tool_core::ledger::LedgerFuture<'a, ()> {
        self.inner.store_run(scope, run, state)
    }

    fn load_run<'a>(
        &'a self,
        scope: &'a str,
        run: &'a str,
    ) -> tool_core::ledger::LedgerFuture<'a, Option<String>> {
        self.inner.load_run(scope, run)
    }
}

#[tokio::test(start_paused = true)]
async fn a_ledger_claims_each_call_with_the_effect_of_its_arguments() {
    let ledger = Arc::new(EffectsSeen {
        inner: tool_core::ledger::MemoryLedger::new(),
        effects: Mutex::new(Vec::new()),
    });
    let runtime = Runtime::builder(hanging_sql(|t| t))
        .ledger(Arc::clone(&ledger))
        .build();
    let select = json!({ "sql": "select 1" });
    let update = json!({ "sql": "delete from orders" });
    let a = runtime.invoke("c1", "run_sql", &select, &user()).await;
    let b = runtime.invoke("c2", "run_sql", &update, &user()).await;
    assert_eq!(
        [a.code(), b.code()],
        [Some(Code::Timeout), Some(Code::OutcomeUnknown)]
    );
    assert_eq!(
        *ledger.effects.lock().unwrap(),
        [Effect::ReadOnly, Effect::NonIdempotent]
    );
}

/// Where a test makes a call's preparation panic.
#[derive(Debug, Clone, Copy, PartialEq)]
enum PanicIn {
    Policy,
    ToolCheck,
    EffectFrom,
}

/// A panic in the runtime's policy, the tool's own check or its `effect_from` ends the call
/// with one failure, before anything is claimed or run; the runtime keeps serving.
#[tokio::test]
async fn a_panic_while_authorizing_or_deciding_the_effect_ends_only_that_call() {
    use tool_core::ledger::Ledger as _;
    let boom = r#"{"city":"Boom","units":"celsius"}"#;
    for at in [PanicIn::Policy, PanicIn::ToolCheck, PanicIn::EffectFrom] {
        let executed = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&executed);
        let handler = move |args: GetWeather, cx: &Context| {
            counter.fetch_add(1, Ordering::SeqCst);
            let cx = cx.clone();
            async move { get_weather(args, &cx).await }
        };
        let mut def = ToolDef::new(handler).effect(Effect::ReadOnly);
        match at {
            PanicIn::ToolCheck => {
                def = def.authorize(|args: &GetWeather, _: &Context| {
                    assert!(args.city != "Boom", "the grants table is empty");
                    Ok(())
                });
            }
            PanicIn::EffectFrom => {
                def = def.effect_from(|args: &GetWeather| {
                    assert!(args.city != "Boom", "no effect for this city");
                    Effect::ReadOnly
                });
            }
            PanicIn::Policy => {}
        }
        let mut registry = Registry::new();
        registry.register(def).unwrap();
        let ledger = Arc::new(tool_core::ledger::MemoryLedger::new());
        let mut builder = Runtime::builder(registry).ledger(Arc::clone(&ledger));
        if at == PanicIn::Policy {
            builder = builder.authorize(|_: &ToolInfo, cx: &Context| {
                assert!(cx.principal() != "mallory", "the role cache is poisoned");
                Ok(())
            });
        }
        let runtime = builder.build();
        let cx = |principal: &str| Context::builder(principal).scope("run-1").build();
        let who = if at == PanicIn::Policy {
            "mallory"
        } else {
            "user-1"
        };
        let outcome = runtime.invoke("c1", "get_weather", boom, &cx(who)).await;
        let failure = outcome
            .failure()
            .unwrap_or_else(|| panic!("{at:?}: {outcome:?}"));
        let expected = match at {
            PanicIn::Policy | PanicIn::ToolCheck => Code::Unauthorized,
            PanicIn::EffectFrom => Code::ExecutionFailed,
        };
        assert_eq!(failure.code(), expected, "{at:?}: {failure:?}");
        assert!(
            failure.detail().is_some_and(|d| d.contains("panicked")),
            "{at:?}: {failure:?}"
        );
        assert!(!failure.message().contains("Boom"), "{at:?}: {failure:?}");
        assert_eq!(executed.load(Ordering::SeqCst), 0, "{at:?}");

        // Nothing was claimed: the call is not in doubt, and its refusal is audited once.
        assert!(
            ledger.unsettled("run-1").await.unwrap().is_empty(),
            "{at:?}"
        );
        let trail = ledger.trail("run-1").await.unwrap();
        tool_core::ledger::verify(&trail, None).unwrap();
        let kinds: Vec<_> = trail.iter().map(|r| (r.event.kind, r.event.code)).collect();
        let refused = match at {
            PanicIn::Policy | PanicIn::ToolCheck => tool_core::ledger::AuditKind::Denied,
            PanicIn::EffectFrom => tool_core::ledger::AuditKind::Refused,
        };
        assert_eq!(kinds, [(refused, Some(expected))], "{at:?}");

        // The runtime keeps serving.
        let outcome = runtime
            .invoke("c2", "get_weather", VALID_WEATHER, &cx("user-1"))
            .await;
        assert!(outcome.is_ok(), "{at:?}: {outcome:?}");
        assert_eq!(executed.load(Ordering::SeqCst), 1, "{at:?}");
    }
}
