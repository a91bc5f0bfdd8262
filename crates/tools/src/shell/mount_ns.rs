//! Hiding blocked paths that lie inside an allowed root, with a private mount namespace.
//!
//! Landlock cannot take rights away from a subtree of a granted directory, so a blocked
//! `root/secrets` would stay readable through the rule on `root`. In the child, before
//! Landlock is applied, we enter a new mount namespace (and a user namespace when we are not
//! root) and mount over each such path: an empty read-only tmpfs over a directory, a
//! read-only bind of `/dev/null` over a file. The command then sees them empty and cannot
//! write them, while the rest of the root keeps all its rights. Landlock forbids the
//! sandboxed command to unmount them.
//!
//! Where namespaces are not available (a probe finds out once per process), the caller falls
//! back to Landlock rules that leave the blocked paths out (see `linux::grant`).

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use rustix::fs::{Mode, OFlags};
use rustix::mount::{MountFlags, MountPropagationFlags};
use rustix::thread::UnshareFlags;

/// What the child does to hide the blocked paths; everything is prepared before the fork.
pub(crate) struct Hide {
    user_maps: Option<UserMaps>,
    mounts: Vec<(CString, bool)>,
}

/// The identity mapping of our uid and gid into a new user namespace.
struct UserMaps {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

impl Hide {
    /// A plan to hide `paths` (which exist; `true` for directories).
    pub(crate) fn new(paths: &[(PathBuf, bool)]) -> Option<Self> {
        let mounts = paths
            .iter()
            .map(|(path, is_dir)| Some((CString::new(path.as_os_str().as_bytes()).ok()?, *is_dir)))
            .collect::<Option<Vec<_>>>()?;
        Some(Hide {
            user_maps: user_maps(),
            mounts,
        })
    }

    /// Runs in the child: enters the namespaces and mounts over the blocked paths. Only
    /// system calls on prepared data.
    pub(crate) fn apply(&self) -> io::Result<()> {
        enter(self.user_maps.as_ref())?;
        for (path, is_dir) in &self.mounts {
            let read_only = MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV;
            if *is_dir {
                rustix::mount::mount(
                    c"tmpfs",
                    path.as_c_str(),
                    c"tmpfs",
                    read_only | MountFlags::NOEXEC,
                    c"size=4k,mode=0555",
                )?;
            } else {
                rustix::mount::mount_bind(c"/dev/null", path.as_c_str())?;
                rustix::mount::mount_remount(path.as_c_str(), read_only | MountFlags::BIND, c"")?;
            }
        }
        Ok(())
    }
}

/// `None` when we are root (a mount namespace alone will do).
fn user_maps() -> Option<UserMaps> {
    let uid = rustix::process::geteuid();
    if uid.is_root() {
        return None;
    }
    let gid = rustix::process::getegid();
    Some(UserMaps {
        uid_map: format!("{0} {0} 1", uid.as_raw()).into_bytes(),
        gid_map: format!("{0} {0} 1", gid.as_raw()).into_bytes(),
    })
}

fn enter(user_maps: Option<&UserMaps>) -> io::Result<()> {
    let flags = match user_maps {
        Some(_) => UnshareFlags::NEWNS | UnshareFlags::NEWUSER,
        None => UnshareFlags::NEWNS,
    };
    // SAFETY: called in a single-threaded child between fork and exec, without
    // `UnshareFlags::FILES`, so no other thread can observe a changed descriptor table.
    #[allow(unsafe_code)]
    unsafe {
        rustix::thread::unshare_unsafe(flags)?;
    }
    if let Some(maps) = user_maps {
        write_proc(c"/proc/self/setgroups", b"deny")?;
        write_proc(c"/proc/self/uid_map", &maps.uid_map)?;
        write_proc(c"/proc/self/gid_map", &maps.gid_map)?;
    }
    // Our mounts must not propagate back to the parent namespace.
    rustix::mount::mount_change(
        c"/",
        MountPropagationFlags::PRIVATE | MountPropagationFlags::REC,
    )?;
    Ok(())
}

fn write_proc(path: &std::ffi::CStr, bytes: &[u8]) -> io::Result<()> {
    let fd = rustix::fs::open(path, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty())?;
    rustix::io::write(&fd, bytes)?;
    Ok(())
}

/// Whether this process can give its children a private mount namespace (probed once by
/// starting `/bin/sh -c exit` in one).
pub(crate) fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        let maps = user_maps();
        let mut probe = Command::new("/bin/sh");
        probe
            .args(["-c", "exit 0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: runs between fork and exec; `enter` makes only system calls on data
        // prepared before the fork.
        #[allow(unsafe_code)]
        unsafe {
            probe.pre_exec(move || enter(maps.as_ref()));
        }
        probe.status().is_ok_and(|status| status.success())
    })
}

/// The blocked paths that exist inside one of `roots` (symlinks excluded: their physical
/// targets are blocked paths of their own), with whether each is a directory.
pub(crate) fn blocked_inside(roots: &[PathBuf], blocked: &[PathBuf]) -> Vec<(PathBuf, bool)> {
    blocked
        .iter()
        .filter(|b| {
            roots
                .iter()
                .any(|r| b.starts_with(r) && b.as_path() != r.as_path())
        })
        .filter_map(|b| {
            let meta = std::fs::symlink_metadata(b).ok()?;
            if meta.file_type().is_symlink() {
                return None;
            }
            Some((b.clone(), meta.is_dir()))
        })
        .filter(|(b, _)| is_outermost(b, blocked))
        .collect()
}

/// Whether no other blocked path contains this one (mounting over the outer one hides both).
fn is_outermost(path: &Path, blocked: &[PathBuf]) -> bool {
    !blocked
        .iter()
        .any(|other| other.as_path() != path && path.starts_with(other))
}
