//! Background jobs: commands `run_shell` starts with `background: true` and leaves running.
//! They run under exactly the rules of a foreground command (the command is set up by
//! [`shell::prepare`](crate::shell)), without a timeout, and end when the model stops them,
//! the user does, or the session ends ([`Jobs`] stops them all when its last clone goes).
//!
//! Each job has a thread that starts its command, waits for it without reaping it (so its
//! process group id cannot be reused while [`Jobs::stop`] may still signal it), kills what
//! the command left in its group, and then reaps it. Its output is kept bounded
//! ([`OutputBuffer`]).

mod output;

use std::io::Read;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, mpsc};
use std::time::{Duration, Instant};

use rustix::process::{Pid, WaitId, WaitIdOptions};

use crate::path_sandbox::PathSandbox;
use crate::process::{exit_code, kill_group};
use crate::shell::{self, ShellError, ShellPolicy};
use output::OutputBuffer;

/// How many lines of a job's output a person's list shows.
pub const JOB_TAIL_LINES: usize = 3;

/// How long [`Jobs::stop`] waits for a killed job to be reaped.
const STOP_WAIT: Duration = Duration::from_secs(5);

/// The session's background jobs. Cheap to clone: clones share the table.
#[derive(Debug, Clone, Default)]
pub struct Jobs {
    table: Arc<Table>,
}

#[derive(Debug, Default)]
struct Table {
    jobs: Mutex<Vec<Arc<Job>>>,
    last_id: AtomicU32,
}

#[derive(Debug)]
struct Job {
    id: u32,
    command: String,
    started: Instant,
    state: Mutex<State>,
    output: Mutex<OutputBuffer>,
}

#[derive(Debug, Default)]
struct State {
    /// The process group's id, once started; `None` again once reaped.
    group: Option<Pid>,
    exit_code: Option<i32>,
    stopped: bool,
    ended: Option<Instant>,
}

/// A job as the model or a person sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobView {
    /// Its id (1, 2, …), as `read_job_output` and `stop_job` take it.
    pub id: u32,
    /// The command line it runs.
    pub command: String,
    /// How long it has run (until it ended, for one that has).
    pub running_for: Duration,
    /// Whether it still runs.
    pub running: bool,
    /// Its exit code, once it has ended.
    pub exit_code: Option<i32>,
    /// Whether it was stopped (by the model, the user or the session's end).
    pub stopped: bool,
    /// The last lines of its output.
    pub last_lines: Vec<String>,
}

/// What one read of a job returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRead {
    /// The job now.
    pub job: JobView,
    /// Its output since the previous read.
    pub new_output: String,
    /// How many bytes of output went by unread (dropped from the bounded buffer).
    pub missed_bytes: u64,
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Jobs {
    /// An empty table.
    pub fn new() -> Self {
        Jobs::default()
    }

    /// Starts `command` in `working_dir` under `policy` (blocked commands refused, sandboxed
    /// as a foreground command is) and returns its id once it has started.
    pub fn start(
        &self,
        policy: &ShellPolicy,
        sandbox: &PathSandbox,
        command: &str,
        working_dir: &Path,
    ) -> Result<u32, ShellError> {
        let id = self.table.last_id.fetch_add(1, Ordering::SeqCst) + 1;
        let mut attempt = 1;
        loop {
            let job = Arc::new(Job {
                id,
                command: command.to_owned(),
                started: Instant::now(),
                state: Mutex::new(State::default()),
                output: Mutex::new(OutputBuffer::new(policy.output_cap_bytes)),
            });
            return match launch(&job, shell::prepare(policy, sandbox, command, working_dir)?) {
                Ok(()) => {
                    locked(&self.table.jobs).push(job);
                    Ok(id)
                }
                Err(source) if attempt < shell::SETUP_ATTEMPTS && shell::set_up_again(&source) => {
                    attempt += 1;
                    continue;
                }
                Err(source) => Err(shell::spawn_error(policy, source)),
            };
        }
    }

    /// The job's output since the last read, and whether it runs; `None` for an unknown id.
    pub fn read_new(&self, id: u32) -> Option<JobRead> {
        let job = self.find(id)?;
        let new = locked(&job.output).read_new();
        Some(JobRead {
            job: job.view(),
            new_output: new.text,
            missed_bytes: new.missed_bytes,
        })
    }

    /// Stops the job (kills its process group) and waits a little for it to end; `None` for
    /// an unknown id. A job that had already ended is left as it was.
    pub fn stop(&self, id: u32) -> Option<JobView> {
        let job = self.find(id)?;
        job.kill();
        job.wait_ended(STOP_WAIT);
        Some(job.view())
    }

    /// Stops every running job; returns those that were running.
    pub fn stop_all(&self) -> Vec<JobView> {
        let running: Vec<Arc<Job>> = (locked(&self.table.jobs).iter())
            .filter(|job| job.is_running())
            .cloned()
            .collect();
        for job in &running {
            job.kill();
        }
        for job in &running {
            job.wait_ended(STOP_WAIT);
        }
        running.iter().map(|job| job.view()).collect()
    }

    /// Every job of the session, oldest first.
    pub fn list(&self) -> Vec<JobView> {
        locked(&self.table.jobs)
            .iter()
            .map(|job| job.view())
            .collect()
    }

    /// How many jobs run now.
    pub fn running(&self) -> usize {
        (locked(&self.table.jobs).iter())
            .filter(|job| job.is_running())
            .count()
    }

    fn find(&self, id: u32) -> Option<Arc<Job>> {
        locked(&self.table.jobs)
            .iter()
            .find(|job| job.id == id)
            .cloned()
    }
}

impl Drop for Table {
    /// The session has ended: its jobs end with it.
    fn drop(&mut self) {
        let jobs = std::mem::take(&mut *locked(&self.jobs));
        for job in &jobs {
            job.kill();
        }
        for job in &jobs {
            job.wait_ended(STOP_WAIT);
        }
    }
}

impl Job {
    fn is_running(&self) -> bool {
        locked(&self.state).exit_code.is_none()
    }

    fn kill(&self) {
        let mut state = locked(&self.state);
        if let Some(group) = state.group {
            state.stopped = true;
            kill_group(group);
        }
    }

    fn wait_ended(&self, at_most: Duration) {
        let deadline = Instant::now() + at_most;
        while self.is_running() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn view(&self) -> JobView {
        let state = locked(&self.state);
        let until = state.ended.unwrap_or_else(Instant::now);
        JobView {
            id: self.id,
            command: self.command.clone(),
            running_for: until.saturating_duration_since(self.started),
            running: state.exit_code.is_none(),
            exit_code: state.exit_code,
            stopped: state.stopped,
            last_lines: locked(&self.output).last_lines(JOB_TAIL_LINES),
        }
    }
}

/// Starts the prepared command of `job` on a thread of its own that waits for it, reaps it
/// and releases what it held; returns once it has started (or could not).
fn launch(job: &Arc<Job>, prepared: shell::Prepared) -> std::io::Result<()> {
    let shell::Prepared {
        command: mut process,
        held,
    } = prepared;
    let (started, spawned) = mpsc::channel();
    let watched = Arc::clone(job);
    std::thread::spawn(move || {
        process
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = match process.spawn() {
            Ok(child) => child,
            Err(error) => {
                held.finish();
                let _ = started.send(Err(error));
                return;
            }
        };
        let group = i32::try_from(child.id()).ok().and_then(Pid::from_raw);
        locked(&watched.state).group = group;
        let readers: Vec<_> = [
            child.stdout.take().map(|out| copy_into(out, &watched)),
            child.stderr.take().map(|err| copy_into(err, &watched)),
        ]
        .into_iter()
        .flatten()
        .collect();
        let _ = started.send(Ok(()));
        if let Some(group) = group {
            while let Err(rustix::io::Errno::INTR) = rustix::process::waitid(
                WaitId::Pid(group),
                WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
            ) {}
        }
        {
            let mut state = locked(&watched.state);
            if let Some(group) = state.group.take() {
                // What the command left behind in its group ends with it.
                kill_group(group);
            }
            let code = child.wait().map_or(-1, exit_code);
            // What it held (placeholders in the project, its temp dir, its cgroups) is
            // released before it counts as ended: whoever stops it, the session's end
            // too, finds nothing of it left behind.
            if let Some(note) = held.finish() {
                locked(&watched.output).push(note.as_bytes());
            }
            state.exit_code = Some(code);
            state.ended = Some(Instant::now());
        }
        for reader in readers {
            let _ = reader.join();
        }
    });
    spawned.recv().unwrap_or_else(|_| {
        Err(std::io::Error::other(
            "the job's thread ended before starting it",
        ))
    })
}

/// Copies `stream` into the job's output until it closes.
fn copy_into<R: Read + Send + 'static>(
    mut stream: R,
    job: &Arc<Job>,
) -> std::thread::JoinHandle<()> {
    let job = Arc::clone(job);
    std::thread::spawn(move || {
        let mut buffer = [0u8; 16 * 1024];
        loop {
            match stream.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => locked(&job.output).push(&buffer[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
    })
}
