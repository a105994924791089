//! The authority a tool's work may reach, as declared on the tool and narrowed by the trusted
//! context: what it may read and write, whether it reaches the network, how many processes it
//! may have, its resource limits and the environment it sees.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What the network may be reached for.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Network {
    /// No network at all: the work runs in a network namespace of its own, and opening a
    /// socket is refused. The default.
    None,
    /// Only these `host:port` pairs, exactly as written (`"api.example.com:443"`). The work
    /// still has no network of its own: it reaches them through an HTTP `CONNECT` proxy the
    /// runtime runs outside the sandbox, on the Unix socket named by the program's
    /// `TOOL_CORE_PROXY_SOCKET` variable, which refuses (`403`) every other target. Only Unix
    /// sockets can be opened.
    Allow(BTreeSet<String>),
}

/// A named weaker mode a tool accepts when the kernel cannot give everything its authority
/// asks for. Without one, a run the kernel cannot confine fully is refused
/// (`sandbox_unavailable`) and nothing starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Weaker {
    /// Run without user, mount, PID and network namespaces when they cannot be made. The
    /// filesystem and system-call rules still hold, sockets stay refused when the network is
    /// off (only Unix sockets open with an allow-list), and the process group is still killed
    /// as a whole; but the work shares the host's PID and network namespaces (processes it
    /// leaves behind die with the group, not with the program), and the process limit counts
    /// every process of the sandbox's user on the host.
    WithoutNamespaces,
}

impl Weaker {
    /// `"without_namespaces"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Weaker::WithoutNamespaces => "without_namespaces",
        }
    }
}

/// The authority a tool's work may reach: everything it does not name is unreachable.
///
/// Declared on the tool with [`ToolDef::authority`](crate::ToolDef::authority), shown in
/// [`ToolInfo::authority`](crate::registry::ToolInfo::authority), and bound by its
/// [digest](Self::digest) into the ledger's claim of each call and the call's audit record.
/// The trusted [`Context`](crate::Context) may [narrow](Self::narrow) it for a call (a
/// tenant's own workspace, a lower limit) and never widen it: a handler reads only the
/// narrowed one ([`Context::authority`](crate::Context::authority)), and programs it runs with
/// [`Context::run`](crate::Context::run) are confined to it by the kernel.
///
/// Paths are absolute, without `.` or `..`; a path names the file or the whole tree under
/// it. Limits start at safe defaults (64 processes, 1 GiB of address space, 30 s of CPU time,
/// 64 MiB per file written, 256 open files, 1 MiB of output) and can be set lower or higher.
///
/// ```
/// use std::path::Path;
/// use tool_core::sandbox::Authority;
///
/// let tool = Authority::new()
///     .read_system()
///     .write("/srv/workspaces")
///     .cpu_seconds(10)
///     .env("LANG");
/// // The context of one tenant's call: only its own workspace, and less CPU.
/// let tenant = Authority::new().read_system().write("/srv/workspaces/acme").cpu_seconds(5);
/// let call = tool.narrow(&tenant);
/// assert!(call.writable().any(|path| path == Path::new("/srv/workspaces/acme")));
/// assert!(!call.writable().any(|path| path == Path::new("/srv/workspaces")));
/// assert_eq!(call.limits().cpu_seconds, Some(5));
/// // Asking for more than the tool declares gives nothing more.
/// let wider = tool.narrow(&Authority::new().write("/").cpu_seconds(100));
/// assert!(wider.is_within(&tool));
/// assert_eq!(wider.limits().cpu_seconds, Some(10));
/// assert!(wider.readable().next().is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Authority {
    read: BTreeSet<PathBuf>,
    write: BTreeSet<PathBuf>,
    network: Network,
    limits: Limits,
    env: BTreeSet<String>,
    weaker: BTreeSet<Weaker>,
    /// Paths given that are not absolute and plain; every run is refused while any is here.
    invalid: BTreeSet<PathBuf>,
}

/// The resource limits of an [`Authority`]; `None` is no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Limits {
    /// Processes (and threads) the work may have at once; privileges are never gained.
    pub processes: Option<u64>,
    /// Bytes of address space per process.
    pub memory_bytes: Option<u64>,
    /// Seconds of CPU time per process.
    pub cpu_seconds: Option<u64>,
    /// Bytes of the largest file a process may write.
    pub file_size_bytes: Option<u64>,
    /// Files a process may have open at once.
    pub open_files: Option<u64>,
    /// Bytes of standard output and standard error, together, kept from one run.
    pub output_bytes: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            processes: Some(64),
            memory_bytes: Some(1 << 30),
            cpu_seconds: Some(30),
            file_size_bytes: Some(64 << 20),
            open_files: Some(256),
            output_bytes: Some(1 << 20),
        }
    }
}

/// The paths a program needs to start on a usual Linux system: the system's programs and
/// libraries, the loader's cache, and the harmless devices.
const SYSTEM_READ: [&str; 10] = [
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib64",
    "/etc/ld.so.cache",
    "/etc/alternatives",
    "/dev/null",
    "/dev/zero",
    "/dev/urandom",
];

impl Default for Authority {
    fn default() -> Self {
        Authority::new()
    }
}

impl Authority {
    /// Nothing readable or writable, no network, no environment, the default limits.
    pub fn new() -> Self {
        Authority {
            read: BTreeSet::new(),
            write: BTreeSet::new(),
            network: Network::None,
            limits: Limits::default(),
            env: BTreeSet::new(),
            weaker: BTreeSet::new(),
            invalid: BTreeSet::new(),
        }
    }

    /// `path` (a file, or a directory and everything under it) may be read and its programs
    /// run.
    pub fn read(mut self, path: impl AsRef<Path>) -> Self {
        let path = path.as_ref();
        if plain(path) {
            self.read.insert(path.to_owned());
        } else {
            self.invalid.insert(path.to_owned());
        }
        self
    }

    /// What programs need to start: `/usr`, `/bin`, `/sbin`, `/lib`, `/lib64`,
    /// `/etc/ld.so.cache`, `/etc/alternatives`, `/dev/null`, `/dev/zero` and `/dev/urandom`
    /// readable (and `/dev/null` writable).
    pub fn read_system(mut self) -> Self {
        for path in SYSTEM_READ {
            self.read.insert(PathBuf::from(path));
        }
        self.write.insert(PathBuf::from("/dev/null"));
        self
    }

    /// `path` (a file, or a directory and everything under it) may be read, written, created
    /// in and removed from.
    pub fn write(mut self, path: impl AsRef<Path>) -> Self {
        let path = path.as_ref();
        if plain(path) {
            self.write.insert(path.to_owned());
        } else {
            self.invalid.insert(path.to_owned());
        }
        self
    }

    /// The network the work may reach (default [`Network::None`]).
    pub fn network(mut self, network: Network) -> Self {
        self.network = network;
        self
    }

    /// At most `count` processes at once (default 64).
    pub fn processes(mut self, count: u64) -> Self {
        self.limits.processes = Some(count);
        self
    }

    /// At most `bytes` of address space per process (default 1 GiB).
    pub fn memory_bytes(mut self, bytes: u64) -> Self {
        self.limits.memory_bytes = Some(bytes);
        self
    }

    /// At most `seconds` of CPU time per process (default 30).
    pub fn cpu_seconds(mut self, seconds: u64) -> Self {
        self.limits.cpu_seconds = Some(seconds);
        self
    }

    /// Files written at most `bytes` long (default 64 MiB).
    pub fn file_size_bytes(mut self, bytes: u64) -> Self {
        self.limits.file_size_bytes = Some(bytes);
        self
    }

    /// At most `count` open files per process (default 256).
    pub fn open_files(mut self, count: u64) -> Self {
        self.limits.open_files = Some(count);
        self
    }

    /// At most `bytes` of output (stdout and stderr together) kept from one run; past it the
    /// work is stopped and the call ends as `resource_exhausted` (default 1 MiB).
    pub fn output_bytes(mut self, bytes: u64) -> Self {
        self.limits.output_bytes = Some(bytes);
        self
    }

    /// Passes the runtime's environment variable `name` through; every other is cleared.
    pub fn env(mut self, name: impl Into<String>) -> Self {
        self.env.insert(name.into());
        self
    }

    /// Accepts the named weaker mode where the kernel cannot give everything (see [`Weaker`]).
    pub fn accept(mut self, weaker: Weaker) -> Self {
        self.weaker.insert(weaker);
        self
    }

    /// The readable paths (writable ones are readable too, and not repeated here).
    pub fn readable(&self) -> impl Iterator<Item = &Path> {
        self.read.iter().map(PathBuf::as_path)
    }

    /// The writable paths.
    pub fn writable(&self) -> impl Iterator<Item = &Path> {
        self.write.iter().map(PathBuf::as_path)
    }

    /// The network the work may reach.
    pub fn network_access(&self) -> &Network {
        &self.network
    }

    /// The resource limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The environment variables passed through.
    pub fn env_names(&self) -> impl Iterator<Item = &str> {
        self.env.iter().map(String::as_str)
    }

    /// The weaker modes accepted.
    pub fn accepted(&self) -> impl Iterator<Item = Weaker> + '_ {
        self.weaker.iter().copied()
    }

    /// Paths given that are not absolute or contain `.` or `..`: while there are any, every
    /// run is refused.
    pub fn invalid_paths(&self) -> impl Iterator<Item = &Path> {
        self.invalid.iter().map(PathBuf::as_path)
    }

    /// What both `self` and `other` allow, and no more: the paths of one that lie within a
    /// path of the other, the lower of each limit, the variables and weaker modes both name,
    /// the network both reach. Narrowing never widens, whatever `other` asks for.
    pub fn narrow(&self, other: &Authority) -> Authority {
        Authority {
            read: within(&self.read, &other.read),
            write: within(&self.write, &other.write),
            network: match (&self.network, &other.network) {
                (Network::Allow(mine), Network::Allow(theirs)) => {
                    Network::Allow(mine.intersection(theirs).cloned().collect())
                }
                _ => Network::None,
            },
            limits: Limits {
                processes: lower(self.limits.processes, other.limits.processes),
                memory_bytes: lower(self.limits.memory_bytes, other.limits.memory_bytes),
                cpu_seconds: lower(self.limits.cpu_seconds, other.limits.cpu_seconds),
                file_size_bytes: lower(self.limits.file_size_bytes, other.limits.file_size_bytes),
                open_files: lower(self.limits.open_files, other.limits.open_files),
                output_bytes: lower(self.limits.output_bytes, other.limits.output_bytes),
            },
            env: self.env.intersection(&other.env).cloned().collect(),
            weaker: self.weaker.intersection(&other.weaker).cloned().collect(),
            invalid: self.invalid.union(&other.invalid).cloned().collect(),
        }
    }

    /// Whether everything `self` allows, `wider` allows too.
    pub fn is_within(&self, wider: &Authority) -> bool {
        wider.narrow(self) == *self
    }

    /// A stable digest of the authority: SHA-256 (hex) of its canonical JSON. Equal
    /// authorities have equal digests, whatever order they were declared in.
    pub fn digest(&self) -> String {
        crate::digest::contract_hash(&self.to_json())
    }

    /// The authority as JSON, as [`ToolInfo`](crate::registry::ToolInfo) shows it.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

/// An absolute path with no `.` or `..` in it.
fn plain(path: &Path) -> bool {
    path.is_absolute()
        && path
            .components()
            .all(|part| matches!(part, Component::RootDir | Component::Normal(_)))
}

/// The paths of each set that lie within a path of the other.
fn within(a: &BTreeSet<PathBuf>, b: &BTreeSet<PathBuf>) -> BTreeSet<PathBuf> {
    let inside = |path: &PathBuf, of: &BTreeSet<PathBuf>| of.iter().any(|o| path.starts_with(o));
    a.iter()
        .filter(|path| inside(path, b))
        .chain(b.iter().filter(|path| inside(path, a)))
        .cloned()
        .collect()
}

fn lower(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (one, None) | (None, one) => one,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wide() -> Authority {
        Authority::new()
            .read("/usr")
            .write("/work")
            .env("LANG")
            .env("HOME")
            .cpu_seconds(10)
            .accept(Weaker::WithoutNamespaces)
    }

    #[test]
    fn narrowing_never_widens_whatever_is_asked() {
        let asked = Authority::new()
            .read("/")
            .write("/")
            .write("/etc")
            .env("LANG")
            .env("AWS_SECRET_ACCESS_KEY")
            .cpu_seconds(1000)
            .processes(100_000)
            .network(Network::Allow(["evil.example:443".to_owned()].into()));
        let narrowed = wide().narrow(&asked);
        assert!(narrowed.is_within(&wide()));
        assert_eq!(narrowed.readable().collect::<Vec<_>>(), [Path::new("/usr")]);
        assert_eq!(
            narrowed.writable().collect::<Vec<_>>(),
            [Path::new("/work")]
        );
        assert_eq!(narrowed.env_names().collect::<Vec<_>>(), ["LANG"]);
        assert_eq!(narrowed.limits().cpu_seconds, Some(10));
        assert_eq!(narrowed.limits().processes, Some(64));
        assert_eq!(narrowed.network_access(), &Network::None);
        assert_eq!(narrowed.accepted().count(), 0);
    }

    #[test]
    fn narrowing_keeps_sub_paths_and_lower_limits() {
        let narrowed = wide().narrow(
            &Authority::new()
                .write("/work/acme")
                .write("/workshop")
                .cpu_seconds(2),
        );
        assert_eq!(
            narrowed.writable().collect::<Vec<_>>(),
            [Path::new("/work/acme")]
        );
        assert_eq!(narrowed.limits().cpu_seconds, Some(2));
        assert!(narrowed.is_within(&wide()));
        assert!(!wide().is_within(&narrowed));
    }

    #[test]
    fn paths_with_dot_dot_or_relative_are_invalid() {
        let authority = Authority::new().write("/work/../etc").read("relative");
        assert_eq!(authority.writable().count(), 0);
        assert_eq!(authority.invalid_paths().count(), 2);
        // Narrowing keeps them, so the run stays refused.
        assert_eq!(wide().narrow(&authority).invalid_paths().count(), 2);
    }

    #[test]
    fn digest_is_stable_and_tells_authorities_apart() {
        let a = Authority::new().read("/a").read("/b");
        let b = Authority::new().read("/b").read("/a");
        assert_eq!(a.digest(), b.digest());
        assert_eq!(a.digest().len(), 64);
        assert_ne!(a.digest(), a.clone().cpu_seconds(1).digest());
    }
}
