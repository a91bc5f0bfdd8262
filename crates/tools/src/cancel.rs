//! A shared "the user cancelled" flag, set from another thread while a tool call blocks and
//! polled by what runs for long (a child process, a remote call).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A shared "the user cancelled" flag: cheap to clone, all clones see the same state, and
/// any thread may set it. See [`ToolContext::cancel`](crate::ToolContext::cancel).
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    /// A flag that is not set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks the running call to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether [`cancel`](Self::cancel) was called since the last [`reset`](Self::reset).
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// Clears the flag (before the next call).
    pub fn reset(&self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancel_flag_is_shared_by_clones_and_resets() {
        let flag = CancelFlag::new();
        let clone = flag.clone();
        assert!(!flag.is_cancelled());
        clone.cancel();
        assert!(flag.is_cancelled());
        flag.reset();
        assert!(!clone.is_cancelled());
    }
}
