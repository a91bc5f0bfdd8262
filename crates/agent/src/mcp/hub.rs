//! The runtime the MCP connections live on, and waiting for its work from plain threads.

use std::future::Future;
use std::sync::mpsc;
use std::time::Duration;

use tokio::runtime::{Builder, Handle, Runtime};

/// How often a waiting caller checks whether it was cancelled.
const POLL: Duration = Duration::from_millis(50);

/// A one-thread runtime owned by the MCP tools. Work is spawned onto it and waited for over
/// a channel, which works from any thread: `Runtime::block_on` would panic inside the
/// caller's own runtime.
pub(super) struct Hub {
    runtime: Option<Runtime>,
}

/// Why [`Hub::wait`] gave up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Interrupted {
    /// The caller cancelled.
    Cancelled,
    /// The runtime is gone.
    Stopped,
}

impl Hub {
    pub(super) fn new() -> std::io::Result<Self> {
        let runtime = Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("ybs-mcp")
            .enable_all()
            .build()?;
        Ok(Hub {
            runtime: Some(runtime),
        })
    }

    fn handle(&self) -> Option<&Handle> {
        self.runtime.as_ref().map(Runtime::handle)
    }

    /// Runs `future` on the hub and waits for it.
    pub(super) fn block_on<F>(&self, future: F) -> Option<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.wait(future, || false).ok()
    }

    /// Runs `future` on the hub and waits for it, giving up (and dropping the future) as soon
    /// as `cancelled` says so.
    pub(super) fn wait<F>(
        &self,
        future: F,
        cancelled: impl Fn() -> bool,
    ) -> Result<F::Output, Interrupted>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let handle = self.handle().ok_or(Interrupted::Stopped)?;
        let (sender, receiver) = mpsc::channel();
        let task = handle.spawn(async move {
            let _ = sender.send(future.await);
        });
        loop {
            match receiver.recv_timeout(POLL) {
                Ok(output) => return Ok(output),
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err(Interrupted::Stopped),
                Err(mpsc::RecvTimeoutError::Timeout) if cancelled() => {
                    task.abort();
                    return Err(Interrupted::Cancelled);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
        }
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        // Dropping a runtime blocks, which panics when the last tool is dropped inside the
        // caller's runtime; this does not. The tasks are dropped, which ends the connections
        // and kills stdio servers.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_ends_when_the_caller_cancels() {
        let hub = Hub::new().unwrap();
        let never = std::future::pending::<()>();
        assert_eq!(hub.wait(never, || true), Err(Interrupted::Cancelled));
        assert_eq!(hub.block_on(async { 7 }), Some(7));
    }
}
