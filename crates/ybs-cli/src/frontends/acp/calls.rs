//! How a ybs tool call looks to an editor: its ACP kind, a one-line title, the files it
//! touches, its preview as `diff` content and its result as text.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    ContentBlock, Diff, TextContent, ToolCall as AcpToolCall, ToolCallContent, ToolCallLocation,
    ToolCallStatus, ToolKind,
};
use serde_json::Value;
use ybs_core::{ToolCall, ToolResult};
use ybs_tools::{ActionKind, Effect, ToolRegistry};

use crate::render::diff_view::Preview;

/// The longest title shown for a call; a longer command or pattern is cut with `…`.
const TITLE_CHARS: usize = 120;

/// The most characters of a tool result sent as the call's content.
const RESULT_CHARS: usize = 4000;

/// What kind of action a call of a tool that declares `kind` is, for the editor's icon and
/// grouping.
pub fn kind(kind: ActionKind) -> ToolKind {
    match kind {
        ActionKind::Read => ToolKind::Read,
        ActionKind::Edit => ToolKind::Edit,
        ActionKind::Delete => ToolKind::Delete,
        ActionKind::Search => ToolKind::Search,
        ActionKind::Execute => ToolKind::Execute,
        ActionKind::Fetch => ToolKind::Fetch,
        ActionKind::Other => ToolKind::Other,
    }
}

/// `call` as it is first shown, pending: its title, kind, files and arguments.
pub fn pending(tools: &ToolRegistry, call: &ToolCall, cwd: &Path) -> AcpToolCall {
    AcpToolCall::new(call.id.clone(), title(tools, call))
        .kind(kind_of(tools, call))
        .status(ToolCallStatus::Pending)
        .locations(locations(tools, call, cwd))
        .raw_input(call.arguments.clone())
}

/// What kind of action `call` is, as its tool declares it.
pub fn kind_of(tools: &ToolRegistry, call: &ToolCall) -> ToolKind {
    kind(tools.declaration(&call.name).kind)
}

/// A one-line title: the tool's action and what it acts on (`Edit src/main.rs`,
/// `cargo test`), as the tool words it; control characters from the model are shown as `?`.
pub fn title(tools: &ToolRegistry, call: &ToolCall) -> String {
    let tool = tools.tool(&call.name);
    let title = tool.and_then(|tool| tool.title(&call.arguments));
    one_line(title.as_deref().unwrap_or(&call.name), TITLE_CHARS)
}

/// The files `call` reads or writes, absolute (ACP paths are), with the first line read.
pub fn locations(tools: &ToolRegistry, call: &ToolCall, cwd: &Path) -> Vec<ToolCallLocation> {
    let declared = tools.declaration(&call.name);
    let reads = declared.kind == ActionKind::Read;
    if !reads && declared.effect != Effect::FileAtPath {
        return Vec::new();
    }
    let Some(path) = call.arguments.get("path").and_then(Value::as_str) else {
        return Vec::new();
    };
    let location = ToolCallLocation::new(absolute(cwd, path));
    let line = (call.arguments.get("offset"))
        .and_then(Value::as_u64)
        .and_then(|line| u32::try_from(line).ok());
    vec![match line {
        Some(line) if reads => location.line(line),
        _ => location,
    }]
}

/// The preview as the editor shows it: a diff of the file's text, or the command and where it
/// runs.
pub fn preview_content(preview: &Preview, cwd: &Path) -> ToolCallContent {
    match preview {
        Preview::File {
            path,
            before,
            after,
        } => ToolCallContent::Diff(
            Diff::new(absolute(cwd, path), after.clone()).old_text(before.clone()),
        ),
        Preview::Shell { command, cwd } => text_content(format!("$ {command}\n(in {cwd})")),
        Preview::Unshown { path, why } => text_content(format!("{path}: {why}")),
    }
}

/// The status and content a finished call ends with: the preview's diff stays for a
/// successful edit, other results are shown as text (cut to [`RESULT_CHARS`]).
pub fn outcome(
    result: &ToolResult,
    diff: Option<ToolCallContent>,
) -> (ToolCallStatus, Vec<ToolCallContent>) {
    if result.is_error {
        let message = error_message(&result.content);
        return (ToolCallStatus::Failed, vec![text_content(message)]);
    }
    match diff {
        Some(diff @ ToolCallContent::Diff(_)) => (ToolCallStatus::Completed, vec![diff]),
        _ => (
            ToolCallStatus::Completed,
            vec![text_content(cut(&result.content, RESULT_CHARS))],
        ),
    }
}

/// The tool result as JSON when it is JSON (ybs's tools answer in JSON), else as a string.
pub fn raw_output(result: &ToolResult) -> Value {
    serde_json::from_str(&result.content).unwrap_or_else(|_| Value::String(result.content.clone()))
}

/// Plain text as tool call content.
pub fn text_content(text: String) -> ToolCallContent {
    ToolCallContent::from(ContentBlock::Text(TextContent::new(text)))
}

/// The `error` of a JSON error result, else the whole result.
fn error_message(content: &str) -> String {
    let parsed: Option<String> = serde_json::from_str::<Value>(content)
        .ok()
        .and_then(|value| {
            value
                .get("error")
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
    cut(&parsed.unwrap_or_else(|| content.to_owned()), RESULT_CHARS)
}

/// `path` made absolute against `cwd`.
pub fn absolute(cwd: &Path, path: &str) -> PathBuf {
    cwd.join(path)
}

/// The first line of `text`, control characters as `?`, at most `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let first = text.lines().next().unwrap_or_default();
    let more = text.lines().nth(1).is_some();
    let clean: String = first
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    let mut line = cut(&clean, max);
    if more && !line.ends_with('…') {
        line.push_str(" …");
    }
    line
}

/// `text` cut to `max` characters, with `…` when cut.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    fn tools() -> ToolRegistry {
        ToolRegistry::new()
    }

    fn call(name: &str, arguments: Value) -> ToolCall {
        ToolCall::new("c1", name, arguments)
    }

    #[test]
    fn titles_name_the_action_and_its_target_on_one_clean_line() {
        assert_eq!(
            title(&tools(), &call("edit_file", json!({"path": "src/a.rs"}))),
            "Edit src/a.rs"
        );
        assert_eq!(
            title(
                &tools(),
                &call("run_shell", json!({"command": "ls\nrm -rf x"}))
            ),
            "ls …"
        );
        assert_eq!(
            title(
                &tools(),
                &call("run_shell", json!({"command": "echo \u{1b}[2J"}))
            ),
            "echo ?[2J"
        );
        assert_eq!(
            title(
                &tools(),
                &call("search_files", json!({"pattern": "fn main"}))
            ),
            "Search `fn main` in ."
        );
        assert_eq!(title(&tools(), &call("srv__tool", json!({}))), "srv__tool");
        let long = "x".repeat(300);
        assert_eq!(
            title(&tools(), &call("run_shell", json!({"command": long})))
                .chars()
                .count(),
            TITLE_CHARS + 1
        );
    }

    /// A tool added by the test: fetches, names its own title.
    struct Probe(ybs_core::ToolSpec);

    impl ybs_tools::Tool for Probe {
        fn spec(&self) -> &ybs_core::ToolSpec {
            &self.0
        }
        fn invoke(
            &self,
            _args: &ybs_tools::Args,
            _ctx: &ybs_tools::ToolContext,
        ) -> Result<Value, ybs_tools::ToolError> {
            Ok(json!({}))
        }
        fn declaration(&self) -> ybs_tools::Declaration {
            ybs_tools::Declaration::looking(ActionKind::Read)
        }
        fn title(&self, arguments: &Value) -> Option<String> {
            Some(format!("Probe {}", arguments["path"].as_str()?))
        }
    }

    #[test]
    fn a_tool_the_agent_has_is_shown_as_it_declares() {
        let mut tools = tools();
        let spec = ybs_core::ToolSpec::new("probe", "a test tool", json!({"type": "object"}));
        tools.register(std::sync::Arc::new(Probe(spec))).unwrap();
        let probe = call("probe", json!({"path": "a.rs"}));
        assert_eq!(kind_of(&tools, &probe), ToolKind::Read);
        assert_eq!(title(&tools, &probe), "Probe a.rs");
        let at = locations(&tools, &probe, Path::new("/p"));
        assert_eq!(at, vec![ToolCallLocation::new("/p/a.rs")]);
        // Unknown to the registry, the same call is shown as any other tool's.
        assert_eq!(kind_of(&self::tools(), &probe), ToolKind::Other);
    }

    #[test]
    fn file_tools_locate_their_file_absolutely() {
        let cwd = Path::new("/p");
        let read = locations(
            &tools(),
            &call("read_file", json!({"path": "a.rs", "offset": 7})),
            cwd,
        );
        assert_eq!(read, vec![ToolCallLocation::new("/p/a.rs").line(7)]);
        let shell = locations(&tools(), &call("run_shell", json!({"command": "ls"})), cwd);
        assert!(shell.is_empty());
        let kind_of = |name: &str| kind_of(&tools(), &call(name, json!({})));
        assert_eq!(kind_of("edit_file"), ToolKind::Edit);
        assert_eq!(kind_of("run_shell"), ToolKind::Execute);
        assert_eq!(kind_of("srv__tool"), ToolKind::Other);
    }

    #[test]
    fn an_edit_keeps_its_diff_and_a_failure_says_why() {
        let cwd = Path::new("/p");
        let preview = Preview::File {
            path: "a.txt".into(),
            before: Some("old\n".into()),
            after: "new\n".into(),
        };
        let diff = preview_content(&preview, cwd);
        let ToolCallContent::Diff(inner) = &diff else {
            panic!("not a diff: {diff:?}");
        };
        assert_eq!(inner.path, PathBuf::from("/p/a.txt"));
        assert_eq!(inner.old_text.as_deref(), Some("old\n"));
        assert_eq!(inner.new_text, "new\n");
        let ok = ToolResult {
            call_id: "c1".into(),
            name: Some("edit_file".into()),
            content: json!({"success": true}).to_string(),
            is_error: false,
        };
        assert_eq!(
            outcome(&ok, Some(diff.clone())),
            (ToolCallStatus::Completed, vec![diff.clone()])
        );
        let failed = ToolResult {
            content: json!({"success": false, "error": "denied"}).to_string(),
            is_error: true,
            ..ok
        };
        assert_eq!(
            outcome(&failed, Some(diff)),
            (
                ToolCallStatus::Failed,
                vec![text_content("denied".to_owned())]
            )
        );
    }
}
