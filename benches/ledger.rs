//! What a ledger adds to each call: `Runtime::invoke` of the no-op `create_invoice` (every call
//! a new call id, so each is claimed, run and settled) without a ledger, with `MemoryLedger`,
//! with `SqliteLedger` on a temporary file, and with `PostgresLedger` when
//! `TOOL_LEDGER_POSTGRES_URL` names a database; and, as the baseline for `SqliteLedger`, a
//! hand-written rusqlite claim-and-settle on its own file (`plain_sqlite`, no runtime).

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use benches::INVOICE_VALID;
use criterion::{Criterion, criterion_group, criterion_main};
use tool_core::ledger::{Ledger, MemoryLedger, PostgresLedger, SqliteLedger};
use tool_core::{Context, Registry, Runtime, registry::ToolInfo};

#[path = "pipeline.rs"]
#[allow(dead_code)]
mod pipeline;

#[path = "plain_sqlite.rs"]
mod plain_sqlite;

use pipeline::{registry, runtime};

fn with_ledger<L: Ledger>(registry: &Arc<Registry>, ledger: Arc<L>) -> Runtime {
    Runtime::builder(Arc::clone(registry))
        .authorize(|_: &ToolInfo, _: &Context| Ok(()))
        .ledger(ledger)
        .build()
}

/// A way to invoke: `make` builds the runtime, a fresh one for every `chunk` calls.
struct Case<'a> {
    name: &'static str,
    chunk: usize,
    make: Box<dyn Fn() -> Runtime + 'a>,
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

    // `memory`: a fresh ledger for every 5,000 calls, so it never fills; `memory_full`: one
    // ledger at its default capacity of 10,000 settled claims, which every measurement passes,
    // so most settlements make it forget the oldest.
    let full = Arc::new(MemoryLedger::new());
    // `sqlite`: one file in the system's temporary folder (synchronous = NORMAL, the
    // default), removed at the end.
    let sqlite_dir = std::env::temp_dir().join(format!(
        "tool-ledger-bench-{}-{started}",
        std::process::id()
    ));
    std::fs::create_dir_all(&sqlite_dir).expect("a temporary folder");
    let sqlite = Arc::new(
        SqliteLedger::open(sqlite_dir.join("ledger.db")).expect("the SQLite ledger opens"),
    );
    let mut plain = plain_sqlite::PlainSqlite::open(&sqlite_dir.join("plain.db"))
        .expect("the plain SQLite file opens");
    let mut cases: Vec<Case<'_>> = vec![
        Case {
            name: "no_ledger",
            chunk: usize::MAX,
            make: Box::new(|| runtime(&registry)),
        },
        Case {
            name: "memory",
            chunk: 5_000,
            make: Box::new(|| with_ledger(&registry, Arc::new(MemoryLedger::new()))),
        },
        Case {
            name: "memory_full",
            chunk: usize::MAX,
            make: Box::new(|| with_ledger(&registry, Arc::clone(&full))),
        },
        Case {
            name: "sqlite",
            chunk: usize::MAX,
            make: Box::new(|| with_ledger(&registry, Arc::clone(&sqlite))),
        },
    ];
    match std::env::var("TOOL_LEDGER_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => match rt.block_on(PostgresLedger::connect(&url)) {
            Ok(ledger) => {
                let ledger = Arc::new(ledger);
                let registry = &registry;
                cases.push(Case {
                    name: "postgres",
                    chunk: usize::MAX,
                    make: Box::new(move || with_ledger(registry, Arc::clone(&ledger))),
                });
            }
            Err(error) => panic!("TOOL_LEDGER_POSTGRES_URL is set but the ledger fails: {error}"),
        },
        _ => eprintln!(
            "ledger/invoke/postgres skipped: set TOOL_LEDGER_POSTGRES_URL=postgres://user@host:port/database to measure PostgresLedger"
        ),
    }
    for case in &cases {
        let check = rt.block_on((case.make)().invoke(
            &ids.take(1)[0],
            "create_invoice",
            INVOICE_VALID,
            &cx,
        ));
        assert!(check.is_ok() && !check.is_replay(), "{check:?}");
    }

    let mut group = c.benchmark_group("ledger/invoke");
    for case in &cases {
        group.bench_function(case.name, |b| {
            b.iter_custom(|iters| {
                let ids = ids.take(iters);
                rt.block_on(async {
                    let started = Instant::now();
                    for chunk in ids.chunks(case.chunk) {
                        let runtime = (case.make)();
                        for id in chunk {
                            let outcome = runtime
                                .invoke(id, "create_invoice", black_box(INVOICE_VALID), &cx)
                                .await;
                            black_box(outcome.is_ok());
                        }
                    }
                    started.elapsed()
                })
            })
        });
    }
    // The same number of claims and settlements by hand, with no runtime around them.
    let scope = cx.scope().to_owned();
    group.bench_function("plain_sqlite", |b| {
        b.iter_custom(|iters| {
            let ids = ids.take(iters);
            let started = Instant::now();
            for id in &ids {
                let ok = plain
                    .call(
                        &scope,
                        id,
                        "create_invoice",
                        black_box(INVOICE_VALID),
                        r#"{"ok":true}"#,
                    )
                    .expect("the plain transaction commits");
                black_box(ok);
            }
            started.elapsed()
        })
    });
    group.finish();
    drop(plain);
    drop(cases);
    drop(sqlite);
    let _ = std::fs::remove_dir_all(&sqlite_dir);
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(5));
    targets = bench
}
criterion_main!(benches);
