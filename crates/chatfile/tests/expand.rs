//! The expansion pipeline, step by step, with the exact errors it reports.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;
use ybs_chatfile::{
    ChatMessage, Expander, Expansion, ToolRequestKind, from_core, parse_messages, print,
};
use ybs_core::{Image, Message, Part, Role, ToolCall, ToolResult};

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        Fixture {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        path
    }

    /// Expands `name` with a working directory that holds nothing.
    fn expand(&self, name: &str) -> Result<Expansion, ybs_chatfile::ExpandError> {
        let empty = self.path("elsewhere");
        fs::create_dir_all(&empty).unwrap();
        Expander::new(empty).expand_file(&self.path(name))
    }
}

fn m(role: &str, content: &str) -> ChatMessage {
    ChatMessage::new(role, content)
}

fn messages(expansion: &Expansion) -> Vec<ChatMessage> {
    expansion
        .messages
        .iter()
        .map(|message| message.to_message())
        .collect()
}

fn error(result: Result<Expansion, ybs_chatfile::ExpandError>) -> String {
    result.expect_err("expansion should fail").to_string()
}

// ---- Imports --------------------------------------------------------------------------------

#[test]
fn import_brings_every_message_but_previous_response_id() {
    let fx = Fixture::new();
    fx.write(
        "lib/base.chat",
        "system:\nrules\nprevious_response_id: r0\nuser:\nq0\nassistant:\na0\n",
    );
    fx.write("main.chat", "import: lib/base.chat\nuser:\nq1\n");
    let expansion = fx.expand("main.chat").unwrap();
    assert_eq!(
        messages(&expansion),
        vec![
            m("system", "rules"),
            m("user", "q0"),
            m("assistant", "a0"),
            m("user", "q1")
        ]
    );
    assert_eq!(expansion.messages[0].source.file, fx.path("lib/base.chat"));
    assert_eq!(expansion.messages[0].source.line, 1);
    assert!(expansion.options.sticky.is_empty());
}

#[test]
fn continue_takes_the_last_non_empty_message_and_last_skips_response_ids() {
    let fx = Fixture::new();
    fx.write(
        "a.chat",
        "user:\nq\nassistant:\nanswer\nprevious_response_id: r9\nuser:\n",
    );
    fx.write("c.chat", "continue: a.chat\n");
    fx.write("l.chat", "last: a.chat\n");
    let expansion = fx.expand("c.chat").unwrap();
    assert!(expansion.messages.is_empty());
    assert_eq!(
        expansion
            .options
            .sticky
            .get("previous_response_id")
            .unwrap(),
        "r9"
    );
    assert_eq!(
        messages(&fx.expand("l.chat").unwrap()),
        vec![m("assistant", "answer")]
    );
}

#[test]
fn imported_files_are_expanded_relative_to_themselves() {
    let fx = Fixture::new();
    fx.write("lib/notes.txt", "n");
    fx.write("lib/inner.chat", "file: notes.txt\n");
    fx.write("lib/outer.chat", "import: inner.chat\n");
    fx.write("main.chat", "import: lib/outer.chat\n");
    assert_eq!(
        messages(&fx.expand("main.chat").unwrap()),
        vec![m("user", "<file name=\"notes.txt\">\nn\n</file>")]
    );
}

#[test]
fn imports_fall_back_to_the_working_directory() {
    let fx = Fixture::new();
    fx.write("cwd/shared.chat", "system:\nshared\n");
    fx.write("chats/main.chat", "import: shared.chat\n");
    let expansion = Expander::new(fx.path("cwd"))
        .expand_file(&fx.path("chats/main.chat"))
        .unwrap();
    assert_eq!(messages(&expansion), vec![m("system", "shared")]);
}

#[test]
fn a_missing_import_names_the_file_and_line() {
    let fx = Fixture::new();
    fx.write("main.chat", "user:\nq\n\nimport: nope.chat\n");
    assert_eq!(
        error(fx.expand("main.chat")),
        format!(
            "{}:4: Import not found: nope.chat",
            fx.path("main.chat").display()
        )
    );
}

#[test]
fn an_import_cycle_is_named() {
    let fx = Fixture::new();
    fx.write("a.chat", "user:\nx\nimport: b.chat\n");
    fx.write("b.chat", "\n\nimport: a.chat\n");
    let (a, b) = (fx.path("a.chat"), fx.path("b.chat"));
    assert_eq!(
        error(fx.expand("a.chat")),
        format!(
            "{}:3: Import cycle: {} -> {} -> {}",
            b.display(),
            a.display(),
            b.display(),
            a.display()
        )
    );
}

// ---- Clear, skip, clean ---------------------------------------------------------------------

#[test]
fn clear_drops_itself_and_everything_before_the_last_one() {
    let fx = Fixture::new();
    fx.write(
        "t.chat",
        "system: template\noption: temperature 0.5\nclear:\nuser:\nfirst\nclear:\nuser: real question\n",
    );
    let expansion = fx.expand("t.chat").unwrap();
    assert_eq!(messages(&expansion), vec![m("user", "real question")]);
    assert!(expansion.options.transient.is_empty());
}

#[test]
fn clear_tools_drops_earlier_tools_and_traces() {
    let fx = Fixture::new();
    fx.write(
        "t.chat",
        "tool: old\nfunction_call: {\"name\":\"old\",\"arguments\":{},\"id\":\"1\"}\nfunction_call_output: {\"id\":\"1\",\"content\":\"x\"}\nuser:\nq\nclear_tools:\ntool: new\n",
    );
    let expansion = fx.expand("t.chat").unwrap();
    assert_eq!(messages(&expansion), vec![m("user", "q")]);
    assert_eq!(expansion.tools.len(), 1);
    assert_eq!(expansion.tools[0].args, vec!["new"]);
}

#[test]
fn skip_and_empty_messages_are_dropped() {
    let fx = Fixture::new();
    fx.write(
        "t.chat",
        "user:\n\nskip:\nnot this\nsystem:\nkept\nassistant:\n",
    );
    assert_eq!(
        messages(&fx.expand("t.chat").unwrap()),
        vec![m("system", "kept")]
    );
}

// ---- Files ----------------------------------------------------------------------------------

#[test]
fn a_file_becomes_a_tagged_user_message() {
    let fx = Fixture::new();
    fx.write("src/a.rs", "fn a() {}\n");
    fx.write("t.chat", "user:\nReview this.\n\nfile: src/a.rs\n");
    assert_eq!(
        messages(&fx.expand("t.chat").unwrap()),
        vec![
            m("user", "Review this."),
            m("user", "<file name=\"src/a.rs\">\nfn a() {}\n\n</file>"),
        ]
    );
}

#[test]
fn a_directory_becomes_one_message_per_file_sorted_without_dot_files() {
    let fx = Fixture::new();
    fx.write("lib/b.txt", "b");
    fx.write("lib/a/z.txt", "z");
    fx.write("lib/.hidden", "h");
    fx.write("lib/.git/config", "c");
    fx.write("t.chat", "directory: lib\n");
    assert_eq!(
        messages(&fx.expand("t.chat").unwrap()),
        vec![
            m("user", "<file name=\"lib/a/z.txt\">\nz\n</file>"),
            m("user", "<file name=\"lib/b.txt\">\nb\n</file>"),
        ]
    );
}

#[test]
fn images_and_pdfs_keep_their_role_with_the_path_resolved() {
    let fx = Fixture::new();
    fx.write("img/cat.png", "png");
    fx.write("doc.pdf", "pdf");
    fx.write("t.chat", "image: img/cat.png\npdf: doc.pdf\n");
    let expansion = fx.expand("t.chat").unwrap();
    assert_eq!(
        messages(&expansion),
        vec![
            m("image", &fx.path("img/cat.png").display().to_string()),
            m("pdf", &fx.path("doc.pdf").display().to_string()),
        ]
    );
    let core = expansion.to_core_messages().unwrap();
    assert_eq!(
        core[0],
        Message::new(
            Role::User,
            vec![Part::Image(Image {
                media_type: Some("image/png".into()),
                path: Some(fx.path("img/cat.png").display().to_string()),
                data: None,
            })]
        )
    );
    assert_eq!(
        core[1],
        Message::new(
            Role::User,
            vec![Part::Image(Image {
                media_type: Some("application/pdf".into()),
                path: Some(fx.path("doc.pdf").display().to_string()),
                data: None,
            })]
        ),
        "a PDF is a document part, never dropped"
    );
}

#[test]
fn the_last_previous_response_id_marks_what_the_stored_response_has_not_seen() {
    let fx = Fixture::new();
    fx.write(
        "t.chat",
        "user:\nq1\n\nassistant:\na1\n\nprevious_response_id: r1\n\nq2\n\nassistant:\na2\n\n\
         previous_response_id: r2\n\nq3\n",
    );
    let expansion = fx.expand("t.chat").unwrap();
    let at = expansion.previous_response_at.unwrap();
    assert_eq!(messages(&expansion)[at..], [m("user", "q3")]);
    assert_eq!(expansion.options.sticky["previous_response_id"], "r2");
    fx.write("n.chat", "user:\nq\n");
    assert_eq!(fx.expand("n.chat").unwrap().previous_response_at, None);
}

#[test]
fn a_missing_file_names_the_file_and_line() {
    let fx = Fixture::new();
    fx.write("t.chat", "user:\nq\nfile: missing.txt\n");
    assert_eq!(
        error(fx.expand("t.chat")),
        format!(
            "{}:3: File not found: missing.txt",
            fx.path("t.chat").display()
        )
    );
    fx.write("d.chat", "directory: nodir\n");
    assert_eq!(
        error(fx.expand("d.chat")),
        format!("{}:1: File not found: nodir", fx.path("d.chat").display())
    );
}

// ---- Options --------------------------------------------------------------------------------

#[test]
fn sticky_options_persist_and_transient_ones_end_at_each_assistant_message() {
    let fx = Fixture::new();
    fx.write(
        "t.chat",
        "endpoint: nano\nmodel: a\noption: temperature 0.5\nformat: json\nsticky_option: seed 7\nuser:\nq\nassistant:\nr\nmodel: b\noption: top_p  0.9\npersist: false\nuser:\nq2\n",
    );
    let expansion = fx.expand("t.chat").unwrap();
    let sticky: Vec<(&str, &str)> = expansion
        .options
        .sticky
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        sticky,
        vec![("endpoint", "nano"), ("model", "b"), ("seed", "7")]
    );
    let transient: Vec<(&str, &str)> = expansion
        .options
        .transient
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    // The value is what follows the first space, as in the reference.
    assert_eq!(transient, vec![("persist", "false"), ("top_p", " 0.9")]);
    assert_eq!(expansion.options.effective().len(), 5);
    assert_eq!(
        messages(&expansion),
        vec![m("user", "q"), m("assistant", "r"), m("user", "q2")]
    );
}

// ---- Tools ----------------------------------------------------------------------------------

#[test]
fn tool_lines_become_requests_for_the_caller() {
    let fx = Fixture::new();
    fx.write(
        "t.chat",
        "tool: Baking bake_muffin_tray blueberries=true\nmcp: stdio 'npx -y server ${pwd}' read_file\nuser:\nq\nexec_task: Baking bake n=2\ntask: Baking bake\ninline_task: W t\n",
    );
    let expansion = fx.expand("t.chat").unwrap();
    let requests: Vec<(ToolRequestKind, Vec<&str>, usize, usize)> = expansion
        .tools
        .iter()
        .map(|r| {
            (
                r.kind,
                r.args.iter().map(String::as_str).collect(),
                r.source.line,
                r.position,
            )
        })
        .collect();
    assert_eq!(
        requests,
        vec![
            (
                ToolRequestKind::Tool,
                vec!["Baking", "bake_muffin_tray", "blueberries=true"],
                1,
                0
            ),
            (
                ToolRequestKind::Mcp,
                vec!["stdio", "npx -y server ${pwd}", "read_file"],
                2,
                0
            ),
            (
                ToolRequestKind::ExecTask,
                vec!["Baking", "bake", "n=2"],
                5,
                1
            ),
            (ToolRequestKind::Task, vec!["Baking", "bake"], 6, 1),
            (ToolRequestKind::InlineTask, vec!["W", "t"], 7, 1),
        ]
    );
}

#[test]
fn unbalanced_quotes_in_tool_arguments_name_the_line() {
    let fx = Fixture::new();
    fx.write("t.chat", "user:\nq\nmcp: stdio 'npx\n");
    assert_eq!(
        error(fx.expand("t.chat")),
        format!(
            "{}:3: cannot read the arguments of `mcp`: missing closing quote",
            fx.path("t.chat").display()
        )
    );
}

// ---- The tool-call trace and core messages --------------------------------------------------

#[test]
fn the_trace_becomes_tool_call_and_tool_result_parts() {
    let fx = Fixture::new();
    fx.write(
        "t.chat",
        "system:\nS\nuser:\nbake\nfunction_call: {\"name\":\"bake\",\"arguments\":{\"blueberries\":true},\"id\":\"c1\"}\nfunction_call: {\"function\":{\"name\":\"cool\",\"arguments\":\"{\\\"m\\\":5}\"},\"id\":\"c2\"}\nfunction_call_output: {\"id\":\"c1\",\"content\":\"baked\"}\nfunction_call_output: {\"tool_call_id\":\"c2\",\"content\":{\"ok\":true}}\nassistant:\nDone.\n",
    );
    let core = fx.expand("t.chat").unwrap().to_core_messages().unwrap();
    assert_eq!(
        core,
        vec![
            Message::system("S"),
            Message::user("bake"),
            Message::new(
                Role::Assistant,
                vec![
                    Part::ToolCall(ToolCall::new("c1", "bake", json!({"blueberries": true}))),
                    Part::ToolCall(ToolCall::new("c2", "cool", json!({"m": 5}))),
                ]
            ),
            Message::new(
                Role::Tool,
                vec![Part::ToolResult(ToolResult {
                    call_id: "c1".into(),
                    name: Some("bake".into()),
                    content: "baked".into(),
                    is_error: false,
                })]
            ),
            Message::new(
                Role::Tool,
                vec![Part::ToolResult(ToolResult {
                    call_id: "c2".into(),
                    name: Some("cool".into()),
                    content: "{\"ok\":true}".into(),
                    is_error: false,
                })]
            ),
            Message::assistant("Done."),
        ]
    );
}

#[test]
fn malformed_trace_json_names_the_file_and_line() {
    let fx = Fixture::new();
    fx.write("t.chat", "user:\nq\nfunction_call: {\"name\": \"f\",\n");
    let shown = fx.path("t.chat").display().to_string();
    assert_eq!(
        error(fx.expand("t.chat")),
        format!(
            "{shown}:3: malformed function_call JSON: EOF while parsing a value at line 1 column 13"
        )
    );
    fx.write("u.chat", "function_call: {\"name\":\"f\"}\n");
    assert_eq!(
        error(fx.expand("u.chat")),
        format!(
            "{}:1: malformed function_call JSON: missing \"id\"",
            fx.path("u.chat").display()
        )
    );
    fx.write("v.chat", "function_call_output: [1]\n");
    assert_eq!(
        error(fx.expand("v.chat")),
        format!(
            "{}:1: malformed function_call_output JSON: expected a JSON object",
            fx.path("v.chat").display()
        )
    );
}

#[test]
fn unsupported_roles_name_the_file_and_line() {
    let fx = Fixture::new();
    fx.write(
        "t.chat",
        "user:\nq\n\nassociation: brothers data/brothers\n",
    );
    assert_eq!(
        error(fx.expand("t.chat")),
        format!(
            "{}:4: unsupported role `association`: `association` belongs to the reference implementation's workflow engine, which ybs does not have; remove the line",
            fx.path("t.chat").display()
        )
    );
    fx.write("h.chat", "user:\nsee\nhttp://example.com\n");
    assert_eq!(
        error(fx.expand("h.chat")),
        format!(
            "{}:3: unsupported role `http`: ybs does not know this role; if the line is meant as text, write it as `\\http:...`",
            fx.path("h.chat").display()
        )
    );
}

#[test]
fn from_core_writes_code_parts_as_fences_and_leaves_out_thinking() {
    let core = vec![Message::new(
        Role::Assistant,
        vec![
            Part::thinking("hmm"),
            Part::text("Here:"),
            Part::Code {
                content: "fn main() {}".into(),
                language: Some("rust".into()),
            },
            Part::text("Done."),
        ],
    )];
    assert_eq!(
        from_core(&core),
        vec![m("assistant", "Here:\n```rust\nfn main() {}\n```\nDone.")]
    );
}

#[test]
fn core_messages_written_with_from_core_expand_back_to_themselves() {
    let core = vec![
        Message::system("Be brief."),
        Message::user("user: not a header\n```\nx\n```"),
        Message::new(
            Role::Assistant,
            vec![
                Part::text("Let me check."),
                Part::ToolCall(ToolCall::new("c1", "read", json!({"path": "a\nb"}))),
            ],
        ),
        Message::new(
            Role::Tool,
            vec![Part::ToolResult(ToolResult {
                call_id: "c1".into(),
                name: Some("read".into()),
                content: "line1\nline2".into(),
                is_error: true,
            })],
        ),
        Message::assistant("Done."),
    ];
    let chat = from_core(&core);
    let text = print(&chat).unwrap();
    assert_eq!(parse_messages(&text), chat);
    let expansion = Expander::new(".")
        .expand_text(&text, Path::new("mem.chat"))
        .unwrap();
    assert_eq!(expansion.to_core_messages().unwrap(), core);
}
