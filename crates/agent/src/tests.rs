//! The loop without a terminal: a recording [`Ui`] against the in-process fake LLM.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::VecDeque;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use ybs_core::{Message, Part, Role, StreamEvent, ToolCall, ToolResult, Usage};
use ybs_providers::{ProviderConfig, ProviderKind, RetryPolicy, build};
use ybs_testkit::{FakeLlm, Fault, Script, Turn};
use ybs_tools::{ConfirmationPolicy, PathSandbox, ShellPolicy, ToolContext, ToolRegistry};

use super::*;
use crate::Notice;
use crate::confirm::Answer;

#[derive(Default)]
struct Recorder {
    text: String,
    calls: Vec<String>,
    results: Vec<(String, bool)>,
    notices: Vec<String>,
    answers: VecDeque<Answer>,
    asked: Vec<String>,
    /// The answer to "which rule" after "always".
    rule_choice: Option<(usize, crate::permissions::Layer)>,
}

impl Ui for Recorder {
    fn stream_event(&mut self, event: &StreamEvent) {
        if let StreamEvent::TextDelta { text } = event {
            self.text.push_str(text);
        }
    }
    fn reply_done(&mut self) {}
    fn tool_call(&mut self, call: &ToolCall) {
        self.calls.push(call.name.clone());
    }
    fn tool_result(&mut self, tool: &str, result: &ToolResult) {
        self.results.push((tool.to_owned(), result.is_error));
    }
    fn notice(&mut self, _kind: Notice, message: &str) {
        self.notices.push(message.to_owned());
    }
    fn usage(&mut self, _turn: &Usage, _session: &Usage, _fill: Option<(u64, u64)>) {}
    fn confirm(&mut self, _call: &ToolCall, reason: &str) -> Answer {
        self.asked.push(reason.to_owned());
        self.answers.pop_front().unwrap_or(Answer::No)
    }
    fn choose_rule(
        &mut self,
        _offers: &[crate::permissions::Offer],
    ) -> Option<(usize, crate::permissions::Layer)> {
        self.rule_choice
    }
}

fn agent(llm: &FakeLlm, dir: &std::path::Path, max_tokens: usize) -> Agent {
    let mut settings = fake_settings(max_tokens);
    settings.prompt_cache = Some(ybs_core::CacheTtl::FiveMinutes);
    let policy = ConfirmationPolicy::new(["write_file"]);
    fake_agent(llm, dir, settings, ToolRegistry::new(), policy)
}

/// The settings of an agent talking to the fake model, with a window of `max_tokens`.
pub(crate) fn fake_settings(max_tokens: usize) -> AgentSettings {
    AgentSettings {
        model: "fake".into(),
        system: None,
        temperature: None,
        max_tokens: None,
        max_iterations: 10,
        dry_run: false,
        confirm: ConfirmMode::Ask,
        compaction: CompactionSettings {
            max_tokens,
            ..CompactionSettings::default()
        },
        response_format: None,
        prompt_cache: None,
        prices: std::sync::Arc::new(ybs_providers::PriceTable::default()),
        stop: Vec::new(),
        reasoning_effort: None,
        top_p: None,
        seed: None,
        extras: Default::default(),
    }
}

/// An agent working in `dir` against the fake model at `llm`, with these tools and policy.
pub(crate) fn fake_agent(
    llm: &FakeLlm,
    dir: &std::path::Path,
    settings: AgentSettings,
    registry: ToolRegistry,
    policy: ConfirmationPolicy,
) -> Agent {
    let provider = build(
        &ProviderConfig::new(ProviderKind::OpenAiCompatible, "fake")
            .with_endpoint(format!("{}/v1", llm.base_url()))
            .with_retry(RetryPolicy::none()),
    )
    .unwrap();
    let sandbox = PathSandbox::new([dir.display().to_string()], Vec::<String>::new()).unwrap();
    let context = ToolContext::new(sandbox, ShellPolicy::default()).unwrap();
    Agent::new(settings, provider, registry, context, policy)
}

fn write(id: &str, path: &str) -> Turn {
    Turn::tool_call(id, "write_file", json!({"path": path, "content": id}))
}

#[tokio::test]
async fn always_keeps_the_rule_for_exactly_that_call() {
    let dir = tempfile::tempdir().unwrap();
    let llm = FakeLlm::start(Script::new([
        write("a", "a.txt"),
        write("again", "a.txt"),
        write("b", "b.txt"),
        Turn::text(["a written twice"]),
    ]))
    .unwrap();
    let mut agent = agent(&llm, dir.path(), 32_000);
    let mut ui = Recorder {
        answers: VecDeque::from([Answer::Always]),
        rule_choice: Some((0, crate::permissions::Layer::Session)),
        ..Recorder::default()
    };
    let report = agent
        .turn("write", &mut ui, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(report.stop, Stop::Finished);
    // Asked for a.txt (always: `write_file(a.txt)`), not again for it, asked for b.txt (no).
    assert_eq!(ui.asked.len(), 2, "{:?}", ui.asked);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "again"
    );
    assert!(!dir.path().join("b.txt").exists());
    let root = dir.path().canonicalize().unwrap();
    assert_eq!(report.changed, [root.join("a.txt")]);
}

/// The attack: a front end that could not ask which rule (or an answer it did not know)
/// kept a rule for every call of the tool.
#[tokio::test]
async fn always_without_a_chosen_rule_runs_nothing_and_keeps_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let llm = FakeLlm::start(Script::new([
        write("a", "a.txt"),
        write("b", "b.txt"),
        Turn::text(["none written"]),
    ]))
    .unwrap();
    let mut agent = agent(&llm, dir.path(), 32_000);
    let mut ui = Recorder {
        answers: VecDeque::from([Answer::Always]),
        ..Recorder::default()
    };
    let report = agent
        .turn("write", &mut ui, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(report.stop, Stop::Finished);
    assert_eq!(ui.asked.len(), 2, "{:?}", ui.asked);
    assert!(!dir.path().join("a.txt").exists());
    assert!(!dir.path().join("b.txt").exists());
    assert!(
        ui.notices.iter().any(|n| n.contains("no rule chosen")),
        "{:?}",
        ui.notices
    );
    assert!(agent.permissions.list().is_empty());
}

#[tokio::test]
async fn a_denied_call_is_reported_to_the_model_and_the_loop_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let llm = FakeLlm::start(Script::new([
        write("a", "a.txt"),
        Turn::text(["ok, not written"]),
    ]))
    .unwrap();
    let mut agent = agent(&llm, dir.path(), 32_000);
    let mut ui = Recorder::default();
    let report = agent
        .turn("write", &mut ui, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(report.stop, Stop::Finished);
    assert!(!dir.path().join("a.txt").exists());
    assert_eq!(ui.results, [("write_file".to_owned(), true)]);
    let Some(Part::ToolResult(result)) = agent.conversation[2].parts.first() else {
        panic!("no tool result: {:?}", agent.conversation[2]);
    };
    assert!(
        result
            .content
            .contains("The user denied this call of write_file")
    );
    assert!(report.changed.is_empty());
}

#[tokio::test]
async fn an_overflow_drops_the_oldest_exchange_and_retries() {
    let dir = tempfile::tempdir().unwrap();
    let llm = FakeLlm::start(Script::new([
        Turn::fault(Fault::context_overflow(140_000, 128_000)),
        Turn::text(["fits now"]),
    ]))
    .unwrap();
    let mut agent = agent(&llm, dir.path(), 32_000);
    agent.conversation = vec![
        Message::user("old question"),
        Message::assistant("old answer"),
        Message::user("newer question"),
        Message::assistant("newer answer"),
    ];
    let mut ui = Recorder::default();
    let report = agent
        .turn("now", &mut ui, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(report.reply, "fits now");
    let texts: Vec<String> = agent
        .conversation
        .iter()
        .map(Message::text_content)
        .collect();
    assert_eq!(texts, ["newer question", "newer answer", "now", "fits now"]);
    assert_eq!(report.start, 2);
    assert!(ui.notices[0].starts_with("the conversation is too long for the model"));
    let requests = llm.requests();
    assert_eq!(requests[0].body["messages"].as_array().unwrap().len(), 5);
    assert_eq!(requests[1].body["messages"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn a_message_refused_for_the_window_leaves_the_conversation_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let llm = FakeLlm::start(Script::new([Turn::text(["short answer"])])).unwrap();
    let mut agent = agent(&llm, dir.path(), 32_000);
    agent.conversation = vec![
        Message::user("old question"),
        Message::assistant("old answer"),
    ];
    let mut ui = Recorder::default();
    let huge = "word ".repeat(200_000);
    let error = agent
        .turn(&huge, &mut ui, &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(error, AgentError::WindowTooSmall(_)), "{error}");
    assert!(llm.requests().is_empty(), "nothing was sent");
    assert_eq!(agent.conversation.len(), 2);
    // The next message goes with the older exchange, not with the refused one.
    let report = agent
        .turn("short", &mut ui, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(report.reply, "short answer");
    let texts: Vec<String> = (agent.conversation.iter())
        .map(Message::text_content)
        .collect();
    assert_eq!(
        texts,
        ["old question", "old answer", "short", "short answer"]
    );
    assert!(ui.notices.is_empty(), "{:?}", ui.notices);
}

#[tokio::test]
async fn a_provider_error_fails_the_turn_with_its_message() {
    let dir = tempfile::tempdir().unwrap();
    let llm = FakeLlm::start(Script::new([Turn::fault(Fault::status(401))])).unwrap();
    let mut agent = agent(&llm, dir.path(), 32_000);
    let error = agent
        .turn("hi", &mut Recorder::default(), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(error.to_string().starts_with("auth"), "{error}");
}

/// Fills the conversation with eight exchanges of about 600 characters a message.
fn eight_long_exchanges(agent: &mut Agent) {
    for n in 0..8 {
        agent
            .conversation
            .push(Message::user(format!("question {n} {}", "x".repeat(600))));
        agent.conversation.push(Message::assistant(format!(
            "answer {n} {}",
            "y".repeat(600)
        )));
    }
}

#[tokio::test]
async fn the_conversation_is_compacted_at_the_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let llm = FakeLlm::start(Script::new([
        Turn::text(["They talked about numbers."]),
        Turn::text(["answer"]),
    ]))
    .unwrap();
    let mut agent = agent(&llm, dir.path(), 2_000);
    eight_long_exchanges(&mut agent);
    let mut ui = Recorder::default();
    agent
        .turn("next", &mut ui, &CancellationToken::new())
        .await
        .unwrap();
    let first = agent.conversation[0].text_content();
    assert!(
        first.contains("They talked about numbers."),
        "{first} {:?}",
        ui.notices
    );
    assert!(agent.conversation.len() < 17);
    assert!(
        ui.notices.iter().any(|n| n.starts_with("compacted ")),
        "{:?}",
        ui.notices
    );
    assert_eq!(llm.requests().len(), 2);
}

#[tokio::test]
async fn a_long_message_that_would_pass_the_threshold_compacts_first() {
    let dir = tempfile::tempdir().unwrap();
    let llm = FakeLlm::start(Script::new([
        Turn::text(["They talked about numbers."]),
        Turn::text(["answer"]),
    ]))
    .unwrap();
    let mut agent = agent(&llm, dir.path(), 32_000);
    eight_long_exchanges(&mut agent);
    let message = format!("a long paste {}", "z".repeat(4_000));
    let before = agent.conversation_tokens();
    let incoming =
        ybs_context_budget::conversation_tokens(&agent.counter, &[Message::user(message.as_str())]);
    // The conversation alone is below the threshold; with the message it is past it.
    let window = ((before + incoming / 2) as f64 / 0.95) as usize;
    agent.settings.compaction.max_tokens = window;
    assert!(!agent.settings.compaction.needs_compaction(before));
    let mut ui = Recorder::default();
    agent
        .turn(&message, &mut ui, &CancellationToken::new())
        .await
        .unwrap();
    assert!(
        ui.notices.iter().any(|n| n.starts_with("compacted ")),
        "{:?}",
        ui.notices
    );
    assert!(
        agent.conversation[0]
            .text_content()
            .contains("They talked about numbers.")
    );
}

#[tokio::test]
async fn the_conversation_budget_keeps_the_margin_for_estimates() {
    let dir = tempfile::tempdir().unwrap();
    let llm = FakeLlm::start(Script::new([Turn::text(["ok"])])).unwrap();
    let mut agent = agent(&llm, dir.path(), 32_000);
    let mut limits = agent.limits.clone();
    limits.window.tokens = 10_000;
    agent.set_limits(limits);
    let mut ui = Recorder::default();
    agent
        .turn("hi", &mut ui, &CancellationToken::new())
        .await
        .unwrap();
    // 90% of the window, less the prompt and tools: compaction comes before the server's
    // own count overflows it.
    let fixed = usize::try_from(agent.fixed_tokens()).unwrap();
    assert_eq!(agent.settings.compaction.max_tokens, 9_000 - fixed);
}

/// Cancels `token` after 200 ms from a task, as the Ctrl-C listener of `commands` does.
fn cancel_soon(token: &CancellationToken) {
    let token = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        token.cancel();
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_during_a_tool_kills_it_and_ends_the_turn_keeping_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let sleep = ybs_testkit::ToolCall::new("s", "run_shell", json!({"command": "sleep 30"}));
    let later =
        ybs_testkit::ToolCall::new("l", "write_file", json!({"path": "a.txt", "content": "x"}));
    let llm = FakeLlm::start(Script::new([
        Turn::text(["sleeping first"])
            .with_tool_call(sleep)
            .with_tool_call(later),
        Turn::text(["never asked"]),
    ]))
    .unwrap();
    let mut agent = agent(&llm, dir.path(), 32_000);
    let mut ui = Recorder::default();
    let token = CancellationToken::new();
    cancel_soon(&token);
    let report = agent.turn("sleep", &mut ui, &token).await.unwrap();
    assert_eq!(report.stop, Stop::Cancelled);
    assert_eq!(report.reply, "sleeping first");
    // user, the calls, their two results, the note; no second request.
    assert_eq!(agent.conversation.len(), 5, "{:?}", agent.conversation);
    assert_eq!(agent.conversation[1].tool_calls().count(), 2);
    let result = |index: usize| match agent.conversation[index].parts.first() {
        Some(Part::ToolResult(result)) => result.clone(),
        other => panic!("no tool result at {index}: {other:?}"),
    };
    let killed = result(2);
    assert_eq!(killed.call_id, "s");
    assert!(!killed.is_error, "{killed:?}");
    let content: serde_json::Value = serde_json::from_str(&killed.content).unwrap();
    assert_eq!(content["cancelled"], true, "{content}");
    assert_eq!(content["exit_code"], 137, "{content}");
    assert!(
        content["stderr"]
            .as_str()
            .unwrap()
            .contains("[cancelled by the user; the command and its child processes were killed]"),
        "{content}"
    );
    let skipped = result(3);
    assert_eq!(skipped.call_id, "l");
    assert!(skipped.is_error);
    assert!(skipped.content.contains(tools::NOT_RUN), "{skipped:?}");
    assert!(!dir.path().join("a.txt").exists());
    assert_eq!(agent.conversation[4].role, Role::Assistant);
    assert_eq!(agent.conversation[4].text_content(), CANCELLED_NOTE);
    assert_eq!(ui.calls, ["run_shell"]);
    assert_eq!(ui.results, [("run_shell".to_owned(), false)]);
    assert_eq!(
        ui.notices,
        ["turn cancelled; the tool calls made so far and their results are kept"]
    );
    assert_eq!(llm.requests().len(), 1);
    // The next call starts with the flag cleared.
    let again = ToolCall::new("e", "run_shell", json!({"command": "echo again"}));
    let result = agent.run_call(&again, &mut ui, &mut Vec::new(), &CancellationToken::new());
    assert!(result.content.contains("again\\n"), "{result:?}");
    assert!(!result.content.contains("cancelled"), "{result:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_that_ends_by_itself_runs_normally_under_a_live_token() {
    let dir = tempfile::tempdir().unwrap();
    let llm = FakeLlm::start(Script::new([
        Turn::tool_call("e", "run_shell", json!({"command": "echo hi"})),
        Turn::text(["done"]),
    ]))
    .unwrap();
    let mut agent = agent(&llm, dir.path(), 32_000);
    let mut ui = Recorder::default();
    let report = agent
        .turn("echo", &mut ui, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(report.stop, Stop::Finished);
    assert_eq!(report.reply, "done");
    assert!(!agent.tool_context.cancel.is_cancelled());
    let Some(Part::ToolResult(result)) = agent.conversation[2].parts.first() else {
        panic!("no tool result: {:?}", agent.conversation[2]);
    };
    assert!(
        result.content.contains("\"stdout\":\"hi\\n\""),
        "{result:?}"
    );
}

/// Cancels `token` as soon as a hook has made the file `started` in `dir`.
fn cancel_once_started(token: &CancellationToken, dir: &std::path::Path) {
    let (token, started) = (token.clone(), dir.join("started"));
    tokio::spawn(async move {
        while !started.exists() {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        token.cancel();
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_while_a_check_hook_runs_kills_it_and_ends_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let write =
        ybs_testkit::ToolCall::new("w", "write_file", json!({"path": "a.txt", "content": "x"}));
    let llm = FakeLlm::start(Script::new([
        Turn::text(["writing"]).with_tool_call(write),
        Turn::text(["done"]),
        Turn::text(["never asked"]),
    ]))
    .unwrap();
    let mut agent = agent(&llm, dir.path(), 32_000);
    agent.hooks.test = Some("touch started; sleep 30".into());
    agent.hooks.timeout_seconds = 60;
    let mut ui = Recorder {
        answers: VecDeque::from([Answer::Yes]),
        ..Recorder::default()
    };
    let token = CancellationToken::new();
    cancel_once_started(&token, dir.path());
    let report = agent.turn("write a.txt", &mut ui, &token).await.unwrap();
    assert_eq!(report.stop, Stop::Cancelled, "{:?}", ui.notices);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "x"
    );
    assert!(
        ui.notices
            .iter()
            .any(|n| n == "the test command `touch started; sleep 30` was stopped"),
        "{:?}",
        ui.notices
    );
    assert_eq!(llm.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_a_before_tool_hook_refuses_its_call() {
    let dir = tempfile::tempdir().unwrap();
    let shell = ybs_testkit::ToolCall::new("s", "run_shell", json!({"command": "touch ran"}));
    let llm = FakeLlm::start(Script::new([
        Turn::text(["running"]).with_tool_call(shell),
        Turn::text(["never asked"]),
    ]))
    .unwrap();
    let mut agent = agent(&llm, dir.path(), 32_000);
    agent.hooks.before_tool = vec![crate::config::ToolHook {
        tools: vec!["run_shell".into()],
        command: "touch started; sleep 30".into(),
    }];
    agent.hooks.timeout_seconds = 60;
    let mut ui = Recorder::default();
    let token = CancellationToken::new();
    cancel_once_started(&token, dir.path());
    let report = agent.turn("run it", &mut ui, &token).await.unwrap();
    assert_eq!(report.stop, Stop::Cancelled, "{:?}", ui.notices);
    assert!(!dir.path().join("ran").exists());
    let refused = (agent.conversation.iter())
        .flat_map(|message| message.parts.iter())
        .find_map(|part| match part {
            Part::ToolResult(result) => Some(result.content.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        refused.contains("The user stopped the before_tool hook `touch started; sleep 30`"),
        "{refused}"
    );
}
