//! The crate as a library user sees it: an agent built from a configuration, one turn run
//! against the test kit's fake LLM on 127.0.0.1, what the turn reported and what the server
//! was sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use tokio_util::sync::CancellationToken;
use ybs_agent::config::Config;
use ybs_agent::confirm::Answer;
use ybs_agent::setup::Surroundings;
use ybs_agent::{AgentBuilder, Notice, Stop, Ui};
use ybs_core::{StreamEvent, ToolCall, ToolResult, Usage};
use ybs_testkit::{FakeLlm, Script, Turn};

/// A [`Ui`] that keeps the streamed text and the tools' names, and denies every question.
#[derive(Default)]
struct Recorder {
    text: String,
    tools: Vec<String>,
}

impl Ui for Recorder {
    fn stream_event(&mut self, event: &StreamEvent) {
        if let StreamEvent::TextDelta { text } = event {
            self.text.push_str(text);
        }
    }
    fn reply_done(&mut self) {}
    fn tool_call(&mut self, call: &ToolCall) {
        self.tools.push(call.name.clone());
    }
    fn tool_result(&mut self, _tool: &str, _result: &ToolResult) {}
    fn notice(&mut self, _kind: Notice, _message: &str) {}
    fn usage(&mut self, _turn: &Usage, _session: &Usage, _fill: Option<(u64, u64)>) {}
    fn confirm(&mut self, _call: &ToolCall, _reason: &str) -> Answer {
        Answer::No
    }
}

fn config(llm: &FakeLlm) -> Config {
    let mut config = Config::default();
    config.llm.provider = "openai-compatible".into();
    config.llm.endpoint = Some(format!("{}/v1", llm.base_url()));
    config.llm.model = "fake-model".into();
    config
}

#[test]
fn one_turn_against_a_fake_model() {
    let llm = FakeLlm::start(Script::new([Turn::text(["Hel", "lo"])])).unwrap();
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let config = config(&llm);
    let around = Surroundings {
        cwd: project.path().to_path_buf(),
        home: Some(home.path().to_path_buf()),
        env: BTreeMap::new(),
    };
    let (mut agent, report) = AgentBuilder::new(&config, around).build().unwrap();
    assert!(report.mcp.is_empty());

    let mut ui = Recorder::default();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let turn = runtime
        .block_on(agent.turn("Say hello", &mut ui, &CancellationToken::new()))
        .unwrap();

    assert_eq!(turn.stop, Stop::Finished);
    assert_eq!(turn.reply, "Hello");
    assert_eq!(ui.text, "Hello");
    assert_eq!(agent.conversation.len(), 2);
    let chats: Vec<_> = (llm.requests().into_iter())
        .filter(|request| request.path.ends_with("/chat/completions"))
        .collect();
    assert_eq!(chats.len(), 1);
    let body = chats[0].body.to_string();
    assert!(body.contains("Say hello"), "{body}");
    // The tools are offered, ybs's own instructions are the system prompt.
    assert!(body.contains("\"read_file\""), "{body}");
    assert!(ui.tools.is_empty());
}

#[test]
fn a_tool_call_runs_in_the_project_and_its_result_goes_back() {
    let llm = FakeLlm::start(Script::new([
        Turn::tool_call("c1", "read_file", serde_json::json!({"path": "notes.txt"})),
        Turn::text(["It says hi."]),
    ]))
    .unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("notes.txt"), "hi from the file\n").unwrap();
    let home = tempfile::tempdir().unwrap();
    let config = config(&llm);
    let around = Surroundings {
        cwd: project.path().canonicalize().unwrap(),
        home: Some(home.path().to_path_buf()),
        env: BTreeMap::new(),
    };
    let (mut agent, _) = AgentBuilder::new(&config, around).build().unwrap();
    let mut ui = Recorder::default();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let turn = runtime
        .block_on(agent.turn("What do my notes say?", &mut ui, &CancellationToken::new()))
        .unwrap();
    assert_eq!(turn.reply, "It says hi.");
    assert_eq!(ui.tools, ["read_file"]);
    let last = llm
        .requests()
        .last()
        .map(|request| request.body.to_string());
    assert!(
        last.as_deref()
            .is_some_and(|body| body.contains("hi from the file")),
        "{last:?}"
    );
}
