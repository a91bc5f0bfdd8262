//! The seccomp filter of sandboxed commands: `EPERM` for every way onto the network that
//! Landlock does not cover, and for system calls a build never needs but an escape might.
//!
//! - Network, by [`Network`]:
//!   - `Off`: `socket` with a domain other than `AF_UNIX`, `connect`, `bind`, `listen`,
//!     `accept*`, `sendto`, `sendmsg`, `sendmmsg` are refused.
//!   - `Loopback` (the session's loopback network, where no interface leads off the
//!     machine): IP sockets (`AF_INET`, `AF_INET6`) may connect, send, bind, listen and
//!     accept, so a server one command starts answers the next; netlink for its routing
//!     protocol only (listing the interfaces: only `lo` there). No other family: a unix
//!     socket could connect to a local service by its path (Landlock does not check that).
//!   - `Client` (a command granted the network, on the host's network): IP sockets as a
//!     client only: `connect` and the send calls; `bind`, `listen` and `accept*` stay
//!     refused (nothing serves the project on an address of the machine).
//!
//!   With IP sockets allowed, `socketpair` makes only stream and seqpacket pairs (a datagram
//!   one, also asked for as `SOCK_RAW`, could send to a unix socket by path).
//!   `io_uring_setup` is always refused (io_uring can connect without those calls).
//! - The process group: `setsid`, `setpgid` (nothing leaves the group the timeout kills).
//! - Devices: `mknod`/`mknodat` of a character or block device.
//! - The terminal: `ioctl` `TIOCSTI` and `TIOCLINUX` (typing into the user's terminal).
//! - Kernel surface: `unshare`, `setns`, `clone` with `CLONE_NEWUSER`, `clone3` (`ENOSYS`, so
//!   the C library falls back to `clone`, whose flags are visible), `keyctl`, `add_key`,
//!   `request_key` (the user's keyrings), `bpf`, `perf_event_open`, `userfaultfd`, `ptrace`.
//! - Path-based `truncate` (Landlock controls it only from ABI 3).
//! - Without the read-only mount namespace (`metadata_by_path`): the path-based metadata
//!   calls, `chmod`, `fchmodat`, `fchmodat2`, `chown`, `lchown`, `fchownat`, `utime`,
//!   `utimes`, `futimesat`, `utimensat` with a path, `setxattr`, `lsetxattr`, `removexattr`,
//!   `lremovexattr` (Landlock does not control them); the descriptor-based ones stay allowed.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};

use super::error::ShellSandboxError;

/// `clone3` is answered with `ENOSYS` so callers fall back to `clone`.
const CLONE3: i64 = 435;
const FCHMODAT2: i64 = 452;
const SETXATTRAT: i64 = 463;
const REMOVEXATTRAT: i64 = 466;

/// What a command may do on the network (see the module's documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Network {
    /// Nothing.
    Off,
    /// Everything IP, in the session's loopback network.
    Loopback,
    /// IP as a client, on the host's network.
    Client,
}

/// Builds the filters (installed one after the other; the kernel applies the strictest
/// answer); `metadata_by_path` also denies the path-based metadata calls.
pub(crate) fn filters(
    metadata_by_path: bool,
    network: Network,
) -> Result<Vec<BpfProgram>, ShellSandboxError> {
    let error = |e: seccompiler::BackendError| ShellSandboxError::Seccomp(e.to_string());
    let cond = |arg: u8, op: SeccompCmpOp, value: u64| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(error)
    };
    let rule = |conds: Vec<SeccompCondition>| SeccompRule::new(conds).map_err(error);
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let mut deny = vec![
        libc::SYS_io_uring_setup,
        libc::SYS_setsid,
        libc::SYS_setpgid,
        libc::SYS_truncate,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_ptrace,
    ];
    // Listening and accepting: only where no address of the machine is reachable.
    if network != Network::Loopback {
        deny.extend([
            libc::SYS_bind,
            libc::SYS_listen,
            libc::SYS_accept,
            libc::SYS_accept4,
        ]);
    }
    if network == Network::Off {
        deny.extend([
            libc::SYS_connect,
            libc::SYS_sendto,
            libc::SYS_sendmsg,
            libc::SYS_sendmmsg,
        ]);
    }
    if metadata_by_path {
        deny.extend([
            libc::SYS_chmod,
            libc::SYS_fchmodat,
            FCHMODAT2,
            libc::SYS_chown,
            libc::SYS_lchown,
            libc::SYS_fchownat,
            libc::SYS_utime,
            libc::SYS_utimes,
            libc::SYS_futimesat,
            libc::SYS_setxattr,
            libc::SYS_lsetxattr,
            libc::SYS_removexattr,
            libc::SYS_lremovexattr,
            SETXATTRAT,
            REMOVEXATTRAT,
        ]);
        // utimensat(fd, NULL, ...) is futimens: allowed; with a path it is denied.
        rules.insert(
            libc::SYS_utimensat,
            vec![rule(vec![cond(1, SeccompCmpOp::Ne, 0)?])?],
        );
    }
    for syscall in deny {
        rules.insert(syscall, Vec::new());
    }
    let family = |family: i32| u64::try_from(family).unwrap_or(u64::MAX);
    let socket_rules = match network {
        Network::Off => vec![rule(vec![cond(
            0,
            SeccompCmpOp::Ne,
            family(libc::AF_UNIX),
        )?])?],
        // IP, and netlink's routing protocol only: what lists the interfaces
        // (`getifaddrs`, Node's `os.networkInterfaces()`, which a dev server calls and
        // fails without); there it shows only `lo`, and changes need a capability.
        Network::Loopback => {
            let netlink = family(libc::AF_NETLINK);
            let route = u64::try_from(libc::NETLINK_ROUTE).unwrap_or(0);
            vec![
                rule(vec![
                    cond(0, SeccompCmpOp::Ne, family(libc::AF_INET))?,
                    cond(0, SeccompCmpOp::Ne, family(libc::AF_INET6))?,
                    cond(0, SeccompCmpOp::Ne, netlink)?,
                ])?,
                rule(vec![
                    cond(0, SeccompCmpOp::Eq, netlink)?,
                    cond(2, SeccompCmpOp::Ne, route)?,
                ])?,
            ]
        }
        Network::Client => vec![rule(vec![
            cond(0, SeccompCmpOp::Ne, family(libc::AF_INET))?,
            cond(0, SeccompCmpOp::Ne, family(libc::AF_INET6))?,
        ])?],
    };
    rules.insert(libc::SYS_socket, socket_rules);
    if network != Network::Off {
        // Only the connected kinds: the kernel makes a `SOCK_RAW` unix socket a datagram one,
        // so refusing `SOCK_DGRAM` alone is not enough.
        let connected =
            [libc::SOCK_STREAM, libc::SOCK_SEQPACKET].map(|t| u64::try_from(t).unwrap_or(1));
        let mut refused = Vec::new();
        for kind in (0..=0xf).filter(|kind| !connected.contains(kind)) {
            refused.push(rule(vec![cond(1, SeccompCmpOp::MaskedEq(0xf), kind)?])?);
        }
        rules.insert(libc::SYS_socketpair, refused);
    }
    let file_type = u64::from(libc::S_IFMT);
    let devices = [u64::from(libc::S_IFCHR), u64::from(libc::S_IFBLK)];
    for (syscall, mode_arg) in [(libc::SYS_mknod, 1u8), (libc::SYS_mknodat, 2u8)] {
        let mut list = Vec::new();
        for device in devices {
            list.push(rule(vec![cond(
                mode_arg,
                SeccompCmpOp::MaskedEq(file_type),
                device,
            )?])?);
        }
        rules.insert(syscall, list);
    }
    let mut ioctls = Vec::new();
    for request in [libc::TIOCSTI, libc::TIOCLINUX] {
        ioctls.push(rule(vec![cond(1, SeccompCmpOp::Eq, request)?])?);
    }
    rules.insert(libc::SYS_ioctl, ioctls);
    let new_user = u64::try_from(libc::CLONE_NEWUSER).unwrap_or(0x1000_0000);
    rules.insert(
        libc::SYS_clone,
        vec![rule(vec![cond(
            0,
            SeccompCmpOp::MaskedEq(new_user),
            new_user,
        )?])?],
    );
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| {
        ShellSandboxError::Seccomp(format!("unsupported architecture for seccomp: {e}"))
    })?;
    let eperm = u32::try_from(libc::EPERM).unwrap_or(1);
    let main: BpfProgram = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(eperm),
        arch,
    )
    .map_err(error)?
    .try_into()
    .map_err(error)?;
    // clone3 needs another action (ENOSYS): a second small filter.
    let enosys = u32::try_from(libc::ENOSYS).unwrap_or(38);
    let clone3: BpfProgram = SeccompFilter::new(
        BTreeMap::from([(CLONE3, Vec::new())]),
        SeccompAction::Allow,
        SeccompAction::Errno(enosys),
        arch,
    )
    .map_err(error)?
    .try_into()
    .map_err(error)?;
    Ok(vec![arch_filter()?, clone3, main])
}

/// A filter of our own, installed with the others (the kernel runs every filter and takes the
/// strictest answer): a system call from another architecture than ybs's own kills the
/// process (seccompiler's filters check this too), and on x86_64 a call made through the x32
/// ABI (its number has bit 30 set) is refused, so no denied call passes under its x32 number
/// on a kernel built with x32.
pub(crate) fn arch_filter() -> Result<BpfProgram, ShellSandboxError> {
    const ARCH_OFFSET: u32 = 4;
    const NR_OFFSET: u32 = 0;
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    let audit_arch = audit_arch()?;
    let stmt = |code: u16, k: u32| sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    };
    let jump = |code: u16, k: u32, jt: u8, jf: u8| sock_filter { code, jt, jf, k };
    let eperm = u32::try_from(libc::EPERM).unwrap_or(1);
    let mut program = vec![
        stmt(BPF_LD | BPF_W | BPF_ABS, ARCH_OFFSET),
        jump(BPF_JMP | BPF_JEQ | BPF_K, audit_arch, 1, 0),
        stmt(BPF_RET | BPF_K, libc::SECCOMP_RET_KILL_PROCESS),
    ];
    if cfg!(target_arch = "x86_64") {
        program.extend([
            stmt(BPF_LD | BPF_W | BPF_ABS, NR_OFFSET),
            jump(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 0, 1),
            stmt(BPF_RET | BPF_K, libc::SECCOMP_RET_ERRNO | eperm),
        ]);
    }
    program.push(stmt(BPF_RET | BPF_K, libc::SECCOMP_RET_ALLOW));
    Ok(program)
}

const BPF_LD: u16 = 0x00;
const BPF_JMP: u16 = 0x05;
const BPF_RET: u16 = 0x06;
const BPF_W: u16 = 0x00;
const BPF_ABS: u16 = 0x20;
const BPF_JEQ: u16 = 0x10;
const BPF_JGE: u16 = 0x30;
const BPF_K: u16 = 0x00;

/// The `AUDIT_ARCH_*` value of the architecture ybs was built for.
fn audit_arch() -> Result<u32, ShellSandboxError> {
    // EM_* | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE (linux/audit.h).
    const LE64: u32 = 0x8000_0000 | 0x4000_0000;
    match std::env::consts::ARCH {
        "x86_64" => Ok(62 | LE64),
        "aarch64" => Ok(183 | LE64),
        "riscv64" => Ok(243 | LE64),
        other => Err(ShellSandboxError::Seccomp(format!(
            "unsupported architecture for seccomp: {other}"
        ))),
    }
}
