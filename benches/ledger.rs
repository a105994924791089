//! What a ledger adds to each call: `Runtime::invoke` of the no-op `create_invoice` (every call
//! a new call id, so each is claimed, run and settled) without a ledger, with `MemoryLedger`,
//! and with `PostgresLedger` when `TOOL_LEDGER_POSTGRES_URL` names a database.

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use benches::INVOICE_VALID;
use criterion::{Criterion, criterion_group, criterion_main};
use tool_core::ledger::{Ledger, MemoryLedger, PostgresLedger};
use tool_core::{Context, Registry, Runtime, ToolInfo};

#[path = "pipeline.rs"]
#[allow(dead_code)]
mod pipeline;

use pipeline::{registry, runtime};

fn with_ledger<L: Ledger>(registry: &Arc<Registry>, ledger: Arc<L>) -> Runtime {
    Runtime::builder(Arc::clone(registry))
        .authorize(|_: &ToolInfo, _: &Context| Ok(()))
        .ledger(ledger)
        .build()
}

/// Call ids never used before in this process; the scope is new for every process, so runs on
/// one database do not replay each other's calls.
struct Ids {
    next: AtomicU64,
}

impl Ids {
    fn take(&self, n: u64) -> Vec<String> {
        let first = self.next.fetch_add(n, Ordering::Relaxed);
        (first..first + n).map(|i| format!("call_{i}")).collect()
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    let registry = registry();
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let cx = Context::builder("bench")
        .scope(format!("bench-{}-{started}", std::process::id()))
        .build();
    let ids = Ids {
        next: AtomicU64::new(0),
    };

    let mut runtimes: Vec<(&str, Runtime)> = vec![
        ("no_ledger", runtime(&registry)),
        (
            "memory",
            with_ledger(&registry, Arc::new(MemoryLedger::new())),
        ),
    ];
    match std::env::var("TOOL_LEDGER_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => match rt.block_on(PostgresLedger::connect(&url)) {
            Ok(ledger) => runtimes.push(("postgres", with_ledger(&registry, Arc::new(ledger)))),
            Err(error) => panic!("TOOL_LEDGER_POSTGRES_URL is set but the ledger fails: {error}"),
        },
        _ => eprintln!(
            "ledger/invoke/postgres skipped: set TOOL_LEDGER_POSTGRES_URL=postgres://user@host:port/database to measure PostgresLedger"
        ),
    }
    // SQLITE: measure `SqliteLedger` here the same way, on a file in a temporary folder:
    // runtimes.push(("sqlite", with_ledger(&registry, Arc::new(SqliteLedger::open(path)?))));

    for (_, runtime) in &runtimes {
        let check = rt.block_on(runtime.invoke(
            &ids.take(1)[0],
            "create_invoice",
            INVOICE_VALID,
            &cx,
        ));
        assert!(check.is_ok() && !check.is_replay(), "{check:?}");
    }

    let mut group = c.benchmark_group("ledger/invoke");
    for (name, runtime) in &runtimes {
        group.bench_function(*name, |b| {
            b.iter_custom(|iters| {
                let ids = ids.take(iters);
                rt.block_on(async {
                    let started = Instant::now();
                    for id in &ids {
                        let outcome = runtime
                            .invoke(id, "create_invoice", black_box(INVOICE_VALID), &cx)
                            .await;
                        black_box(outcome.is_ok());
                    }
                    started.elapsed()
                })
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(5));
    targets = bench
}
criterion_main!(benches);
