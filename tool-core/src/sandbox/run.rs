//! A program a handler runs, its run under the call's authority, and how it ended.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::authority::Authority;
use crate::outcome::Code;

/// A program to run confined to the call's authority: the program and its arguments as a
/// vector, never through a shell (run a shell explicitly, `sh -c`, only in a tool that is
/// one), optional standard input, and the directory to run in.
///
/// Run it with [`Context::run`](crate::Context::run).
#[derive(Clone)]
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub struct Command {
    program: OsString,
    args: Vec<String>,
    stdin: Option<Vec<u8>>,
    cwd: Option<PathBuf>,
    missing: Vec<String>,
}

impl Command {
    /// Runs `program`: a path, or a name looked up in the runtime's `PATH`.
    pub fn new(program: impl Into<OsString>) -> Self {
        Command {
            program: program.into(),
            args: Vec::new(),
            stdin: None,
            cwd: None,
            missing: Vec::new(),
        }
    }

    /// Adds one argument, passed as it is.
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments, each passed as it is.
    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// The program's standard input (default: empty).
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(bytes.into());
        self
    }

    /// The directory the program runs in (default `/`); it must be reachable under the
    /// authority.
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Behaves as if the kernel lacked `feature` (`"landlock"`, `"seccomp"` or
    /// `"namespaces"`), to test what a tool does where it is missing.
    #[doc(hidden)]
    pub fn assume_missing(mut self, feature: &str) -> Self {
        self.missing.push(feature.to_owned());
        self
    }
}

impl fmt::Debug for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Command")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("stdin", &self.stdin.as_ref().map(Vec::len))
            .field("current_dir", &self.cwd)
            .finish()
    }
}

/// A program that ran to its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    code: Option<i32>,
    signal: Option<i32>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

impl Finished {
    /// Whether the program exited with status 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// Its exit status, if it exited.
    pub fn code(&self) -> Option<i32> {
        self.code
    }

    /// The signal that ended it, if one did.
    pub fn signal(&self) -> Option<i32> {
        self.signal
    }

    /// Its standard output.
    pub fn stdout(&self) -> &[u8] {
        &self.stdout
    }

    /// Its standard error.
    pub fn stderr(&self) -> &[u8] {
        &self.stderr
    }

    /// Its standard output as text (invalid UTF-8 replaced).
    pub fn stdout_lossy(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// Its standard error as text (invalid UTF-8 replaced).
    pub fn stderr_lossy(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

/// Why a sandboxed program did not run to its end: the sandbox is unavailable
/// ([`Code::SandboxUnavailable`], the program never started), a limit stopped it
/// ([`Code::ResourceExhausted`]), the call was cancelled ([`Code::Cancelled`]) or it could not
/// be started ([`Code::ExecutionFailed`]).
///
/// With `?` in a handler it becomes a [`ToolError`](crate::registry::ToolError) that ends the
/// call with the same code and a message saying what was refused or cut. It is deliberately
/// not a `std::error::Error`, so that `?` keeps its code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxError {
    code: Code,
    message: String,
    detail: Option<String>,
    partial: Option<Finished>,
}

impl SandboxError {
    fn new(code: Code, message: impl Into<String>) -> Self {
        SandboxError {
            code,
            message: message.into(),
            detail: None,
            partial: None,
        }
    }

    pub(crate) fn unavailable(message: impl Into<String>) -> Self {
        SandboxError::new(Code::SandboxUnavailable, message)
    }

    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// The code the call ends with.
    pub fn code(&self) -> Code {
        self.code
    }

    /// What was refused or cut, safe to show the model.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Detail for the operator, if any.
    pub fn detail(&self) -> Option<&str> {
        self.detail.as_deref()
    }

    /// What the program wrote before a limit stopped it (output cut at its cap), and how it
    /// ended.
    pub fn partial(&self) -> Option<&Finished> {
        self.partial.as_ref()
    }
}

impl fmt::Display for SandboxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

/// What the launcher is asked to do.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
#[derive(Serialize, Deserialize)]
pub(super) struct Plan {
    pub(super) program: PathBuf,
    pub(super) args: Vec<String>,
    pub(super) cwd: PathBuf,
    /// The variables the launcher passes on from its own environment (their values travel
    /// there, not in the command line that other users can read).
    pub(super) env: Vec<String>,
    pub(super) authority: Authority,
    pub(super) missing: Vec<String>,
}

/// The first line the launcher writes: that it confined itself and starts the program, or why
/// it could not.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(super) const HEADER: &str = "tool-core-sandbox";

/// The launcher's exit status when it refused to start the program.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(super) const REFUSED: i32 = 125;

/// Runs `command` confined to `authority` (the call's effective one), until it ends or
/// `cancel` fires.
pub(crate) async fn run(
    command: Command,
    authority: Option<&Authority>,
    cancel: &CancellationToken,
) -> Result<Finished, SandboxError> {
    let Some(authority) = authority else {
        return Err(SandboxError::unavailable(
            "this tool declares no authority, so it cannot run programs",
        ));
    };
    if let Some(path) = authority.invalid_paths().next() {
        return Err(SandboxError::unavailable(format!(
            "the authority names {}, which is not an absolute path without `.` or `..`",
            path.display()
        )));
    }
    imp::run(command, authority, cancel).await
}

/// The program's path: as given when it has a `/`, else the first in the runtime's `PATH`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn resolve(program: &OsString) -> Option<PathBuf> {
    let path = Path::new(program);
    if path.components().count() > 1 {
        return Some(path.to_owned());
    }
    let search = std::env::var_os("PATH")?;
    std::env::split_paths(&search)
        .map(|dir| dir.join(path))
        .find(|candidate| candidate.is_file())
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::*;

    pub(super) async fn run(
        _: Command,
        _: &Authority,
        _: &CancellationToken,
    ) -> Result<Finished, SandboxError> {
        Err(SandboxError::unavailable(
            "this platform has no sandbox for programs; nothing was run",
        ))
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use std::os::unix::process::ExitStatusExt as _;
    use std::process::Stdio;

    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;
    use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};

    use super::*;
    use crate::sandbox::authority::Network;
    use crate::sandbox::proxy::{self, Proxy};

    /// The launcher's process group, killed as a whole when dropped: when the call ends, times
    /// out or is cancelled, nothing it started survives it.
    struct Group(Option<i32>);

    impl Group {
        fn kill(&mut self) {
            if let Some(id) = self.0.take() {
                let _ = killpg(Pid::from_raw(id), Signal::SIGKILL);
            }
        }
    }

    impl Drop for Group {
        fn drop(&mut self) {
            self.kill();
        }
    }

    pub(super) async fn run(
        command: Command,
        authority: &Authority,
        cancel: &CancellationToken,
    ) -> Result<Finished, SandboxError> {
        let Some(launcher) = super::super::LAUNCHER.get() else {
            return Err(SandboxError::unavailable(
                "no sandbox launcher: call tool_core::sandbox::enter_if_launched() first in main",
            ));
        };
        let Some(program) = resolve(&command.program) else {
            return Err(SandboxError::new(
                Code::ExecutionFailed,
                format!("no program {:?} was found", command.program),
            ));
        };
        let mut env: Vec<(String, String)> = authority
            .env_names()
            .filter_map(|name| Some((name.to_owned(), std::env::var(name).ok()?)))
            .collect();
        // An allow-list is reached through a proxy outside the sandbox, held until the run ends.
        let proxy = match authority.network_access() {
            Network::None => None,
            Network::Allow(allowed) => {
                let proxy = Proxy::start(allowed).map_err(|error| {
                    SandboxError::unavailable("the network proxy could not be started")
                        .with_detail(error.to_string())
                })?;
                env.push((
                    proxy::SOCKET_VAR.to_owned(),
                    proxy.socket().display().to_string(),
                ));
                Some(proxy)
            }
        };
        let plan = Plan {
            program,
            args: command.args,
            cwd: command.cwd.unwrap_or_else(|| PathBuf::from("/")),
            env: env.iter().map(|(name, _)| name.clone()).collect(),
            authority: authority.clone(),
            missing: command.missing,
        };
        let plan = serde_json::to_string(&plan).map_err(|error| {
            SandboxError::unavailable("the run could not be planned").with_detail(error.to_string())
        })?;
        let mut child = tokio::process::Command::new(launcher)
            .arg(super::super::MARKER)
            .arg(plan)
            .env_clear()
            .envs(env)
            .process_group(0)
            .stdin(if command.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|error| {
                SandboxError::unavailable("the sandbox launcher could not be started")
                    .with_detail(format!("{}: {error}", launcher.display()))
            })?;
        let mut group = Group(child.id().and_then(|id| i32::try_from(id).ok()));
        let (Some(stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(SandboxError::unavailable(
                "the sandbox launcher has no output",
            ));
        };
        let mut stdout = BufReader::new(stdout);

        // The launcher's first line: whether it confined itself.
        let mut header = Vec::new();
        let read = {
            let mut first = (&mut stdout).take(4096);
            tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(cancelled()),
                read = first.read_until(b'\n', &mut header) => read,
            }
        };
        let header = String::from_utf8_lossy(&header);
        let header = header.trim_end();
        match header.strip_prefix(HEADER).map(str::trim_start) {
            Some(rest) if rest == "ok" || rest.starts_with("ok ") => {}
            Some(rest) => {
                let reason = rest.strip_prefix("unavailable").unwrap_or(rest).trim();
                return Err(SandboxError::unavailable(format!(
                    "the sandbox is unavailable here: {reason}; nothing was run"
                )));
            }
            None => {
                let mut err = Vec::new();
                let _ = (&mut stderr).take(4096).read_to_end(&mut err).await;
                return Err(
                    SandboxError::unavailable("the sandbox launcher failed").with_detail(format!(
                        "{read:?}; header {header:?}; stderr {:?}",
                        String::from_utf8_lossy(&err)
                    )),
                );
            }
        }

        if let (Some(mut input), Some(bytes)) = (child.stdin.take(), command.stdin) {
            // A program that does not read its input must not hold the run up.
            tokio::spawn(async move {
                let _ = input.write_all(&bytes).await;
            });
        }

        let cap = authority
            .limits()
            .output_bytes
            .and_then(|cap| usize::try_from(cap).ok())
            .unwrap_or(usize::MAX);
        let mut out = Vec::new();
        let mut err = Vec::new();
        let (mut out_open, mut err_open) = (true, true);
        let mut status = None;
        let mut cut = false;
        let mut a = vec![0; 16 * 1024];
        let mut b = vec![0; 16 * 1024];
        while out_open || err_open || status.is_none() {
            tokio::select! {
                biased;
                () = cancel.cancelled() => {
                    group.kill();
                    return Err(cancelled());
                }
                read = stdout.read(&mut a), if out_open => match read {
                    Ok(0) | Err(_) => out_open = false,
                    Ok(n) => out.extend_from_slice(&a[..n]),
                },
                read = stderr.read(&mut b), if err_open => match read {
                    Ok(0) | Err(_) => err_open = false,
                    Ok(n) => err.extend_from_slice(&b[..n]),
                },
                ended = child.wait(), if status.is_none() => {
                    status = Some(ended);
                    // Whatever the program left behind goes with it.
                    group.kill();
                }
            }
            if out.len().saturating_add(err.len()) > cap {
                cut = true;
                group.kill();
                let keep = cap.min(out.len());
                out.truncate(keep);
                err.truncate(cap - keep);
                if status.is_none() {
                    status = Some(child.wait().await);
                }
                break;
            }
        }
        let status = match status {
            Some(Ok(status)) => status,
            _ => {
                return Err(SandboxError::new(
                    Code::ExecutionFailed,
                    "the sandboxed program's end could not be observed",
                ));
            }
        };
        // The launcher exits with the program's status, or 128 and the signal that ended it.
        let (code, signal) = match (status.code(), status.signal()) {
            (Some(code), _) if code > 128 && code < 128 + 65 => (None, Some(code - 128)),
            (code, signal) => (code, signal),
        };
        let finished = Finished {
            code,
            signal,
            stdout: out,
            stderr: err,
        };
        drop(proxy);
        let limits = authority.limits();
        let exhausted = if cut {
            Some(format!(
                "its output went over {cap} bytes; it was stopped and the output cut there"
            ))
        } else if signal == Some(Signal::SIGXCPU as i32) {
            Some(format!(
                "it used more than {} s of CPU time and was stopped",
                limits.cpu_seconds.unwrap_or(0)
            ))
        } else if signal == Some(Signal::SIGXFSZ as i32) {
            Some(format!(
                "it wrote a file over {} bytes and was stopped",
                limits.file_size_bytes.unwrap_or(0)
            ))
        } else {
            None
        };
        match exhausted {
            Some(what) => Err(SandboxError {
                code: Code::ResourceExhausted,
                message: format!("the sandboxed program hit a limit: {what}"),
                detail: None,
                partial: Some(finished),
            }),
            None => Ok(finished),
        }
    }

    fn cancelled() -> SandboxError {
        SandboxError::new(
            Code::Cancelled,
            "the call was cancelled; the sandboxed program was stopped",
        )
    }
}
