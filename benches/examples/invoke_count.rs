//! Runs `Runtime::invoke` (no-op policy and handler) or `parse_arguments` N times on the valid
//! invoice (or `repair`: a broken invoice repaired on the second attempt), for instruction
//! counts: `invoke_count <invoke|ledger|ledger_fresh|sqlite|repair|parse_arguments> <N>`
//! (`ledger`: `invoke` with a `MemoryLedger`, every call claimed, run and settled;
//! `ledger_fresh`: the same with a new `MemoryLedger` every 5,000 calls, as the `ledger` bench
//! measures it; `sqlite`: the same with a `SqliteLedger` on a new file in the system's
//! temporary folder).

use std::hint::black_box;

use benches::INVOICE_VALID;
use examples::CreateInvoice;
use tool_core::{Context, Tool, repair::RepairLoop};

#[path = "../pipeline.rs"]
mod pipeline;

use pipeline::{Fixed, INVOICE_BROKEN, registry, runtime};

fn main() {
    let mut args = std::env::args().skip(1);
    let way = args.next().unwrap_or_default();
    let n: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1000);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a Tokio runtime");
    let runtime = runtime(&registry());
    let ledger = tool_core::Runtime::builder(registry())
        .authorize(|_: &tool_core::registry::ToolInfo, _: &Context| Ok(()))
        .ledger(std::sync::Arc::new(
            tool_core::ledger::MemoryLedger::with_capacity(n.max(1)),
        ))
        .build();
    let fresh = || {
        tool_core::Runtime::builder(registry())
            .authorize(|_: &tool_core::registry::ToolInfo, _: &Context| Ok(()))
            .ledger(std::sync::Arc::new(tool_core::ledger::MemoryLedger::new()))
            .build()
    };
    // Made at the first call and every 5,000 calls after.
    let mut chunk = None;
    let sqlite_dir = std::env::temp_dir().join(format!("invoke-count-{}", std::process::id()));
    let sqlite = if way == "sqlite" {
        std::fs::create_dir_all(&sqlite_dir).expect("a temporary folder");
        let ledger = tool_core::ledger::SqliteLedger::open(sqlite_dir.join("ledger.db"))
            .expect("the SQLite ledger opens");
        Some(
            tool_core::Runtime::builder(registry())
                .ledger(std::sync::Arc::new(ledger))
                .build(),
        )
    } else {
        None
    };
    let repair = RepairLoop::new(runtime.clone(), Fixed);
    let cx = Context::builder("bench").build();
    let ids: Vec<String> = (0..n).map(|i| format!("call_{i}")).collect();
    rt.block_on(async {
        for (i, id) in ids.iter().enumerate() {
            let ok = match way.as_str() {
                "invoke" => runtime
                    .invoke(id, "create_invoice", black_box(INVOICE_VALID), &cx)
                    .await
                    .is_ok(),
                "ledger" => ledger
                    .invoke(id, "create_invoice", black_box(INVOICE_VALID), &cx)
                    .await
                    .is_ok(),
                "ledger_fresh" => {
                    if i % 5_000 == 0 {
                        chunk = Some(fresh());
                    }
                    match &chunk {
                        Some(runtime) => runtime
                            .invoke(id, "create_invoice", black_box(INVOICE_VALID), &cx)
                            .await
                            .is_ok(),
                        None => false,
                    }
                }
                "sqlite" => match &sqlite {
                    Some(runtime) => runtime
                        .invoke(id, "create_invoice", black_box(INVOICE_VALID), &cx)
                        .await
                        .is_ok(),
                    None => false,
                },
                "repair" => repair
                    .call(id, "create_invoice", black_box(INVOICE_BROKEN), &cx)
                    .await
                    .outcome()
                    .is_ok(),
                _ => CreateInvoice::parse_arguments(black_box(INVOICE_VALID)).is_ok(),
            };
            assert!(ok);
        }
    });
    let _ = std::fs::remove_dir_all(&sqlite_dir);
}
