//! The escape suite: real programs (sh, python3, curl, getent, su) try to reach past the
//! authority of the tool that runs them, and each attempt must be refused with nothing outside
//! touched. The programs run through the runtime, as a model's call would run them.
//!
//! Needs Linux with Landlock, seccomp and user namespaces. Where one is missing each test says
//! it was skipped and why; with `CI=true` it fails instead.

use std::fs;
use std::io::ErrorKind;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::Value;
use tool_core::ledger::{AuditKind, Ledger as _, MemoryLedger};
use tool_core::registry::ToolError;
use tool_core::sandbox::{Authority, Command, Weaker};
use tool_core::{Argument, Code, Context, Outcome, Registry, Runtime, Tool, ToolDef};

/// Runs a program in the workspace (a shell tool: `sh` is one of the programs it may run).
#[derive(Tool, Debug)]
struct Run {
    program: String,
    args: Vec<String>,
}

#[derive(Argument, serde::Serialize, Debug)]
struct Ran {
    code: Option<i32>,
    signal: Option<i32>,
    stdout: String,
    stderr: String,
}

/// The directory programs run in, attached to the context.
struct Workspace(PathBuf);

/// A kernel feature to behave as if missing, attached to the context.
struct Missing(&'static str);

/// An authority the handler asks its context for (it can only narrow).
struct Widen(Authority);

async fn run(args: Run, cx: &Context) -> Result<Ran, ToolError> {
    let mut command = Command::new(args.program).args(args.args);
    if let Some(Workspace(dir)) = cx.get::<Workspace>() {
        command = command.current_dir(dir);
    }
    if let Some(Missing(feature)) = cx.get::<Missing>() {
        command = command.assume_missing(feature);
    }
    let done = match cx.get::<Widen>() {
        Some(Widen(wider)) => {
            let narrowed = cx.narrow(wider);
            assert!(
                narrowed
                    .authority()
                    .unwrap()
                    .is_within(&cx.authority().unwrap())
            );
            narrowed.run(command).await?
        }
        None => cx.run(command).await?,
    };
    Ok(Ran {
        code: done.code(),
        signal: done.signal(),
        stdout: done.stdout_lossy(),
        stderr: done.stderr_lossy(),
    })
}

/// A test's own folder: `ws` (the workspace, writable), `outside` (a file and a folder the
/// sandbox must not touch) and `home/.ssh/id_rsa` (a fake key). All world-readable and the
/// workspace world-writable, so only the sandbox, not file permissions, stands in the way.
struct Place {
    base: PathBuf,
}

impl Place {
    fn new(name: &str) -> Place {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let base = std::env::temp_dir().join(format!(
            "tool-core-escape-{}-{}-{name}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&base);
        for dir in ["ws", "outside", "home/.ssh"] {
            fs::create_dir_all(base.join(dir)).unwrap();
        }
        fs::write(base.join("outside/file.txt"), "untouched\n").unwrap();
        fs::write(base.join("home/.ssh/id_rsa"), "FAKE PRIVATE KEY\n").unwrap();
        for path in [
            &base,
            &base.join("home"),
            &base.join("home/.ssh"),
            &base.join("outside"),
        ] {
            fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
        }
        fs::set_permissions(base.join("ws"), fs::Permissions::from_mode(0o777)).unwrap();
        fs::set_permissions(
            base.join("outside/file.txt"),
            fs::Permissions::from_mode(0o666),
        )
        .unwrap();
        fs::set_permissions(
            base.join("home/.ssh/id_rsa"),
            fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        Place { base }
    }

    fn ws(&self) -> PathBuf {
        self.base.join("ws")
    }

    fn path(&self, rel: &str) -> String {
        self.base.join(rel).display().to_string()
    }

    /// The tool's authority: the system, and the workspace to write.
    fn authority(&self) -> Authority {
        Authority::new().read_system().write(self.ws())
    }

    /// Asserts nothing outside the workspace changed.
    fn assert_outside_untouched(&self) {
        assert_eq!(
            fs::read_to_string(self.base.join("outside/file.txt")).unwrap(),
            "untouched\n"
        );
        let mut names: Vec<_> = fs::read_dir(self.base.join("outside"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["file.txt"],
            "something was created outside the workspace"
        );
        assert_eq!(
            fs::read_to_string(self.base.join("home/.ssh/id_rsa")).unwrap(),
            "FAKE PRIVATE KEY\n"
        );
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.base);
    }
}

fn runtime_for(authority: Authority, timeout: Duration) -> Runtime {
    tool_core::sandbox::use_launcher(env!("CARGO_BIN_EXE_sandbox_launcher"));
    let mut registry = Registry::new();
    registry
        .register(ToolDef::new(run).authority(authority).timeout(timeout))
        .unwrap();
    Runtime::builder(registry).build()
}

fn context(place: &Place) -> Context {
    Context::builder("tester")
        .extension(Workspace(place.ws()))
        .build()
}

async fn call(runtime: &Runtime, cx: &Context, program: &str, args: &[&str]) -> Outcome {
    static ID: AtomicUsize = AtomicUsize::new(0);
    let id = format!("call-{}", ID.fetch_add(1, Ordering::Relaxed));
    let arguments = serde_json::json!({ "program": program, "args": args }).to_string();
    runtime.invoke(&id, "run", arguments.as_str(), cx).await
}

/// What the program printed and how it ended; panics unless it ran.
fn ran(outcome: &Outcome) -> Value {
    match outcome.result() {
        Ok(output) => output.to_value(),
        Err(failure) => panic!("the program did not run: {failure:?}"),
    }
}

fn text(ran: &Value, stream: &str) -> String {
    ran[stream].as_str().unwrap_or_default().to_owned()
}

/// Whether the kernel gives the sandbox what it needs. `false` (and a line saying the test was
/// skipped, why and how to run it) on a machine without it; with `CI=true`, a failure.
async fn kernel_ready(name: &str) -> bool {
    if !Path::new(PY).exists() {
        if std::env::var("CI").is_ok_and(|ci| ci == "true") {
            panic!("{name}: {PY} is missing with CI=true");
        }
        eprintln!("skipped {name}: {PY} is missing (apt-get install python3)");
        return false;
    }
    let place = Place::new("probe");
    let runtime = runtime_for(place.authority(), Duration::from_secs(10));
    let outcome = call(&runtime, &context(&place), "/bin/true", &[]).await;
    match outcome.code() {
        None => true,
        Some(Code::SandboxUnavailable) => {
            let why = outcome
                .failure()
                .map(|f| f.message().to_owned())
                .unwrap_or_default();
            if std::env::var("CI").is_ok_and(|ci| ci == "true") {
                panic!("{name}: the kernel sandbox is unavailable with CI=true: {why}");
            }
            eprintln!(
                "skipped {name}: the kernel sandbox is unavailable here ({why}); run on Linux \
                 with Landlock, seccomp and unprivileged user namespaces"
            );
            false
        }
        Some(code) => panic!("{name}: probing the sandbox ended as {code}: {outcome:?}"),
    }
}

/// The system's Python (a shim under the runtime's home would be out of reach).
const PY: &str = "/usr/bin/python3";

const PY_READ: &str = "import sys\ntry:\n    print(open(sys.argv[1]).read())\nexcept OSError as e:\n    print('refused', e.errno)\n";

#[tokio::test]
async fn reading_secrets_outside_the_authority_is_refused() {
    if !kernel_ready("reading_secrets").await {
        return;
    }
    let place = Place::new("read");
    let runtime = runtime_for(place.authority(), Duration::from_secs(10));
    let cx = context(&place);
    let key = place.path("home/.ssh/id_rsa");
    for target in [
        "/etc/shadow",
        key.as_str(),
        "/proc/1/environ",
        "/proc/self/environ",
        "/etc/passwd",
    ] {
        let out = ran(&call(&runtime, &cx, PY, &["-c", PY_READ, target]).await);
        let stdout = text(&out, "stdout");
        assert!(stdout.starts_with("refused"), "{target} was read: {out}");
        assert!(!stdout.contains("FAKE PRIVATE KEY"));
        let shell = ran(&call(&runtime, &cx, "sh", &["-c", &format!("cat {target}")]).await);
        assert_ne!(shell["code"], 0, "cat {target}: {shell}");
        assert!(text(&shell, "stdout").is_empty(), "cat {target}: {shell}");
    }
    place.assert_outside_untouched();
}

#[tokio::test]
async fn the_parents_environment_and_descriptors_do_not_reach_the_program() {
    if !kernel_ready("parent_environment").await {
        return;
    }
    let place = Place::new("env");
    // Held open by the runtime's process while the program runs: a ledger file and a socket.
    let ledger_file = place.base.join("outside/ledger.db");
    fs::write(&ledger_file, "ledger").unwrap();
    let _open = fs::File::open(&ledger_file).unwrap();
    let _listening = TcpListener::bind("127.0.0.1:0").unwrap();
    fs::remove_file(&ledger_file).unwrap();

    let runtime = runtime_for(place.authority().env("LANG"), Duration::from_secs(10));
    let cx = context(&place);
    let out = ran(&call(&runtime, &cx, "sh", &["-c", "env"]).await);
    let env = text(&out, "stdout");
    // Cargo gives the test process these; none may reach the program.
    for name in ["CARGO_MANIFEST_DIR", "CARGO_PKG_NAME", "HOME", "PATH"] {
        assert!(
            std::env::var(name).is_err()
                || !env.lines().any(|l| l.starts_with(&format!("{name}="))),
            "{name} reached the program: {env}"
        );
    }
    let manifest = env!("CARGO_MANIFEST_DIR");
    assert!(!env.contains(manifest), "{env}");
    // A variable the authority names is passed on, with its value.
    if let Ok(value) = std::env::var("CARGO_PKG_NAME") {
        let named = runtime_for(
            place.authority().env("CARGO_PKG_NAME"),
            Duration::from_secs(10),
        );
        let out = ran(&call(&named, &cx, "sh", &["-c", "env"]).await);
        assert!(
            text(&out, "stdout")
                .lines()
                .any(|line| line == format!("CARGO_PKG_NAME={value}")),
            "{out}"
        );
    }

    let probe = "import os\nopen_fds=[]\nfor fd in range(3, 1024):\n    try:\n        os.fstat(fd)\n        open_fds.append(fd)\n    except OSError:\n        pass\nprint(open_fds)\n";
    let out = ran(&call(&runtime, &cx, PY, &["-c", probe]).await);
    assert_eq!(text(&out, "stdout").trim(), "[]", "{out}");
    let listing = ran(&call(&runtime, &cx, "sh", &["-c", "ls -l /proc/self/fd/"]).await);
    assert!(!text(&listing, "stdout").contains("ledger"), "{listing}");
    assert!(!text(&listing, "stdout").contains("socket"), "{listing}");
}

#[tokio::test]
async fn writing_outside_the_workspace_is_refused_by_every_path() {
    if !kernel_ready("writing_outside").await {
        return;
    }
    let place = Place::new("write");
    let outside = place.path("outside/file.txt");
    std::os::unix::fs::symlink(&outside, place.ws().join("link")).unwrap();
    let runtime = runtime_for(place.authority(), Duration::from_secs(10));
    let cx = context(&place);

    // Inside the workspace is fine.
    let ok = ran(&call(
        &runtime,
        &cx,
        "sh",
        &["-c", "echo mine > own.txt && cat own.txt"],
    )
    .await);
    assert_eq!(text(&ok, "stdout"), "mine\n", "{ok}");

    let attempts = [
        "echo x > ../outside/file.txt".to_owned(),
        "echo x > ../outside/new.txt".to_owned(),
        "echo x > link".to_owned(),
        format!("ln {outside} hard && echo x > hard"),
        format!("echo x > /proc/self/root{outside}"),
        format!("mv {outside} ./stolen"),
        "echo x > /tmp/tool-core-escape-tmp".to_owned(),
    ];
    for attempt in &attempts {
        let out = ran(&call(&runtime, &cx, "sh", &["-c", attempt]).await);
        assert_ne!(out["code"], 0, "{attempt} succeeded: {out}");
    }
    place.assert_outside_untouched();
    assert!(!Path::new("/tmp/tool-core-escape-tmp").exists());
}

#[tokio::test]
async fn the_network_is_unreachable() {
    if !kernel_ready("network").await {
        return;
    }
    let place = Place::new("net");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let runtime = runtime_for(place.authority(), Duration::from_secs(10));
    let cx = context(&place);

    let connect = format!(
        "import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n    print('connected')\nexcept OSError as e:\n    print('refused', e.errno)\n"
    );
    let dns = "import socket\ntry:\n    print(socket.getaddrinfo('example.com', 80))\nexcept OSError as e:\n    print('refused', e)\n";
    let raw = "import socket\ntry:\n    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)\n    print('raw socket')\nexcept OSError as e:\n    print('refused', e.errno)\n";
    for script in [connect.as_str(), dns, raw] {
        let out = ran(&call(&runtime, &cx, PY, &["-c", script]).await);
        assert!(
            text(&out, "stdout").starts_with("refused"),
            "{script}: {out}"
        );
    }
    let getent = ran(&call(&runtime, &cx, "getent", &["hosts", "example.com"]).await);
    assert_ne!(getent["code"], 0, "{getent}");
    if Path::new("/usr/bin/curl").exists() {
        let url = format!("http://127.0.0.1:{port}/");
        let curl = ran(&call(&runtime, &cx, "curl", &["-sS", "-m", "2", &url]).await);
        assert_ne!(curl["code"], 0, "{curl}");
    } else {
        eprintln!("curl is not installed: its attempt was left out (apt-get install curl)");
    }
    // Nothing arrived at the listener.
    assert_eq!(
        listener.accept().map(|_| ()).unwrap_err().kind(),
        ErrorKind::WouldBlock
    );
}

#[tokio::test]
async fn a_fork_bomb_is_bounded_by_the_process_limit() {
    if !kernel_ready("fork_bomb").await {
        return;
    }
    let place = Place::new("fork");
    let runtime = runtime_for(place.authority().processes(8), Duration::from_secs(10));
    let cx = context(&place);
    let bomb = "import os, time\nforked = 0\nwhile forked < 1000:\n    try:\n        pid = os.fork()\n    except OSError:\n        break\n    if pid == 0:\n        time.sleep(30)\n        os._exit(0)\n    forked += 1\nprint(forked)\n";
    let out = ran(&call(&runtime, &cx, PY, &["-c", bomb]).await);
    let forked: u32 = text(&out, "stdout")
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{out}"));
    assert!(forked < 8, "{forked} processes were forked");
    // The shell's fork bomb is bounded too: it runs out of processes, or is killed with the
    // call when its time is up (a non-idempotent call stopped is `outcome_unknown`).
    let sh = call(
        &runtime,
        &cx,
        "sh",
        &["-c", "b() { b | b & }; b; sleep 1; echo done"],
    )
    .await;
    assert!(
        matches!(sh.code(), None | Some(Code::OutcomeUnknown)),
        "{sh:?}"
    );
}

#[tokio::test]
async fn memory_cpu_and_output_limits_stop_the_work() {
    if !kernel_ready("limits").await {
        return;
    }
    let place = Place::new("limits");
    let authority = place
        .authority()
        .memory_bytes(256 << 20)
        .cpu_seconds(1)
        .output_bytes(64 << 10)
        .file_size_bytes(1 << 20);
    let runtime = runtime_for(authority, Duration::from_secs(20));
    let cx = context(&place);

    let memory = ran(&call(&runtime, &cx, PY, &["-c", "b = bytearray(2 << 30)"]).await);
    assert_ne!(memory["code"], 0, "{memory}");
    assert!(text(&memory, "stderr").contains("MemoryError"), "{memory}");

    let spin = call(&runtime, &cx, PY, &["-c", "while True: pass"]).await;
    assert_eq!(spin.code(), Some(Code::ResourceExhausted), "{spin:?}");
    assert!(
        spin.failure().unwrap().message().contains("CPU time"),
        "{spin:?}"
    );

    let flood = call(&runtime, &cx, "yes", &[]).await;
    assert_eq!(flood.code(), Some(Code::ResourceExhausted), "{flood:?}");
    assert!(
        flood.failure().unwrap().message().contains("output"),
        "{flood:?}"
    );

    let big = call(
        &runtime,
        &cx,
        "sh",
        &["-c", "head -c 4000000 /dev/zero > big"],
    )
    .await;
    assert_eq!(big.code(), Some(Code::ResourceExhausted), "{big:?}");
    assert!(fs::metadata(place.ws().join("big")).unwrap().len() <= 1 << 20);
}

#[tokio::test]
async fn setuid_programs_gain_nothing_and_the_parent_cannot_be_reached() {
    if !kernel_ready("privileges").await {
        return;
    }
    let place = Place::new("privileges");
    let runtime = runtime_for(place.authority(), Duration::from_secs(10));
    let cx = context(&place);
    let nnp = "import ctypes\nlibc = ctypes.CDLL(None)\nprint(libc.prctl(39, 0, 0, 0, 0))\n";
    let out = ran(&call(&runtime, &cx, PY, &["-c", nnp]).await);
    assert_eq!(
        text(&out, "stdout").trim(),
        "1",
        "no_new_privs is not set: {out}"
    );
    let su = ran(&call(&runtime, &cx, "su", &["root", "-c", "cat /etc/shadow"]).await);
    assert_ne!(su["code"], 0, "{su}");
    assert!(!text(&su, "stdout").contains("root:"), "{su}");
    let passwd = ran(&call(&runtime, &cx, "passwd", &["-S", "root"]).await);
    assert_ne!(passwd["code"], 0, "{passwd}");

    let me = std::process::id().to_string();
    let trace = format!(
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nprint(libc.ptrace(16, {me}, 0, 0), ctypes.get_errno())\n"
    );
    let out = ran(&call(&runtime, &cx, PY, &["-c", &trace]).await);
    assert!(text(&out, "stdout").starts_with("-1"), "{out}");
    let kill = ran(&call(&runtime, &cx, "sh", &["-c", &format!("kill -9 {me}")]).await);
    assert_ne!(kill["code"], 0, "{kill}");
    // Every process the program may signal: only its own.
    let all = ran(&call(&runtime, &cx, "sh", &["-c", "kill -9 -1; echo survived"]).await);
    assert!(all.is_object());
}

#[tokio::test]
async fn no_process_outlives_a_timed_out_call() {
    if !kernel_ready("orphans").await {
        return;
    }
    let place = Place::new("orphans");
    let runtime = runtime_for(place.authority(), Duration::from_millis(1500));
    let cx = context(&place);
    let outcome = call(
        &runtime,
        &cx,
        "sh",
        &["-c", "sleep 987.125 & sleep 987.25 & wait"],
    )
    .await;
    assert_eq!(outcome.code(), Some(Code::OutcomeUnknown), "{outcome:?}");
    // SIGKILL was sent to the whole group when the call ended; give the kernel a moment to
    // finish them off, then none may be left.
    let mut left = Vec::new();
    for _ in 0..50 {
        left = sleepers();
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(left.is_empty(), "processes outlived the call: {left:?}");
}

fn sleepers() -> Vec<String> {
    fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| {
            let cmdline = fs::read(entry.ok()?.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            (cmdline.contains("987.125") || cmdline.contains("987.25")).then_some(cmdline)
        })
        .filter(|cmdline| !cmdline.contains("sandbox_escape"))
        .collect()
}

#[tokio::test]
async fn a_missing_kernel_feature_refuses_the_call_and_runs_nothing() {
    if !kernel_ready("fail_closed").await {
        return;
    }
    let place = Place::new("closed");
    let marker = place.ws().join("ran");
    for feature in ["landlock", "seccomp", "namespaces"] {
        let runtime = runtime_for(place.authority(), Duration::from_secs(10));
        let cx = Context::builder("tester")
            .extension(Workspace(place.ws()))
            .extension(Missing(feature))
            .build();
        let outcome = call(&runtime, &cx, "sh", &["-c", "touch ran"]).await;
        assert_eq!(
            outcome.code(),
            Some(Code::SandboxUnavailable),
            "{feature}: {outcome:?}"
        );
        assert!(!marker.exists(), "{feature}: the program ran");
    }
    // A tool that accepts running without namespaces runs there, still confined.
    let runtime = runtime_for(
        place.authority().accept(Weaker::WithoutNamespaces),
        Duration::from_secs(10),
    );
    let cx = Context::builder("tester")
        .extension(Workspace(place.ws()))
        .extension(Missing("namespaces"))
        .build();
    let out = ran(&call(&runtime, &cx, "sh", &["-c", "touch ran; cat /etc/shadow"]).await);
    assert!(marker.exists(), "{out}");
    assert_ne!(out["code"], 0, "{out}");
}

#[tokio::test]
async fn an_allow_list_reaches_only_its_targets_through_the_proxy() {
    if !kernel_ready("allow_list").await {
        return;
    }
    let place = Place::new("allow");
    let allowed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let denied = TcpListener::bind("127.0.0.1:0").unwrap();
    denied.set_nonblocking(true).unwrap();
    let (a, d) = (
        allowed.local_addr().unwrap().port(),
        denied.local_addr().unwrap().port(),
    );
    let received = tokio::spawn(async move {
        let (mut stream, _) = allowed.accept().await.unwrap();
        let mut hello = [0; 5];
        tokio::io::AsyncReadExt::read_exact(&mut stream, &mut hello)
            .await
            .unwrap();
        hello
    });
    let authority = place
        .authority()
        .network(tool_core::sandbox::Network::Allow(
            [format!("127.0.0.1:{a}")].into(),
        ));
    let runtime = runtime_for(authority, Duration::from_secs(10));
    let script = format!(
        "import os, socket\n\
         def via(target):\n\
         \x20   s = socket.socket(socket.AF_UNIX)\n\
         \x20   s.connect(os.environ['TOOL_CORE_PROXY_SOCKET'])\n\
         \x20   s.sendall(('CONNECT %s HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n' % (target, target)).encode())\n\
         \x20   head = s.recv(1024).split(b'\\r\\n')[0].decode()\n\
         \x20   if ' 200 ' in head:\n\
         \x20       s.sendall(b'hello')\n\
         \x20   return head\n\
         print(via('127.0.0.1:{a}'))\n\
         print(via('127.0.0.1:{d}'))\n\
         print(via('example.com:443'))\n\
         try:\n\
         \x20   socket.create_connection(('127.0.0.1', {d}), timeout=2)\n\
         \x20   print('direct connected')\n\
         except OSError as e:\n\
         \x20   print('direct refused', e.errno)\n"
    );
    let out = ran(&call(&runtime, &context(&place), PY, &["-c", &script]).await);
    let lines: Vec<String> = text(&out, "stdout").lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert!(lines[0].contains(" 200 "), "{out}");
    assert!(lines[1].contains(" 403 "), "{out}");
    assert!(lines[2].contains(" 403 "), "{out}");
    assert!(lines[3].starts_with("direct refused"), "{out}");
    assert_eq!(&received.await.unwrap(), b"hello");
    // Nothing arrived at the port that is not on the list.
    assert_eq!(
        denied.accept().map(|_| ()).unwrap_err().kind(),
        ErrorKind::WouldBlock
    );
}

#[tokio::test]
async fn the_context_narrows_the_authority_and_the_ledger_binds_it() {
    if !kernel_ready("narrowing").await {
        return;
    }
    let place = Place::new("narrow");
    fs::create_dir(place.ws().join("acme")).unwrap();
    fs::set_permissions(place.ws().join("acme"), fs::Permissions::from_mode(0o777)).unwrap();
    tool_core::sandbox::use_launcher(env!("CARGO_BIN_EXE_sandbox_launcher"));
    let mut registry = Registry::new();
    registry
        .register(ToolDef::new(run).authority(place.authority()))
        .unwrap();
    let info = registry.get("run").unwrap();
    assert_eq!(info.authority(), Some(&place.authority()));
    let ledger = Arc::new(MemoryLedger::new());
    let runtime = Runtime::builder(registry)
        .ledger(Arc::clone(&ledger))
        .build();

    // A tenant's context narrows the tool to its own folder.
    let tenant = Authority::new()
        .read_system()
        .write(place.ws().join("acme"));
    let cx = Context::builder("tester")
        .scope("narrowing")
        .extension(Workspace(place.ws()))
        .authority(tenant.clone())
        .build();
    let out = runtime
        .invoke(
            "n-1",
            "run",
            serde_json::json!({"program": "sh", "args": ["-c", "echo a > acme/a; echo b > b; ls acme; ls"]})
                .to_string()
                .as_str(),
            &cx,
        )
        .await;
    let out = ran(&out);
    assert!(place.ws().join("acme/a").exists(), "{out}");
    assert!(!place.ws().join("b").exists(), "{out}");

    // The same call id under another authority is another call.
    let wider = Context::builder("tester")
        .scope("narrowing")
        .extension(Workspace(place.ws()))
        .build();
    let again = runtime
        .invoke(
            "n-1",
            "run",
            serde_json::json!({"program": "sh", "args": ["-c", "echo a > acme/a; echo b > b; ls acme; ls"]})
                .to_string()
                .as_str(),
            &wider,
        )
        .await;
    assert_eq!(again.code(), Some(Code::CallIdConflict), "{again:?}");
    let digest = place.authority().narrow(&tenant).digest();
    let trail = ledger.trail("narrowing").await.unwrap();
    assert!(
        trail
            .iter()
            .any(|record| record.event.kind == AuditKind::Executed
                && record.event.note.as_deref() == Some(&format!("authority {digest}"))),
        "{trail:?}"
    );
}

#[tokio::test]
async fn a_handler_cannot_widen_its_authority() {
    if !kernel_ready("handler_widening").await {
        return;
    }
    let place = Place::new("widen");
    let runtime = runtime_for(place.authority(), Duration::from_secs(10));
    let everything = Authority::new()
        .read("/")
        .write("/")
        .processes(1 << 20)
        .network(tool_core::sandbox::Network::Allow(
            ["127.0.0.1:1".to_owned()].into(),
        ));
    let cx = Context::builder("tester")
        .extension(Workspace(place.ws()))
        .extension(Widen(everything))
        .build();
    let out = ran(&call(&runtime, &cx, "sh", &["-c", "echo x > ../outside/new.txt"]).await);
    assert_ne!(out["code"], 0, "{out}");
    let out = ran(&call(
        &runtime,
        &cx,
        PY,
        &["-c", PY_READ, &place.path("home/.ssh/id_rsa")],
    )
    .await);
    assert!(text(&out, "stdout").starts_with("refused"), "{out}");
    place.assert_outside_untouched();
}

#[tokio::test]
async fn the_agent_loop_runs_a_sandboxed_tool_unchanged() {
    use tool_core::ToolCall;
    use tool_core::agent::{Agent, RunEnd};
    use tool_core::model::{Message, Turn};
    use tool_core::testing::ScriptedTurns;

    if !kernel_ready("agent_loop").await {
        return;
    }
    let place = Place::new("agent");
    let runtime = runtime_for(place.authority(), Duration::from_secs(10));
    let key = place.path("home/.ssh/id_rsa");
    let read = serde_json::json!({"program": PY, "args": ["-c", PY_READ, key]}).to_string();
    let model = ScriptedTurns::new()
        .turn(Turn::calls([ToolCall::new(
            "a1",
            "run",
            r#"{"program": "sh", "args": ["-c", "echo $((6 * 7))"]}"#,
        )]))
        .turn(Turn::calls([ToolCall::new("a2", "run", read.as_str())]))
        .turn(Turn::answer("42; the key was out of reach."));
    let agent = Agent::new(runtime, model).max_steps(4);
    let report = agent
        .run(
            vec![Message::User {
                text: "compute 6 * 7, then read my key".into(),
            }],
            &context(&place),
        )
        .await;
    assert!(matches!(report.end, RunEnd::Answered), "{:?}", report.end);
    assert_eq!(report.outcomes.len(), 2);
    assert_eq!(text(&ran(&report.outcomes[0]), "stdout"), "42\n");
    assert!(text(&ran(&report.outcomes[1]), "stdout").starts_with("refused"));
    place.assert_outside_untouched();
}

#[tokio::test]
async fn a_tool_without_an_authority_runs_no_program() {
    tool_core::sandbox::use_launcher(env!("CARGO_BIN_EXE_sandbox_launcher"));
    let mut registry = Registry::new();
    registry.register(ToolDef::new(run)).unwrap();
    let runtime = Runtime::new(registry);
    let outcome = runtime
        .invoke(
            "c",
            "run",
            r#"{"program": "/bin/true", "args": []}"#,
            &Context::builder("tester").build(),
        )
        .await;
    assert_eq!(
        outcome.code(),
        Some(Code::SandboxUnavailable),
        "{outcome:?}"
    );
}
