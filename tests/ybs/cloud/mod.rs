//! What the end-to-end tests of the cloud providers share: `ybs exec --json` run with
//! secrets in its environment (checked never to show), the read-a-file task every provider
//! is given, and the check of its end.

use serde_json::{Value, json};
use ybs_testkit::{ToolCall, Turn, Usage};

use crate::common::{Project, text};

/// `ybs exec --json --yes TASK` with these flags before `exec` and these environment
/// variables: the exit code, the events and stderr, checking that none of `secrets` shows.
pub(crate) fn run_with(
    project: &Project,
    flags: &[&str],
    env: &[(&str, &str)],
    secrets: &[&str],
    task: &str,
) -> (Option<i32>, Vec<Value>, String) {
    let mut args = flags.to_vec();
    args.extend(["exec", "--json", "--yes", task]);
    let mut command = project.command(&args);
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    let stdout = text(&output.stdout);
    let stderr = text(&output.stderr);
    for secret in secrets {
        assert!(!stdout.contains(secret), "{secret} shown: {stdout}");
        assert!(!stderr.contains(secret), "{secret} shown: {stderr}");
    }
    let events = (stdout.lines())
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}")))
        .collect();
    (output.status.code(), events, stderr)
}

/// The read-a-file task every provider is given: the model calls `read_file`, gets the
/// file, answers.
pub(crate) fn read_file_task() -> Vec<Turn> {
    vec![
        Turn::default()
            .with_thinking(["The answer is in a file."])
            .with_signature("c2lnbmF0dXJl")
            .with_tool_call(ToolCall::new(
                "call_1",
                "read_file",
                json!({"path": "fact.txt"}),
            )),
        Turn::text(["The file says ", "42."])
            .with_usage(Usage::new(2_000, 30).with_cached(1_500).with_reasoning(12)),
    ]
}

/// [`assert_task_done`] for a wire format that counts `reasoning` thinking tokens (Anthropic's
/// counts them within the output, so Claude's usage names none).
pub(crate) fn assert_task_done_with_reasoning(
    project: &Project,
    (code, events, stderr): &(Option<i32>, Vec<Value>, String),
    reasoning: u64,
) {
    assert_eq!(*code, Some(0), "{stderr}\n{events:?}");
    let done = events.last().unwrap();
    assert_eq!(done["type"], "turn_completed", "{events:?}");
    assert_eq!(done["text"], "The file says 42.");
    let usage = (events.iter())
        .rfind(|event| event["type"] == "usage")
        .unwrap();
    assert_eq!(usage["usage"]["prompt_tokens"], 2_000, "{usage}");
    assert_eq!(usage["usage"]["cached_tokens"], 1_500, "{usage}");
    assert_eq!(usage["usage"]["reasoning_tokens"], reasoning, "{usage}");
    assert_eq!(project.read("fact.txt"), "The answer is 42.\n");
}
