//! A worker process for the ledger's process tests (`tests/ledger_sqlite.rs`,
//! `tests/ledger_postgres.rs`): a runtime with
//! one non-idempotent tool, `charge`, whose calls are claimed in a shared ledger, and an
//! execution log the tool appends to, so a test can count what really ran.
//!
//! ```text
//! ledger_worker <command> --store <spec> [options] [call ids]
//!
//! commands:
//!   race     --worker <i> --calls <n> --unique <u> [--quota <q>] [--concurrency <c>] [--gate]
//!            n calls over the ids call-0 .. call-<u-1> (each at least once when n >= u, the
//!            rest duplicates), in an order all workers share, shuffled for worker i within
//!            windows of 16, c at a time (default 4), under the runtime quota
//!            `max_calls(q)`; with --gate, prints "ready" once the store is open and starts
//!            when a line arrives on standard input. Then prints one JSON line:
//!            {"worker":i,"calls":n,"codes":{"ok":..,"<code>":..},"replays":r}
//!            (`codes` counts every call by its outcome, "ok" for an output, replays included;
//!            `replays` counts the outcomes that were replays)
//!   hang     --id <call id>
//!            one call whose handler logs "started <id>", then sleeps for an hour
//!   invoke   <call id>...
//!            one call per id, in order; prints one JSON line each:
//!            {"call_id":..,"code":null|"<code>","is_replay":bool,"output":null|"<text>"}
//!
//! options:
//!   --store <spec>       the ledger: sqlite:<path> or postgres:<url>
//!   --scope <scope>      the context's scope: call ids, quotas and audit trail (default "worker")
//!   --log <path>         the execution log: the handler appends "<call id>\n" and flushes
//!                        before it returns (default: no log)
//!   --timeout-ms <ms>    the runtime's call timeout (default 30000)
//!   --grace-ms <ms>      the lease grace (default 10000); a claim's lease is timeout + grace
//! ```
//!
//! The arguments of a call are derived from its id (`{"n": <a hash of the id>}`), so every
//! process proposing an id proposes the same call. Exit status: 0 when the command ran (the
//! outcomes are in the output), 2 for a usage error, 1 when the store cannot be opened.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tool_core::ledger::{Ledger, PostgresLedger, SqliteLedger};
use tool_core::{Context, Outcome, Registry, Runtime, Tool, ToolDef, registry::ToolError};

/// Charge an amount: a non-idempotent effect, logged once per execution.
#[derive(Tool, Debug)]
struct Charge {
    /// The amount.
    n: u64,
}

/// What the handler does besides returning its receipt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Logs the call id.
    Log,
    /// Logs `started <id>`, then sleeps for an hour (to be killed).
    Hang,
}

#[derive(Debug)]
struct Options {
    command: String,
    store: Option<String>,
    scope: String,
    log: Option<PathBuf>,
    timeout: Duration,
    grace: Duration,
    worker: u64,
    calls: usize,
    unique: usize,
    quota: Option<u64>,
    concurrency: usize,
    id: Option<String>,
    gate: bool,
    ids: Vec<String>,
}

fn parse(args: impl IntoIterator<Item = String>) -> Result<Options, String> {
    let mut args = args.into_iter();
    let command = args.next().ok_or("no command: race, hang or invoke")?;
    let mut options = Options {
        command,
        store: None,
        scope: "worker".to_owned(),
        log: None,
        timeout: Duration::from_secs(30),
        grace: Duration::from_secs(10),
        worker: 0,
        calls: 0,
        unique: 0,
        quota: None,
        concurrency: 4,
        id: None,
        gate: false,
        ids: Vec::new(),
    };
    while let Some(arg) = args.next() {
        if !arg.starts_with("--") {
            options.ids.push(arg);
            continue;
        }
        if arg == "--gate" {
            options.gate = true;
            continue;
        }
        let value = args.next().ok_or_else(|| format!("{arg} needs a value"))?;
        let number = |value: &str| {
            value
                .parse::<u64>()
                .map_err(|_| format!("{arg} takes a number, not {value:?}"))
        };
        let size = |value: &str| number(value).map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        match arg.as_str() {
            "--store" => options.store = Some(value),
            "--scope" => options.scope = value,
            "--log" => options.log = Some(PathBuf::from(value)),
            "--timeout-ms" => options.timeout = Duration::from_millis(number(&value)?),
            "--grace-ms" => options.grace = Duration::from_millis(number(&value)?),
            "--worker" => options.worker = number(&value)?,
            "--calls" => options.calls = size(&value)?,
            "--unique" => options.unique = size(&value)?,
            "--quota" => options.quota = Some(number(&value)?),
            "--concurrency" => options.concurrency = size(&value)?.max(1),
            "--id" => options.id = Some(value),
            _ => return Err(format!("unknown option {arg}")),
        }
    }
    Ok(options)
}

/// The ledger a store spec names. Each kind of store is one arm: `sqlite:<path>`,
/// `postgres:<url>`.
async fn open_store(spec: &str) -> Result<Store, String> {
    match spec.split_once(':') {
        Some(("sqlite", path)) if !path.is_empty() => {
            let ledger = SqliteLedger::open(path).map_err(|error| error.to_string())?;
            Ok(Arc::new(ledger))
        }
        Some(("postgres", url)) if !url.is_empty() => {
            let ledger = PostgresLedger::connect(url)
                .await
                .map_err(|error| error.to_string())?;
            Ok(Arc::new(ledger))
        }
        _ => Err(format!(
            "unknown store {spec:?}: expected sqlite:<path> or postgres:<url>"
        )),
    }
}

/// Any ledger.
type Store = Arc<dyn Ledger>;

/// The arguments of the call with this id: the same in every process.
fn arguments(call_id: &str) -> String {
    // FNV-1a, kept within JSON's exact integers.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in call_id.bytes() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    json!({ "n": hash % 1_000_000 }).to_string()
}

fn runtime(options: &Options, store: Store, mode: Mode) -> Result<Runtime, String> {
    let log: Option<Arc<Mutex<File>>> = match &options.log {
        Some(path) => {
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|error| format!("cannot open the log {}: {error}", path.display()))?;
            Some(Arc::new(Mutex::new(file)))
        }
        None => None,
    };
    let handler = move |args: Charge, cx: &Context| {
        let log = log.clone();
        let call_id = cx.call_id().unwrap_or("").to_owned();
        async move {
            if let Some(log) = log {
                let line = match mode {
                    Mode::Log => format!("{call_id}\n"),
                    Mode::Hang => format!("started {call_id}\n"),
                };
                let mut file = log
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                file.write_all(line.as_bytes())
                    .and_then(|()| file.flush())
                    .map_err(ToolError::internal)?;
            }
            if mode == Mode::Hang {
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
            Ok::<_, ToolError>(json!({ "charged": args.n }))
        }
    };
    let mut registry = Registry::new();
    registry
        .register(ToolDef::new(handler))
        .map_err(|error| error.to_string())?;
    let mut builder = Runtime::builder(registry)
        .timeout(options.timeout)
        .lease_grace(options.grace)
        .ledger(Arc::new(store));
    if let Some(quota) = options.quota {
        builder = builder.max_calls(quota);
    }
    Ok(builder.build())
}

fn context(options: &Options) -> Context {
    Context::builder("worker").scope(&options.scope).build()
}

/// A small deterministic generator (splitmix64): each worker's order is its own and the same
/// on every run.
struct Shuffle(u64);

impl Shuffle {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, bound: usize) -> usize {
        usize::try_from(self.next() % u64::try_from(bound).unwrap_or(u64::MAX)).unwrap_or(0)
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

/// The ids worker `worker` proposes: every id once (when `calls >= unique`), the rest
/// duplicates, in an order all workers share, shuffled for each worker within windows of
/// 16 calls. Workers started together so propose the same ids at about the same time, each in
/// its own order: they race for most of them.
fn plan(worker: u64, calls: usize, unique: usize) -> Vec<String> {
    if unique == 0 {
        return Vec::new();
    }
    let mut shared = Shuffle(0x5eed);
    let mut ids: Vec<usize> = (0..unique).collect();
    shared.shuffle(&mut ids);
    ids.truncate(calls);
    while ids.len() < calls {
        ids.push(shared.below(unique));
    }
    shared.shuffle(&mut ids);
    let mut own = Shuffle(worker.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x5eed);
    for window in ids.chunks_mut(16) {
        own.shuffle(window);
    }
    ids.into_iter().map(|i| format!("call-{i}")).collect()
}

fn code(outcome: &Outcome) -> &'static str {
    outcome.code().map_or("ok", |code| code.as_str())
}

async fn race(options: &Options, store: Store) -> Result<(), String> {
    let runtime = runtime(options, store, Mode::Log)?;
    let ids = Arc::new(plan(options.worker, options.calls, options.unique));
    if options.gate {
        println!("ready");
        std::io::stdout()
            .flush()
            .and_then(|()| std::io::stdin().read_line(&mut String::new()))
            .map_err(|error| format!("cannot wait for the start: {error}"))?;
    }
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..options.concurrency {
        let (runtime, ids, next, cx) = (
            runtime.clone(),
            Arc::clone(&ids),
            Arc::clone(&next),
            context(options),
        );
        tasks.push(tokio::spawn(async move {
            let mut codes: BTreeMap<&'static str, u64> = BTreeMap::new();
            let mut replays = 0u64;
            while let Some(id) = ids.get(next.fetch_add(1, Ordering::Relaxed)) {
                let outcome = runtime.invoke(id, "charge", &*arguments(id), &cx).await;
                *codes.entry(code(&outcome)).or_default() += 1;
                replays += u64::from(outcome.is_replay());
            }
            (codes, replays)
        }));
    }
    let mut codes: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut replays = 0;
    for task in tasks {
        let (counted, replayed) = task
            .await
            .map_err(|error| format!("a task failed: {error}"))?;
        for (code, n) in counted {
            *codes.entry(code).or_default() += n;
        }
        replays += replayed;
    }
    println!(
        "{}",
        json!({
            "worker": options.worker,
            "calls": ids.len(),
            "codes": codes,
            "replays": replays,
        })
    );
    Ok(())
}

async fn invoke(options: &Options, store: Store, mode: Mode) -> Result<(), String> {
    let runtime = runtime(options, store, mode)?;
    let cx = context(options);
    let ids = match (&options.id, mode) {
        (Some(id), Mode::Hang) => std::slice::from_ref(id),
        (None, Mode::Hang) => return Err("hang needs --id <call id>".to_owned()),
        _ => &options.ids,
    };
    let mut out = std::io::stdout().lock();
    for id in ids {
        let outcome = runtime.invoke(id, "charge", &*arguments(id), &cx).await;
        let line = json!({
            "call_id": id,
            "code": outcome.code().map(|code| code.as_str()),
            "is_replay": outcome.is_replay(),
            "output": outcome.output().map(|output| output.as_str()),
        });
        writeln!(out, "{line}").map_err(|error| format!("cannot write: {error}"))?;
    }
    out.flush()
        .map_err(|error| format!("cannot write: {error}"))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(error) => {
            eprintln!("ledger_worker: {error}");
            return ExitCode::from(2);
        }
    };
    let Some(spec) = options.store.as_deref() else {
        eprintln!("ledger_worker: --store <spec> is required");
        return ExitCode::from(2);
    };
    let store = match open_store(spec).await {
        Ok(store) => store,
        Err(error) => {
            eprintln!("ledger_worker: {error}");
            return ExitCode::from(1);
        }
    };
    let ran = match options.command.as_str() {
        "race" => race(&options, store).await,
        "hang" => invoke(&options, store, Mode::Hang).await,
        "invoke" => invoke(&options, store, Mode::Log).await,
        other => {
            eprintln!("ledger_worker: unknown command {other:?}: race, hang or invoke");
            return ExitCode::from(2);
        }
    };
    match ran {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("ledger_worker: {error}");
            ExitCode::from(1)
        }
    }
}
