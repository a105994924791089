//! The Rust side of the side-by-side benchmark (`benches/peers/run.py`), timed with
//! `std::time::Instant` so that the runner can interleave it with the Node and Python peers in
//! one run:
//!
//! - `peers_rust export FILE` writes the input schemas and the payloads the peers read;
//! - `peers_rust time GROUP` (`contract`, `unions` or `ledger`) prints one JSON line
//!   `{"impl", "tool", "payload", "ns_median", "accepted"}` per way and payload;
//! - `peers_rust count IMPL TOOL PAYLOAD N` runs one way N times, for instruction counts under
//!   `valgrind --tool=callgrind`.
//!
//! Every figure is the median, over batches, of the time per call within a batch.

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use benches::{
    FLIGHTS_INVALID3, FLIGHTS_VALID, FlightsBorrowed, FlightsTwin, INVOICE_INVALID3, INVOICE_VALID,
    InvoiceBorrowed, InvoiceTwin,
};
use examples::{CreateInvoice, SearchFlights};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tool_core::ledger::SqliteLedger;
use tool_core::{Context, Runtime, Tool, registry::ToolInfo};

#[path = "../unions_shapes.rs"]
#[allow(dead_code)]
mod shapes;

#[path = "../pipeline.rs"]
#[allow(dead_code)]
mod pipeline;

#[path = "../plain_sqlite.rs"]
mod plain_sqlite;

use shapes::{EditFile, EditFileTwin, edit_file_payloads};

/// The payloads of the contract and unions tables: `(tool, payload, text)`.
fn payloads() -> Vec<(&'static str, &'static str, String)> {
    let mut all = vec![
        ("invoice", "valid", INVOICE_VALID.to_owned()),
        ("invoice", "invalid3", INVOICE_INVALID3.to_owned()),
        ("flights", "valid", FLIGHTS_VALID.to_owned()),
        ("flights", "invalid3", FLIGHTS_INVALID3.to_owned()),
    ];
    for (name, text) in edit_file_payloads() {
        if name != "valid_tag_last" {
            all.push(("edit_file", name, text));
        }
    }
    all
}

fn text(tool: &str, payload: &str) -> String {
    payloads()
        .into_iter()
        .find(|(t, p, _)| *t == tool && *p == payload)
        .map(|(_, _, text)| text)
        .unwrap_or_else(|| panic!("unknown payload {tool}/{payload}"))
}

/// The obvious approach: `Value`, a Draft 2020-12 `jsonschema` validator with formats asserted,
/// then `from_value`; every error collected when invalid.
fn value_jsonschema<Twin: DeserializeOwned>(validator: &jsonschema::Validator, raw: &str) -> bool {
    shapes::value_jsonschema::<Twin>(validator, raw).is_ok()
}

/// One way of reading one payload, ready to be called: true when it accepts the text.
type Way = Box<dyn FnMut() -> bool>;

fn contract_way(way: &str, tool: &str, raw: String) -> Option<Way> {
    let way: Way = match (way, tool) {
        ("floor", "invoice") => {
            Box::new(move || serde_json::from_str::<InvoiceTwin>(black_box(&raw)).is_ok())
        }
        ("floor", "flights") => {
            Box::new(move || serde_json::from_str::<FlightsTwin>(black_box(&raw)).is_ok())
        }
        ("floor", "edit_file") => {
            Box::new(move || serde_json::from_str::<EditFileTwin>(black_box(&raw)).is_ok())
        }
        ("zero_copy", "invoice") => {
            Box::new(move || serde_json::from_str::<InvoiceBorrowed<'_>>(black_box(&raw)).is_ok())
        }
        ("zero_copy", "flights") => {
            Box::new(move || serde_json::from_str::<FlightsBorrowed<'_>>(black_box(&raw)).is_ok())
        }
        ("jsonschema", "invoice") => {
            let validator = shapes::validator::<CreateInvoice>();
            Box::new(move || value_jsonschema::<InvoiceTwin>(&validator, black_box(&raw)))
        }
        ("jsonschema", "flights") => {
            let validator = shapes::validator::<SearchFlights>();
            Box::new(move || value_jsonschema::<FlightsTwin>(&validator, black_box(&raw)))
        }
        ("jsonschema", "edit_file") => {
            let validator = shapes::validator::<EditFile>();
            Box::new(move || value_jsonschema::<EditFileTwin>(&validator, black_box(&raw)))
        }
        ("parse_arguments", "invoice") => {
            Box::new(move || CreateInvoice::parse_arguments(black_box(&raw)).is_ok())
        }
        ("parse_arguments", "flights") => {
            Box::new(move || SearchFlights::parse_arguments(black_box(&raw)).is_ok())
        }
        ("parse_arguments", "edit_file") => {
            Box::new(move || EditFile::parse_arguments(black_box(&raw)).is_ok())
        }
        _ => return None,
    };
    Some(way)
}

/// The ledger ways: `invoke` of the no-op `create_invoice` without a ledger and with a
/// `SqliteLedger`, and the hand-written claim-and-settle, each call with a new call id, on
/// files in `dir`.
fn ledger_way(way: &str, dir: &std::path::Path) -> Option<Way> {
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let scope = format!("peers-{}-{started}", std::process::id());
    let mut next = 0_u64;
    let mut id = move || {
        next += 1;
        format!("call_{next}")
    };
    match way {
        "plain_sqlite" => {
            let mut plain = plain_sqlite::PlainSqlite::open(&dir.join("plain.db"))
                .expect("the plain SQLite file opens");
            Some(Box::new(move || {
                plain
                    .call(
                        &scope,
                        &id(),
                        "create_invoice",
                        black_box(INVOICE_VALID),
                        r#"{"ok":true}"#,
                    )
                    .expect("the plain transaction commits")
            }))
        }
        "invoke" | "sqlite_ledger" => {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a Tokio runtime");
            let registry = pipeline::registry();
            let mut builder =
                Runtime::builder(registry).authorize(|_: &ToolInfo, _: &Context| Ok(()));
            if way == "sqlite_ledger" {
                let ledger =
                    SqliteLedger::open(dir.join("ledger.db")).expect("the SQLite ledger opens");
                builder = builder.ledger(Arc::new(ledger));
            }
            let runtime = builder.build();
            let cx = Context::builder("bench").scope(scope).build();
            Some(Box::new(move || {
                let id = id();
                rt.block_on(runtime.invoke(&id, "create_invoice", black_box(INVOICE_VALID), &cx))
                    .is_ok()
            }))
        }
        _ => None,
    }
}

/// The zero-copy twins really borrow: every string of the valid payloads points into the text.
fn assert_borrows() {
    use std::borrow::Cow::Borrowed;
    let invoice: InvoiceBorrowed<'_> =
        serde_json::from_str(INVOICE_VALID).expect("the zero-copy twin reads the invoice");
    assert!(matches!(invoice.customer_id.0, Borrowed(_)));
    let flights: FlightsBorrowed<'_> =
        serde_json::from_str(FLIGHTS_VALID).expect("the zero-copy twin reads the flights");
    let strings = [
        &flights.origin,
        &flights.destination,
        &flights.departure_date,
    ]
    .into_iter()
    .chain(flights.return_date.as_ref())
    .chain(&flights.preferred_airlines)
    .chain(flights.tags.iter().flat_map(|(k, v)| [k, v]));
    for text in strings {
        assert!(matches!(text.0, Borrowed(_)), "{text:?} was copied");
    }
}

/// The processor time this process has used, user and system, in nanoseconds (Linux only:
/// `/proc/self/stat`, in clock ticks of 10 ms).
fn cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks * 10_000_000)
}

/// The median time per call of `way`: about `budget` of batches, each long enough
/// (`batch_time`) for the clock's resolution not to matter, after a warm-up.
fn median_ns(way: &mut Way, budget: Duration, batch_time: Duration) -> f64 {
    let warm_up = Instant::now();
    let mut calls = 0_u32;
    while warm_up.elapsed() < budget / 10 || calls < 3 {
        black_box(way());
        calls += 1;
    }
    let per_call = warm_up.elapsed().as_secs_f64() / f64::from(calls);
    let batch = ((batch_time.as_secs_f64() / per_call) as u32).max(1);
    let mut samples = Vec::new();
    let started = Instant::now();
    while samples.len() < 7 || (started.elapsed() < budget && samples.len() < 200) {
        let t = Instant::now();
        for _ in 0..batch {
            black_box(way());
        }
        samples.push(t.elapsed().as_secs_f64() * 1e9 / f64::from(batch));
    }
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn line(way: &str, tool: &str, payload: &str, ns: f64, accepted: bool) {
    println!(
        "{}",
        json!({"impl": way, "tool": tool, "payload": payload, "ns_median": ns, "accepted": accepted})
    );
}

fn time(group: &str, budget: Duration) {
    let batch_time = Duration::from_millis(2);
    match group {
        "contract" | "unions" => {
            assert_borrows();
            let ways: &[&str] = if group == "contract" {
                &["floor", "zero_copy", "jsonschema", "parse_arguments"]
            } else {
                &["floor", "jsonschema", "parse_arguments"]
            };
            for (tool, payload, raw) in payloads() {
                if (tool == "edit_file") != (group == "unions") {
                    continue;
                }
                for way in ways {
                    let Some(mut run) = contract_way(way, tool, raw.clone()) else {
                        continue;
                    };
                    let accepted = run();
                    let ns = median_ns(&mut run, budget, batch_time);
                    line(way, tool, payload, ns, accepted);
                }
            }
        }
        "ledger" => {
            let dir = std::env::temp_dir().join(format!("peers-ledger-{}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("a temporary folder");
            for way in ["plain_sqlite", "sqlite_ledger", "invoke"] {
                let mut run = ledger_way(way, &dir).expect("a ledger way");
                let accepted = run();
                // Writes take tens of microseconds: longer batches, so a checkpoint of the
                // write-ahead log is spread over fewer samples.
                let ns = median_ns(&mut run, budget, batch_time * 10);
                // The processor time per call, which the waits of a loaded machine do not
                // inflate as they inflate the elapsed time.
                // At least 30 ticks of the clock, so its resolution is within about 3%.
                let mut calls = 0_u32;
                let cpu = cpu_ns();
                let mut used = 0;
                while calls < 100 || (used < 300_000_000 && calls < 1_000_000) {
                    black_box(run());
                    calls += 1;
                    if calls.is_multiple_of(64) {
                        used = cpu_ns()
                            .zip(cpu)
                            .map_or(u64::MAX, |(a, b)| a.saturating_sub(b));
                    }
                }
                let cpu_per_call = cpu_ns()
                    .zip(cpu)
                    .map(|(after, before)| after.saturating_sub(before) as f64 / f64::from(calls));
                println!(
                    "{}",
                    json!({"impl": way, "tool": "invoice", "payload": "valid", "ns_median": ns,
                        "accepted": accepted, "cpu_ns": cpu_per_call})
                );
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
        other => panic!("unknown group {other}: contract, unions or ledger"),
    }
}

fn export(file: &PathBuf) {
    let payloads: Vec<Value> = payloads()
        .into_iter()
        .map(|(tool, payload, text)| json!({"tool": tool, "payload": payload, "text": text}))
        .collect();
    let all = json!({
        "schemas": {
            "invoice": CreateInvoice::input_schema(),
            "flights": SearchFlights::input_schema(),
            "edit_file": EditFile::input_schema(),
        },
        "payloads": payloads,
    });
    let text = serde_json::to_string_pretty(&all).expect("JSON prints");
    std::fs::write(file, text + "\n").expect("the export file is written");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["export", file] => export(&PathBuf::from(file)),
        ["time", group] => time(group, Duration::from_millis(300)),
        ["time", group, ms] => time(
            group,
            Duration::from_millis(ms.parse().expect("a budget in milliseconds")),
        ),
        ["count", way, tool, payload, n] => {
            let n: usize = n.parse().expect("N is a count");
            let dir = std::env::temp_dir().join(format!("peers-count-{}", std::process::id()));
            let mut run = if *tool == "ledger" {
                std::fs::create_dir_all(&dir).expect("a temporary folder");
                ledger_way(way, &dir)
            } else {
                contract_way(way, tool, text(tool, payload))
            }
            .unwrap_or_else(|| panic!("unknown way {way} for {tool}"));
            let accepted = (0..n).filter(|_| run()).count();
            let _ = std::fs::remove_dir_all(&dir);
            println!("{accepted}");
        }
        _ => panic!(
            "usage: peers_rust export FILE | time contract|unions|ledger [BUDGET_MS] | count WAY TOOL PAYLOAD N"
        ),
    }
}
