//! `PostgresLedger` under load, on the database `TOOL_LEDGER_POSTGRES_URL` names (each part in
//! a schema of its own, dropped at the end):
//!
//! 1. Throughput and latency: 8 workers, each a Tokio task with its own runtime and its own
//!    connection pool, invoke the no-op `create_invoice` 2,500 times each (20,000 calls, every
//!    one a new call id, so each is claimed, run and settled), once with a scope per worker
//!    (separate runs) and once all in one scope (one audit trail that every call appends
//!    to). Reported: calls per second, and the latency of one `invoke` (claim, run, settle)
//!    at the median, the 99th percentile and the worst. Then each scope's trail is read and
//!    verified, and must hold every call's four records.
//! 2. Claim cost against ledger size: the claims table pre-filled with 1,000, 100,000 and
//!    1,000,000 settled claims (one `INSERT ... SELECT FROM generate_series`), then 2,000
//!    claims of new ids, their settlements, and 2,000 claims of pre-filled ids (replays).
//!
//! `cargo bench -p benches --bench ledger_load`

use std::sync::Arc;
use std::time::{Duration, Instant};

use benches::INVOICE_VALID;
use tool_core::Effect;
use tool_core::ledger::{
    Binding, Claim, ClaimKey, Claimed, Ledger, PostgresLedger, Recorded, verify,
};
use tool_core::{Context, Registry, Runtime, registry::ToolInfo};

#[path = "pipeline.rs"]
#[allow(dead_code)]
mod pipeline;

const WORKERS: usize = 8;
const CALLS_PER_WORKER: usize = 2_500;
const SIZES: [u64; 3] = [1_000, 100_000, 1_000_000];
const PROBES: usize = 2_000;

/// A schema of its own on the database, and pools whose connections use it.
struct Schema {
    config: tokio_postgres::Config,
    name: String,
}

impl Schema {
    async fn new(url: &str, label: &str) -> Schema {
        let config: tokio_postgres::Config = url
            .parse()
            .expect("TOOL_LEDGER_POSTGRES_URL is a connection string");
        let name = format!("tool_ledger_bench_{label}_{}", std::process::id());
        let schema = Schema { config, name };
        schema
            .sql(&format!(
                "DROP SCHEMA IF EXISTS {0} CASCADE; CREATE SCHEMA {0}",
                schema.name
            ))
            .await;
        schema
    }

    async fn ledger(&self, connections: usize) -> PostgresLedger {
        let mut config = self.config.clone();
        config.options(format!("-c search_path={}", self.name));
        let manager = deadpool_postgres::Manager::new(config, tokio_postgres::NoTls);
        let pool = deadpool_postgres::Pool::builder(manager)
            .max_size(connections)
            .build()
            .expect("a pool");
        PostgresLedger::from_pool(pool)
            .await
            .expect("the ledger opens")
    }

    async fn sql(&self, sql: &str) {
        let (client, connection) = self
            .config
            .connect(tokio_postgres::NoTls)
            .await
            .expect("the database accepts connections");
        let task = tokio::spawn(connection);
        client
            .batch_execute(&format!("SET search_path = {}; {sql}", self.name))
            .await
            .unwrap_or_else(|error| panic!("{sql}: {error:?}"));
        drop(client);
        let _ = task.await;
    }

    /// Drops the schema. A ledger may still be sealing audit records in the background when
    /// the calls are over; the drop is tried again if it deadlocks with that.
    async fn drop(self) {
        for _ in 0..10 {
            let (client, connection) = self
                .config
                .connect(tokio_postgres::NoTls)
                .await
                .expect("the database accepts connections");
            let task = tokio::spawn(connection);
            let dropped = client
                .batch_execute(&format!("DROP SCHEMA {} CASCADE", self.name))
                .await;
            drop(client);
            let _ = task.await;
            match dropped {
                Ok(()) => return,
                Err(error)
                    if error.code()
                        == Some(&tokio_postgres::error::SqlState::T_R_DEADLOCK_DETECTED) => {}
                Err(error) => panic!("DROP SCHEMA {}: {error:?}", self.name),
            }
        }
        panic!("DROP SCHEMA {}: deadlocked ten times", self.name);
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((sorted.len() as f64) * p).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn summary(mut latencies: Vec<Duration>) -> String {
    latencies.sort();
    format!(
        "p50 {}, p99 {}, max {}",
        ms(percentile(&latencies, 0.50)),
        ms(percentile(&latencies, 0.99)),
        ms(percentile(&latencies, 1.0)),
    )
}

fn runtime(registry: &Arc<Registry>, ledger: PostgresLedger) -> Runtime {
    Runtime::builder(Arc::clone(registry))
        .authorize(|_: &ToolInfo, _: &Context| Ok(()))
        .ledger(Arc::new(ledger))
        .build()
}

async fn load(url: &str, shared_scope: bool) {
    let schema = Schema::new(url, if shared_scope { "shared" } else { "apart" }).await;
    let registry = pipeline::registry();
    let mut workers = Vec::new();
    for worker in 0..WORKERS {
        let runtime = runtime(&registry, schema.ledger(2).await);
        let scope = if shared_scope {
            "load".to_owned()
        } else {
            format!("load-{worker}")
        };
        workers.push((
            worker,
            runtime,
            Context::builder("bench").scope(scope).build(),
        ));
    }
    let started = Instant::now();
    let tasks: Vec<_> = workers
        .into_iter()
        .map(|(worker, runtime, cx)| {
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(CALLS_PER_WORKER);
                for call in 0..CALLS_PER_WORKER {
                    let id = format!("w{worker}-{call}");
                    let sent = Instant::now();
                    let outcome = runtime
                        .invoke(&id, "create_invoice", INVOICE_VALID, &cx)
                        .await;
                    latencies.push(sent.elapsed());
                    assert!(outcome.is_ok() && !outcome.is_replay(), "{outcome:?}");
                }
                latencies
            })
        })
        .collect();
    let mut latencies = Vec::with_capacity(WORKERS * CALLS_PER_WORKER);
    for task in tasks {
        latencies.extend(task.await.expect("a worker finished"));
    }
    let elapsed = started.elapsed();
    println!(
        "{WORKERS} workers x {CALLS_PER_WORKER} calls, {}: {:.0} calls/s ({} calls in {:.2} s); invoke latency {}",
        if shared_scope {
            "one shared scope"
        } else {
            "a scope per worker"
        },
        latencies.len() as f64 / elapsed.as_secs_f64(),
        latencies.len(),
        elapsed.as_secs_f64(),
        summary(latencies),
    );
    // Every call's four records (authorized, admitted, executed, outcome) are in its scope's
    // chain, and the chain verifies.
    let ledger = schema.ledger(1).await;
    let scopes: Vec<String> = if shared_scope {
        vec!["load".to_owned()]
    } else {
        (0..WORKERS)
            .map(|worker| format!("load-{worker}"))
            .collect()
    };
    let mut records = 0;
    for scope in &scopes {
        let trail = ledger.trail(scope).await.expect("the trail reads");
        verify(&trail, None).expect("the trail verifies");
        records += trail.len();
    }
    assert_eq!(records, 4 * WORKERS * CALLS_PER_WORKER);
    schema.drop().await;
}

fn claim(scope: &str, id: &str, arguments: String) -> Claim {
    Claim {
        key: ClaimKey::call(scope, id),
        call_id: id.into(),
        scope: scope.into(),
        binding: Binding {
            tool: "create_invoice".into(),
            contract: "c".repeat(64).into(),
            arguments: arguments.into(),
            principal: "user-1".into(),
        },
        effect: Effect::NonIdempotent,
        lease: Duration::from_secs(60),
        rerun_interrupted: false,
        quotas: Vec::new(),
        audit: Vec::new(),
    }
}

async fn by_size(url: &str, size: u64) {
    let schema = Schema::new(url, &format!("size{size}")).await;
    let ledger = schema.ledger(2).await;
    let filled = Instant::now();
    schema
        .sql(&format!(
            "INSERT INTO tool_ledger_claims (kind, key_scope, id, attempt, call_id, scope, tool, \
             contract, arguments, principal, effect, claimed_at, lease_until, status, body, \
             settled_at) \
             SELECT 'call_id', 'fill-' || (g % 1000), 'call_' || g, 1, 'call_' || g, \
             'fill-' || (g % 1000), 'create_invoice', repeat('c', 64), lpad(g::text, 64, '0'), \
             'user-1', 'non_idempotent', t, t + 60000, 'ok', '{{\"ok\":true}}', t \
             FROM generate_series(1, {size}) AS g, \
             (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::int8 AS t) AS clock; \
             ANALYZE tool_ledger_claims"
        ))
        .await;
    let filled = filled.elapsed();

    let done = Recorded::Output(r#"{"ok":true}"#.to_owned());
    let (mut claims, mut settles, mut replays) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..PROBES {
        let new = claim("probe", &format!("new_{i}"), format!("{i:064}"));
        let sent = Instant::now();
        let answer = ledger.claim(&new).await.expect("a claim");
        claims.push(sent.elapsed());
        assert_eq!(answer, Claimed::New { attempt: 1 });
        let sent = Instant::now();
        assert!(
            ledger
                .settle(&new.key, 1, &done, &[])
                .await
                .expect("a settle")
        );
        settles.push(sent.elapsed());

        // A pre-filled id, spread over the whole table.
        let g = 1 + (i as u64 * 7_919) % size;
        let old = claim(
            &format!("fill-{}", g % 1000),
            &format!("call_{g}"),
            format!("{g:064}"),
        );
        let sent = Instant::now();
        let answer = ledger.claim(&old).await.expect("a replay");
        replays.push(sent.elapsed());
        assert_eq!(answer, Claimed::Replay(done.clone()));
    }
    println!(
        "{size:>9} claims pre-filled (in {:.1} s): new claim {}; settle {}; replay {}",
        filled.as_secs_f64(),
        summary(claims),
        summary(settles),
        summary(replays),
    );
    schema.drop().await;
}

fn main() {
    let url = match std::env::var("TOOL_LEDGER_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => url,
        _ => {
            eprintln!(
                "ledger_load skipped: set TOOL_LEDGER_POSTGRES_URL=postgres://user@host:port/database \
                 to load PostgresLedger (it works in schemas of its own and drops them)"
            );
            return;
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    rt.block_on(async {
        load(&url, false).await;
        load(&url, true).await;
        for size in SIZES {
            by_size(&url, size).await;
        }
    });
}
