//! The seccomp-bpf filters the launcher installs on itself before it starts the program.

use std::collections::BTreeMap;

use nix::libc;

use super::authority::Network;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// System calls no sandboxed program needs and that reach past its authority: tracing,
/// mounting, kernel keys and modules, BPF, namespaces, other processes' memory, io_uring
/// (whose operations seccomp does not see), and leaving the process group that is killed.
const DENIED: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_mount_setattr,
    libc::SYS_bpf,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_perf_event_open,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_userfaultfd,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_setsid,
    libc::SYS_setpgid,
];

/// The `clone` flags that make namespaces.
const NAMESPACE_FLAGS: [libc::c_int; 7] = [
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNS,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWCGROUP,
];

/// Installs the filters (which also sets `no_new_privs`): the calls above fail with `EPERM`,
/// `socket` too (for every family without a network, for all but Unix sockets with an
/// allow-list), and `clone3` with `ENOSYS`, since its flags cannot be
/// inspected and C libraries fall back to `clone` then.
pub(super) fn apply(network: &Network) -> Result<(), String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(failed)?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        DENIED.iter().map(|&call| (nr(call), Vec::new())).collect();
    let socket = match network {
        // No socket at all.
        Network::None => Vec::new(),
        // Unix sockets only: the proxy's is the way out.
        Network::Allow(_) => vec![
            SeccompCondition::new(
                0,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Ne,
                libc::AF_UNIX as u64,
            )
            .and_then(|condition| SeccompRule::new(vec![condition]))
            .map_err(failed)?,
        ],
    };
    rules.insert(nr(libc::SYS_socket), socket);
    let clone = NAMESPACE_FLAGS
        .iter()
        .map(|&flag| {
            let flag = flag as u64;
            SeccompCondition::new(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(flag),
                flag,
            )
            .and_then(|condition| SeccompRule::new(vec![condition]))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(failed)?;
    rules.insert(nr(libc::SYS_clone), clone);
    let eperm = program(rules, libc::EPERM, arch).map_err(failed)?;
    let enosys = program(
        BTreeMap::from([(nr(libc::SYS_clone3), Vec::new())]),
        libc::ENOSYS,
        arch,
    )
    .map_err(failed)?;
    seccompiler::apply_filter(&eperm).map_err(failed)?;
    seccompiler::apply_filter(&enosys).map_err(failed)
}

/// A system call's number as seccompiler takes it.
// `c_long` is `i64` on the 64-bit targets seccompiler supports, but not everywhere.
#[allow(clippy::useless_conversion)]
fn nr(call: libc::c_long) -> i64 {
    i64::from(call)
}

fn failed(error: impl std::fmt::Display) -> String {
    format!("seccomp refused: {error}")
}

fn program(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    errno: libc::c_int,
    arch: TargetArch,
) -> Result<BpfProgram, seccompiler::Error> {
    let errno = u32::try_from(errno).unwrap_or(1);
    SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno),
        arch,
    )?
    .try_into()
    .map_err(seccompiler::Error::Backend)
}
