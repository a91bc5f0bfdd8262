//! Cgroups per command, where the cgroup file system lets us make child cgroups (as root
//! today): a `pids` cgroup whose `pids.max` is the process limit (the kernel exempts uid 0
//! from `RLIMIT_NPROC`), and a `memory` cgroup whose limit holds for all the command's
//! processes together (`RLIMIT_AS` is per process: four processes may each use the limit).
//! The command joins them before anything else; they are removed after it.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rustix::fs::{Mode, OFlags};

/// A controller a command's cgroup is made in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Controller {
    /// Process count (`pids.max`).
    Pids,
    /// Memory of all the processes together (`memory.max`, v1 `memory.limit_in_bytes`).
    Memory,
}

impl Controller {
    fn name(self) -> &'static str {
        match self {
            Controller::Pids => "pids",
            Controller::Memory => "memory",
        }
    }

    /// The files the limit is written to: the v2 name, then the v1 ones.
    fn limit_files(self, v2: bool) -> &'static [&'static str] {
        match (self, v2) {
            (Controller::Pids, _) => &["pids.max"],
            (Controller::Memory, true) => &["memory.max", "memory.swap.max"],
            (Controller::Memory, false) => {
                &["memory.limit_in_bytes", "memory.memsw.limit_in_bytes"]
            }
        }
    }
}

/// A cgroup made for one command; removed when dropped.
pub(crate) struct CommandCgroup {
    dir: PathBuf,
    procs: CString,
}

impl CommandCgroup {
    /// A new child of our `controller` cgroup with its limit set to `max` (for memory, swap
    /// is limited to nothing more where the kernel lets us say so).
    pub(crate) fn create(controller: Controller, max: u64) -> io::Result<Self> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let (base, v2) = base(controller)
            .ok_or_else(|| io::Error::other(format!("no writable {} cgroup", controller.name())))?;
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("ybs-{}-{n}", std::process::id()));
        std::fs::create_dir(&dir)?;
        let group = CommandCgroup {
            procs: CString::new(dir.join("cgroup.procs").as_os_str().as_bytes())
                .map_err(io::Error::other)?,
            dir,
        };
        let files = controller.limit_files(v2);
        std::fs::write(group.dir.join(files[0]), max.to_string())?;
        for extra in &files[1..] {
            // v2 swap is a separate budget (0: none); v1 memsw is memory plus swap.
            let value = if v2 { 0 } else { max };
            let _ = std::fs::write(group.dir.join(extra), value.to_string());
        }
        Ok(group)
    }

    /// The `cgroup.procs` file the child writes `0` (itself) to.
    pub(crate) fn procs(&self) -> CString {
        self.procs.clone()
    }
}

impl Drop for CommandCgroup {
    fn drop(&mut self) {
        // The killed processes may take a moment to leave.
        for _ in 0..100 {
            match std::fs::remove_dir(&self.dir) {
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                _ => return,
            }
        }
    }
}

/// In the child: moves the calling process into the cgroup whose `cgroup.procs` is `procs`.
pub(crate) fn join(procs: &CString) -> io::Result<()> {
    let fd = rustix::fs::open(
        procs.as_c_str(),
        OFlags::WRONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    rustix::io::write(&fd, b"0")?;
    Ok(())
}

/// Whether commands can get a `controller` cgroup here (probed once): `Err` says why not.
pub(crate) fn support(controller: Controller) -> &'static Result<(), String> {
    static PIDS: OnceLock<Result<(), String>> = OnceLock::new();
    static MEMORY: OnceLock<Result<(), String>> = OnceLock::new();
    let cell = match controller {
        Controller::Pids => &PIDS,
        Controller::Memory => &MEMORY,
    };
    cell.get_or_init(|| {
        let probe = match controller {
            Controller::Pids => 16,
            Controller::Memory => 64 * 1024 * 1024,
        };
        CommandCgroup::create(controller, probe)
            .map(drop)
            .map_err(|e| format!("cannot make a {} cgroup ({e})", controller.name()))
    })
}

/// Our own cgroup directory of `controller`: cgroup v1's hierarchy of that name, or the v2
/// unified one where the controller is enabled for children; and whether it is v2.
fn base(controller: Controller) -> Option<(PathBuf, bool)> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let name = controller.name();
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let path = path.trim_start_matches('/');
        let (base, v2) = if controllers.split(',').any(|c| c == name) {
            (Path::new("/sys/fs/cgroup").join(name).join(path), false)
        } else if controllers.is_empty() {
            let v2 = Path::new("/sys/fs/cgroup").join(path);
            let enabled = std::fs::read_to_string(v2.join("cgroup.subtree_control"))
                .is_ok_and(|c| c.split_whitespace().any(|c| c == name));
            if !enabled {
                continue;
            }
            (v2, true)
        } else {
            continue;
        };
        if base.join("cgroup.procs").exists() {
            return Some((base, v2));
        }
    }
    None
}
