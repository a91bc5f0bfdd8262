//! A sub-agent is held to everything its parent is: the user's hooks, rules, confirmations
//! and approval mode; and it cannot start a sub-agent of its own.

use serde_json::json;
use tokio_util::sync::CancellationToken;
use ybs_core::{StreamEvent, ToolCall, ToolResult, Usage};
use ybs_testkit::{FakeLlm, Script, Turn};
use ybs_tools::{ConfirmationPolicy, ToolRegistry};

use crate::confirm::Answer;
use crate::tests::{fake_agent, fake_settings};
use crate::{Notice, Ui};

/// Records each tool result, and answers no to every question.
#[derive(Default)]
struct Results {
    results: Vec<(String, String)>,
    asked: usize,
}

impl Ui for Results {
    fn stream_event(&mut self, _event: &StreamEvent) {}
    fn reply_done(&mut self) {}
    fn tool_call(&mut self, _call: &ToolCall) {}
    fn tool_result(&mut self, tool: &str, result: &ToolResult) {
        self.results.push((tool.to_owned(), result.content.clone()));
    }
    fn notice(&mut self, _kind: Notice, _message: &str) {}
    fn usage(&mut self, _turn: &Usage, _session: &Usage, _fill: Option<(u64, u64)>) {}
    fn confirm(&mut self, _call: &ToolCall, _reason: &str) -> Answer {
        self.asked += 1;
        Answer::No
    }
}

fn task(id: &str) -> ybs_testkit::ToolCall {
    ybs_testkit::ToolCall::new(
        id,
        "task",
        json!({"description": "look", "prompt": "read secret.txt"}),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_before_tool_hook_that_refuses_a_read_refuses_it_in_a_sub_agent_too() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("secret.txt"), "SECRET-43").unwrap();
    let read = ybs_testkit::ToolCall::new("r", "read_file", json!({"path": "secret.txt"}));
    let llm = FakeLlm::start(Script::new([
        Turn::text(Vec::<String>::new()).with_tool_call(task("t")),
        // The sub-agent's requests.
        Turn::text(Vec::<String>::new()).with_tool_call(read),
        Turn::text(["report"]),
        // The parent's, after the report.
        Turn::text(["done"]),
    ]))
    .unwrap();
    let policy = ConfirmationPolicy::new(Vec::<String>::new());
    let mut agent = fake_agent(
        &llm,
        dir.path(),
        fake_settings(32_000),
        ToolRegistry::new(),
        policy,
    );
    agent.hooks.before_tool = vec![crate::config::ToolHook {
        tools: vec!["read_file".into()],
        command: "echo 'reads are reviewed first'; exit 3".into(),
    }];
    let mut ui = Results::default();
    let report = (agent.turn("go", &mut ui, &CancellationToken::new()).await).unwrap();
    assert_eq!(report.reply, "done");
    let (tool, content) = &ui.results[0];
    assert_eq!(tool, "read_file");
    assert!(content.contains("reads are reviewed first"), "{content}");
    let sent: String = (llm.requests().iter())
        .map(|request| request.body.to_string())
        .collect();
    assert!(!sent.contains("SECRET-43"), "the hook was skipped");
}

#[tokio::test]
async fn a_sub_agent_cannot_start_a_sub_agent() {
    let dir = tempfile::tempdir().unwrap();
    let llm = FakeLlm::start(Script::new([
        Turn::text(Vec::<String>::new()).with_tool_call(task("t1")),
        // The sub-agent asks for a sub-agent of its own.
        Turn::text(Vec::<String>::new()).with_tool_call(task("t2")),
        Turn::text(["report"]),
        Turn::text(["done"]),
        Turn::text(["never asked"]),
    ]))
    .unwrap();
    let mut agent = fake_agent(
        &llm,
        dir.path(),
        fake_settings(32_000),
        ToolRegistry::new(),
        ConfirmationPolicy::new(Vec::<String>::new()),
    );
    let mut ui = Results::default();
    let report = (agent.turn("go", &mut ui, &CancellationToken::new()).await).unwrap();
    assert_eq!(report.reply, "done");
    // The parent's two requests and the sub-agent's two: no third level.
    assert_eq!(llm.requests().len(), 4);
    let nested = (ui.results.iter())
        .find(|(tool, _)| tool == "task")
        .map(|(_, content)| content.clone())
        .unwrap();
    assert!(
        nested.contains("error") || nested.contains("not"),
        "{nested}"
    );
    let offered: Vec<String> = (llm.requests()[1].body["tools"].as_array())
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["function"]["name"].as_str().map(str::to_owned))
        .collect();
    assert!(!offered.contains(&"task".to_owned()), "{offered:?}");
}

#[tokio::test]
async fn a_sub_agent_asks_where_its_parent_asks() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("secret.txt"), "SECRET-43").unwrap();
    let read = ybs_testkit::ToolCall::new("r", "read_file", json!({"path": "secret.txt"}));
    let llm = FakeLlm::start(Script::new([
        Turn::text(Vec::<String>::new()).with_tool_call(task("t")),
        Turn::text(Vec::<String>::new()).with_tool_call(read),
        Turn::text(["report"]),
        Turn::text(["done"]),
    ]))
    .unwrap();
    // The user asked to confirm every read.
    let mut agent = fake_agent(
        &llm,
        dir.path(),
        fake_settings(32_000),
        ToolRegistry::new(),
        ConfirmationPolicy::new(["read_file"]),
    );
    let mut ui = Results::default();
    let report = (agent.turn("go", &mut ui, &CancellationToken::new()).await).unwrap();
    assert_eq!(report.reply, "done");
    assert_eq!(ui.asked, 1, "{:?}", ui.results);
    let sent: String = (llm.requests().iter())
        .map(|request| request.body.to_string())
        .collect();
    assert!(!sent.contains("SECRET-43"));
}
