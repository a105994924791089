//! A durable ledger: a call that must happen once survives a crash of the process running it.
//!
//! Run with `cargo run --example durable --features sqlite`. The calls are claimed in a SQLite
//! file; a worker process (this example, started again with `--worker`) is killed in the
//! middle of a call, and a new runtime on the same file refuses to guess what happened until
//! the call is reconciled. The audit trail is exported as JSON lines and verified.

use std::error::Error;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::json;
use tool_core::ledger::{AuditRecord, Resolution, SqliteLedger, verify};
use tool_core::{Context, Outcome, Registry, Runtime, Tool, ToolDef, registry::ToolError};

/// Sends an invoice to a customer. Sending twice bills twice.
#[derive(Tool, Debug)]
struct SendInvoice {
    /// The customer's id.
    customer: String,
    /// The amount, in cents.
    cents: u64,
}

/// The run's context: call ids and the audit trail are scoped to one conversation.
fn context() -> Context {
    Context::builder("billing-bot")
        .scope("conversation-42")
        .build()
}

/// A runtime on the ledger in `path`. Each invoice sent bumps `sent`; with `hang`, the
/// handler says it started (on standard output) and never finishes.
fn runtime(path: &Path, sent: &Arc<AtomicU32>, hang: bool) -> Result<Runtime, Box<dyn Error>> {
    let sent = Arc::clone(sent);
    let handler = move |args: SendInvoice, _: &Context| {
        let number = sent.fetch_add(1, Ordering::SeqCst) + 1;
        async move {
            if hang {
                println!("started");
                std::io::stdout().flush().map_err(ToolError::internal)?;
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
            Ok::<_, ToolError>(json!({ "invoice": number, "to": args.customer }))
        }
    };
    let mut registry = Registry::new();
    registry.register(ToolDef::new(handler))?;
    Ok(Runtime::builder(registry)
        .ledger(Arc::new(SqliteLedger::open(path)?))
        // A claim is held for the call's time limit plus a grace period; short here so the
        // story does not wait long.
        .timeout(Duration::from_millis(1500))
        .lease_grace(Duration::ZERO)
        .build())
}

fn show(what: &str, outcome: &Outcome) {
    let result = match outcome.result() {
        Ok(output) => output.to_string(),
        Err(failure) => format!("{} ({})", failure.code(), failure.message()),
    };
    let replay = if outcome.is_replay() {
        ", replayed"
    } else {
        ""
    };
    println!("  {what}: {result}{replay}");
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, path] = args.as_slice()
        && flag == "--worker"
    {
        // The worker: claims call_2 and hangs in the middle of sending it.
        let runtime = runtime(Path::new(path), &Arc::new(AtomicU32::new(0)), true)?;
        let call = r#"{"customer":"cus_7","cents":4200}"#;
        runtime
            .invoke("call_2", "send_invoice", call, &context())
            .await;
        return Ok(());
    }

    let dir = std::env::temp_dir().join(format!("tool-core-durable-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let story = story(&dir.join("ledger.db")).await;
    std::fs::remove_dir_all(&dir)?;
    story
}

async fn story(path: &Path) -> Result<(), Box<dyn Error>> {
    let cx = context();
    let sent = Arc::new(AtomicU32::new(0));
    let invoice = r#"{"customer":"cus_42","cents":12000}"#;

    println!(
        "1. A runtime claims each call in {} before it runs.",
        path.display()
    );
    let first = runtime(path, &sent, false)?;
    show(
        "call_1",
        &first.invoke("call_1", "send_invoice", invoice, &cx).await,
    );
    show(
        "call_1 again",
        &first.invoke("call_1", "send_invoice", invoice, &cx).await,
    );

    println!("2. A worker process starts call_2 and is killed before it ends.");
    let mut worker = Command::new(std::env::current_exe()?)
        .arg("--worker")
        .arg(path)
        .stdout(Stdio::piped())
        .spawn()?;
    let mut line = String::new();
    if let Some(out) = worker.stdout.take() {
        BufReader::new(out).read_line(&mut line)?;
    }
    worker.kill()?;
    worker.wait()?;
    if line.trim() != "started" {
        return Err("the worker did not start its call".into());
    }
    println!("  the worker was killed mid-call");

    println!("3. After a restart, a new runtime on the same file:");
    drop(first);
    let restarted = runtime(path, &sent, false)?;
    let ledger = Arc::clone(restarted.ledger().ok_or("the runtime has a ledger")?);
    show(
        "call_1",
        &restarted
            .invoke("call_1", "send_invoice", invoice, &cx)
            .await,
    );
    let call_2 = r#"{"customer":"cus_7","cents":4200}"#;
    show(
        "call_2",
        &restarted
            .invoke("call_2", "send_invoice", call_2, &cx)
            .await,
    );
    // Once the worker's lease has passed, its claim is listed as unsettled.
    let mut unsettled = Vec::new();
    for _ in 0..100 {
        unsettled = ledger.unsettled(cx.scope()).await?;
        if !unsettled.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    show(
        "call_2, lease passed",
        &restarted
            .invoke("call_2", "send_invoice", call_2, &cx)
            .await,
    );

    println!("4. The operator looks at what is unsettled and reconciles it:");
    for claim in &unsettled {
        println!(
            "  {} ({}, attempt {}): the billing system shows it was sent",
            claim.call_id, claim.binding.tool, claim.attempt
        );
        let output = json!({ "invoice": "from-billing-system", "to": "cus_7" }).to_string();
        ledger
            .reconcile(claim, &Resolution::Completed(output))
            .await?;
    }
    show(
        "call_2",
        &restarted
            .invoke("call_2", "send_invoice", call_2, &cx)
            .await,
    );
    println!(
        "  invoices sent by this process: {}",
        sent.load(Ordering::SeqCst)
    );

    println!("5. The audit trail, exported as JSON lines and verified:");
    let export = path.with_file_name("audit.jsonl");
    let mut file = std::fs::File::create(&export)?;
    for record in ledger.trail(cx.scope()).await? {
        writeln!(file, "{}", serde_json::to_string(&record)?)?;
    }
    drop(file);
    let records = std::fs::read_to_string(&export)?
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<Vec<AuditRecord>, _>>()?;
    for record in &records {
        let e = &record.event;
        let code = e.code.map(|code| format!(" {code}")).unwrap_or_default();
        let note = e
            .note
            .as_deref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        println!(
            "  {:>2} {} {}{code}{note}",
            record.seq,
            e.call_id,
            e.kind.as_str()
        );
    }
    let head = verify(&records, None)?.unwrap_or_default();
    println!(
        "  {} records verified; head {}",
        records.len(),
        &head[..16.min(head.len())]
    );
    Ok(())
}
