//! The worker: the one thread that owns the [`Session`]. It runs the queued jobs in the order
//! they were queued (the requests the reader read, and the changes background tasks hand
//! back), each checked against the stream in flight by its [`Concurrency`], and writes their
//! replies.

use tokio::sync::mpsc;

use crate::send::shared::{Job, Shared, fatal};
use crate::server::dispatch::{self, Routed};
use crate::server::slow;
use crate::session::Session;
use crate::wire::error::Error;
use crate::wire::reply::Reply;
use crate::wire::requests::{Concurrency, Request};

/// How long stopping waits for a cancelled stream to record its abort.
const STREAM_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Runs the queued jobs on `session` until a stop (`shutdown`, the end of input, SIGTERM);
/// then winds down and drops the session (releasing its chat lock).
pub(super) fn work(mut session: Session, shared: &Shared, exit: &mpsc::UnboundedSender<()>) {
    loop {
        shared.jobs.wait();
        while let Some(job) = shared.jobs.pop() {
            let stop = matches!(job, Job::Stop);
            if run_job(&mut session, shared, job) {
                continue;
            }
            if !stop {
                let _ = exit.send(());
            }
            if let Ok(stream) = shared.stream.lock() {
                if let Some(stream) = stream.as_ref() {
                    stream.cancel.cancel();
                }
            }
            finish_stream(&mut session, shared);
            shared.jobs.close();
            return;
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

/// Runs one job on the session. Returns false to stop.
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
    slow::pause_before(action);
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
