//! An agent run with a scripted model, so it runs anywhere: a parallel batch, a repaired call,
//! an approval that pauses the run until a manager signs off, and a guard that ends it.
//!
//! Run with `cargo run --example agent`. No model is asked: every turn and repair answer
//! "the model" gives is written in this file (`ScriptedTurns`, `ScriptedModel`), and the run
//! says so first. Swap `ScriptedTurns` for a real model adapter and `ScriptedModel` for a real
//! repair adapter to run the same loop against a provider.
//!
//! With the `http` feature, the same agent asks a real model over HTTP instead (the key from
//! `OPENAI_API_KEY`, `ANTHROPIC_API_KEY` or `GEMINI_API_KEY`):
//!
//! ```sh
//! cargo run --example agent --features http -- --provider openai --model gpt-4.1-mini
//! cargo run --example agent --features http -- --provider anthropic --model claude-haiku-4-5
//! cargo run --example agent --features http -- --provider openai --base-url http://127.0.0.1:11434/v1 --model qwen3:8b
//! ```
//!
//! `--provider` is `openai`, `openai-responses`, `anthropic` or `gemini`; `--base-url` points
//! it at another server (an OpenAI-compatible one, or the test suite's replay server).
//!
//! With the `otel` feature, the runs are exported as OpenTelemetry spans over OTLP
//! (`examples::otel`):
//!
//! ```sh
//! OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:6006 OTEL_SERVICE_NAME=weather-agent \
//!     cargo run --example agent --features otel
//! ```

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use examples::{create_invoice, get_weather};
use tool_core::ToolCall;
use tool_core::agent::{Agent, BatchPolicy, RunEnd, RunReport};
use tool_core::model::{Message, Turn};
use tool_core::testing::{ScriptedModel, ScriptedTurns};
use tool_core::{
    Code, Context, Effect, Registry, Runtime, ToolDef, approval::Approvals, repair::RepairPolicy,
};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // With the `otel` feature, every run, model step and call is exported over OTLP to
    // OTEL_EXPORTER_OTLP_ENDPOINT, under OTEL_SERVICE_NAME.
    #[cfg(feature = "otel")]
    let otel = match examples::otel::init() {
        Ok(otel) => otel,
        Err(error) => {
            eprintln!("error: cannot set up the OTLP export: {error}");
            std::process::exit(1);
        }
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = if args.is_empty() {
        run().await
    } else {
        run_http(&args).await
    };
    #[cfg(feature = "otel")]
    if let Err(error) = otel.shutdown() {
        eprintln!("error: the spans could not all be exported: {error}");
        std::process::exit(1);
    }
    if let Err(error) = result {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    // The tools: reading the weather is free; creating an invoice needs a manager's approval.
    let mut registry = Registry::new();
    registry.register(ToolDef::new(get_weather).effect(Effect::ReadOnly))?;
    registry.register(ToolDef::new(create_invoice).requires_approval())?;

    // Receipts are signed with a key only the application holds (load it from a secret
    // store in production).
    let approvals = Arc::new(Approvals::new(
        *b"example-only key, 32 bytes long!",
        &registry,
    )?);
    let runtime = Runtime::builder(registry)
        .approver(approvals.verifier())
        .build();

    // What the model will do, step by step.
    let model = ScriptedTurns::new()
        .turn(
            Turn::calls([
                ToolCall::new("w1", "get_weather", r#"{"city":"Paris","units":"celsius"}"#),
                ToolCall::new("w2", "get_weather", r#"{"city":"Lyon","units":"kelvin"}"#),
            ])
            .with_usage(420, 38),
        )
        .turn(
            Turn::calls([ToolCall::new(
                "i1",
                "create_invoice",
                r#"{"customerId":"cus_42","amount":120.5,"currency":"EUR"}"#,
            )])
            .with_usage(510, 31),
        )
        .turn(
            Turn::calls([ToolCall::new(
                "w3",
                "get_weather",
                r#"{"units":"celsius","city":"Paris"}"#,
            )])
            .with_usage(560, 22),
        )
        .turn(
            Turn::answer("Paris and Lyon are mild today; invoice inv_i1 is created.")
                .with_usage(600, 18),
        );
    // What the model answers when told its arguments were wrong.
    let repairs = ScriptedModel::new().answer(r#"{"city":"Lyon","units":"celsius"}"#);

    let agent = Agent::new(runtime, model)
        .repair(repairs, RepairPolicy::new(2)?)
        .batch(BatchPolicy::concurrent(4))
        .approvals(Arc::clone(&approvals))
        .max_steps(6)
        .max_identical_calls(1)
        .wrap_up(true);

    let cx = Context::builder("alice")
        .tenant("acme")
        .timeout(Duration::from_secs(60))
        .build();
    let start = vec![Message::User {
        text: "What's the weather in Paris and Lyon? Then bill cus_42 120.50 EUR.".into(),
    }];

    println!(
        "The model here is scripted: its turns and repair answers are written in examples/agent.rs. \
         With `--features http -- --provider <name> --model <model>` a real model answers instead.\n"
    );
    println!("== first run ==");
    let paused = agent.run(start, &cx).await;
    print_run(&paused, 0);
    for request in agent.repair_model().requests() {
        println!(
            "\n(repair asked for attempt {} of {} on {}):\n{}",
            request.attempt, request.max_attempts, request.tool, request.feedback
        );
    }

    let RunEnd::AwaitingApproval(pending) = &paused.end else {
        return Err("expected the run to wait for an approval".into());
    };
    println!("\n== a manager reviews ==");
    for call in pending {
        println!(
            "approve {} {} for {}? {}  -> yes",
            call.call_id, call.tool, call.principal, call.arguments
        );
        let receipt = approvals.approve(
            agent.runtime(),
            call,
            "manager-bob",
            Duration::from_secs(900),
        )?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_secs());
        println!(
            "receipt: nonce {}, expires at {} (in {} s), mac {}…",
            receipt.nonce,
            rfc3339(receipt.expires_at),
            receipt.expires_at.saturating_sub(now),
            &receipt.mac[..16]
        );
        approvals.submit(receipt);
    }

    println!("\n== resumed from the stored transcript ==");
    let shown = paused.transcript.len();
    let stored = serde_json::to_string(&paused.transcript)?;
    let resumed = agent.run(serde_json::from_str(&stored)?, &cx).await;
    print_run(&resumed, shown);
    Ok(())
}

/// The agent against a model over HTTP: `--provider`, `--base-url`, `--model`.
#[cfg(feature = "http")]
async fn run_http(args: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    use tool_core::http::HttpModel;
    use tool_core::model::Provider;
    use tool_core::providers::RequestOptions;

    let mut provider = None;
    let mut base_url = None;
    let mut model = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let value = args.next().ok_or_else(|| format!("{arg} needs a value"))?;
        match arg.as_str() {
            "--provider" => {
                provider = Some(match value.as_str() {
                    "openai" => Provider::OpenAiChat,
                    "openai-responses" => Provider::OpenAiResponses,
                    "anthropic" => Provider::Anthropic,
                    "gemini" => Provider::Gemini,
                    other => return Err(format!("unknown provider {other:?}").into()),
                });
            }
            "--base-url" => base_url = Some(value.clone()),
            "--model" => model = Some(value.clone()),
            other => return Err(format!("unknown argument {other:?}").into()),
        }
    }
    let provider = provider.ok_or("--provider is required")?;
    let model = model.unwrap_or_else(|| {
        match provider {
            Provider::Anthropic => "claude-haiku-4-5",
            Provider::Gemini => "gemini-2.5-flash",
            _ => "gpt-4.1-mini",
        }
        .to_owned()
    });
    let mut http = HttpModel::new(provider, model)?.options(
        RequestOptions::new().system("Answer briefly. Use the tools for facts about the weather."),
    );
    if let Some(url) = base_url {
        http = http.base_url(url);
    }
    println!("asking {} at {}", provider.name(), http.endpoint());

    let mut registry = Registry::new();
    registry.register(ToolDef::new(get_weather).effect(Effect::ReadOnly))?;
    // The same model fixes refused arguments, told which fields were wrong.
    let agent = Agent::new(Runtime::new(registry), http.clone())
        .repair(http, RepairPolicy::new(2)?)
        .max_steps(6)
        .max_identical_calls(2)
        .wrap_up(true);
    let cx = Context::builder("alice")
        .timeout(Duration::from_secs(120))
        .build();
    let start = vec![Message::User {
        text: "What's the weather in Paris, in celsius?".into(),
    }];
    let report = agent.run(start, &cx).await;
    print_run(&report, 0);
    match report.end {
        RunEnd::ModelFailed(error) => Err(format!("the model failed: {error}").into()),
        _ => Ok(()),
    }
}

#[cfg(not(feature = "http"))]
async fn run_http(_: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    Err("running against a provider needs the http feature: \
         cargo run --example agent --features http -- --provider openai"
        .into())
}

fn print_run(report: &RunReport, skip: usize) {
    let mut step = report
        .transcript
        .iter()
        .take(skip)
        .filter(|m| matches!(m, Message::Assistant { .. }))
        .count();
    for message in report.transcript.iter().skip(skip) {
        match message {
            Message::User { text } => println!("user: {text}"),
            Message::Assistant {
                text, calls, usage, ..
            } => {
                step += 1;
                if step as u32 > report.steps {
                    println!("wrap-up turn, no tools offered (tokens {}):", usage.total());
                } else {
                    println!("step {step} (tokens {}):", usage.total());
                }
                if let Some(text) = text {
                    println!("  model says: {text}");
                }
                for call in calls {
                    println!(
                        "  model calls {} {} {}",
                        call.call_id(),
                        call.name(),
                        call.arguments_text()
                    );
                }
            }
            Message::Tool(result) => {
                if let Some(repaired) = &result.repaired_arguments {
                    println!("  (repaired {} to {repaired})", result.call_id);
                }
                println!(
                    "  -> {} {}: {} {}",
                    result.call_id,
                    result.tool,
                    result.code.map_or("ok", Code::as_str),
                    result.content
                );
            }
        }
    }
    let end = match &report.end {
        RunEnd::AwaitingApproval(pending) => {
            let ids: Vec<_> = pending.iter().map(|p| p.call_id.as_str()).collect();
            format!("paused, awaiting approval of {}", ids.join(", "))
        }
        other => format!("{other:?}"),
    };
    println!(
        "ended: {end} after {} steps, {} tool calls, {} tokens",
        report.steps,
        report.tool_calls,
        report.usage.total()
    );
}

/// Seconds since the Unix epoch as an RFC 3339 UTC timestamp, e.g. `2025-01-31T09:30:00Z`.
fn rfc3339(epoch_secs: u64) -> String {
    let (days, secs) = (epoch_secs / 86_400, epoch_secs % 86_400);
    // Days to a proleptic Gregorian date, counted in 400-year eras from 0000-03-01
    // (Howard Hinnant's `civil_from_days`); unsigned, since no date here is before 1970.
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3_600,
        secs / 60 % 60,
        secs % 60
    )
}
