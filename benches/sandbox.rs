//! What the kernel sandbox adds to running a program: `true` and a small Python script run by
//! a tool through `Runtime::invoke` and `Context::run` (launcher, namespaces, rlimits, Landlock,
//! seccomp), against the same program spawned unconfined, and against `bwrap` doing a similar
//! confinement when it is installed; then 1,000 sandboxed calls of `true`, four at a time.
//!
//! `cargo bench -p benches --bench sandbox --features sandbox` (Linux with Landlock, seccomp
//! and user namespaces).

use std::hint::black_box;
use std::path::Path;
use std::process::{Command as Spawn, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::{Criterion, criterion_group};
use futures_util::future::join_all;
use tool_core::sandbox::{Authority, Command};
use tool_core::{Argument, Context, Registry, Runtime, Tool, ToolDef, registry::ToolError};

/// Runs a program.
#[derive(Tool, Debug)]
struct Run {
    program: String,
    args: Vec<String>,
}

#[derive(Argument, serde::Serialize)]
struct Ran {
    code: Option<i32>,
}

async fn run(args: Run, cx: &Context) -> Result<Ran, ToolError> {
    let done = cx.run(Command::new(args.program).args(args.args)).await?;
    Ok(Ran { code: done.code() })
}

const PYTHON: &str = "/usr/bin/python3";
const SCRIPT: &str = "print(sum(i * i for i in range(1000)))";

fn runtime() -> Runtime {
    let mut registry = Registry::new();
    let authority = Authority::new().read_system();
    let tool = ToolDef::new(run).authority(authority);
    if let Err(error) = registry.register(tool) {
        panic!("registering the tool: {error}");
    }
    Runtime::new(registry)
}

static IDS: AtomicU64 = AtomicU64::new(0);

async fn sandboxed(runtime: &Runtime, cx: &Context, program: &str, args: &[&str]) {
    let id = format!("b{}", IDS.fetch_add(1, Ordering::Relaxed));
    let arguments = serde_json::json!({ "program": program, "args": args }).to_string();
    let outcome = runtime.invoke(&id, "run", arguments.as_str(), cx).await;
    assert!(
        outcome
            .output()
            .is_some_and(|out| out.to_value()["code"] == 0),
        "{outcome:?}"
    );
}

fn unconfined(program: &str, args: &[&str]) {
    let status = Spawn::new(program)
        .args(args)
        .stdout(Stdio::null())
        .status()
        .map(|status| status.success());
    assert!(matches!(status, Ok(true)), "{program}: {status:?}");
}

/// bwrap with the system read-only, a fresh /proc, /dev and /tmp, every namespace unshared,
/// a new session and death with its parent.
fn bwrap(program: &str, args: &[&str]) {
    let mut command = Spawn::new("bwrap");
    command.args(["--ro-bind", "/usr", "/usr"]);
    for link in ["bin", "lib", "lib64", "sbin"] {
        if Path::new("/").join(link).is_symlink() {
            command.args(["--symlink", &format!("usr/{link}"), &format!("/{link}")]);
        }
    }
    command.args([
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--tmpfs",
        "/tmp",
        "--unshare-all",
        "--new-session",
        "--die-with-parent",
        "--clearenv",
    ]);
    command.arg(program).args(args).stdout(Stdio::null());
    let status = command.status().map(|status| status.success());
    assert!(matches!(status, Ok(true)), "bwrap {program}: {status:?}");
}

fn sandbox(c: &mut Criterion) {
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    let Ok(tokio) = tokio else {
        panic!("no Tokio runtime");
    };
    let runtime = runtime();
    let cx = Context::builder("bench").build();
    let has_bwrap = Spawn::new("bwrap")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !has_bwrap {
        eprintln!("bwrap is not installed: its rows are left out (apt-get install bubblewrap)");
    }

    let mut group = c.benchmark_group("sandbox");
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("true/unconfined", |b| {
        b.iter(|| unconfined("/bin/true", &[]))
    });
    group.bench_function("true/sandboxed", |b| {
        b.iter(|| tokio.block_on(sandboxed(&runtime, &cx, "/bin/true", &[])));
    });
    if has_bwrap {
        group.bench_function("true/bwrap", |b| b.iter(|| bwrap("/bin/true", &[])));
    }
    group.bench_function("python/unconfined", |b| {
        b.iter(|| unconfined(PYTHON, &["-c", SCRIPT]));
    });
    group.bench_function("python/sandboxed", |b| {
        b.iter(|| tokio.block_on(sandboxed(&runtime, &cx, PYTHON, &["-c", SCRIPT])));
    });
    if has_bwrap {
        group.bench_function("python/bwrap", |b| {
            b.iter(|| bwrap(PYTHON, &["-c", SCRIPT]));
        });
    }
    group.finish();

    let mut group = c.benchmark_group("sandbox_throughput");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.throughput(criterion::Throughput::Elements(1000));
    group.bench_function("true/1000_calls_4_at_a_time", |b| {
        b.iter(|| {
            tokio.block_on(async {
                for _ in 0..250 {
                    let calls = (0..4).map(|_| sandboxed(&runtime, &cx, "/bin/true", &[]));
                    black_box(join_all(calls).await);
                }
            });
        });
    });
    group.finish();
}

criterion_group!(benches, sandbox);

fn main() {
    // This executable is also the sandbox's launcher.
    tool_core::sandbox::enter_if_launched();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
