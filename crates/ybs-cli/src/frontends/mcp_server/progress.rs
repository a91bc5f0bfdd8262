//! The agent's [`Ui`] for an MCP caller: what happens during a task becomes
//! `notifications/progress` messages (when the caller sent a progress token), and approvals
//! are refused, since nobody can answer them here; the refused calls are kept for the result.

use std::io::Write;
use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RequestContext};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio::task::JoinHandle;
use ybs_core::{StreamEvent, ToolCall, ToolResult, Usage};

use ybs_agent::Notice;
use ybs_agent::Ui;
use ybs_agent::confirm::Answer;

/// Sends one progress message per event worth telling, in order, from the session's thread.
pub struct Progress {
    messages: Option<UnboundedSender<String>>,
    /// Whether the reply being streamed was announced.
    replying: bool,
    /// The calls refused for want of an approval (`write_file src/a.rs`).
    refused: Arc<Mutex<Vec<String>>>,
}

impl Progress {
    /// Progress for the request of `context`: a task on the current runtime forwards the
    /// messages to the caller (nothing is sent without a progress token). The task ends once
    /// the last message is sent after the [`Progress`] is dropped: await it before answering,
    /// so that no progress comes after the result.
    pub fn start(
        context: &RequestContext<RoleServer>,
        refused: Arc<Mutex<Vec<String>>>,
    ) -> (Progress, Option<JoinHandle<()>>) {
        let Some(token) = context.meta.get_progress_token() else {
            let progress = Progress {
                messages: None,
                replying: false,
                refused,
            };
            return (progress, None);
        };
        let (messages, mut queue) = unbounded_channel::<String>();
        let peer = context.peer.clone();
        let forwarder = tokio::spawn(async move {
            let mut count = 0.0;
            while let Some(message) = queue.recv().await {
                count += 1.0;
                notify(&peer, &token, count, message).await;
            }
        });
        let progress = Progress {
            messages: Some(messages),
            replying: false,
            refused,
        };
        (progress, Some(forwarder))
    }

    fn tell(&mut self, message: String) {
        if let Some(messages) = &self.messages {
            let _ = messages.send(message);
        }
    }
}

async fn notify(peer: &Peer<RoleServer>, token: &ProgressToken, count: f64, message: String) {
    let param = ProgressNotificationParam::new(token.clone(), count).with_message(message);
    if let Err(error) = peer.notify_progress(param).await {
        let _ = writeln!(
            crate::startup::headless::log(),
            "ybs mcp-server: cannot send progress: {error}"
        );
    }
}

impl Ui for Progress {
    fn waiting(&mut self) {
        self.replying = false;
    }

    fn stream_event(&mut self, event: &StreamEvent) {
        if !self.replying && matches!(event, StreamEvent::TextDelta { .. }) {
            self.replying = true;
            self.tell("ybs is writing its reply".into());
        }
    }

    fn reply_done(&mut self) {}

    fn tool_call(&mut self, call: &ToolCall) {
        self.tell(format!("calling {}", described(call)));
    }

    fn tool_result(&mut self, tool: &str, result: &ToolResult) {
        let outcome = if result.is_error { "failed" } else { "done" };
        self.tell(format!("{tool} {outcome}"));
    }

    fn notice(&mut self, kind: Notice, message: &str) {
        let _ = writeln!(crate::startup::headless::log(), "ybs: {message}");
        if !matches!(kind, Notice::Info) {
            self.tell(message.to_owned());
        }
    }

    fn usage(&mut self, _turn: &Usage, _session: &Usage, _fill: Option<(u64, u64)>) {}

    fn confirm(&mut self, call: &ToolCall, _reason: &str) -> Answer {
        let call = described(call);
        self.tell(super::tools::refusal(&call));
        (self.refused.lock())
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(call);
        Answer::No
    }
}

/// A call as `tool target`: its path or the first line of its command.
fn described(call: &ToolCall) -> String {
    let target = (call
        .arguments
        .get("path")
        .or_else(|| call.arguments.get("command")))
    .and_then(serde_json::Value::as_str)
    .map(|target| format!(" {}", target.lines().next().unwrap_or_default()))
    .unwrap_or_default();
    format!("{}{target}", call.name)
}
