//! The process around a [`Session`], in two threads. The reader ([`reader`]) only reads:
//! it refuses lines over 1 MiB, answers malformed lines and `ping`, `version` and `cancel`
//! at once, takes the stream slot for a `send`, and queues every other request. The worker
//! ([`worker`]) owns the session and runs what is queued in order, so requests that change
//! state never overtake each other, while `ping` and `cancel` are answered however long a
//! request takes. Replies are written as single flushed lines; nothing else ever goes to
//! stdout. [`dispatch`] hands each request to its handler.
//!
//! A `send` is prepared on the session, then streamed by its own task on the runtime,
//! working on a copy of the active chat; the task hands the chat back to the session when it
//! is done ([`Job::Internal`], queued like a request). While it streams (from the moment the
//! `send` is read, so also while its model list is fetched), each request's [`Concurrency`]
//! decides: read-only actions, `init` on the open project, `chat_rename`, `generate_title`,
//! `chat_force_unlock`, `bb7_init` and `chat_move` of another chat are still answered; other
//! state-changing ones (`sync_context` among them: it would change the streaming chat's
//! context) get `Another request is already in progress`.
//! Network calls (`get_models`, `get_balance`, titles) and token counts run as tasks that
//! reply when done.
//!
//! The daemon stops cleanly on `shutdown`, on end of input and on SIGTERM (releasing its chat
//! lock). When the safety guard trips it prints the reason on stderr and exits at once with
//! status 2.
//!
//! [`Concurrency`]: crate::wire::requests::Concurrency

pub mod dispatch;
pub mod input;
mod reader;
mod slow;
mod worker;

use std::io::Read;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

pub use crate::send::shared::{Change, InFlight, Job, Output, Queue, Shared, fatal, send};
use crate::session::Session;

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
        background: Arc::default(),
    };
    let worker = {
        let shared = shared.clone();
        let exit = exit.clone();
        std::thread::spawn(move || worker::work(session, &shared, &exit))
    };
    {
        let shared = shared.clone();
        std::thread::spawn(move || reader::read(&shared, &exit, input));
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
