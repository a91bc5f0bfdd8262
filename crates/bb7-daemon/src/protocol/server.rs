//! The process around a [`Session`]: reads request lines from stdin (refusing lines over
//! 1 MiB), answers malformed ones at once, and hands the rest in order to a worker thread that
//! owns the session. Replies are written as single flushed lines; nothing else ever goes to
//! stdout. `ping`, `version` and `cancel` are answered by the reader directly, so they can
//! overtake queued work.
//!
//! A `send` is prepared on the worker thread, then streamed by its own task on the runtime,
//! working on a copy of the active chat; the task hands the chat back to the worker when it
//! is done ([`Job::Internal`]). While it streams (from the moment the `send` is read, so also
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

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::mpsc;

use crate::protocol::dispatch::{self, Routed};
use crate::protocol::error::Error;
use crate::protocol::parse::{self, MAX_LINE, TOO_LARGE};
use crate::protocol::replies::Reply;
use crate::protocol::requests::{Concurrency, Request};
pub use crate::protocol::shared::{Change, InFlight, Job, Output, Shared, fatal, send};
use crate::session::Session;

/// One line of input, or the marker of a line that was too long.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    Text(String),
    TooLong,
}

/// Reads lines of at most [`MAX_LINE`] bytes; longer lines are skipped whole.
async fn next_line<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let chunk = reader.fill_buf().await?;
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
            change(session, shared);
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
fn finish_stream(session: &mut Session, shared: &Shared, jobs: &mut mpsc::UnboundedReceiver<Job>) {
    let deadline = std::time::Instant::now() + STREAM_GRACE;
    while shared.streaming() && std::time::Instant::now() < deadline {
        match jobs.try_recv() {
            Ok(Job::Internal(change)) => change(session, shared),
            Ok(Job::Request(..) | Job::Stop) => {}
            Err(mpsc::error::TryRecvError::Empty) => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Err(mpsc::error::TryRecvError::Disconnected) => break,
        }
    }
    // What the stream posted after the hand-back (its final reply).
    while let Ok(job) = jobs.try_recv() {
        if let Job::Internal(change) = job {
            change(session, shared);
        }
    }
}

/// Runs the daemon until shutdown, end of input or SIGTERM. Returns the exit status.
pub async fn serve<R: AsyncRead + Unpin>(session: Session, input: R, output: Output) -> i32 {
    let (queue, mut jobs) = mpsc::unbounded_channel::<Job>();
    let (exit_tx, mut exit_rx) = mpsc::unbounded_channel::<()>();
    let shared = Shared {
        output: output.clone(),
        jobs: queue.clone(),
        stream: Arc::new(Mutex::new(None)),
        runtime: tokio::runtime::Handle::current(),
    };
    let worker_shared = shared.clone();
    let worker = std::thread::spawn(move || {
        let mut session = session;
        while let Some(job) = jobs.blocking_recv() {
            let stop = matches!(job, Job::Stop);
            if !run_job(&mut session, &worker_shared, job) {
                if !stop {
                    let _ = exit_tx.send(());
                }
                finish_stream(&mut session, &worker_shared, &mut jobs);
                break;
            }
        }
        drop(session);
    });

    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let mut terminate = terminate_signal();
    loop {
        let line = tokio::select! {
            line = next_line(&mut reader) => line,
            _ = exit_rx.recv() => break,
            _ = wait(&mut terminate) => {
                tracing::info!("SIGTERM: shutting down");
                break;
            }
        };
        let line = match line {
            Ok(Some(Line::Text(line))) => line,
            Ok(Some(Line::TooLong)) => {
                send(&output, &Reply::error(TOO_LARGE));
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
            Err(rejected) => {
                send(
                    &output,
                    &Reply::error(rejected.message).for_request(rejected.request_id.as_deref()),
                );
            }
            Ok((request_id, request)) if request.concurrency().is_immediate() => send(
                &output,
                &dispatch::immediate(&shared, request).for_request(request_id.as_deref()),
            ),
            // The stream slot is taken as the `send` is read, as the first bb7 does, so a
            // `cancel` read right after it already reaches it.
            Ok((request_id, request)) => {
                if request.concurrency() == Concurrency::Stream
                    && !shared.reserve_stream(request_id.as_deref())
                {
                    send(
                        &output,
                        &Reply::error(Error::Busy.to_string()).for_request(request_id.as_deref()),
                    );
                    continue;
                }
                if queue.send(Job::Request(request_id, request)).is_err() {
                    break;
                }
            }
        }
    }
    if let Ok(slot) = shared.stream.lock() {
        if let Some(stream) = slot.as_ref() {
            stream.cancel.cancel();
        }
    }
    let _ = queue.send(Job::Stop);
    drop(queue);
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

    #[tokio::test]
    async fn long_lines_are_skipped_whole() {
        let mut input = vec![b'x'; MAX_LINE + 10];
        input.extend_from_slice(b"\n{\"a\":1}\r\nlast");
        let mut reader = BufReader::with_capacity(1024, input.as_slice());
        assert_eq!(next_line(&mut reader).await.unwrap(), Some(Line::TooLong));
        assert_eq!(
            next_line(&mut reader).await.unwrap(),
            Some(Line::Text("{\"a\":1}".into()))
        );
        assert_eq!(
            next_line(&mut reader).await.unwrap(),
            Some(Line::Text("last".into()))
        );
        assert_eq!(next_line(&mut reader).await.unwrap(), None);
    }
}
