//! The thread a [`Headless`] session lives on: it is opened there and every job (a turn, a
//! mode change) runs there in order, so the agent never crosses threads.

use super::Headless;

/// Why a session's thread could not take its work.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError<E = std::convert::Infallible> {
    /// The session could not be opened.
    #[error("{0}")]
    Open(E),
    /// The thread could not be started.
    #[error("cannot start a session thread: {0}")]
    Spawn(std::io::Error),
    /// The thread stopped while the session was being opened.
    #[error("the session thread stopped while opening")]
    Stopped,
    /// The session's thread has ended.
    #[error("the session has ended")]
    Ended,
}

/// Work for a session's thread.
pub type Job = Box<dyn FnOnce(&mut Headless) + Send>;

/// A handle to a session's thread; the thread ends when the last handle is dropped.
#[derive(Clone)]
pub struct Worker {
    jobs: std::sync::mpsc::Sender<Job>,
}

impl Worker {
    /// Opens a session with `open` on a new thread and waits (without blocking the caller's
    /// runtime) until it is open; `Err` says why it could not be.
    pub async fn start<E: Send + 'static>(
        open: impl FnOnce() -> Result<Headless, E> + Send + 'static,
    ) -> Result<(Worker, Option<String>), WorkerError<E>> {
        let (opened, is_open) = futures::channel::oneshot::channel();
        let (jobs, queue) = std::sync::mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("ybs-session".into())
            .spawn(move || {
                let mut session = match open() {
                    Ok(session) => {
                        let _ = opened.send(Ok(session.id()));
                        session
                    }
                    Err(error) => {
                        let _ = opened.send(Err(error));
                        return;
                    }
                };
                while let Ok(job) = queue.recv() {
                    job(&mut session);
                }
            })
            .map_err(WorkerError::Spawn)?;
        let id = (is_open.await)
            .map_err(|_| WorkerError::Stopped)?
            .map_err(WorkerError::Open)?;
        Ok((Worker { jobs }, id))
    }

    /// Queues `job`; `Err` when the session's thread has ended.
    pub fn send(&self, job: Job) -> Result<(), WorkerError> {
        self.jobs.send(job).map_err(|_| WorkerError::Ended)
    }
}
