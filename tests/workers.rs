//! Worker processes (`bin/ledger_worker.rs`) for the ledger tests: a scratch folder, running a
//! worker to its end, and the race of several workers for the same calls on one store.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

/// A folder of its own under the system's temporary folder, removed when dropped.
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    /// A new, empty folder named after `name`, this process and a counter.
    pub fn new(name: &str) -> Scratch {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "tool-core-ledger-{}-{}-{name}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|error| panic!("cannot create {}: {error}", dir.display()));
        Scratch(dir)
    }

    /// The path of `name` in the folder.
    pub fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A command for the worker binary at `bin` (`env!("CARGO_BIN_EXE_ledger_worker")`), with no
/// input.
pub fn worker(bin: &str) -> Command {
    let mut command = Command::new(bin);
    command.stdin(Stdio::null());
    command
}

/// Runs a worker to its end; its JSON lines.
pub fn run(command: &mut Command) -> Vec<Value> {
    let out = command.output().expect("the worker starts");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{command:?} failed: {stderr}");
    String::from_utf8(out.stdout)
        .expect("the worker prints text")
        .lines()
        .map(|line| serde_json::from_str(line).expect("the worker prints JSON lines"))
        .collect()
}

/// The lines of a worker's execution log (none when it does not exist yet).
pub fn lines(path: &Path) -> Vec<String> {
    match std::fs::read_to_string(path) {
        Ok(text) => text.lines().map(str::to_owned).collect(),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(error) => panic!("cannot read {}: {error}", path.display()),
    }
}

/// A race of worker processes for the same calls on one store.
#[derive(Debug, Clone, Copy)]
pub struct Race<'a> {
    /// The worker binary.
    pub bin: &'a str,
    /// The store, as the worker takes it (`sqlite:PATH`, `postgres:URL`).
    pub store: &'a str,
    /// The ledger scope of every call.
    pub scope: &'a str,
    /// How many workers.
    pub workers: usize,
    /// Calls each worker proposes.
    pub calls: u64,
    /// Distinct call ids among them.
    pub unique: u64,
    /// The run quota shared by all.
    pub quota: u64,
}

impl Race<'_> {
    /// Starts every worker at once on the same ids and checks what exactly-once means: no id
    /// executed twice, exactly `min(unique, quota)` executions, each reported once, and every
    /// executed call replayed (not run) when proposed again. Returns the executions.
    pub fn run(&self, dir: &Scratch) -> u64 {
        let logs: Vec<PathBuf> = (0..self.workers)
            .map(|i| dir.file(&format!("worker-{i}.log")))
            .collect();
        let mut children: Vec<_> = logs
            .iter()
            .enumerate()
            .map(|(i, log)| {
                worker(self.bin)
                    .args([
                        "race", "--store", self.store, "--scope", self.scope, "--log",
                    ])
                    .arg(log)
                    .args(["--worker", &i.to_string()])
                    .args(["--calls", &self.calls.to_string()])
                    .args(["--unique", &self.unique.to_string()])
                    .args(["--quota", &self.quota.to_string(), "--gate"])
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("the worker starts")
            })
            .collect();
        // All start together, once each has opened its store, so that they race for the same ids.
        let mut reports: Vec<_> = children
            .iter_mut()
            .map(|child| {
                let mut out = BufReader::new(child.stdout.take().expect("the worker's output"));
                let mut ready = String::new();
                out.read_line(&mut ready)
                    .expect("the worker says it is ready");
                assert_eq!(ready.trim(), "ready", "the worker did not start");
                out
            })
            .collect();
        for child in &mut children {
            writeln!(child.stdin.take().expect("the worker's input"), "go").expect("the start");
        }
        let mut fresh = 0;
        for (child, out) in children.into_iter().zip(&mut reports) {
            let done = child.wait_with_output().expect("the worker ends");
            let stderr = String::from_utf8_lossy(&done.stderr);
            assert!(done.status.success(), "a worker failed: {stderr}");
            let mut line = String::new();
            out.read_line(&mut line).expect("the worker's report");
            let report: Value = serde_json::from_str(&line).expect("one JSON line");
            let codes = report["codes"].as_object().expect("the outcomes by code");
            let counted: u64 = codes.values().filter_map(Value::as_u64).sum();
            assert_eq!(counted, self.calls, "{report}");
            for code in codes.keys() {
                assert!(
                    ["ok", "budget_exhausted", "call_in_flight"].contains(&code.as_str()),
                    "unexpected outcome {code}: {report}"
                );
            }
            // Every replay here is of an output: the tool never fails.
            let ok = codes.get("ok").and_then(Value::as_u64).unwrap_or(0);
            fresh += ok - report["replays"].as_u64().expect("the replays");
        }

        let mut executed: BTreeMap<String, u64> = BTreeMap::new();
        for log in &logs {
            for id in lines(log) {
                *executed.entry(id).or_default() += 1;
            }
        }
        let total: u64 = executed.values().sum();
        let twice: Vec<_> = executed.iter().filter(|(_, n)| **n > 1).collect();
        assert!(
            twice.is_empty(),
            "{} calls executed more than once, among them {:?}",
            twice.len(),
            &twice[..twice.len().min(10)]
        );
        assert_eq!(
            total,
            self.unique.min(self.quota),
            "executions: the quota, exactly"
        );
        assert_eq!(fresh, total, "each execution was reported once");

        // No outcome was lost: proposing each executed call again replays it and runs nothing.
        let replay_log = dir.file("replay.log");
        let replays = run(worker(self.bin)
            .args([
                "invoke", "--store", self.store, "--scope", self.scope, "--log",
            ])
            .arg(&replay_log)
            .args(executed.keys()));
        assert_eq!(replays.len(), executed.len());
        for outcome in &replays {
            assert_eq!(outcome["code"], Value::Null, "{outcome}");
            assert_eq!(outcome["is_replay"], true, "{outcome}");
        }
        assert!(lines(&replay_log).is_empty(), "a replay ran the tool");
        let after: usize = logs.iter().map(|log| lines(log).len()).sum();
        assert_eq!(
            u64::try_from(after).ok(),
            Some(total),
            "the logs did not grow"
        );
        total
    }
}
