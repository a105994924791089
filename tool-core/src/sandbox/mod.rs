//! Reachable authority: what a tool's work may touch, declared on the tool and enforced by the
//! kernel.
//!
//! A tool declares an [`Authority`] ([`ToolDef::authority`](crate::ToolDef::authority)): the
//! paths it may read and write, its network (none, or an allow-list of `host:port`), how many
//! processes it may have,
//! its resource limits and the environment variables it sees. The trusted
//! [`Context`](crate::Context) may narrow it for a call, never widen it. A handler runs
//! programs with [`Context::run`](crate::Context::run), and each runs confined to the call's
//! effective authority:
//!
//! - **Landlock** allows only the declared paths (reading, writing, creating, renaming,
//!   linking, truncating), and no TCP connect or bind where the kernel supports it; on kernels
//!   with scoping, no signals and no abstract sockets outside the sandbox.
//! - **seccomp-bpf** refuses `ptrace`, `mount` and `umount2`, `pivot_root`, `chroot`, `bpf`,
//!   `keyctl` and its kin, `kexec_*`, module loading, `unshare`, `setns` and namespace flags to
//!   `clone` (`clone3` is answered `ENOSYS`, so programs fall back to `clone`),
//!   `perf_event_open`, `process_vm_*`, `userfaultfd`, `io_uring_*`, `setsid` and `setpgid`
//!   (so no process leaves the group that is killed), and `socket` for every address family
//!   when the network is off, for all but Unix sockets with an allow-list. `socketpair` stays
//!   allowed: the pair reaches only the program itself.
//! - **Namespaces**: a user namespace of its own, with mount, PID, network, IPC and UTS ones;
//!   the program is PID 1 of its PID namespace, so when it ends every process it left behind
//!   is killed by the kernel.
//! - **Privileges**: `no_new_privs` (setuid programs gain nothing), and a runtime running as
//!   root runs its sandboxes as `nobody` (65534), so that the process limit holds and root's
//!   files stay root's. Writable paths must then be writable by that user.
//! - **Network allow-list**: the work still has no network of its own; an HTTP `CONNECT` proxy
//!   the runtime runs outside the sandbox, on a Unix socket whose path the program finds in
//!   `TOOL_CORE_PROXY_SOCKET`, opens tunnels to the listed `host:port` pairs only. Landlock
//!   (through ABI 7) does not restrict connecting to Unix sockets, so other sockets on the
//!   filesystem that the sandbox's user may write to stay reachable with an allow-list.
//! - **rlimits** for processes, address space, CPU time, file size and open files; the
//!   output is cut at its cap.
//! - The launcher and the program are one **process group**, killed as a whole when the call
//!   ends, times out or is cancelled: no process outlives the call.
//!
//! The confinement is applied by a small launcher, the application's own executable started
//! again: call [`enter_if_launched`] first thing in `main` (or name another executable that
//! does with [`use_launcher`]). The launcher is single-threaded when it confines itself, uses
//! only the safe APIs of the `landlock`, `seccompiler` and `nix` crates, and then starts the
//! program; the crate keeps `unsafe` out entirely.
//!
//! **Fail closed.** When the kernel lacks what the authority needs (Landlock, seccomp, user
//! namespaces) the call ends as `sandbox_unavailable` and the program never starts, unless the
//! tool [accepts](Authority::accept) a named [weaker mode](Weaker) that fits. Other platforms
//! compile and refuse every run.
//!
//! ```no_run
//! use tool_core::sandbox::{self, Authority, Command};
//! use tool_core::{Context, Tool, ToolDef, registry::ToolError};
//!
//! /// Runs a Python snippet in the workspace.
//! #[derive(Tool, Debug)]
//! struct RunPython {
//!     code: String,
//! }
//!
//! async fn run_python(args: RunPython, cx: &Context) -> Result<String, ToolError> {
//!     let done = cx.run(Command::new("python3").arg("-c").arg(args.code)).await?;
//!     Ok(done.stdout_lossy())
//! }
//!
//! fn main() {
//!     sandbox::enter_if_launched();
//!     let tool = ToolDef::new(run_python)
//!         .authority(Authority::new().read_system().write("/srv/workspace"));
//!     # drop(tool);
//! }
//! ```

mod authority;
mod run;

#[cfg(target_os = "linux")]
mod filter;
#[cfg(target_os = "linux")]
mod launch;
#[cfg(target_os = "linux")]
mod proxy;

pub use authority::{Authority, Limits, Network, Weaker};
pub(crate) use run::run;
pub use run::{Command, Finished, SandboxError};

use std::path::PathBuf;
use std::sync::OnceLock;

/// The first argument that makes an executable the launcher.
const MARKER: &str = "--tool-core-sandbox-launch";

/// The executable started as the launcher.
static LAUNCHER: OnceLock<PathBuf> = OnceLock::new();

/// Makes this executable the sandbox's launcher. Call it first thing in `main`, before any
/// thread starts: when the process was started as a launcher, it confines itself, runs the
/// program and exits with its status, never returning; otherwise it notes this executable as
/// the launcher and returns at once.
pub fn enter_if_launched() {
    if std::env::args_os()
        .nth(1)
        .is_some_and(|first| first == MARKER)
    {
        #[cfg(target_os = "linux")]
        launch::launch();
        #[cfg(not(target_os = "linux"))]
        std::process::exit(125);
    }
    if let Ok(exe) = std::env::current_exe() {
        let _ = LAUNCHER.set(exe);
    }
}

/// Uses `executable` as the launcher: a program whose `main` calls [`enter_if_launched`]
/// first. For processes whose own `main` cannot (test harnesses). The first launcher named
/// is kept.
pub fn use_launcher(executable: impl Into<PathBuf>) {
    let _ = LAUNCHER.set(executable.into());
}
