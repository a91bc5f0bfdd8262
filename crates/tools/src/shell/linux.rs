//! The Linux shell sandbox: Landlock for the file system and TCP, a seccomp filter for every
//! other way onto the network, both applied to the child only.
//!
//! Everything that allocates (opening the rule paths, building the ruleset, compiling the BPF
//! program) happens in the parent. The child, between `fork` and `exec`, only makes system
//! calls: `setpgid`, `prctl(PR_SET_NO_NEW_PRIVS)`, `landlock_restrict_self` and `seccomp`.
//!
//! What the child may do:
//! - read and execute the system (`/usr`, `/bin`, `/sbin`, `/lib*`, `/etc`, `/opt`, `/proc`,
//!   `/dev`, `/sys`, `/nix/store`) and the toolchains in the home directory (`~/.cargo`,
//!   `~/.rustup`) when they exist;
//! - read and write the allowed roots, its private temp dir and `/dev/null`;
//! - nothing else: the rest of the home directory, other projects and `/tmp` are invisible;
//! - no signals to processes outside the sandbox and no abstract unix sockets (Landlock
//!   scopes, ABI 6, best effort).
//!
//! Blocked paths inside an allowed root are hidden by mounts in a private mount namespace
//! ([`super::mount_ns`]): they look empty and read-only to the command. Blocked paths
//! elsewhere (inside the system or toolchain directories), or inside a root when namespaces
//! are not available, are carved out of the rules instead: the directories on the way to a
//! blocked path get only `READ_DIR` (their names can be listed, nothing written), and every
//! sibling gets the full rights. A consequence of the carve-out: no new entries can be
//! created directly in a directory that contains a blocked path.
//!
//! The seccomp filter returns `EPERM` for `socket` with a domain other than `AF_UNIX`, for
//! `connect`, `bind`, `listen`, `accept`, `accept4`, `sendto`, `sendmsg`, `sendmmsg`, for
//! `io_uring_setup` (io_uring can connect without those calls), for `setsid`/`setpgid`
//! (so nothing leaves the process group that the timeout kills), and for path-based
//! `truncate` (which Landlock only controls from ABI 3; `ftruncate` on a file opened for
//! writing still works).

use std::collections::BTreeMap;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use super::ShellSandboxError;
use super::mount_ns::{self, Hide};

/// The Landlock ABI whose rights we ask for (best effort above ABI 1).
const TARGET_ABI: ABI = ABI::V5;

/// `errno` values the child reports through `spawn` when a step fails; rare codes so they
/// are not confused with the `exec` errors (`ENOENT`, `EACCES`, ...).
const LANDLOCK_FAILED: i32 = libc::ENOTRECOVERABLE;
const LANDLOCK_NOT_ENFORCED: i32 = libc::EOWNERDEAD;
const SECCOMP_FAILED: i32 = libc::ENOTUNIQ;
const SETPGID_FAILED: i32 = libc::EBADSLT;
const HIDE_FAILED: i32 = libc::EREMCHG;

/// The system directories the child may read and execute.
const SYSTEM_READ: [&str; 13] = [
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/proc",
    "/dev",
    "/sys",
    "/nix/store",
];

/// A sandbox ready to be applied to one child.
pub(crate) struct Prepared {
    ruleset: RulesetCreated,
    filter: BpfProgram,
    hide: Option<Hide>,
}

/// Builds the ruleset and the filter for a child that may write `writable` (the roots and its
/// temp dir) and read `readable` besides the system, with `blocked` carved out.
pub(crate) fn prepare(
    writable: &[PathBuf],
    readable: &[PathBuf],
    blocked: &[PathBuf],
) -> Result<Prepared, ShellSandboxError> {
    let landlock_error = |e: landlock::RulesetError| {
        ShellSandboxError::Unavailable(format!("Landlock is not available on this kernel ({e})"))
    };
    let read = AccessFs::from_read(TARGET_ABI);
    let all = AccessFs::from_all(TARGET_ABI);
    let ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V1))
        .map_err(landlock_error)?
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)
        .map_err(landlock_error)?
        .handle_access(AccessNet::from_all(TARGET_ABI))
        .map_err(landlock_error)?
        .scope(Scope::from_all(ABI::V6))
        .map_err(landlock_error)?
        .create()
        .map_err(landlock_error)?;

    // Blocked paths inside the roots are hidden by mounts when namespaces are available; then
    // the roots keep all their rights. Otherwise they are left out of the Landlock rules.
    let inside = mount_ns::blocked_inside(writable, blocked);
    let hide = if inside.is_empty() || !mount_ns::available() {
        None
    } else {
        Hide::new(&inside)
    };
    let blocked: Vec<PathBuf> = match &hide {
        Some(_) => blocked
            .iter()
            .filter(|b| !inside.iter().any(|(hidden, _)| b.starts_with(hidden)))
            .cloned()
            .collect(),
        None => blocked.to_vec(),
    };
    let blocked = blocked.as_slice();

    let mut grants = Vec::new();
    for path in SYSTEM_READ
        .iter()
        .map(PathBuf::from)
        .chain(readable.iter().cloned())
    {
        grant(&mut grants, &path, read, blocked);
    }
    for path in writable {
        grant(&mut grants, path, all, blocked);
    }
    grants.push((PathBuf::from("/dev/null"), all));

    let mut ruleset = ruleset;
    for (path, access) in grants {
        let Ok(fd) = PathFd::new(&path) else {
            continue; // A path that vanished grants nothing.
        };
        let access = if path.is_dir() {
            access
        } else {
            access & AccessFs::from_file(TARGET_ABI)
        };
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, access))
            .map_err(|e| ShellSandboxError::Rules(format!("`{}`: {e}", path.display())))?;
    }
    Ok(Prepared {
        ruleset,
        filter: seccomp_filter()?,
        hide,
    })
}

/// Adds `path` with `access`, or, when a blocked path lies inside it, `READ_DIR` on it and
/// the grant recursively on its entries (symlinks skipped: a rule on one would follow it).
fn grant(
    grants: &mut Vec<(PathBuf, BitFlags<AccessFs>)>,
    path: &Path,
    access: BitFlags<AccessFs>,
    blocked: &[PathBuf],
) {
    if blocked.iter().any(|b| path.starts_with(b)) || !path.exists() {
        return;
    }
    let inside = blocked.iter().any(|b| b.starts_with(path));
    if !inside {
        grants.push((path.to_path_buf(), access));
        return;
    }
    if access.contains(AccessFs::ReadDir) {
        grants.push((path.to_path_buf(), BitFlags::from(AccessFs::ReadDir)));
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| !t.is_symlink()) {
            grant(grants, &entry.path(), access, blocked);
        }
    }
}

fn seccomp_filter() -> Result<BpfProgram, ShellSandboxError> {
    let error = |e: seccompiler::BackendError| ShellSandboxError::Seccomp(e.to_string());
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for syscall in [
        libc::SYS_connect,
        libc::SYS_bind,
        libc::SYS_listen,
        libc::SYS_accept,
        libc::SYS_accept4,
        libc::SYS_sendto,
        libc::SYS_sendmsg,
        libc::SYS_sendmmsg,
        libc::SYS_io_uring_setup,
        libc::SYS_setsid,
        libc::SYS_setpgid,
        libc::SYS_truncate,
    ] {
        rules.insert(syscall, Vec::new());
    }
    let not_unix = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Ne,
        u64::try_from(libc::AF_UNIX).unwrap_or(1),
    )
    .map_err(error)?;
    rules.insert(
        libc::SYS_socket,
        vec![SeccompRule::new(vec![not_unix]).map_err(error)?],
    );
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| {
        ShellSandboxError::Seccomp(format!("unsupported architecture for seccomp: {e}"))
    })?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(u32::try_from(libc::EPERM).unwrap_or(1)),
        arch,
    )
    .map_err(error)?;
    filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| ShellSandboxError::Seccomp(e.to_string()))
}

/// Makes the child start its own process group, then restrict itself, just before `exec`.
pub(crate) fn apply(command: &mut Command, prepared: Prepared) {
    let mut ruleset = Some(prepared.ruleset);
    let filter = prepared.filter;
    let hide = prepared.hide;
    let child_setup = move || -> io::Result<()> {
        rustix::process::setpgid(None, None)
            .map_err(|_| io::Error::from_raw_os_error(SETPGID_FAILED))?;
        if let Some(hide) = &hide {
            hide.apply()
                .map_err(|_| io::Error::from_raw_os_error(HIDE_FAILED))?;
        }
        let ruleset = ruleset
            .take()
            .ok_or_else(|| io::Error::from_raw_os_error(LANDLOCK_FAILED))?;
        let status = ruleset
            .restrict_self()
            .map_err(|_| io::Error::from_raw_os_error(LANDLOCK_FAILED))?;
        if status.ruleset == RulesetStatus::NotEnforced {
            return Err(io::Error::from_raw_os_error(LANDLOCK_NOT_ENFORCED));
        }
        seccompiler::apply_filter(&filter).map_err(|_| io::Error::from_raw_os_error(SECCOMP_FAILED))
    };
    // SAFETY: the closure runs in the forked child before exec. It only makes system calls
    // (setpgid, unshare, mount, writes to /proc/self, prctl, landlock_restrict_self, seccomp)
    // on data prepared before the fork, and
    // builds errors with `from_raw_os_error`, which does not allocate. Dropping the ruleset
    // closes its file descriptor, which is async-signal-safe.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(child_setup);
    }
}

/// Turns a spawn error into the sandbox failure it reports, if it is one.
pub(crate) fn explain_spawn_error(error: &io::Error) -> Option<ShellSandboxError> {
    let reason = match error.raw_os_error()? {
        LANDLOCK_FAILED => {
            "Landlock could not restrict the command (landlock_restrict_self failed)"
        }
        LANDLOCK_NOT_ENFORCED => "the kernel did not enforce the Landlock ruleset",
        SECCOMP_FAILED => "the seccomp network filter could not be installed",
        SETPGID_FAILED => "the command could not be started in its own process group",
        HIDE_FAILED => "the blocked paths inside the allowed directories could not be hidden",
        _ => return None,
    };
    Some(ShellSandboxError::Unavailable(reason.to_string()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn grant_carves_blocked_paths_out_of_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("a/secret")).unwrap();
        std::fs::create_dir_all(root.join("a/open")).unwrap();
        std::fs::write(root.join("a/file"), "").unwrap();
        std::fs::create_dir_all(root.join("b")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("a/link")).unwrap();
        let all = AccessFs::from_all(TARGET_ABI);
        let mut grants = Vec::new();
        grant(&mut grants, &root, all, &[root.join("a/secret")]);
        grants.sort_by(|x, y| x.0.cmp(&y.0));
        let read_dir = BitFlags::from(AccessFs::ReadDir);
        assert_eq!(
            grants,
            vec![
                (root.clone(), read_dir),
                (root.join("a"), read_dir),
                (root.join("a/file"), all),
                (root.join("a/open"), all),
                (root.join("b"), all),
            ]
        );
    }

    #[test]
    fn grant_gives_the_whole_tree_when_nothing_inside_is_blocked() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let read = AccessFs::from_read(TARGET_ABI);
        let mut grants = Vec::new();
        grant(&mut grants, &root, read, &[PathBuf::from("/elsewhere")]);
        assert_eq!(grants, vec![(root.clone(), read)]);
        let mut none = Vec::new();
        grant(&mut none, &root, read, std::slice::from_ref(&root));
        assert!(none.is_empty());
    }
}
