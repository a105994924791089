//! The launcher: a fresh, single-threaded process that confines itself to the plan's
//! authority (ids, namespaces, rlimits, Landlock, seccomp, in that order) and then starts the
//! program and waits for it. Everything here runs in the launcher only.

use std::io::Write as _;
use std::os::unix::process::ExitStatusExt as _;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
};
use nix::libc;
use nix::sched::{CloneFlags, unshare};
use nix::sys::resource::{Resource, UsageWho, getrlimit, getrusage, setrlimit};
use nix::unistd::{Gid, Uid, getegid, geteuid, setgroups, setresgid, setresuid};

use super::authority::Weaker;
use super::run::{HEADER, Plan, REFUSED};

/// The user a runtime running as root runs its sandboxes as.
const NOBODY: u32 = 65534;

/// Confines this process to the plan given on the command line, runs the program and exits
/// with its status (128 and the signal when a signal ended it); on a refusal, writes why as
/// the first line of standard output and exits with [`REFUSED`].
pub(super) fn launch() -> ! {
    let code = match confine_and_run() {
        Ok(code) => code,
        Err(reason) => {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{HEADER} unavailable {reason}");
            let _ = out.flush();
            REFUSED
        }
    };
    std::process::exit(code)
}

fn confine_and_run() -> Result<i32, String> {
    close_inherited();
    let plan = std::env::args()
        .nth(2)
        .ok_or_else(|| "the launcher was given no plan".to_owned())?;
    let plan: Plan =
        serde_json::from_str(&plan).map_err(|error| format!("the plan is unreadable: {error}"))?;
    let missing = |feature: &str| plan.missing.iter().any(|m| m == feature);
    let authority = &plan.authority;
    let mut notes = Vec::new();

    let root = geteuid().is_root();
    if root {
        drop_root()?;
    }
    let namespaces = if missing("namespaces") {
        Err("user namespaces are not available (assumed missing)".to_owned())
    } else {
        enter_namespaces()
    };
    if let Err(why) = namespaces {
        if authority
            .accepted()
            .any(|weaker| weaker == Weaker::WithoutNamespaces)
        {
            notes.push(Weaker::WithoutNamespaces.as_str());
        } else {
            return Err(format!(
                "{why}, and the tool does not accept running `without_namespaces`"
            ));
        }
    }
    set_limits(authority.limits())?;
    if missing("landlock") {
        return Err("Landlock is not available (assumed missing)".to_owned());
    }
    restrict_paths(&plan)?;
    if missing("seccomp") {
        return Err("seccomp is not available (assumed missing)".to_owned());
    }
    super::filter::apply(authority.network_access())?;

    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{HEADER} ok {}", notes.join(" "));
    let _ = out.flush();
    drop(out);

    let started = std::process::Command::new(&plan.program)
        .args(&plan.args)
        .env_clear()
        .envs(
            plan.env
                .iter()
                .filter_map(|name| Some((name, std::env::var_os(name)?))),
        )
        .current_dir(&plan.cwd)
        .spawn();
    let mut child = match started {
        Ok(child) => child,
        Err(error) => {
            let _ = writeln!(
                std::io::stderr(),
                "{}: could not start: {error}",
                plan.program.display()
            );
            return Ok(127);
        }
    };
    Ok(match child.wait() {
        Ok(status) => match (status.code(), status.signal()) {
            (Some(code), _) => code,
            // The kernel kills a program that ignores SIGXCPU at the hard limit: say it was
            // the CPU limit when the CPU time says so.
            (None, Some(signal))
                if signal == libc::SIGKILL && cpu_spent(authority.limits().cpu_seconds) =>
            {
                128 + libc::SIGXCPU
            }
            (None, Some(signal)) => 128 + signal,
            (None, None) => 1,
        },
        Err(_) => 1,
    })
}

/// Whether the program and the processes it waited for used up `limit` seconds of CPU time.
fn cpu_spent(limit: Option<u64>) -> bool {
    let Some(limit) = limit else {
        return false;
    };
    getrusage(UsageWho::RUSAGE_CHILDREN).is_ok_and(|usage| {
        let spent = usage.user_time() + usage.system_time();
        u64::try_from(spent.tv_sec()).is_ok_and(|seconds| seconds >= limit)
    })
}

/// Closes every descriptor but standard input, output and error: nothing the runtime held
/// open (a ledger's file, a socket) reaches the program, even one opened without
/// close-on-exec.
fn close_inherited() {
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let fds: Vec<i32> = entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .filter(|fd| *fd > 2)
        .collect();
    for fd in fds {
        // The directory's own descriptor is closed already; closing it again fails harmlessly.
        let _ = nix::unistd::close(fd);
    }
}

/// A runtime running as root runs its sandboxes as `nobody`: root is exempt from the process
/// limit, and owns the files a sandbox must not touch.
fn drop_root() -> Result<(), String> {
    let nobody = (Uid::from_raw(NOBODY), Gid::from_raw(NOBODY));
    setgroups(&[])
        .and_then(|()| setresgid(nobody.1, nobody.1, nobody.1))
        .and_then(|()| setresuid(nobody.0, nobody.0, nobody.0))
        .map_err(|error| format!("could not stop being root: {error}"))?;
    // Changing ids made the process undumpable, which hides its /proc files from itself.
    nix::sys::prctl::set_dumpable(true)
        .map_err(|error| format!("could not stop being root: {error}"))
}

/// A user namespace of its own (mapping only the current user), with mount, PID, network, IPC
/// and UTS namespaces: the program is PID 1 of its PID namespace and has no network.
fn enter_namespaces() -> Result<(), String> {
    let (uid, gid) = (geteuid(), getegid());
    unshare(
        CloneFlags::CLONE_NEWUSER
            | CloneFlags::CLONE_NEWNS
            | CloneFlags::CLONE_NEWPID
            | CloneFlags::CLONE_NEWNET
            | CloneFlags::CLONE_NEWIPC
            | CloneFlags::CLONE_NEWUTS,
    )
    .map_err(|error| format!("user namespaces are not available: {error}"))?;
    let write = |file: &str, text: String| {
        std::fs::write(file, text)
            .map_err(|error| format!("the user namespace could not be set up ({file}): {error}"))
    };
    write("/proc/self/uid_map", format!("{uid} {uid} 1\n"))?;
    write("/proc/self/setgroups", "deny".to_owned())?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1\n"))
}

fn set_limits(limits: &super::Limits) -> Result<(), String> {
    let set = |resource: Resource, what: &str, soft: u64, hard: u64| {
        // A limit can only be lowered: one above the current hard limit is that limit.
        let (_, current) = getrlimit(resource).unwrap_or((u64::MAX, u64::MAX));
        setrlimit(resource, soft.min(current), hard.min(current))
            .map_err(|error| format!("the {what} limit could not be set: {error}"))
    };
    if let Some(count) = limits.processes {
        // One more for the launcher itself.
        let count = count.saturating_add(1);
        set(Resource::RLIMIT_NPROC, "process", count, count)?;
    }
    if let Some(bytes) = limits.memory_bytes {
        set(Resource::RLIMIT_AS, "memory", bytes, bytes)?;
    }
    if let Some(seconds) = limits.cpu_seconds {
        // SIGXCPU at the limit, SIGKILL a second later for a program that ignores it.
        set(
            Resource::RLIMIT_CPU,
            "CPU time",
            seconds,
            seconds.saturating_add(1),
        )?;
    }
    if let Some(bytes) = limits.file_size_bytes {
        set(Resource::RLIMIT_FSIZE, "file size", bytes, bytes)?;
    }
    if let Some(count) = limits.open_files {
        set(Resource::RLIMIT_NOFILE, "open files", count, count)?;
    }
    set(Resource::RLIMIT_CORE, "core file", 0, 0)
}

/// Landlock: only the plan's paths are reachable. The filesystem rights of ABI 3 (through
/// truncation) are required; newer rights, TCP rules and scoping are applied where the kernel
/// has them.
fn restrict_paths(plan: &Plan) -> Result<(), String> {
    let unavailable = |error: landlock::RulesetError| format!("Landlock refused: {error}");
    let latest = ABI::V6;
    let ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V3))
        .map_err(unavailable)?
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(latest))
        .map_err(unavailable)?
        .scope(Scope::from_all(latest))
        .map_err(unavailable)?;
    // No TCP either way: an allow-list is reached through the proxy's Unix socket.
    let status = ruleset
        .handle_access(AccessNet::from_all(latest))
        .map_err(unavailable)?
        .create()
        .map_err(unavailable)?
        .add_rules(path_beneath_rules(
            plan.authority.readable(),
            AccessFs::from_read(latest),
        ))
        .map_err(unavailable)?
        .add_rules(path_beneath_rules(
            plan.authority.writable(),
            AccessFs::from_all(latest),
        ))
        .map_err(unavailable)?
        .restrict_self()
        .map_err(unavailable)?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err("Landlock is not enforced by this kernel".to_owned());
    }
    Ok(())
}
