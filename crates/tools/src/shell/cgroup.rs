//! A pids cgroup per command, for root: the kernel exempts uid 0 from `RLIMIT_NPROC`, so
//! where the cgroup file system lets us make a child cgroup, its `pids.max` is the process
//! limit instead. The command joins it before anything else; the cgroup is removed after.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rustix::fs::{Mode, OFlags};

/// A cgroup made for one command; removed when dropped.
pub(crate) struct PidsCgroup {
    dir: PathBuf,
    procs: CString,
}

impl PidsCgroup {
    /// A new child of our pids cgroup with `pids.max` set to `max`.
    pub(crate) fn create(max: u64) -> io::Result<Self> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let base = pids_base().ok_or_else(|| io::Error::other("no writable pids cgroup"))?;
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("ybs-{}-{n}", std::process::id()));
        std::fs::create_dir(&dir)?;
        let group = PidsCgroup {
            procs: CString::new(dir.join("cgroup.procs").as_os_str().as_bytes())
                .map_err(io::Error::other)?,
            dir,
        };
        std::fs::write(group.dir.join("pids.max"), max.to_string())?;
        Ok(group)
    }

    /// The `cgroup.procs` file the child writes `0` (itself) to.
    pub(crate) fn procs(&self) -> CString {
        self.procs.clone()
    }
}

impl Drop for PidsCgroup {
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

/// Whether commands can get a pids cgroup here (probed once): `Err` says why not.
pub(crate) fn support() -> &'static Result<(), String> {
    static SUPPORT: OnceLock<Result<(), String>> = OnceLock::new();
    SUPPORT.get_or_init(|| {
        PidsCgroup::create(16)
            .map(drop)
            .map_err(|e| format!("cannot make a pids cgroup ({e})"))
    })
}

/// Our own pids cgroup directory: cgroup v1's `pids` hierarchy or the v2 unified one.
fn pids_base() -> Option<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let path = path.trim_start_matches('/');
        let base = if controllers.split(',').any(|c| c == "pids") {
            Path::new("/sys/fs/cgroup/pids").join(path)
        } else if controllers.is_empty() {
            let v2 = Path::new("/sys/fs/cgroup").join(path);
            let enabled = std::fs::read_to_string(v2.join("cgroup.subtree_control"))
                .is_ok_and(|c| c.split_whitespace().any(|c| c == "pids"));
            if !enabled {
                continue;
            }
            v2
        } else {
            continue;
        };
        if base.join("cgroup.procs").exists() {
            return Some(base);
        }
    }
    None
}
