//! ybs's side of an MCP session: what it tells servers about itself, and the notes it keeps
//! of their `notifications/*/list_changed`, so the lists are asked for again before the
//! next model call rather than in the middle of one.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::ClientHandler;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{NotificationContext, RoleClient};

/// Which of a server's lists changed since they were last read.
#[derive(Debug, Default)]
pub(super) struct Changed {
    tools: AtomicBool,
    resources: AtomicBool,
    prompts: AtomicBool,
}

/// One of a server's lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum List {
    Tools,
    Resources,
    Prompts,
}

impl Changed {
    fn flag(&self, list: List) -> &AtomicBool {
        match list {
            List::Tools => &self.tools,
            List::Resources => &self.resources,
            List::Prompts => &self.prompts,
        }
    }

    fn mark(&self, list: List) {
        self.flag(list).store(true, Ordering::SeqCst);
    }

    /// Whether `list` changed, clearing the note: the caller reads it again now.
    pub(super) fn take(&self, list: List) -> bool {
        self.flag(list).swap(false, Ordering::SeqCst)
    }
}

/// The handler of one connection.
#[derive(Debug, Clone, Default)]
pub(super) struct Client {
    pub(super) changed: Arc<Changed>,
}

impl ClientHandler for Client {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.mark(List::Tools);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.mark(List::Resources);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.mark(List::Prompts);
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("ybs", env!("CARGO_PKG_VERSION")),
        )
    }
}
