//! 10,000 concurrent calls through one runtime with a concurrency cap of 8: every call gets
//! exactly one outcome, nothing runs twice, nothing runs that should not, the cap holds.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tool_core::{
    Argument, CancellationToken, Code, Context, Denied, Effect, Registry, Runtime, Tool, ToolDef,
    observe::Event,
    registry::{ToolError, ToolInfo},
};

/// Does some work, the way the stress test asks.
#[derive(Tool, Debug)]
struct Work {
    /// What the handler does.
    mode: Mode,
}

#[derive(Argument, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Mode {
    Fast,
    Slow,
    Panic,
    Hang,
}

/// Never finishes on its own: each call times out.
#[derive(Tool, Debug)]
struct Stall {}

#[derive(Argument, serde::Serialize)]
struct Done {
    ok: bool,
}

#[derive(Default)]
struct Ledger {
    running: AtomicUsize,
    peak: AtomicUsize,
    executions: Mutex<HashMap<String, usize>>,
}

const CALLS: usize = 10_000;
const CAP: usize = 8;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ten_thousand_mixed_calls_each_get_exactly_one_outcome() {
    // A thousand deliberate panics would flood the test output.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info.payload().downcast_ref::<&str>() != Some(&"deliberate") {
            default_hook(info);
        }
    }));

    let ledger = Arc::new(Ledger::default());
    let handler = {
        let ledger = Arc::clone(&ledger);
        move |args: Work, cx: &Context| {
            let ledger = Arc::clone(&ledger);
            let call_id = cx.call_id().unwrap_or_default().to_owned();
            async move {
                let now = ledger.running.fetch_add(1, Ordering::SeqCst) + 1;
                ledger.peak.fetch_max(now, Ordering::SeqCst);
                *ledger
                    .executions
                    .lock()
                    .unwrap()
                    .entry(call_id)
                    .or_default() += 1;
                // Decrements even when the future is dropped by a timeout or cancellation.
                let _guard = Running(&ledger.running);
                match args.mode {
                    Mode::Fast => {}
                    Mode::Slow => tokio::time::sleep(Duration::from_millis(1)).await,
                    Mode::Panic => panic!("deliberate"),
                    Mode::Hang => tokio::time::sleep(Duration::from_secs(3600)).await,
                }
                Ok::<_, ToolError>(Done { ok: true })
            }
        }
    };
    let stall = {
        let handler = handler.clone();
        move |_: Stall, cx: &Context| handler(Work { mode: Mode::Hang }, cx)
    };
    let mut registry = Registry::new();
    registry
        .register(ToolDef::new(handler).effect(Effect::Idempotent))
        .unwrap();
    registry
        .register(
            ToolDef::new(stall)
                .effect(Effect::Idempotent)
                .timeout(Duration::from_millis(5)),
        )
        .unwrap();

    let outcome_events = Arc::new(Mutex::new(Vec::new()));
    let events = Arc::clone(&outcome_events);
    let runtime = Runtime::builder(registry)
        .max_concurrency(CAP)
        .authorize(|_: &ToolInfo, cx: &Context| {
            if cx.principal() == "mallory" {
                Err(Denied::new("not allowed"))
            } else {
                Ok(())
            }
        })
        .observer(move |event: Event<'_>| {
            if let Event::Outcome(outcome) = event {
                events
                    .lock()
                    .unwrap()
                    .push((outcome.id(), outcome.call_id().to_owned()));
            }
        })
        .build();

    let alice = Context::builder("alice").build();
    let mallory = Context::builder("mallory").build();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..CALLS {
        let (call_id, mode, cx, expect) = match i % 10 {
            0..=2 => (format!("c{i}"), "fast", alice.clone(), "ok"),
            3 => (format!("c{i}"), "warp", alice.clone(), "invalid_arguments"),
            4 => (format!("c{i}"), "fast", mallory.clone(), "unauthorized"),
            5 => (format!("c{i}"), "slow", alice.clone(), "ok"),
            6 => (format!("c{i}"), "panic", alice.clone(), "execution_failed"),
            7 => (format!("c{i}"), "stall", alice.clone(), "timeout"),
            8 => {
                let token = CancellationToken::new();
                let cancel = token.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    cancel.cancel();
                });
                let cx = Context::builder("alice").cancellation(token).build();
                (format!("c{i}"), "hang", cx, "cancelled")
            }
            // Reuses the id of call i - 9, a fast valid call that may run before or after it.
            _ => (
                format!("c{}", i - 9),
                "fast",
                alice.clone(),
                "ok_or_duplicate",
            ),
        };
        let runtime = runtime.clone();
        tasks.spawn(async move {
            let outcome = if mode == "stall" {
                runtime.invoke(&call_id, "stall", "{}", &cx).await
            } else {
                let raw = format!(r#"{{"mode":"{mode}"}}"#);
                runtime.invoke(&call_id, "work", &raw, &cx).await
            };
            (i, expect, outcome)
        });
    }

    let mut outcomes = Vec::with_capacity(CALLS);
    while let Some(joined) = tasks.join_next().await {
        outcomes.push(joined.expect("invoke never panics"));
    }
    assert_eq!(outcomes.len(), CALLS, "no call lost");
    outcomes.sort_by_key(|(i, _, _)| *i);

    let mut by_code: HashMap<&str, usize> = HashMap::new();
    let mut pair_codes: HashMap<String, Vec<&str>> = HashMap::new();
    for (i, expect, outcome) in &outcomes {
        let code = outcome.code().map_or("ok", Code::as_str);
        *by_code.entry(code).or_default() += 1;
        if *expect == "ok_or_duplicate" || i % 10 == 0 {
            pair_codes
                .entry(outcome.call_id().to_owned())
                .or_default()
                .push(code);
        } else {
            assert_eq!(code, *expect, "call {i}: {outcome:?}");
        }
    }
    // Of each pair sharing an id, exactly one ran and the other was refused as a duplicate.
    assert_eq!(pair_codes.len(), CALLS / 10);
    for (call_id, mut codes) in pair_codes {
        codes.sort_unstable();
        assert_eq!(codes, ["duplicate_call_id", "ok"], "{call_id}");
    }

    let executions = ledger.executions.lock().unwrap();
    assert!(executions.values().all(|&n| n == 1), "no call ran twice");
    for i in 0..CALLS {
        let ran = executions.contains_key(&format!("c{i}"));
        match i % 10 {
            3 | 4 => assert!(!ran, "call {i} must not reach its handler"),
            // Cancelled calls may be stopped while waiting for a slot, before their handler
            // starts; duplicates are checked pairwise above.
            8 | 9 => {}
            _ => assert!(ran, "call {i} must reach its handler"),
        }
    }
    let peak = ledger.peak.load(Ordering::SeqCst);
    assert!(peak <= CAP, "peak concurrency {peak} above the cap {CAP}");
    assert!(
        peak >= 2,
        "the test should exercise concurrency; peak was {peak}"
    );

    // The observer saw each outcome once, with distinct runtime ids.
    let events = outcome_events.lock().unwrap();
    assert_eq!(events.len(), CALLS);
    let ids: std::collections::HashSet<_> = events.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids.len(), CALLS);

    eprintln!("outcomes by code: {by_code:?}; peak concurrency {peak}");
}

struct Running<'a>(&'a AtomicUsize);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
