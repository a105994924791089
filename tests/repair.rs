//! The repair loop: bounded attempts, field-level feedback, one handler run at most, metrics.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use examples::{CreateInvoice, create_invoice};
use serde_json::json;
use tool_core::testing::ScriptedModel;
use tool_core::{
    Code, Context, Registry, Runtime, Tool, ToolDef,
    contract::Keyword,
    metrics::Metrics,
    repair::{RepairEnd, RepairLoop, RepairPolicy},
};

const BROKEN: &str = r#"{"customerId":"cus_42","amount":"120.5","currency":"dollars"}"#;
const FIXED: &str = r#"{"customerId":"cus_42","amount":120.5,"currency":"USD"}"#;

fn user() -> Context {
    Context::builder("user-1").build()
}

/// A runtime whose `create_invoice` counts its executions.
fn runtime(runs: &Arc<AtomicUsize>) -> Runtime {
    let runs = Arc::clone(runs);
    let handler = move |args: CreateInvoice, cx: &Context| {
        runs.fetch_add(1, Ordering::SeqCst);
        let cx = cx.clone();
        async move { create_invoice(args, &cx).await }
    };
    let mut registry = Registry::new();
    registry.register(ToolDef::new(handler)).unwrap();
    Runtime::builder(registry).max_input_bytes(4096).build()
}

#[tokio::test]
async fn valid_first_arguments_cost_no_model_call() {
    let runs = Arc::new(AtomicUsize::new(0));
    let repair = RepairLoop::new(runtime(&runs), ScriptedModel::new());
    let result = repair.call("c1", "create_invoice", FIXED, &user()).await;
    assert_eq!(result.end(), &RepairEnd::FirstPass);
    assert_eq!(result.attempts(), 1);
    assert!(result.outcome().is_ok());
    assert!(repair.model().requests().is_empty());
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn refused_arguments_are_repaired_with_field_level_feedback() {
    let runs = Arc::new(AtomicUsize::new(0));
    let policy = RepairPolicy::default().with_hint("create_invoice", "amount is a number");
    let repair = RepairLoop::new(runtime(&runs), ScriptedModel::new().answer(FIXED)).policy(policy);
    let result = repair.call("c1", "create_invoice", BROKEN, &user()).await;
    assert_eq!(result.end(), &RepairEnd::Repaired);
    assert_eq!(result.attempts(), 2);
    assert_eq!(result.outcome().call_id(), "c1");
    assert!(result.outcome().is_ok());
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    let requests = repair.model().requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.tool, "create_invoice");
    assert_eq!(request.previous, BROKEN);
    assert_eq!((request.attempt, request.max_attempts), (2, 3));
    assert_eq!(request.hint.as_deref(), Some("amount is a number"));
    let pointers: Vec<_> = request
        .errors
        .iter()
        .map(|v| v.pointer().into_owned())
        .collect();
    assert_eq!(pointers, ["/amount", "/currency"]);
    assert_eq!(
        request.feedback,
        "Your arguments for `create_invoice` were refused (attempt 1 of 3):\n\
         - /amount: expected number, got string \"120.5\"\n\
         - /currency: must be one of \"USD\", \"EUR\", \"GBP\"; got \"dollars\"\n\
         Hint: amount is a number\n\
         Reply with the corrected arguments: one JSON object that matches the schema."
    );
}

#[tokio::test]
async fn attempts_are_bounded_and_the_last_errors_are_the_outcome() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new()
        .answer(r#"{"customerId":"cus_42","amount":0,"currency":"USD"}"#)
        .answer(r#"{"customerId":"cus_42","amount":-5.5,"currency":"USD"}"#)
        .answer(FIXED);
    let repair = RepairLoop::new(runtime(&runs), model);
    let first = r#"{"customerId":"cus_42","amount":-5,"currency":"USD"}"#;
    let result = repair.call("c1", "create_invoice", first, &user()).await;
    assert_eq!(result.end(), &RepairEnd::Exhausted);
    assert_eq!(result.attempts(), 3);
    assert_eq!(
        repair.model().requests().len(),
        2,
        "the third answer would not be checked"
    );
    assert_eq!(repair.model().remaining(), 1);
    let failure = result.outcome().failure().unwrap();
    assert_eq!(failure.code(), Code::InvalidArguments);
    assert_eq!(failure.message(), "- /amount: must be > 0; got -5.5");
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn resubmitting_the_same_arguments_stops_the_loop() {
    let runs = Arc::new(AtomicUsize::new(0));
    // The same object: other key order, other spacing, -5.0 for -5.
    let same = r#"{ "currency": "USD", "amount": -5.0, "customerId": "cus_42" }"#;
    let repair = RepairLoop::new(
        runtime(&runs),
        ScriptedModel::new().answer(same).answer(FIXED),
    );
    let first = r#"{"customerId":"cus_42","amount":-5,"currency":"USD"}"#;
    let result = repair.call("c1", "create_invoice", first, &user()).await;
    assert_eq!(result.end(), &RepairEnd::NotConverging);
    assert_eq!(result.attempts(), 2);
    assert_eq!(repair.model().requests().len(), 1);
    assert_eq!(result.outcome().code(), Some(Code::InvalidArguments));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_unknown_tool_costs_no_model_call() {
    let runs = Arc::new(AtomicUsize::new(0));
    let repair = RepairLoop::new(runtime(&runs), ScriptedModel::new().answer(FIXED));
    let result = repair.call("c1", "create_invoise", BROKEN, &user()).await;
    assert_eq!(result.end(), &RepairEnd::NotRepairable);
    assert_eq!(result.outcome().code(), Some(Code::UnknownTool));
    assert!(repair.model().requests().is_empty());
}

#[tokio::test]
async fn over_the_byte_cap_is_not_repaired() {
    let runs = Arc::new(AtomicUsize::new(0));
    let repair = RepairLoop::new(runtime(&runs), ScriptedModel::new().answer(FIXED));
    let huge = format!(
        r#"{{"customerId":"{}","amount":1,"currency":"USD"}}"#,
        "x".repeat(5000)
    );
    let result = repair.call("c1", "create_invoice", &huge, &user()).await;
    assert_eq!(result.end(), &RepairEnd::NotRepairable);
    assert_eq!(result.outcome().code(), Some(Code::InputTooLarge));
    assert!(repair.model().requests().is_empty());
}

#[tokio::test]
async fn a_failing_model_ends_the_loop_with_the_last_errors() {
    let runs = Arc::new(AtomicUsize::new(0));
    let repair = RepairLoop::new(runtime(&runs), ScriptedModel::new().fail("rate limited"));
    let result = repair.call("c1", "create_invoice", BROKEN, &user()).await;
    assert_eq!(result.end(), &RepairEnd::ModelFailed("rate limited".into()));
    assert_eq!(result.outcome().code(), Some(Code::InvalidArguments));
    assert_eq!(
        result.outcome().failure().unwrap().errors().unwrap().len(),
        2
    );
}

#[tokio::test]
async fn per_tool_bounds_override_the_default() {
    let runs = Arc::new(AtomicUsize::new(0));
    let policy = RepairPolicy::new(5)
        .unwrap()
        .with_tool_attempts("create_invoice", 1)
        .unwrap();
    let repair = RepairLoop::new(runtime(&runs), ScriptedModel::new().answer(FIXED)).policy(policy);
    let result = repair.call("c1", "create_invoice", BROKEN, &user()).await;
    assert_eq!(result.end(), &RepairEnd::Exhausted);
    assert_eq!(result.attempts(), 1);
    assert!(repair.model().requests().is_empty());
}

#[test]
fn a_policy_without_attempts_is_refused_when_built() {
    let error = RepairPolicy::new(0).unwrap_err();
    assert_eq!(
        error.to_string(),
        "max attempts must be at least 1 (the first pass counts)"
    );
    let error = RepairPolicy::default()
        .with_tool_attempts("create_invoice", 0)
        .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("the attempts of `create_invoice`")
    );
}

#[tokio::test]
async fn json_value_arguments_are_repaired_too() {
    let runs = Arc::new(AtomicUsize::new(0));
    let repair = RepairLoop::new(runtime(&runs), ScriptedModel::new().answer(FIXED));
    let value = json!({"customerId": "cus_42", "amount": "120.5", "currency": "USD"});
    let result = repair.call("c1", "create_invoice", &value, &user()).await;
    assert_eq!(result.end(), &RepairEnd::Repaired);
    let request = &repair.model().requests()[0];
    assert_eq!(request.previous, value.to_string());
    assert_eq!(request.errors.violations()[0].keyword(), Keyword::Type);
}

#[tokio::test]
async fn the_call_id_gets_one_terminal_outcome() {
    let runs = Arc::new(AtomicUsize::new(0));
    let repair = RepairLoop::new(runtime(&runs), ScriptedModel::new().answer(FIXED));
    let first = repair.call("c1", "create_invoice", BROKEN, &user()).await;
    assert!(first.outcome().is_ok());
    // The same id again, even valid, is a repeat: refused, not run.
    let again = repair.call("c1", "create_invoice", FIXED, &user()).await;
    assert_eq!(again.outcome().code(), Some(Code::DuplicateCallId));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_schema_sent_is_the_advertised_one() {
    struct Check;
    impl tool_core::repair::RepairModel for Check {
        fn repair(
            &self,
            request: &tool_core::repair::RepairRequest<'_>,
        ) -> impl std::future::Future<Output = Result<String, tool_core::model::ModelError>> + Send
        {
            assert_eq!(request.schema(), CreateInvoice::input_schema());
            std::future::ready(Ok(FIXED.to_owned()))
        }
    }
    let runs = Arc::new(AtomicUsize::new(0));
    let repair = RepairLoop::new(runtime(&runs), Check);
    let result = repair.call("c1", "create_invoice", BROKEN, &user()).await;
    assert!(result.outcome().is_ok());
}

#[tokio::test]
async fn metrics_count_per_tool_and_overall_and_reach_the_exporter() {
    let recorder = metrics_util::debugging::DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let runs = Arc::new(AtomicUsize::new(0));
    let metrics = Metrics::new();
    let model = ScriptedModel::new()
        .answer(FIXED)
        .answer(r#"{"customerId":"cus_42","amount":0,"currency":"USD"}"#)
        .answer(r#"{"customerId":"cus_42","amount":-1,"currency":"USD"}"#);
    let repair = RepairLoop::new(runtime(&runs), model).metrics(metrics.clone());
    let cx = user();
    let calls = [
        ("c1", "create_invoice", FIXED),
        ("c2", "create_invoice", BROKEN),
        (
            "c3",
            "create_invoice",
            r#"{"customerId":"cus_42","amount":-5,"currency":"USD"}"#,
        ),
        ("c4", "nope", "{}"),
    ];
    // The facade's recorder is set for this thread only, around each synchronous poll.
    for (call_id, tool, raw) in calls {
        let future = repair.call(call_id, tool, raw, &cx);
        let mut future = std::pin::pin!(future);
        loop {
            let polled = metrics::with_local_recorder(&recorder, || {
                let waker = std::task::Waker::noop();
                future
                    .as_mut()
                    .poll(&mut std::task::Context::from_waker(waker))
            });
            if polled.is_ready() {
                break;
            }
            tokio::task::yield_now().await;
        }
    }
    let snapshot = metrics.snapshot();
    let overall = &snapshot.overall;
    assert_eq!(
        (
            overall.calls,
            overall.first_pass,
            overall.repaired,
            overall.failed,
            overall.attempts
        ),
        (4, 1, 1, 2, 7)
    );
    assert_eq!(overall.failed_by.get("invalid_arguments"), Some(&1));
    assert_eq!(overall.failed_by.get("unknown_tool"), Some(&1));
    assert_eq!(overall.mean_attempts(), 7.0 / 4.0);
    assert_eq!(snapshot.tools["create_invoice"].calls, 3);
    assert_eq!(snapshot.tools[Metrics::UNREGISTERED].failed, 1);

    let exported = snapshotter.snapshot().into_vec();
    let counter = |name: &str, tool: &str| {
        exported
            .iter()
            .filter(|(key, ..)| {
                let key = key.key();
                key.name() == name && key.labels().any(|l| l.key() == "tool" && l.value() == tool)
            })
            .map(|(.., value)| match value {
                metrics_util::debugging::DebugValue::Counter(n) => *n,
                _ => 0,
            })
            .sum::<u64>()
    };
    assert_eq!(counter("tool_calls_total", "create_invoice"), 3);
    assert_eq!(counter("tool_calls_first_pass_total", "create_invoice"), 1);
    assert_eq!(counter("tool_calls_repaired_total", "create_invoice"), 1);
    assert_eq!(counter("tool_call_attempts_total", "create_invoice"), 6);
    assert_eq!(counter("tool_calls_failed_total", Metrics::UNREGISTERED), 1);
}

use std::future::Future as _;

/// Polls `future` to completion with `recorder` as the `metrics` facade's recorder (set for
/// this thread only, around each synchronous poll).
async fn with_recorder<F: std::future::Future>(
    recorder: &metrics_util::debugging::DebuggingRecorder,
    future: F,
) -> F::Output {
    let mut future = std::pin::pin!(future);
    loop {
        let polled = metrics::with_local_recorder(recorder, || {
            let waker = std::task::Waker::noop();
            future
                .as_mut()
                .poll(&mut std::task::Context::from_waker(waker))
        });
        if let std::task::Poll::Ready(output) = polled {
            return output;
        }
        tokio::task::yield_now().await;
    }
}

/// A model inventing a new tool name on every call must not grow the metrics: each invented
/// name used to become a snapshot entry and four exporter series of its own.
#[tokio::test]
async fn metrics_give_unregistered_tool_names_one_shared_label() {
    let recorder = metrics_util::debugging::DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let runs = Arc::new(AtomicUsize::new(0));
    let metrics = Metrics::new();
    let repair = RepairLoop::new(runtime(&runs), ScriptedModel::new()).metrics(metrics.clone());
    let cx = user();
    with_recorder(&recorder, repair.call("c0", "create_invoice", FIXED, &cx)).await;
    for i in 1..=2_000 {
        let name = format!("invented_tool_{i}");
        let result =
            with_recorder(&recorder, repair.call(&format!("c{i}"), &name, "{}", &cx)).await;
        assert_eq!(result.outcome().code(), Some(Code::UnknownTool));
    }

    let snapshot = metrics.snapshot();
    assert_eq!(snapshot.overall.calls, 2_001);
    assert_eq!(snapshot.overall.failed_by.get("unknown_tool"), Some(&2_000));
    assert_eq!(
        snapshot.tools.keys().take(5).collect::<Vec<_>>(),
        ["<unregistered tool>", "create_invoice"]
    );
    assert_eq!(snapshot.tools["create_invoice"].calls, 1);
    let unregistered = &snapshot.tools[Metrics::UNREGISTERED];
    assert_eq!((unregistered.calls, unregistered.failed), (2_000, 2_000));

    let exported = snapshotter.snapshot().into_vec();
    let tools: std::collections::BTreeSet<String> = exported
        .iter()
        .flat_map(|(key, ..)| {
            key.key()
                .labels()
                .filter(|label| label.key() == "tool")
                .map(|label| label.value().to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(
        tools.iter().take(5).collect::<Vec<_>>(),
        ["<unregistered tool>", "create_invoice"]
    );
    assert!(exported.len() <= 10, "{} series", exported.len());
}

#[tokio::test]
async fn arguments_in_free_text_are_extracted_then_repaired() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new().answer(format!("Sorry! Fixed:\n```json\n{FIXED}\n```"));
    let repair = RepairLoop::new(runtime(&runs), model);
    let text = format!("Sure! Here are the arguments:\n```json\n{BROKEN}\n```");
    let result = repair
        .call_free_text("c1", "create_invoice", &text, &user())
        .await;
    assert_eq!(result.end(), &RepairEnd::Repaired);
    assert_eq!(result.attempts(), 2);
    assert_eq!(result.repaired_arguments(), Some(FIXED));
    let request = &repair.model().requests()[0];
    assert_eq!(
        request.errors.len(),
        2,
        "the fenced JSON was checked, not the prose"
    );
}

#[tokio::test]
async fn ambiguous_free_text_is_sent_back_not_guessed() {
    let runs = Arc::new(AtomicUsize::new(0));
    let repair = RepairLoop::new(runtime(&runs), ScriptedModel::new().answer(FIXED));
    let text = format!("Either {FIXED} or {BROKEN}");
    let result = repair
        .call_free_text("c1", "create_invoice", &text, &user())
        .await;
    assert_eq!(result.end(), &RepairEnd::Repaired);
    let request = &repair.model().requests()[0];
    assert_eq!(request.errors.violations()[0].keyword(), Keyword::Syntax);
    assert!(
        request.feedback.contains("found 2 JSON values"),
        "{}",
        request.feedback
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

/// The quickstart's scenario, with the figures it prints.
#[tokio::test]
async fn the_seed_scenario_gives_the_documented_metrics() {
    let mut registry = Registry::new();
    registry
        .register(ToolDef::new(examples::get_weather))
        .unwrap();
    registry.register(ToolDef::new(create_invoice)).unwrap();
    let model = ScriptedModel::new()
        .answer(r#"{"customerId":"cus_42","amount":120.5,"currency":"EUR"}"#)
        .answer(r#"{"customerId":"cus_42","amount":0,"currency":"EUR"}"#)
        .answer(r#"{"customerId":"cus_42","amount":-5.5,"currency":"EUR"}"#);
    let metrics = Metrics::new();
    let repair = RepairLoop::new(Runtime::new(registry), model).metrics(metrics.clone());
    let cx = user();
    let weather = repair
        .call(
            "r1",
            "get_weather",
            r#"{"city":"Paris","units":"celsius"}"#,
            &cx,
        )
        .await;
    let prose = format!("Sure! Here are the arguments:\n```json\n{BROKEN}\n```");
    let invoice = repair
        .call_free_text("r2", "create_invoice", &prose, &cx)
        .await;
    let never = repair
        .call(
            "r3",
            "create_invoice",
            r#"{"customerId":"cus_42","amount":-5,"currency":"EUR"}"#,
            &cx,
        )
        .await;
    assert_eq!(
        [weather.end(), invoice.end(), never.end()],
        [
            &RepairEnd::FirstPass,
            &RepairEnd::Repaired,
            &RepairEnd::Exhausted
        ]
    );
    assert_eq!(
        never.outcome().failure().unwrap().message(),
        "- /amount: must be > 0; got -5.5"
    );
    let overall = metrics.snapshot().overall;
    assert_eq!(
        (
            overall.calls,
            overall.first_pass,
            overall.repaired,
            overall.failed,
            overall.attempts
        ),
        (3, 1, 1, 1, 6)
    );
    assert_eq!(overall.first_pass_rate(), 1.0 / 3.0);
    assert_eq!(overall.repaired_rate(), 1.0 / 3.0);
    assert_eq!(overall.failure_rate(), 1.0 / 3.0);
    assert_eq!(overall.mean_attempts(), 2.0);
}

/// A value nested far beyond the parser's limit, handed to the repair loop as JSON (as an
/// Anthropic or MCP caller would), is refused without being written out recursively: the
/// loop used to turn it into text first and overflowed a worker-sized stack.
#[test]
fn a_value_deeper_than_the_parser_limit_is_refused_by_the_repair_loop_without_overflow() {
    let end = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let mut value = serde_json::Value::Object(serde_json::Map::new());
            for _ in 1..100_000 {
                let mut map = serde_json::Map::new();
                map.insert("a".to_owned(), value);
                value = serde_json::Value::Object(map);
            }
            let runs = Arc::new(AtomicUsize::new(0));
            let repair = RepairLoop::new(runtime(&runs), ScriptedModel::new());
            let result = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap()
                .block_on(repair.call("c1", "create_invoice", &value, &user()));
            // Dropped one level at a time: serde_json's own drop recurses.
            let mut stack = vec![value];
            while let Some(mut value) = stack.pop() {
                if let serde_json::Value::Object(map) = &mut value {
                    stack.extend(std::mem::take(map).into_iter().map(|(_, v)| v));
                }
            }
            (result.outcome().code(), runs.load(Ordering::SeqCst))
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(end, (Some(Code::InvalidArguments), 0));
}

#[tokio::test]
async fn a_repair_answer_with_prose_around_its_json_object_is_accepted() {
    let runs = Arc::new(AtomicUsize::new(0));
    let answer = format!(
        "Sorry about that. Here are the corrected arguments:\n```json\n{FIXED}\n```\nLet me know if anything else is wrong."
    );
    let repair = RepairLoop::new(runtime(&runs), ScriptedModel::new().answer(&answer));
    let result = repair.call("c1", "create_invoice", BROKEN, &user()).await;
    assert_eq!(result.end(), &RepairEnd::Repaired);
    assert_eq!(result.attempts(), 2);
    assert!(result.outcome().is_ok(), "{:?}", result.outcome());
    assert_eq!(result.repaired_arguments(), Some(FIXED));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_repair_answer_with_two_objects_in_prose_is_sent_back_not_guessed() {
    let runs = Arc::new(AtomicUsize::new(0));
    let other = r#"{"customerId":"cus_42","amount":99,"currency":"EUR"}"#;
    let model = ScriptedModel::new()
        .answer(format!("Either {FIXED} or {other}, whichever you prefer."))
        .answer(FIXED);
    let repair = RepairLoop::new(runtime(&runs), model);
    let result = repair.call("c1", "create_invoice", BROKEN, &user()).await;
    assert_eq!(result.end(), &RepairEnd::Repaired);
    assert_eq!(result.attempts(), 3);
    let requests = repair.model().requests();
    assert_eq!(requests.len(), 2);
    let errors: Vec<_> = requests[1].errors.iter().collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].keyword(), Keyword::Syntax);
    assert!(
        errors[0].message().contains("found 2 JSON values"),
        "{}",
        requests[1].feedback
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_final_refusal_carries_the_violations_the_model_was_last_shown() {
    let runs = Arc::new(AtomicUsize::new(0));
    let policy = RepairPolicy::new(2).unwrap();
    let model = ScriptedModel::new().answer("I cannot fix these arguments.");
    let repair = RepairLoop::new(runtime(&runs), model).policy(policy);
    let result = repair.call("c1", "create_invoice", BROKEN, &user()).await;
    assert_eq!(result.end(), &RepairEnd::Exhausted);
    assert_eq!(result.attempts(), 2);
    let failure = result.outcome().failure().unwrap();
    assert_eq!(failure.code(), Code::InvalidArguments);
    // The last attempt's own violation...
    assert_eq!(
        failure.message(),
        "- (root): invalid JSON: expected value at line 1 column 1"
    );
    // ...and what the model had been told before it, which that answer did not address.
    let detail = failure.detail().unwrap();
    assert!(
        detail.starts_with("the model was last shown the violations of attempt 1 of 2:\n"),
        "{detail}"
    );
    assert!(
        detail.contains("- /amount: expected number, got string \"120.5\""),
        "{detail}"
    );
    assert!(detail.contains("- /currency: must be one of"), "{detail}");
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}
