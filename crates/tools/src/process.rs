//! Running a child process with a timeout: its own process group, output captured up to a
//! cap, and the whole group killed on timeout and after the child exits, so a command's
//! background processes (`sleep 100 &`) never outlive the call. A [`CancelFlag`] set while
//! the child runs kills the group the same way (the user pressed Ctrl-C).

use std::io::{self, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, WaitId, WaitIdOptions};

use crate::cancel::CancelFlag;

/// What a finished (or killed) child produced.
#[derive(Debug)]
pub struct ProcessOutput {
    /// The exit status; a child killed by a signal has a signal status.
    pub status: ExitStatus,
    /// Standard output, lossily decoded, at most the cap.
    pub stdout: String,
    /// Standard error, lossily decoded, at most the cap.
    pub stderr: String,
    /// Whether stdout went over the cap (the rest was read and dropped).
    pub stdout_capped: bool,
    /// Whether stderr went over the cap.
    pub stderr_capped: bool,
    /// Whether the timeout killed it.
    pub timed_out: bool,
    /// Whether it was killed because the [`CancelFlag`] was set (the user cancelled).
    pub cancelled: bool,
}

impl ProcessOutput {
    /// The exit code, or 128 + the signal number for a child killed by a signal (as shells
    /// report it).
    pub fn exit_code(&self) -> i32 {
        exit_code(self.status)
    }
}

/// The exit code of `status`, or 128 + the signal number for a child killed by a signal.
pub(crate) fn exit_code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(-1)
}

/// Spawns `command` with piped stdout/stderr and null stdin, and waits at most `timeout`.
///
/// The command must already be set up to start its own process group (either
/// `CommandExt::process_group(0)` or a `setpgid` in `pre_exec`): the group is killed with
/// `SIGKILL` on timeout, and again once the child has exited to end whatever it left behind.
pub fn run(command: Command, timeout: Duration, cap_bytes: usize) -> io::Result<ProcessOutput> {
    run_cancellable(command, timeout, cap_bytes, &CancelFlag::new())
}

/// [`run`], and also kills the process group as soon as `cancel` is set (it is polled every
/// few milliseconds while the child runs); the output then has `cancelled` set.
pub fn run_cancellable(
    command: Command,
    timeout: Duration,
    cap_bytes: usize,
    cancel: &CancelFlag,
) -> io::Result<ProcessOutput> {
    let raw = run_raw(command, timeout, cap_bytes, cancel)?;
    Ok(ProcessOutput {
        status: raw.status,
        stdout: String::from_utf8_lossy(&raw.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&raw.stderr).into_owned(),
        stdout_capped: raw.stdout_capped,
        stderr_capped: raw.stderr_capped,
        timed_out: raw.timed_out,
        cancelled: raw.cancelled,
    })
}

/// What [`run_binary`] returns: the output's bytes as they came (an image, say).
#[derive(Debug)]
pub struct BinaryOutput {
    /// The exit status.
    pub status: ExitStatus,
    /// Standard output, at most the cap.
    pub stdout: Vec<u8>,
    /// Standard error, at most the cap.
    pub stderr: Vec<u8>,
    /// Whether stdout went over the cap.
    pub stdout_capped: bool,
    /// Whether stderr went over the cap.
    pub stderr_capped: bool,
    /// Whether the timeout killed it.
    pub timed_out: bool,
    /// Whether the [`CancelFlag`] killed it.
    pub cancelled: bool,
}

/// [`run`] for a program whose output is not text: the bytes are kept as they are.
pub fn run_binary(
    command: Command,
    timeout: Duration,
    cap_bytes: usize,
) -> io::Result<BinaryOutput> {
    run_raw(command, timeout, cap_bytes, &CancelFlag::new())
}

fn run_raw(
    mut command: Command,
    timeout: Duration,
    cap_bytes: usize,
    cancel: &CancelFlag,
) -> io::Result<BinaryOutput> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn()?;
    let stdout = child.stdout.take().map(|out| reader(out, cap_bytes));
    let stderr = child.stderr.take().map(|err| reader(err, cap_bytes));
    let waited = wait_or_kill(&mut child, timeout, cancel);
    // Reap the child even when waiting failed, so no zombie is left behind.
    let status = child.wait()?;
    let ending = waited?;
    let deadline = Instant::now() + PIPE_GRACE;
    let (stdout, stdout_capped) = join(stdout, deadline);
    let (stderr, stderr_capped) = join(stderr, deadline);
    Ok(BinaryOutput {
        status,
        stdout,
        stderr,
        stdout_capped,
        stderr_capped,
        timed_out: ending == Ending::TimedOut,
        cancelled: ending == Ending::Cancelled,
    })
}

/// Why the wait for a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    Exited,
    TimedOut,
    Cancelled,
}

/// Waits for the child to exit without reaping it (so its pid, which is the group id, stays
/// reserved), kills its group, and reports whether it exited, timed out or was cancelled.
fn wait_or_kill(child: &mut Child, timeout: Duration, cancel: &CancelFlag) -> io::Result<Ending> {
    let pid = Pid::from_raw(i32::try_from(child.id()).map_err(io::Error::other)?)
        .ok_or_else(|| io::Error::other("child has pid 0"))?;
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(1);
    loop {
        let exited = match rustix::process::waitid(
            WaitId::Pid(pid),
            WaitIdOptions::EXITED | WaitIdOptions::NOWAIT | WaitIdOptions::NOHANG,
        ) {
            Ok(status) => status.is_some(),
            Err(rustix::io::Errno::INTR) => false,
            Err(e) => {
                kill_group(pid);
                return Err(e.into());
            }
        };
        let ending = if exited {
            Some(Ending::Exited)
        } else if cancel.is_cancelled() {
            Some(Ending::Cancelled)
        } else if Instant::now() >= deadline {
            Some(Ending::TimedOut)
        } else {
            None
        };
        if let Some(ending) = ending {
            kill_group(pid);
            return Ok(ending);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

pub(crate) fn kill_group(pid: Pid) {
    // ESRCH (the group is already empty) is the normal case after a clean exit.
    let _ = rustix::process::kill_process_group(pid, Signal::KILL);
}

/// Output collected by a reader thread, shared so the caller can take what arrived even if
/// an escaped grandchild keeps the pipe open.
type Collected = Arc<Mutex<(Vec<u8>, bool)>>;

/// How long to wait for the pipes to close after the process group was killed.
const PIPE_GRACE: Duration = Duration::from_secs(2);

fn reader<R: Read + Send + 'static>(mut stream: R, cap: usize) -> (Collected, mpsc::Receiver<()>) {
    let collected: Collected = Arc::default();
    let (done, finished) = mpsc::channel();
    let shared = Arc::clone(&collected);
    std::thread::spawn(move || {
        let mut buffer = [0u8; 16 * 1024];
        loop {
            match stream.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => {
                    let Ok(mut guard) = shared.lock() else { break };
                    let (kept, capped) = &mut *guard;
                    let room = cap.saturating_sub(kept.len());
                    if n > room {
                        *capped = true;
                    }
                    kept.extend_from_slice(&buffer[..n.min(room)]);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = done.send(());
    });
    (collected, finished)
}

fn join(handle: Option<(Collected, mpsc::Receiver<()>)>, deadline: Instant) -> (Vec<u8>, bool) {
    let Some((collected, finished)) = handle else {
        return (Vec::new(), false);
    };
    let _ = finished.recv_timeout(deadline.saturating_duration_since(Instant::now()));
    match collected.lock() {
        Ok(mut guard) => (std::mem::take(&mut guard.0), guard.1),
        Err(_) => (Vec::new(), false),
    }
}
