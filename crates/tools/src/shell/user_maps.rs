//! The identity mapping of our uid and gid into a user namespace that a child of ours has
//! just made (the sandboxed command's, the loopback network's helper's).

use std::ffi::CStr;
use std::io;

use rustix::fs::{Mode, OFlags};

/// The identity mapping of our uid and gid into a new user namespace.
pub(crate) struct UserMaps {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

impl UserMaps {
    /// Our uid and gid, mapped to themselves.
    pub(crate) fn identity() -> Self {
        let uid = rustix::process::geteuid().as_raw();
        let gid = rustix::process::getegid().as_raw();
        UserMaps {
            uid_map: format!("{uid} {uid} 1").into_bytes(),
            gid_map: format!("{gid} {gid} 1").into_bytes(),
        }
    }

    /// In a child that has just made a user namespace: writes its maps (no allocation).
    pub(crate) fn write(&self) -> io::Result<()> {
        write_proc(c"/proc/self/setgroups", b"deny")?;
        write_proc(c"/proc/self/uid_map", &self.uid_map)?;
        write_proc(c"/proc/self/gid_map", &self.gid_map)
    }
}

fn write_proc(path: &CStr, bytes: &[u8]) -> io::Result<()> {
    let fd = rustix::fs::open(path, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty())?;
    rustix::io::write(&fd, bytes)?;
    Ok(())
}
