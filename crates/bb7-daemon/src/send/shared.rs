//! What the worker (the session's thread), the reader and the background tasks (streams,
//! network calls) share: the reply output, the session's job [`Queue`] and the stream in
//! flight. This module imports no handler, so the server, dispatch and the tasks of
//! [`crate::send`] can all depend on it without a cycle.

use std::collections::VecDeque;
use std::io::Write;
use std::sync::{Arc, Condvar, Mutex};

use crate::session::Session;
use crate::wire::reply::Reply;
use crate::wire::requests::Request;

/// Where replies go.
pub type Output = Arc<Mutex<Box<dyn Write + Send>>>;

/// Writes one reply line and flushes (one write of the line with its newline).
pub fn send(output: &Output, reply: &Reply) {
    let mut line = reply.to_line();
    tracing::debug!(reply = %line, "reply");
    line.push('\n');
    if let Ok(mut out) = output.lock() {
        let _ = out.write_all(line.as_bytes());
        let _ = out.flush();
    }
}

/// A change to run on the session's thread.
pub type Change = Box<dyn FnOnce(&mut Session, &Shared) + Send>;

/// Work for the session's thread: a client request, or a change a stream task hands back
/// (the session is only ever touched on that thread).
pub enum Job {
    /// A request with its id.
    Request(Option<String>, Request),
    /// Runs on the session's thread.
    Internal(Change),
    /// End of input: stop the thread.
    Stop,
}

/// The session's jobs, in order, for the worker thread that owns the session: the requests
/// the reader queued and the changes background tasks hand back.
#[derive(Default)]
pub struct Queue {
    jobs: Mutex<Jobs>,
    ready: Condvar,
}

#[derive(Default)]
struct Jobs {
    queued: VecDeque<Job>,
    /// The daemon stopped: nothing more runs.
    closed: bool,
}

impl Queue {
    /// Queues `job` and wakes the worker thread.
    pub fn push(&self, job: Job) {
        if let Ok(mut jobs) = self.jobs.lock() {
            jobs.queued.push_back(job);
        }
        self.ready.notify_one();
    }

    /// The next job, if any.
    pub fn pop(&self) -> Option<Job> {
        self.jobs.lock().ok()?.queued.pop_front()
    }

    /// Blocks until a job is queued (without taking it) or the queue is closed.
    pub fn wait(&self) {
        let Ok(mut jobs) = self.jobs.lock() else {
            return;
        };
        while jobs.queued.is_empty() && !jobs.closed {
            jobs = match self.ready.wait(jobs) {
                Ok(jobs) => jobs,
                Err(_) => return,
            };
        }
    }

    /// Takes the jobs at the front of the queue for as long as `matches` holds for them:
    /// identical read-only requests queued one after another, with nothing between them
    /// that could change what they read, are answered by one computation.
    pub fn take_front_while(&self, matches: impl Fn(&Job) -> bool) -> Vec<Job> {
        let Ok(mut jobs) = self.jobs.lock() else {
            return Vec::new();
        };
        let mut taken = Vec::new();
        while jobs.queued.front().is_some_and(&matches) {
            taken.extend(jobs.queued.pop_front());
        }
        taken
    }

    /// Closes the queue: [`wait`](Queue::wait) returns at once from now on.
    pub fn close(&self) {
        if let Ok(mut jobs) = self.jobs.lock() {
            jobs.closed = true;
        }
        self.ready.notify_all();
    }
}

/// The stream in flight: its request id and how to stop it.
#[derive(Debug, Clone)]
pub struct InFlight {
    /// The `send` request's id ("" when it had none).
    pub request_id: String,
    /// Cancels the stream.
    pub cancel: tokio_util::sync::CancellationToken,
}

/// What the session's thread and the stream tasks share.
#[derive(Clone)]
pub struct Shared {
    /// Where replies go.
    pub output: Output,
    /// The session's queue.
    pub jobs: Arc<Queue>,
    /// The stream in flight, if any (one at a time).
    pub stream: Arc<Mutex<Option<InFlight>>>,
    /// The runtime streams run on.
    pub runtime: tokio::runtime::Handle,
    /// The counting jobs running off the session's thread (see [`MAX_BACKGROUND`]).
    pub background: Arc<Background>,
}

/// The most counting jobs that run (or wait for a thread) at once. Each holds what it counts
/// (a chat's outputs, megabytes each): a client pipelining hundreds of requests must not make
/// the daemon hold hundreds of copies; past this the session's thread waits for one to end
/// (`ping` and `cancel` are answered by the reader meanwhile).
pub const MAX_BACKGROUND: usize = 4;

/// How many counting jobs are in flight.
#[derive(Default)]
pub struct Background {
    running: Mutex<usize>,
    ended: Condvar,
}

impl Background {
    /// Waits until fewer than [`MAX_BACKGROUND`] jobs run, then counts one more.
    fn enter(self: &Arc<Self>) -> BackgroundSlot {
        if let Ok(mut running) = self.running.lock() {
            while *running >= MAX_BACKGROUND {
                running = self
                    .ended
                    .wait(running)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
            }
            *running += 1;
        }
        BackgroundSlot(Arc::clone(self))
    }
}

/// One counting job's place; given back when dropped.
struct BackgroundSlot(Arc<Background>);

impl Drop for BackgroundSlot {
    fn drop(&mut self) {
        if let Ok(mut running) = self.0.running.lock() {
            *running = running.saturating_sub(1);
        }
        self.0.ended.notify_one();
    }
}

impl Shared {
    /// Writes a reply.
    pub fn send(&self, reply: &Reply) {
        send(&self.output, reply);
    }

    /// Whether a stream is in flight.
    pub fn streaming(&self) -> bool {
        self.stream
            .lock()
            .map(|slot| slot.is_some())
            .unwrap_or(false)
    }

    /// Takes the one stream slot for the `send` `request_id`; false when a stream holds it.
    pub fn reserve_stream(&self, request_id: Option<&str>) -> bool {
        let Ok(mut slot) = self.stream.lock() else {
            return false;
        };
        if slot.is_some() {
            return false;
        }
        *slot = Some(InFlight {
            request_id: request_id.unwrap_or_default().to_owned(),
            cancel: tokio_util::sync::CancellationToken::new(),
        });
        true
    }

    /// The cancel token of the stream in flight (reserving the slot when it is free).
    pub fn stream_token(&self, request_id: Option<&str>) -> tokio_util::sync::CancellationToken {
        if let Ok(slot) = self.stream.lock() {
            if let Some(stream) = slot.as_ref() {
                return stream.cancel.clone();
            }
        }
        self.reserve_stream(request_id);
        self.stream
            .lock()
            .ok()
            .and_then(|slot| slot.as_ref().map(|stream| stream.cancel.clone()))
            .unwrap_or_default()
    }

    /// Cancels the stream in flight when it is the `send` `target` (any stream for ""); false
    /// when nothing (or another request) is streaming.
    pub fn cancel(&self, target: &str) -> bool {
        let Ok(slot) = self.stream.lock() else {
            return false;
        };
        match slot.as_ref() {
            Some(stream) if target.is_empty() || stream.request_id == target => {
                stream.cancel.cancel();
                true
            }
            _ => false,
        }
    }

    /// Forgets the stream in flight.
    pub fn clear_stream(&self) {
        if let Ok(mut slot) = self.stream.lock() {
            *slot = None;
        }
    }

    /// Runs `work` on the runtime and writes its reply (or its error) for `request_id`.
    pub fn spawn_reply_for(
        &self,
        request_id: Option<String>,
        work: impl std::future::Future<Output = crate::wire::error::Result<Reply>> + Send + 'static,
    ) {
        let shared = self.clone();
        self.runtime.spawn(async move {
            let reply = match work.await {
                Ok(reply) => reply,
                Err(err) => {
                    tracing::info!(error = %err, "request failed");
                    Reply::error(err.to_string())
                }
            };
            shared.send(&reply.for_request(request_id.as_deref()));
        });
    }

    /// Runs `work` on the runtime's blocking threads (long counting, off the session's
    /// thread) and writes its reply (or its error) for `request_id`.
    pub fn spawn_blocking_reply(
        &self,
        request_id: Option<String>,
        work: impl FnOnce() -> crate::wire::error::Result<Reply> + Send + 'static,
    ) {
        self.spawn_blocking_replies(vec![request_id], work);
    }

    /// [`spawn_blocking_reply`](Shared::spawn_blocking_reply) answering every request of
    /// `request_ids` with the one reply. At most [`MAX_BACKGROUND`] such jobs are in flight:
    /// past that this waits for one to end.
    pub fn spawn_blocking_replies(
        &self,
        request_ids: Vec<Option<String>>,
        work: impl FnOnce() -> crate::wire::error::Result<Reply> + Send + 'static,
    ) {
        let slot = self.background.enter();
        let shared = self.clone();
        self.runtime.spawn(async move {
            let reply = match tokio::task::spawn_blocking(work).await {
                Ok(Ok(reply)) => reply,
                Ok(Err(err)) => {
                    tracing::info!(error = %err, "request failed");
                    Reply::error(err.to_string())
                }
                Err(err) => Reply::error(format!("counting failed: {err}")),
            };
            drop(slot);
            for request_id in request_ids {
                shared.send(&reply.clone().for_request(request_id.as_deref()));
            }
        });
    }

    /// Hands a change to the session's thread.
    pub fn post(&self, job: impl FnOnce(&mut Session, &Shared) + Send + 'static) {
        self.jobs.push(Job::Internal(Box::new(job)));
    }
}

/// The safety guard tripped: say why on stderr and exit at once with status 2.
pub fn fatal(err: &crate::wire::error::Error) -> ! {
    tracing::error!(error = %err, "safety guard tripped; exiting");
    eprintln!("{err}");
    std::process::exit(2);
}
