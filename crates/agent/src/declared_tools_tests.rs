//! A tool added in the test, with declarations of its own: every place of the agent that asks
//! (approval, plan mode, sub-agents, parallel calls) follows what the tool declares, not its
//! name; and a disabled `task` is refused like any other tool.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::Notice;
use crate::approve::Approval;
use crate::confirm::Answer;
use crate::tests::{fake_agent, fake_settings};
use crate::{Agent, Ui};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use ybs_core::{Part, StreamEvent, ToolCall, ToolResult, ToolSpec, Usage};
use ybs_testkit::{FakeLlm, Script, Turn};
use ybs_tools::{
    ActionKind, Args, Asks, ConfirmationPolicy, Declaration, Tool, ToolContext, ToolError,
    ToolRegistry,
};

/// A tool that declares what it is given and counts how many of its calls run at once.
struct Declared {
    spec: ToolSpec,
    declaration: Declaration,
    running: Arc<AtomicUsize>,
    most_at_once: Arc<AtomicUsize>,
}

impl Declared {
    fn new(name: &str, declaration: Declaration) -> Self {
        let schema = json!({"type": "object", "properties": {"path": {"type": "string"}}});
        Declared {
            spec: ToolSpec::new(name, "a test tool", schema),
            declaration,
            running: Arc::default(),
            most_at_once: Arc::default(),
        }
    }
}

impl Tool for Declared {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn invoke(&self, args: &Args, _ctx: &ToolContext) -> Result<Value, ToolError> {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.most_at_once.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(300));
        self.running.fetch_sub(1, Ordering::SeqCst);
        Ok(json!({"success": true, "seen": args.to_value()}))
    }

    fn declaration(&self) -> Declaration {
        self.declaration
    }
}

/// `probe` only looks (so it runs with others, in plan mode and in sub-agents); `poke`
/// changes the file at its path and asks before an unread one.
fn probe() -> Declared {
    Declared::new("probe", Declaration::looking(ActionKind::Fetch))
}

fn poke() -> Declared {
    Declared::new(
        "poke",
        Declaration {
            asks: Asks::UnreadFile,
            ..Declaration::file_changing(ActionKind::Delete)
        },
    )
}

#[derive(Default)]
struct Recorder {
    results: Vec<(String, bool, String)>,
    asked: Vec<String>,
}

impl Ui for Recorder {
    fn stream_event(&mut self, _event: &StreamEvent) {}
    fn reply_done(&mut self) {}
    fn tool_call(&mut self, _call: &ToolCall) {}
    fn tool_result(&mut self, tool: &str, result: &ToolResult) {
        let entry = (tool.to_owned(), result.is_error, result.content.clone());
        self.results.push(entry);
    }
    fn notice(&mut self, _kind: Notice, _message: &str) {}
    fn usage(&mut self, _turn: &Usage, _session: &Usage, _fill: Option<(u64, u64)>) {}
    fn confirm(&mut self, _call: &ToolCall, reason: &str) -> Answer {
        self.asked.push(reason.to_owned());
        Answer::Yes
    }
}

fn agent(llm: &FakeLlm, dir: &std::path::Path, registry: ToolRegistry) -> Agent {
    let policy = ConfirmationPolicy::new(Vec::<String>::new());
    fake_agent(llm, dir, fake_settings(32_000), registry, policy)
}

/// Two calls of `name` in one reply, then a closing text.
fn two_calls_of(name: &str) -> Script {
    let call = |id: &str| ybs_testkit::ToolCall::new(id, name, json!({"path": "a.txt"}));
    Script::new([
        Turn::text(Vec::<String>::new())
            .with_tool_call(call("one"))
            .with_tool_call(call("two")),
        Turn::text(["done"]),
    ])
}

/// The names of the tools a recorded request offered.
fn offered(request: &ybs_testkit::RecordedRequest) -> Vec<String> {
    (request.body["tools"].as_array().into_iter().flatten())
        .filter_map(|tool| tool["function"]["name"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn parallel_calls_and_approval_follow_the_declaration() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    for (tool, at_once, asked) in [(probe(), 2, 0), (poke(), 1, 2)] {
        let name = tool.spec.name.clone();
        let most_at_once = tool.most_at_once.clone();
        let mut registry = ToolRegistry::new();
        registry.register(Arc::new(tool)).unwrap();
        let llm = FakeLlm::start(two_calls_of(&name)).unwrap();
        let mut agent = agent(&llm, dir.path(), registry);
        let mut ui = Recorder::default();
        agent
            .turn("go", &mut ui, &CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(most_at_once.load(Ordering::SeqCst), at_once, "{name}");
        assert_eq!(ui.asked.len(), asked, "{name}: {:?}", ui.asked);
        assert!(
            ui.results.iter().all(|(_, failed, _)| !failed),
            "{:?}",
            ui.results
        );
    }
    // An edit inside the project runs unasked under auto-edit: `poke` declares one.
    let llm = FakeLlm::start(two_calls_of("poke")).unwrap();
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(poke())).unwrap();
    let mut agent = agent(&llm, dir.path(), registry);
    agent.approval = Approval::AutoEdit;
    let mut ui = Recorder::default();
    let report = agent
        .turn("go", &mut ui, &CancellationToken::new())
        .await
        .unwrap();
    assert!(ui.asked.is_empty(), "{:?}", ui.asked);
    let root = dir.path().canonicalize().unwrap();
    assert_eq!(report.changed, [root.join("a.txt")]);
}

#[tokio::test]
async fn plan_mode_and_sub_agents_offer_what_declares_itself_fit() {
    let dir = tempfile::tempdir().unwrap();
    let task = ybs_testkit::ToolCall::new(
        "t",
        "task",
        json!({"description": "look", "prompt": "find it"}),
    );
    let llm = FakeLlm::start(Script::new([
        Turn::text(Vec::<String>::new()).with_tool_call(task),
        Turn::text(["the sub-agent's report"]),
        Turn::text(["done"]),
    ]))
    .unwrap();
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(probe())).unwrap();
    registry.register(Arc::new(poke())).unwrap();
    let mut agent = agent(&llm, dir.path(), registry);

    agent.plan_mode = true;
    let in_plan: Vec<String> = agent.offered_specs().into_iter().map(|s| s.name).collect();
    assert_eq!(
        in_plan,
        ["read_file", "list_files", "search_files", "probe"]
    );
    agent.plan_mode = false;

    let mut ui = Recorder::default();
    agent
        .turn("go", &mut ui, &CancellationToken::new())
        .await
        .unwrap();
    let requests = llm.requests();
    assert_eq!(requests.len(), 3);
    assert!(offered(&requests[0]).contains(&"poke".to_owned()));
    assert_eq!(
        offered(&requests[1]),
        ["read_file", "list_files", "search_files", "probe"]
    );
}

#[tokio::test]
async fn a_disabled_task_is_refused_and_runs_no_sub_agent() {
    let dir = tempfile::tempdir().unwrap();
    let task = ybs_testkit::ToolCall::new(
        "t",
        "task",
        json!({"description": "look", "prompt": "find it"}),
    );
    let llm = FakeLlm::start(Script::new([
        Turn::text(Vec::<String>::new()).with_tool_call(task),
        Turn::text(["done"]),
    ]))
    .unwrap();
    let mut registry = ToolRegistry::new();
    registry.set_enabled("task", false);
    let mut agent = agent(&llm, dir.path(), registry);
    let mut ui = Recorder::default();
    let report = agent
        .turn("go", &mut ui, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(report.reply, "done");
    // The one request after the call is the agent's own: no sub-agent asked the model.
    assert_eq!(llm.requests().len(), 2);
    let result = (agent.conversation.iter().flat_map(|m| &m.parts))
        .find_map(|part| match part {
            Part::ToolResult(result) => Some(result.clone()),
            _ => None,
        })
        .unwrap();
    assert!(result.is_error, "{result:?}");
    assert!(result.content.contains("disabled"), "{}", result.content);
}
