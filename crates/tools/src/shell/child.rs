//! What the forked child does between `fork` and `exec`, in order: its own process group,
//! the namespaces (with a second fork into the PID namespace), resource limits, no
//! descriptor above 2 kept across `exec`, every capability dropped, Landlock, seccomp.
//!
//! Everything that allocates happens in the parent before the fork; here there are only
//! system calls on prepared data. A failing step reports itself through the `errno` that
//! `spawn` returns: the step number in the high 16 bits, the system error in the low ones
//! ([`describe`] decodes it).

use std::io;

use landlock::{
    AccessFs, BitFlags, PathBeneath, RulesetCreated, RulesetCreatedAttr, RulesetStatus,
};
use rustix::fs::{Mode, OFlags};
use seccompiler::BpfProgram;

use super::namespaces::Plan;

/// The steps, numbered for the error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    ProcessGroup = 1,
    Namespaces = 2,
    PidNamespace = 3,
    Mounts = 4,
    Limits = 5,
    Descriptors = 6,
    Capabilities = 7,
    Landlock = 8,
    LandlockNotEnforced = 9,
    Seccomp = 10,
    Parent = 11,
}

impl Step {
    const ALL: [Step; 11] = [
        Step::ProcessGroup,
        Step::Namespaces,
        Step::PidNamespace,
        Step::Mounts,
        Step::Limits,
        Step::Descriptors,
        Step::Capabilities,
        Step::Landlock,
        Step::LandlockNotEnforced,
        Step::Seccomp,
        Step::Parent,
    ];

    fn what(self) -> &'static str {
        match self {
            Step::ProcessGroup => "the command could not be started in its own process group",
            Step::Namespaces => "the user and mount namespaces could not be entered",
            Step::PidNamespace => "the PID namespace could not be entered",
            Step::Mounts => {
                "the sandbox mounts (read-only system, hidden blocked paths, private /proc) failed"
            }
            Step::Limits => "the resource limits could not be set",
            Step::Descriptors => "inherited descriptors could not be closed",
            Step::Capabilities => "the capabilities could not be dropped",
            Step::Landlock => {
                "Landlock could not restrict the command (landlock_restrict_self failed)"
            }
            Step::LandlockNotEnforced => "the kernel did not enforce the Landlock ruleset",
            Step::Seccomp => "the seccomp filter could not be installed",
            Step::Parent => "the command could not be tied to ybs's lifetime (ybs is ending)",
        }
    }
}

fn fail(step: Step, error: impl Into<io::Error>) -> io::Error {
    let errno = error.into().raw_os_error().unwrap_or(0) & 0xffff;
    io::Error::from_raw_os_error(((step as i32) << 16) | errno)
}

/// The step a spawn error comes from and a sentence saying what failed, if it is one of ours.
pub(crate) fn describe(error: &io::Error) -> Option<(Step, String)> {
    let code = error.raw_os_error()?;
    let step = Step::ALL.into_iter().find(|s| *s as i32 == code >> 16)?;
    let errno = code & 0xffff;
    let why = if errno == 0 {
        step.what().to_string()
    } else {
        format!("{} ({})", step.what(), io::Error::from_raw_os_error(errno))
    };
    Some((step, why))
}

/// Whether a spawn failed making the mounts because a path had vanished since the plan was
/// made (`ENOENT`).
pub(crate) fn vanished_before_mounts(error: &io::Error) -> bool {
    describe(error).is_some_and(|(step, _)| step == Step::Mounts)
        && error.raw_os_error().map(|code| code & 0xffff) == Some(libc::ENOENT)
}

/// Resource limits, as (resource, value) pairs already capped at the current hard limits.
pub(crate) type Limits = Vec<(rustix::process::Resource, u64)>;

/// Everything the child applies.
pub(crate) struct ChildPlan {
    pub namespaces: Option<Plan>,
    pub limits: Limits,
    /// The highest capability number of this kernel.
    pub last_cap: u32,
    /// Whether the bounding set can and must be emptied (root, or inside our user namespace).
    pub privileged: bool,
    pub ruleset: Option<RulesetCreated>,
    pub filters: Vec<BpfProgram>,
    /// The working directory, entered again after the mounts: `spawn` enters it before our
    /// steps, and a directory entered before a mount over it stays the one below the mount.
    pub cwd: Option<std::ffi::CString>,
    /// Landlock rules for mounts the child makes itself (its `/proc` and `/dev/shm`): a
    /// rule on the directory they cover would not reach them.
    pub late_rules: Vec<(std::ffi::CString, BitFlags<AccessFs>)>,
    /// The `cgroup.procs` files of the command's cgroups (pids, memory), where it has them.
    pub cgroups: Vec<std::ffi::CString>,
    /// ybs's process id, when the command is to be killed as soon as the thread that started
    /// it ends (that thread waits for it; so it ends when ybs does, even by `SIGKILL`). With
    /// a PID namespace this is the process outside that waits, whose end kills everything
    /// inside.
    pub parent: Option<u32>,
}

impl ChildPlan {
    /// Runs in the child; on success the caller execs the command.
    pub(crate) fn apply(&mut self) -> io::Result<()> {
        if let Some(parent) = self.parent {
            die_with_parent(parent).map_err(|e| fail(Step::Parent, e))?;
        }
        // A session of its own (and so a process group the timeout kills): the command has
        // no controlling terminal, so `/dev/tty` cannot reach the user's (no OSC 52 to the
        // clipboard, no `stty -echo` that outlives ybs).
        rustix::process::setsid().map_err(|e| fail(Step::ProcessGroup, e))?;
        for procs in &self.cgroups {
            super::cgroup::join(procs).map_err(|e| fail(Step::Limits, e))?;
        }
        if let Some(plan) = &self.namespaces {
            enter_namespaces(plan)?;
            if let Some(cwd) = &self.cwd {
                rustix::process::chdir(cwd.as_c_str()).map_err(|e| fail(Step::Mounts, e))?;
            }
        }
        for (resource, value) in &self.limits {
            let limit = rustix::process::Rlimit {
                current: Some(*value),
                maximum: Some(*value),
            };
            rustix::process::setrlimit(*resource, limit).map_err(|e| fail(Step::Limits, e))?;
        }
        cloexec_above_stderr().map_err(|e| fail(Step::Descriptors, e))?;
        drop_capabilities(self.last_cap, self.privileged)
            .map_err(|e| fail(Step::Capabilities, e))?;
        let mut ruleset = self
            .ruleset
            .take()
            .ok_or_else(|| fail(Step::Landlock, io::Error::from_raw_os_error(0)))?;
        for (path, access) in &self.late_rules {
            let fd = rustix::fs::open(
                path.as_c_str(),
                OFlags::PATH | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| fail(Step::Landlock, e))?;
            // Adding a rule allocates nothing when it succeeds.
            ruleset = ruleset
                .add_rule(PathBeneath::new(fd, *access))
                .map_err(|_| fail(Step::Landlock, io::Error::from_raw_os_error(0)))?;
        }
        let status = ruleset
            .restrict_self()
            .map_err(|_| fail(Step::Landlock, io::Error::from_raw_os_error(0)))?;
        if status.ruleset == RulesetStatus::NotEnforced {
            return Err(fail(
                Step::LandlockNotEnforced,
                io::Error::from_raw_os_error(0),
            ));
        }
        for filter in &self.filters {
            seccompiler::apply_filter(filter)
                .map_err(|_| fail(Step::Seccomp, io::Error::from_raw_os_error(0)))?;
        }
        Ok(())
    }
}

/// Asks for `SIGKILL` when the thread that forked us ends, and fails if `parent` has gone
/// already (then the signal would never come).
fn die_with_parent(parent: u32) -> io::Result<()> {
    // SAFETY: prctl with integer arguments.
    #[allow(unsafe_code)]
    let set = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
    if set != 0 {
        return Err(io::Error::last_os_error());
    }
    let now = rustix::process::getppid().map_or(0, |pid| pid.as_raw_nonzero().get());
    if u32::try_from(now).ok() != Some(parent) {
        return Err(io::Error::from_raw_os_error(libc::ESRCH));
    }
    Ok(())
}

/// Enters the namespaces of `plan` and makes its mounts. With a PID namespace this forks:
/// the caller's process stays outside and only waits for the command (exiting with its
/// status), the new process is PID 1 inside and goes on to `exec`.
pub(crate) fn enter_namespaces(plan: &Plan) -> io::Result<()> {
    plan.enter().map_err(|e| fail(Step::Namespaces, e))?;
    if plan.pid {
        fork_into_pid_namespace()?;
    }
    plan.mount().map_err(|e| fail(Step::Mounts, e))
}

fn fork_into_pid_namespace() -> io::Result<()> {
    // SAFETY: the process is single-threaded (a child between fork and exec), so forking is
    // sound; both sides only make system calls afterwards.
    #[allow(unsafe_code)]
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(fail(Step::PidNamespace, io::Error::last_os_error()));
    }
    if pid == 0 {
        // Inside: die with the waiting process, so a kill of the group reaches everything.
        // SAFETY: prctl with integer arguments.
        #[allow(unsafe_code)]
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        }
        return Ok(());
    }
    // Outside: keep no descriptor but 0-2 (the spawn's status pipe must close when the
    // command execs), wait, and exit the way the command did. Never return: returning
    // would exec the command here, outside the sandbox.
    // SAFETY: close_range, waitpid, kill, signal and _exit with plain arguments.
    #[allow(unsafe_code)]
    unsafe {
        libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
        let mut status = 0;
        loop {
            let waited = libc::waitpid(pid, &mut status, 0);
            if waited == pid {
                break;
            }
            if waited < 0 && *libc::__errno_location() != libc::EINTR {
                libc::_exit(127);
            }
        }
        if libc::WIFEXITED(status) {
            libc::_exit(libc::WEXITSTATUS(status));
        }
        let signal = libc::WTERMSIG(status);
        libc::signal(signal, libc::SIG_DFL);
        libc::kill(libc::getpid(), signal);
        libc::_exit(128 + signal);
    }
}

const CLOSE_RANGE_CLOEXEC: u32 = 1 << 2;

/// Marks every descriptor above 2 close-on-exec (the spawn's status pipe must stay open
/// until `exec`, so they are not closed here).
fn cloexec_above_stderr() -> io::Result<()> {
    // SAFETY: close_range with plain integer arguments.
    #[allow(unsafe_code)]
    let result =
        unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC) };
    if result == 0 {
        return Ok(());
    }
    // Kernels before 5.11: one descriptor at a time.
    for fd in 3..65_536 {
        // SAFETY: fcntl on an integer descriptor; EBADF for closed ones is ignored.
        #[allow(unsafe_code)]
        unsafe {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
    Ok(())
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

const CAP_VERSION_3: u32 = 0x2008_0522;
/// `SECBIT_NOROOT`, `SECBIT_NO_SETUID_FIXUP`, `SECBIT_NO_CAP_AMBIENT_RAISE`, all locked, and
/// `SECBIT_KEEP_CAPS_LOCKED`: no way back to capabilities through uid 0 or `exec`.
const SECURE_BITS: libc::c_ulong = 0b1110_1111;

/// Empties the bounding, ambient, inheritable, permitted and effective sets, and checks.
fn drop_capabilities(last_cap: u32, privileged: bool) -> io::Result<()> {
    // SAFETY: prctl and capget/capset with pointers to local, correctly sized structs.
    #[allow(unsafe_code)]
    unsafe {
        if privileged {
            for cap in 0..=last_cap {
                if libc::prctl(libc::PR_CAPBSET_DROP, libc::c_ulong::from(cap), 0, 0, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            if libc::prctl(libc::PR_SET_SECUREBITS, SECURE_BITS, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        let mut header = CapHeader {
            version: CAP_VERSION_3,
            pid: 0,
        };
        let mut data = [CapData::default(); 2];
        if libc::syscall(libc::SYS_capset, &mut header, data.as_mut_ptr()) != 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) != 0 {
            return Err(io::Error::last_os_error());
        }
        if data
            .iter()
            .any(|d| d.effective != 0 || d.permitted != 0 || d.inheritable != 0)
        {
            return Err(io::Error::from_raw_os_error(libc::EPERM));
        }
    }
    Ok(())
}

/// The highest capability number of this kernel (read in the parent).
pub(crate) fn last_cap() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(40)
}
