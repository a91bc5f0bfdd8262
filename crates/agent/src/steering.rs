//! Messages the user sends into a running turn: the front end fills the queue while the turn
//! runs (the terminal reads keys meanwhile), and the turn loop gives what waits there to the
//! model as user messages before its next request, after the tool results of the last one.
//! What the turn did not take (it ended first) stays queued for the front end to send next.

use std::sync::{Arc, Mutex};

/// The queue of steering messages, shared between the front end and the turn loop.
#[derive(Debug, Clone, Default)]
pub struct Steering(Arc<Mutex<Vec<String>>>);

impl Steering {
    /// Adds a message for the running turn's next request.
    pub fn push(&self, text: String) {
        if let Ok(mut queue) = self.0.lock() {
            queue.push(text);
        }
    }

    /// Takes every waiting message, oldest first.
    pub fn take(&self) -> Vec<String> {
        self.0
            .lock()
            .map(|mut queue| std::mem::take(&mut *queue))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;
    use tokio_util::sync::CancellationToken;
    use ybs_core::{Role, StreamEvent, ToolCall, ToolResult, Usage};
    use ybs_testkit::{FakeLlm, Script, Turn};
    use ybs_tools::{ConfirmationPolicy, ToolRegistry};

    use crate::confirm::Answer;
    use crate::tests::{fake_agent, fake_settings};
    use crate::{Notice, Ui};

    /// A `Ui` that steers once, when the first tool call starts (the turn is running).
    struct SteersDuringTheCall(Option<(super::Steering, String)>);

    impl Ui for SteersDuringTheCall {
        fn stream_event(&mut self, _: &StreamEvent) {}
        fn reply_done(&mut self) {}
        fn tool_call(&mut self, _: &ToolCall) {
            if let Some((steering, text)) = self.0.take() {
                steering.push(text);
            }
        }
        fn tool_result(&mut self, _: &str, _: &ToolResult) {}
        fn notice(&mut self, _: Notice, _: &str) {}
        fn usage(&mut self, _: &Usage, _: &Usage, _: Option<(u64, u64)>) {}
        fn confirm(&mut self, _: &ToolCall, _: &str) -> Answer {
            Answer::Yes
        }
        fn choose_rule(
            &mut self,
            _: &[crate::permissions::Offer],
        ) -> Option<(usize, crate::permissions::Layer)> {
            None
        }
    }

    #[tokio::test]
    async fn a_steering_message_goes_to_the_next_request_after_the_tool_results() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "x").unwrap();
        let read = Turn::tool_call("r", "read_file", json!({"path": "a.txt"}));
        let llm = FakeLlm::start(Script::new([read, Turn::text(["done"])])).unwrap();
        let mut agent = fake_agent(
            &llm,
            dir.path(),
            fake_settings(32_000),
            ToolRegistry::new(),
            ConfirmationPolicy::new(Vec::<String>::new()),
        );
        let mut ui = SteersDuringTheCall(Some((agent.steering.clone(), "use tabs".into())));
        agent
            .turn("go", &mut ui, &CancellationToken::new())
            .await
            .unwrap();
        let requests = llm.requests();
        assert_eq!(requests.len(), 2);
        let first = requests[0].body["messages"].to_string();
        assert!(!first.contains("use tabs"), "{first}");
        let messages = requests[1].body["messages"].as_array().unwrap().clone();
        let last = messages.last().unwrap();
        assert_eq!(
            (&last["role"], &last["content"]),
            (&json!("user"), &json!("use tabs"))
        );
        assert_eq!(messages[messages.len() - 2]["role"], "tool");
        assert_eq!(agent.conversation[3].role, Role::User);
        assert!(agent.steering.take().is_empty());
    }
}
