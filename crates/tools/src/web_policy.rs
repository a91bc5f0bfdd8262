//! How `web_fetch` fetches: its time and size bounds (part of the tool context).

use std::time::Duration;

/// How `web_fetch` fetches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebPolicy {
    /// The longest a fetch may take, from connecting to the last byte.
    pub timeout: Duration,
    /// The most bytes of a body read; the rest is cut.
    pub max_bytes: usize,
}

impl Default for WebPolicy {
    fn default() -> Self {
        WebPolicy {
            timeout: Duration::from_secs(30),
            max_bytes: 2 * 1024 * 1024,
        }
    }
}
