//! The session's loopback network: one network namespace, made once per process, whose only
//! interface is `lo`, up. Every sandboxed command without the network joins it, so a server
//! one command starts (a background job's dev server) answers the next command on
//! `127.0.0.1`, while nothing in it can reach the host's network, its listeners or the
//! internet, and the host cannot reach it.
//!
//! A short-lived helper process makes it: it enters a new user namespace (owned by our uid,
//! so our later children may join it) and a new network namespace owned by that one, sets
//! `lo` up, and waits. We open both namespaces through its `/proc` entry and then kill it:
//! our open descriptors keep the namespaces alive for as long as this process runs. A
//! command joins the user namespace and then the network namespace (`setns` needs a
//! capability over the network namespace's owner), and then makes its own user, mount and
//! PID namespaces inside, as every sandboxed command does ([`super::namespaces`]).

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use rustix::fs::{Mode, OFlags};
use rustix::thread::{LinkNameSpaceType, UnshareFlags};

use super::user_maps::UserMaps;

/// The two namespaces a command joins.
#[derive(Debug)]
pub(crate) struct LoopbackNet {
    user: OwnedFd,
    net: OwnedFd,
}

impl LoopbackNet {
    /// In the forked child: joins the user namespace, then the network namespace. Only
    /// system calls.
    pub(crate) fn join(&self) -> io::Result<()> {
        rustix::thread::move_into_link_name_space(
            self.user.as_fd(),
            Some(LinkNameSpaceType::User),
        )?;
        rustix::thread::move_into_link_name_space(
            self.net.as_fd(),
            Some(LinkNameSpaceType::Network),
        )?;
        Ok(())
    }
}

/// The session's loopback network, made on first use; `Err` says why there is none (the
/// commands then get a network namespace each, with no interface up).
pub(crate) fn loopback() -> Result<&'static LoopbackNet, &'static str> {
    static NET: OnceLock<Result<LoopbackNet, String>> = OnceLock::new();
    NET.get_or_init(make).as_ref().map_err(String::as_str)
}

fn make() -> Result<LoopbackNet, String> {
    let maps = UserMaps::identity();
    let mut helper = Command::new("/bin/true");
    helper
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: runs in the forked child; it makes only system calls on data prepared before
    // the fork and never returns on success (it waits to be killed).
    #[allow(unsafe_code)]
    unsafe {
        helper.pre_exec(move || hold(&maps));
    }
    let mut child = helper
        .spawn()
        .map_err(|e| format!("the loopback network could not be made ({e})"))?;
    // `spawn` returned: the helper closed its status pipe, after `lo` was up.
    let open = |name: &str| {
        let path = format!("/proc/{}/ns/{name}", child.id());
        rustix::fs::open(
            path.as_str(),
            OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| format!("{path}: {e}"))
    };
    let opened = open("user").and_then(|user| Ok((user, open("net")?)));
    let _ = child.kill();
    let _ = child.wait();
    let (user, net) = opened?;
    Ok(LoopbackNet { user, net })
}

/// The helper, between fork and exec: new user and network namespaces, `lo` up, then the
/// status pipe closed (so `spawn` returns) and a wait for the kill.
fn hold(maps: &UserMaps) -> io::Result<()> {
    // SAFETY: prctl with integer arguments: the helper dies with the thread that made it.
    #[allow(unsafe_code)]
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
    }
    // SAFETY: a single-threaded child between fork and exec, without `UnshareFlags::FILES`.
    #[allow(unsafe_code)]
    unsafe {
        rustix::thread::unshare_unsafe(UnshareFlags::NEWUSER | UnshareFlags::NEWNET)?;
    }
    maps.write()?;
    loopback_up()?;
    // SAFETY: close_range (or close, before Linux 5.9) and pause with plain arguments; the
    // loop never returns, so the helper never execs.
    #[allow(unsafe_code)]
    unsafe {
        if libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) != 0 {
            for fd in 3..65_536 {
                libc::close(fd);
            }
        }
        loop {
            libc::pause();
        }
    }
}

/// Sets `lo` up in the current network namespace.
fn loopback_up() -> io::Result<()> {
    // SAFETY: a zeroed `ifreq` is valid; socket, ioctl and close with a local struct.
    #[allow(unsafe_code)]
    unsafe {
        let socket = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if socket < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut request: libc::ifreq = std::mem::zeroed();
        request.ifr_name[0] = b'l' as libc::c_char;
        request.ifr_name[1] = b'o' as libc::c_char;
        let mut result = libc::ioctl(socket, libc::SIOCGIFFLAGS, &mut request);
        if result == 0 {
            let up = (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            request.ifr_ifru.ifru_flags |= up;
            result = libc::ioctl(socket, libc::SIOCSIFFLAGS, &request);
        }
        let error = io::Error::last_os_error();
        libc::close(socket);
        if result == 0 { Ok(()) } else { Err(error) }
    }
}
