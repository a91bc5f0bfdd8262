//! The process around a [`Session`]: a reader thread reads request lines from stdin
//! (refusing lines over 1 MiB) and answers malformed ones at once. The rest run in order on
//! the session: on the reader itself when the session is free (after anything still queued,
//! so a small request costs no hand-off between threads), otherwise queued for the worker
//! thread that holds it. Replies are written as single flushed lines; nothing else ever goes
//! to stdout. `ping`, `version` and `cancel` are answered by the reader directly, so they can
//! overtake work queued behind a busy session.
//!
//! A `send` is prepared on the session, then streamed by its own task on the runtime,
//! working on a copy of the active chat; the task hands the chat back to the session when it
//! is done ([`Job::Internal`], queued like a request). While it streams (from the moment the `send` is read, so also
//! while its model list is fetched), each request's [`Concurrency`] decides: read-only
//! actions, `init` on the open project, `chat_rename`, `generate_title`, `chat_force_unlock`,
//! `bb7_init` and `chat_move` of another chat are still answered; other state-changing ones
//! (`sync_context` among them: it would change the streaming chat's context) get `Another
//! request is already in progress`.
//! Network calls (`get_models`, `get_balance`, titles) run as tasks that reply when done.
//!
//! The daemon stops cleanly on `shutdown`, on end of input and on SIGTERM (releasing its chat
//! lock). When the safety guard trips it prints the reason on stderr and exits at once with
//! status 2.

pub mod dispatch;
pub mod input;

use std::io::{BufRead, Read};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use crate::server::dispatch::{self, Routed};
use crate::wire::error::Error;
use crate::wire::parse::{self, MAX_LINE, TOO_LARGE};
use crate::wire::reply::Reply;
use crate::wire::requests::{Concurrency, Request};
pub use crate::send::shared::{Change, InFlight, Job, Output, Queue, Shared, fatal, send};
use crate::session::Session;

/// One line of input, or the marker of a line that was too long.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    Text(String),
    TooLong,
}

/// Reads lines of at most [`MAX_LINE`] bytes; longer lines are skipped whole.
fn next_line<R: BufRead>(reader: &mut R) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            return Ok(match (line.is_empty(), too_long) {
                (_, true) => Some(Line::TooLong),
                (true, false) => None,
                (false, false) => Some(Line::Text(String::from_utf8_lossy(&line).into_owned())),
            });
        }
        let (taken, done) = match chunk.iter().position(|byte| *byte == b'\n') {
            Some(end) => (end + 1, true),
            None => (chunk.len(), false),
        };
        let body = &chunk[..if done { taken - 1 } else { taken }];
        if !too_long {
            if line.len() + body.len() > MAX_LINE {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(body);
            }
        }
        reader.consume(taken);
        if done {
            if too_long {
                return Ok(Some(Line::TooLong));
            }
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(Some(Line::Text(
                String::from_utf8_lossy(&line).into_owned(),
            )));
        }
    }
}

/// Whether a queued request may run while a stream is in flight (its [`Concurrency`]).
fn may_run_beside_stream(session: &Session, request: &Request) -> bool {
    match request.concurrency() {
        Concurrency::Immediate | Concurrency::ReadOnly | Concurrency::BesideStream => true,
        // The reader took the slot for this very `send`.
        Concurrency::Stream => true,
        Concurrency::SameProject(project_root) => session.initialized_at(project_root),
        Concurrency::OtherChat(id) => session.active().is_none_or(|active| active.chat.id != id),
        Concurrency::Exclusive => false,
    }
}

/// Runs one job on the session's thread. Returns false to stop.
fn run_job(session: &mut Session, shared: &Shared, job: Job) -> bool {
    let (request_id, request) = match job {
        Job::Internal(change) => {
            // A bug in a hand-back must not take the daemon down either.
            let ran =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| change(session, shared)));
            if ran.is_err() {
                tracing::error!("internal error in a background task's hand-back");
            }
            return true;
        }
        Job::Request(request_id, request) => (request_id, request),
        Job::Stop => return false,
    };
    let action = request.action();
    tracing::debug!(action, "request");
    if shared.streaming() && !may_run_beside_stream(session, &request) {
        shared.send(&Reply::error(Error::Busy.to_string()).for_request(request_id.as_deref()));
        return true;
    }
    // A bug in one handler must not take the daemon (and the user's session) down.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        dispatch::route(session, shared, request_id.clone(), request)
    }))
    .unwrap_or_else(|panic| {
        let why = panic
            .downcast_ref::<&str>()
            .map(|text| (*text).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_owned());
        Err(Error::Invalid(format!(
            "Internal error while handling {action}: {why}"
        )))
    });
    match outcome {
        Ok(Routed::Later) => true,
        Ok(Routed::Reply(reply)) => {
            shared.send(&reply.for_request(request_id.as_deref()));
            true
        }
        Ok(Routed::Shutdown) => {
            if let Ok(slot) = shared.stream.lock() {
                if let Some(stream) = slot.as_ref() {
                    stream.cancel.cancel();
                }
            }
            shared.send(&Reply::ok().for_request(request_id.as_deref()));
            false
        }
        Err(err) if err.is_fatal() => fatal(&err),
        Err(err) => {
            tracing::info!(action, error = %err, "request failed");
            shared.send(&Reply::error(err.to_string()).for_request(request_id.as_deref()));
            true
        }
    }
}

/// How long stopping waits for a cancelled stream to record its abort.
const STREAM_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// On the way out with a stream in flight (already cancelled): runs the stream's hand-back
/// jobs until the chat is back, so the abort is recorded and no temporary file is left
/// behind; requests still queued get no reply. Gives up after [`STREAM_GRACE`].
fn finish_stream(session: &mut Session, shared: &Shared) {
    let deadline = std::time::Instant::now() + STREAM_GRACE;
    while shared.streaming() && std::time::Instant::now() < deadline {
        match shared.jobs.pop() {
            Some(Job::Internal(change)) => change(session, shared),
            Some(Job::Request(..) | Job::Stop) => {}
            None => std::thread::sleep(std::time::Duration::from_millis(5)),
        }
    }
    // What the stream posted after the hand-back (its final reply).
    while let Some(job) = shared.jobs.pop() {
        if let Job::Internal(change) = job {
            change(session, shared);
        }
    }
}

/// The session and what runs it: the worker thread and the reader both take it, one at a
/// time, from here.
struct Daemon {
    /// `None` once the daemon has stopped (the session, and its chat lock, released).
    session: Mutex<Option<Session>>,
    shared: Shared,
    /// Tells [`serve`] to stop.
    exit: mpsc::UnboundedSender<()>,
}

impl Daemon {
    /// Runs the queued jobs on `session` until the queue is empty; on a stop (`shutdown`, or
    /// the end of input) winds down and empties `slot`. Returns false once stopped.
    fn drain(&self, slot: &mut Option<Session>) -> bool {
        if slot.is_none() {
            return false;
        }
        while let Some(job) = self.shared.jobs.pop() {
            if !self.run(slot, job) {
                return false;
            }
        }
        true
    }

    /// Runs `job` on the session in `slot`; false (the daemon wound down) on a stop.
    fn run(&self, slot: &mut Option<Session>, job: Job) -> bool {
        let Some(session) = slot.as_mut() else {
            return false;
        };
        let stop = matches!(job, Job::Stop);
        if run_job(session, &self.shared, job) {
            return true;
        }
        if !stop {
            let _ = self.exit.send(());
        }
        if let Ok(stream) = self.shared.stream.lock() {
            if let Some(stream) = stream.as_ref() {
                stream.cancel.cancel();
            }
        }
        finish_stream(session, &self.shared);
        *slot = None;
        // Whichever thread stopped, the worker thread must see it (the job that woke it may
        // have been taken by the reader).
        self.shared.jobs.close();
        false
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Session>> {
        self.session
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The worker thread: runs what is queued while the reader is busy, and the background
    /// tasks' hand-backs.
    fn work(&self) {
        loop {
            self.shared.jobs.wait();
            if !self.drain(&mut self.lock()) {
                return;
            }
        }
    }

    /// A request read from the input. When the session is free it runs here, on the reader,
    /// after anything still queued (no hand-off to another thread); while the worker thread
    /// holds the session it is queued behind it. Returns false once stopped.
    fn request(&self, job: Job) -> bool {
        let mut slot = match self.session.try_lock() {
            Ok(slot) => slot,
            Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => {
                self.shared.jobs.push(job);
                return true;
            }
        };
        self.drain(&mut slot) && self.run(&mut slot, job)
    }

    /// The reader: reads request lines until the end of input or a stop, answers the
    /// immediate ones and malformed lines at once, runs or queues the rest in order.
    fn read<R: Read>(&self, input: R) {
        let output = &self.shared.output;
        let mut reader = std::io::BufReader::with_capacity(64 * 1024, input);
        loop {
            let line = match next_line(&mut reader) {
                Ok(Some(Line::Text(line))) => line,
                Ok(Some(Line::TooLong)) => {
                    send(output, &Reply::error(TOO_LARGE));
                    continue;
                }
                Ok(None) => break,
                Err(err) => {
                    tracing::error!(error = %err, "stdin failed");
                    break;
                }
            };
            if line.trim().is_empty() {
                continue;
            }
            match parse::parse_line(&line) {
                Err(rejected) => send(
                    output,
                    &Reply::error(rejected.message).for_request(rejected.request_id.as_deref()),
                ),
                Ok((request_id, request)) if request.concurrency().is_immediate() => send(
                    output,
                    &dispatch::immediate(&self.shared, request).for_request(request_id.as_deref()),
                ),
                // The stream slot is taken as the `send` is read, as the first bb7 does, so a
                // `cancel` read right after it already reaches it.
                Ok((request_id, request)) => {
                    if request.concurrency() == Concurrency::Stream
                        && !self.shared.reserve_stream(request_id.as_deref())
                    {
                        send(
                            output,
                            &Reply::error(Error::Busy.to_string())
                                .for_request(request_id.as_deref()),
                        );
                        continue;
                    }
                    if !self.request(Job::Request(request_id, request)) {
                        return;
                    }
                }
            }
        }
        let _ = self.exit.send(());
    }
}

/// Runs the daemon until shutdown, end of input or SIGTERM. Returns the exit status.
///
/// `input` is read on a thread of its own, which is left blocked in its read when the daemon
/// stops another way (the caller exits the process).
pub async fn serve<R: Read + Send + 'static>(session: Session, input: R, output: Output) -> i32 {
    let (exit, mut exit_rx) = mpsc::unbounded_channel::<()>();
    let shared = Shared {
        output,
        jobs: Arc::new(Queue::default()),
        stream: Arc::new(Mutex::new(None)),
        runtime: tokio::runtime::Handle::current(),
    };
    let daemon = Arc::new(Daemon {
        session: Mutex::new(Some(session)),
        shared: shared.clone(),
        exit,
    });
    let worker = {
        let daemon = daemon.clone();
        std::thread::spawn(move || daemon.work())
    };
    {
        let daemon = daemon.clone();
        std::thread::spawn(move || daemon.read(input));
    }
    let mut terminate = terminate_signal();
    tokio::select! {
        _ = exit_rx.recv() => {}
        _ = wait(&mut terminate) => tracing::info!("SIGTERM: shutting down"),
    }
    if let Ok(slot) = shared.stream.lock() {
        if let Some(stream) = slot.as_ref() {
            stream.cancel.cancel();
        }
    }
    shared.jobs.push(Job::Stop);
    drop(daemon);
    drop(shared);
    let _ = tokio::task::spawn_blocking(move || worker.join()).await;
    0
}

#[cfg(unix)]
type Terminate = Option<tokio::signal::unix::Signal>;
#[cfg(not(unix))]
type Terminate = Option<()>;

#[cfg(unix)]
fn terminate_signal() -> Terminate {
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok()
}

#[cfg(not(unix))]
fn terminate_signal() -> Terminate {
    None
}

#[cfg(unix)]
async fn wait(signal: &mut Terminate) {
    match signal {
        Some(signal) => {
            signal.recv().await;
        }
        None => std::future::pending::<()>().await,
    }
}

#[cfg(not(unix))]
async fn wait(_: &mut Terminate) {
    std::future::pending::<()>().await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn long_lines_are_skipped_whole() {
        let mut input = vec![b'x'; MAX_LINE + 10];
        input.extend_from_slice(b"\n{\"a\":1}\r\nlast");
        let mut reader = std::io::BufReader::with_capacity(1024, input.as_slice());
        assert_eq!(next_line(&mut reader).unwrap(), Some(Line::TooLong));
        assert_eq!(
            next_line(&mut reader).unwrap(),
            Some(Line::Text("{\"a\":1}".into()))
        );
        assert_eq!(
            next_line(&mut reader).unwrap(),
            Some(Line::Text("last".into()))
        );
        assert_eq!(next_line(&mut reader).unwrap(), None);
    }
}
