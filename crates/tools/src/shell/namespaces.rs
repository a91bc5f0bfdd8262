//! The namespaces a sandboxed command runs in: a user namespace (also when we are root, so
//! the command holds no capability over anything outside), a mount namespace, a PID
//! namespace and, for a command without the network, a network namespace without the
//! host's sockets, connections (`/proc/net`), abstract unix sockets and interfaces: the
//! session's loopback network ([`super::loopback`]) where the kernel allows it, else one of
//! its own with no interface up.
//!
//! In the mount namespace, before Landlock is applied, the child:
//! - mounts a fresh `/proc` for its PID namespace (other processes are not there);
//! - makes every mount read-only (`mount_setattr` recursive), so changing the metadata of
//!   files outside the roots (`chmod`, `chown`, `utimensat`, extended attributes), which
//!   Landlock does not control, fails with `EROFS`;
//! - mounts a private tmpfs on `/dev/shm`;
//! - binds the allowed roots and its temp dir back read-write;
//! - binds each directory between a root and a blocked path inside it onto itself, so none
//!   of them can be renamed (a mount point cannot be) to move the blocked path;
//! - binds `.git` and `.ybs` (and a worktree's git directories) read-only;
//! - hides every blocked path: an empty read-only tmpfs over a directory, a read-only bind of
//!   `/dev/null` over a file. Blocked directories look empty, also to `stat`.
//!
//! Landlock forbids the sandboxed command to undo any of these mounts. Whether the kernel
//! allows all this is probed once per process (`super::support`); what it does not allow is
//! reported (see `super::status`) and covered by Landlock and seccomp alone.

use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::mount::{MountFlags, MountPropagationFlags};
use rustix::thread::UnshareFlags;

use super::loopback::LoopbackNet;
use super::user_maps::UserMaps;

/// What the child does in its namespaces; everything is prepared before the fork.
pub(crate) struct Plan {
    maps: UserMaps,
    pub(crate) pid: bool,
    pub(crate) net: Net,
    writable: Vec<CString>,
    pins: Vec<CString>,
    read_only: Vec<CString>,
    hide: Vec<(CString, bool)>,
    shm: bool,
}

/// The network namespace a command runs in.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Net {
    /// The host's (a command granted the network, or where no other can be made).
    Host,
    /// One of its own, with no interface up.
    Own,
    /// The session's loopback network, shared with the other commands without the network.
    Loopback(&'static LoopbackNet),
}

/// The paths a plan is made of.
pub(crate) struct Layout<'a> {
    /// Read-write: the roots and the command's temp dir.
    pub writable: &'a [PathBuf],
    /// Blocked paths (hidden when they exist).
    pub blocked: &'a [PathBuf],
    /// Read-only paths inside the roots (bound read-only when they exist).
    pub read_only: &'a [PathBuf],
}

fn cstring(path: &Path) -> Option<CString> {
    CString::new(path.as_os_str().as_bytes()).ok()
}

impl Plan {
    /// The plan for `layout`; `pid` asks for a PID namespace and a private `/proc`, `net`
    /// says which network namespace.
    pub(crate) fn new(layout: &Layout<'_>, pid: bool, net: Net) -> Option<Self> {
        let existing_dirs = |paths: &[PathBuf]| -> Option<Vec<CString>> {
            paths
                .iter()
                .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
                .map(|p| cstring(p))
                .collect()
        };
        let hidden = hidden(layout.blocked);
        let mut pins: Vec<PathBuf> = Vec::new();
        for (path, _) in &hidden {
            let Some(root) = layout
                .writable
                .iter()
                .filter(|r| path.starts_with(r))
                .max_by_key(|r| r.components().count())
            else {
                continue;
            };
            let mut ancestors: Vec<PathBuf> = path
                .ancestors()
                .skip(1)
                .take_while(|a| a.starts_with(root) && a != root)
                .map(Path::to_path_buf)
                .collect();
            ancestors.reverse();
            for a in ancestors {
                if !pins.contains(&a) {
                    pins.push(a);
                }
            }
        }
        pins.sort_by_key(|p| p.components().count());
        Some(Plan {
            maps: UserMaps::identity(),
            pid,
            net,
            writable: existing_dirs(layout.writable)?,
            pins: existing_dirs(&pins)?,
            read_only: layout
                .read_only
                .iter()
                .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir() || m.is_file()))
                .map(|p| cstring(p))
                .collect::<Option<_>>()?,
            hide: hidden
                .iter()
                .map(|(p, d)| Some((cstring(p)?, *d)))
                .collect::<Option<_>>()?,
            shm: Path::new("/dev/shm").is_dir(),
        })
    }

    /// In the child, first step: joins the loopback network if it is the one, then enters
    /// the new user, mount (and PID, and network) namespaces. With a PID namespace, only the
    /// children of the caller are inside it.
    pub(crate) fn enter(&self) -> io::Result<()> {
        let mut flags = UnshareFlags::NEWUSER | UnshareFlags::NEWNS;
        if self.pid {
            flags |= UnshareFlags::NEWPID;
        }
        match self.net {
            Net::Host => {}
            Net::Own => flags |= UnshareFlags::NEWNET,
            Net::Loopback(net) => net.join()?,
        }
        // SAFETY: called in a single-threaded child between fork and exec, without
        // `UnshareFlags::FILES`, so no other thread can observe a changed descriptor table.
        #[allow(unsafe_code)]
        unsafe {
            rustix::thread::unshare_unsafe(flags)?;
        }
        self.maps.write()
    }

    /// In the child (inside the PID namespace when there is one): makes the mounts.
    pub(crate) fn mount(&self) -> io::Result<()> {
        // Our mounts must not propagate back to the parent namespace.
        rustix::mount::mount_change(
            c"/",
            MountPropagationFlags::PRIVATE | MountPropagationFlags::REC,
        )?;
        let hardened = MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC;
        if self.pid {
            rustix::mount::mount(c"proc", c"/proc", c"proc", hardened, c"")?;
        }
        set_read_only(c"/", true, true)?;
        if self.shm {
            rustix::mount::mount(
                c"tmpfs",
                c"/dev/shm",
                c"tmpfs",
                hardened,
                c"size=64m,mode=1777",
            )?;
        }
        for path in &self.writable {
            rustix::mount::mount_bind_recursive(path.as_c_str(), path.as_c_str())?;
            set_read_only(path, false, true).or_else(|_| set_read_only(path, false, false))?;
        }
        for path in &self.pins {
            rustix::mount::mount_bind_recursive(path.as_c_str(), path.as_c_str())?;
        }
        for path in &self.read_only {
            rustix::mount::mount_bind_recursive(path.as_c_str(), path.as_c_str())?;
            set_read_only(path, true, true)?;
        }
        for (path, is_dir) in &self.hide {
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

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;

/// Sets or clears the read-only flag of the mount at `path` (and below, if `recursive`),
/// leaving its other flags alone.
fn set_read_only(path: &CStr, read_only: bool, recursive: bool) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: if read_only { MOUNT_ATTR_RDONLY } else { 0 },
        attr_clr: if read_only { 0 } else { MOUNT_ATTR_RDONLY },
        propagation: 0,
        userns_fd: 0,
    };
    let flags = if recursive { libc::AT_RECURSIVE } else { 0 };
    // SAFETY: `path` is a NUL-terminated string and `attr` a `struct mount_attr` whose size
    // is passed; the kernel only reads both.
    #[allow(unsafe_code)]
    let result = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if result == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The blocked paths that exist and are not inside another one (mounting over the outer one
/// hides both), with whether each is a directory. Symlinks are skipped: their physical
/// targets are blocked paths of their own.
pub(crate) fn hidden(blocked: &[PathBuf]) -> Vec<(PathBuf, bool)> {
    blocked
        .iter()
        .filter_map(|b| {
            let meta = std::fs::symlink_metadata(b).ok()?;
            if meta.file_type().is_symlink() {
                return None;
            }
            Some((b.clone(), meta.is_dir()))
        })
        .filter(|(b, _)| {
            !blocked
                .iter()
                .any(|other| other.as_path() != b.as_path() && b.starts_with(other))
        })
        .collect()
}
