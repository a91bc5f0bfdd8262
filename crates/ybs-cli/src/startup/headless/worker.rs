//! The thread a [`Headless`] session lives on: it is opened there and every job (a turn, a
//! mode change) runs there in order, so the agent never crosses threads.

use super::Headless;

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
    pub async fn start(
        open: impl FnOnce() -> Result<Headless, String> + Send + 'static,
    ) -> Result<(Worker, Option<String>), String> {
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
            .map_err(|error| format!("cannot start a session thread: {error}"))?;
        let id = (is_open.await).map_err(|_| "the session thread stopped while opening")??;
        Ok((Worker { jobs }, id))
    }

    /// Queues `job`; `Err` when the session's thread has ended.
    pub fn send(&self, job: Job) -> Result<(), String> {
        self.jobs
            .send(job)
            .map_err(|_| "the session has ended".to_owned())
    }
}
