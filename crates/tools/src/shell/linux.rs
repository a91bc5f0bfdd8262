//! The Linux shell sandbox, in layers applied to the child only (see [`super::child`]):
//! namespaces ([`super::namespaces`]), resource limits, no inherited descriptors, no
//! capabilities, Landlock for the file system, TCP and signals, and seccomp
//! ([`super::seccomp`]).
//!
//! What Landlock lets the command do:
//! - read and execute the system (`/usr`, `/bin`, `/sbin`, `/lib*`, `/opt`, `/sys`,
//!   `/nix/store`, `/proc`, and `/etc` without its secrets such as `/etc/shadow`) and the
//!   toolchains in the home directory (`~/.cargo`, `~/.rustup`) without their credentials;
//! - in `/dev`, list the names and use only `null`, `zero`, `full`, `random`, `urandom`,
//!   `tty` and, when the mount namespace gives it a private one, `shm`;
//! - read and write the allowed roots and its private temp dir;
//! - nothing else: the rest of the home directory, other projects and `/tmp` stay out;
//! - no signals to processes outside the sandbox and no abstract unix sockets (scopes, ABI 6);
//! - no TCP, unless the call was granted the network (then seccomp lets the IP client
//!   calls through too, and everything else above stays; see [`super::seccomp`]) or runs
//!   in the session's loopback network ([`super::loopback`]), where seccomp lets it serve
//!   and reach the other commands' servers and there is nothing else to reach.
//!
//! Blocked paths and `.git`/`.ybs` are enforced by mounts when the mount namespace is
//! available. Otherwise they are carved out of the Landlock rules: the directories on the
//! way to such a path get only `READ_DIR`, every sibling the full rights, a read-only path
//! only the read rights, and a blocked path nothing. A consequence of the carve-out: no new
//! entries can be created directly in a directory that contains a blocked path.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
};

use super::child::{self, ChildPlan};
use super::error::ShellSandboxError;
use super::loopback::loopback;
use super::namespaces::{Layout, Net, Plan};
use super::policy::ShellLimits;
use super::seccomp::{self, Network};
use super::support::support;

/// The Landlock ABI whose rights we ask for (best effort above ABI 1).
const TARGET_ABI: ABI = ABI::V5;

/// The system directories the child may read and execute.
const SYSTEM_READ: [&str; 12] = [
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
    "/sys",
    "/nix/store",
];

/// Files of `/etc` that hold secrets (password hashes, host keys, sudo rules): never granted.
pub(crate) const ETC_SECRETS: [&str; 9] = [
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/etc/ssl/private",
    "/etc/security/opasswd",
];

/// The files and directories under `/etc` that other users may not read (a file without the
/// "others" read bit, a directory without read or search), found once: what only root (or a
/// group) may read there, such as `/etc/wireguard` or a config file holding an API key.
pub(crate) fn root_only_etc() -> &'static [PathBuf] {
    static FOUND: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    FOUND.get_or_init(|| {
        let mut found = Vec::new();
        find_unreadable(Path::new("/etc"), 0, &mut found);
        found
    })
}

fn find_unreadable(dir: &Path, depth: usize, found: &mut Vec<PathBuf>) {
    use std::os::unix::fs::PermissionsExt;
    const MAX_DEPTH: usize = 12;
    const MAX_FOUND: usize = 5_000;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if found.len() >= MAX_FOUND {
            return;
        }
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            continue;
        }
        let mode = meta.permissions().mode();
        let open_to_others = if meta.is_dir() {
            mode & 0o005 == 0o005
        } else {
            mode & 0o004 != 0
        };
        if !open_to_others {
            found.push(entry.path());
        } else if meta.is_dir() && depth < MAX_DEPTH {
            find_unreadable(&entry.path(), depth + 1, found);
        }
    }
}

/// The device nodes a command may read and write.
const DEVICES: [&str; 6] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// What one sandboxed command may touch.
pub(crate) struct Grants<'a> {
    /// Read-write: the roots and the command's temp dir.
    pub writable: &'a [PathBuf],
    /// Read-only besides the system (the toolchains, a worktree's git directories).
    pub readable: &'a [PathBuf],
    /// Never readable.
    pub blocked: &'a [PathBuf],
    /// Inside the writable ones, readable but not writable (`.git`, `.ybs`).
    pub read_only: &'a [PathBuf],
    /// Whether the command may use the network (TCP for Landlock, the socket calls for
    /// seccomp); the other layers stay.
    pub network: bool,
}

/// Builds everything the child will apply to itself.
pub(crate) fn prepare(
    access: &Grants<'_>,
    limits: &ShellLimits,
) -> Result<ChildPlan, ShellSandboxError> {
    let support = support();
    // Without the network, the host's network state is not the command's business: the
    // command joins the session's loopback network, or gets an empty one of its own.
    let net = if access.network {
        Net::Host
    } else if let (Ok(()), Ok(shared)) = (&support.loopback, loopback()) {
        Net::Loopback(shared)
    } else if support.net.is_ok() {
        Net::Own
    } else {
        Net::Host
    };
    let namespaces = match support.mount {
        Ok(()) => Plan::new(
            &Layout {
                writable: access.writable,
                blocked: access.blocked,
                read_only: access.read_only,
            },
            support.pid.is_ok(),
            net,
        ),
        Err(_) => None,
    };
    let network = match namespaces.as_ref().map(|plan| plan.net) {
        _ if access.network => Network::Client,
        Some(Net::Loopback(_)) => Network::Loopback,
        _ => Network::Off,
    };
    let mounted = namespaces.is_some();
    let private_shm = mounted && Path::new("/dev/shm").is_dir();
    let private_proc = namespaces.as_ref().is_some_and(|plan| plan.pid);

    // With the mounts, blocked paths and read-only ones are enforced by them, and the roots
    // keep all their rights; the carve-out is kept for the blocked paths outside the roots
    // (it costs nothing there) and for /etc's secrets.
    let mut blocked: Vec<PathBuf> = access
        .blocked
        .iter()
        .filter(|b| !mounted || !access.writable.iter().any(|w| b.starts_with(w)))
        .cloned()
        .collect();
    blocked.extend(ETC_SECRETS.iter().map(PathBuf::from));
    // As root the command is root in its user namespace too (so the project stays writable):
    // without capabilities it still owns root's files, so those only root may read are
    // carved out as well.
    if rustix::process::geteuid().is_root() {
        blocked.extend(root_only_etc().iter().cloned());
    }
    let read_only: &[PathBuf] = if mounted { &[] } else { access.read_only };

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
        .map_err(landlock_error)?;
    // Landlock's TCP rules only hold a command off the network entirely; with the host's
    // network as a client or in the loopback network, seccomp says what it may do.
    let ruleset = if network == Network::Off {
        (ruleset.handle_access(AccessNet::from_all(TARGET_ABI))).map_err(landlock_error)?
    } else {
        ruleset
    };
    let ruleset = ruleset
        .scope(Scope::from_all(ABI::V6))
        .map_err(landlock_error)?
        .create()
        .map_err(landlock_error)?;

    let carve = Carve {
        blocked: &blocked,
        read_only,
        read,
    };
    let mut grants = Vec::new();
    for path in SYSTEM_READ
        .iter()
        .filter(|p| !private_proc || **p != "/proc")
        .map(PathBuf::from)
        .chain(access.readable.iter().cloned())
    {
        grant(&mut grants, &path, read, &carve);
    }
    for path in access.writable {
        grant(&mut grants, path, all, &carve);
    }
    grants.push((PathBuf::from("/dev"), BitFlags::from(AccessFs::ReadDir)));
    for device in DEVICES {
        grants.push((PathBuf::from(device), all));
    }
    let mut late_rules = Vec::new();
    if private_shm {
        late_rules.push((c"/dev/shm".to_owned(), all));
    }
    if private_proc {
        late_rules.push((c"/proc".to_owned(), read));
    }

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
    let euid_root = rustix::process::geteuid().is_root();
    Ok(ChildPlan {
        privileged: mounted || euid_root,
        namespaces,
        limits: limits.rlimits(),
        last_cap: child::last_cap(),
        ruleset: Some(ruleset),
        filters: seccomp::filters(!mounted, network)?,
        cwd: None,
        late_rules,
        cgroups: Vec::new(),
        parent: None,
    })
}

/// What [`grant`] leaves out or narrows.
struct Carve<'a> {
    blocked: &'a [PathBuf],
    read_only: &'a [PathBuf],
    read: BitFlags<AccessFs>,
}

/// Adds `path` with `access`, or, when a blocked path (or, for write access, a read-only
/// one) lies inside it, `READ_DIR` on it and the grant recursively on its entries
/// (symlinks skipped: a rule on one would follow it).
fn grant(
    grants: &mut Vec<(PathBuf, BitFlags<AccessFs>)>,
    path: &Path,
    access: BitFlags<AccessFs>,
    carve: &Carve<'_>,
) {
    if carve.blocked.iter().any(|b| path.starts_with(b)) || !path.exists() {
        return;
    }
    let access = if carve.read_only.iter().any(|r| path.starts_with(r)) {
        access & carve.read
    } else {
        access
    };
    let writes = access != access & carve.read;
    let inside = carve.blocked.iter().any(|b| b.starts_with(path))
        || (writes && carve.read_only.iter().any(|r| r.starts_with(path)));
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
            grant(grants, &entry.path(), access, carve);
        }
    }
}

/// Makes the child apply `plan` to itself just before `exec`, in `cwd`.
pub(crate) fn apply(command: &mut Command, plan: ChildPlan, cwd: &Path) {
    let mut plan = plan;
    plan.cwd = std::ffi::CString::new(cwd.as_os_str().as_bytes()).ok();
    command.current_dir(cwd);
    // SAFETY: the closure runs in the forked child before exec. It only makes system calls
    // on data prepared before the fork (see `child`), and builds errors with
    // `from_raw_os_error`, which does not allocate. Dropping the ruleset closes its file
    // descriptor, which is async-signal-safe.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(move || plan.apply());
    }
}

/// Turns a spawn error into the sandbox failure it reports, if it is one.
pub(crate) fn explain_spawn_error(error: &std::io::Error) -> Option<ShellSandboxError> {
    child::describe(error).map(|(_, why)| ShellSandboxError::Unavailable(why))
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
        let blocked = [root.join("a/secret")];
        let read = AccessFs::from_read(TARGET_ABI);
        let carve = Carve {
            blocked: &blocked,
            read_only: &[],
            read,
        };
        grant(&mut grants, &root, all, &carve);
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
        let elsewhere = [PathBuf::from("/elsewhere")];
        let carve = Carve {
            blocked: &elsewhere,
            read_only: &[],
            read,
        };
        grant(&mut grants, &root, read, &carve);
        assert_eq!(grants, vec![(root.clone(), read)]);
        let mut none = Vec::new();
        let itself = [root.clone()];
        let carve = Carve {
            blocked: &itself,
            read_only: &[],
            read,
        };
        grant(&mut none, &root, read, &carve);
        assert!(none.is_empty());
    }
}
