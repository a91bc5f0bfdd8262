//! The REPL's daily-use keys on a real terminal (tmux, as in `repl_pty.rs`): a prompt file
//! with arguments, listed by `/help`; `@path` completed with Tab and attached; Ctrl-J and
//! Alt-Enter inserting newlines; Ctrl-G opening
//! `$EDITOR` (a script that writes a known text) and submitting what it saved; code blocks
//! highlighted with colour and left as written with `NO_COLOR`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod pty;

use std::fs;
use std::os::unix::fs::PermissionsExt;

use pty::{Tmux, scratch_root, shell_quote, tmux_missing, write_fake_llm_config, ybs_command};
use ybs_testkit::{FakeLlm, Script, Turn};

/// The last user message of each chat request the fake LLM received.
fn user_messages(llm: &FakeLlm) -> Vec<String> {
    (llm.requests().into_iter())
        .filter(|request| request.path.ends_with("/chat/completions"))
        .map(|request| {
            let messages = request.body["messages"].as_array().unwrap().clone();
            let last = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
            last["content"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| {
                    (last["content"].as_array().unwrap().iter())
                        .filter_map(|part| part["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("")
                })
        })
        .collect()
}

#[test]
fn prompt_files_at_paths_and_the_editor_work_on_a_terminal() {
    if tmux_missing() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for sub in ["home", "data", "project/.ybs/prompts"] {
        fs::create_dir_all(root.join(sub)).unwrap();
    }
    let project = root.join("project");
    fs::write(
        project.join(".ybs/prompts/triage.md"),
        "Review $1 for $2.\n",
    )
    .unwrap();
    fs::write(project.join("notes.txt"), "the notes say 42\n").unwrap();
    let editor = root.join("editor.sh");
    fs::write(
        &editor,
        "#!/bin/sh\nprintf 'edited by the script' > \"$1\"\n",
    )
    .unwrap();
    fs::set_permissions(&editor, fs::Permissions::from_mode(0o755)).unwrap();
    let llm = FakeLlm::start(Script::new([
        Turn::text(["Reply one."]),
        Turn::text(["Reply two."]),
        Turn::text(["Reply three."]),
        Turn::text(["Reply four."]),
    ]))
    .unwrap();
    let config = root.join("ybs.json");
    write_fake_llm_config(&config, &llm.base_url(), false);
    let editor_env = format!("EDITOR={}", shell_quote(&editor));
    let command = ybs_command(root, "xterm", &editor_env, &config, "");
    let tmux = Tmux::start(&root.join("tmux.sock"), &project, &command);
    tmux.wait_for("ybs>");
    tmux.keys(&["/help", "Enter"]);
    tmux.wait_for("/triage  Review $1 for $2.");
    tmux.keys(&["/triage src/lib.rs bugs", "Enter"]);
    tmux.wait_for_after("Reply one.", "ybs>");
    tmux.keys(&["read @no"]);
    tmux.keys(&["Tab"]);
    tmux.wait_for("read @notes.txt");
    tmux.keys(&["Enter"]);
    tmux.wait_for_after("Reply two.", "ybs>");
    tmux.keys(&["draft"]);
    tmux.keys(&["C-g"]);
    tmux.wait_for_after("Reply three.", "ybs>");
    tmux.keys(&["line one"]);
    tmux.keys(&["C-j"]);
    tmux.keys(&["line two"]);
    tmux.keys(&["M-Enter"]);
    tmux.keys(&["line three", "Enter"]);
    tmux.wait_for_after("Reply four.", "ybs>");
    let sent = user_messages(&llm);
    assert_eq!(sent.len(), 4, "{sent:?}");
    assert_eq!(sent[3], "line one\nline two\nline three");
    assert_eq!(sent[0].trim_end(), "Review src/lib.rs for bugs.");
    assert!(
        sent[1].starts_with("read @notes.txt\n\n<file path=\"notes.txt\">"),
        "{sent:?}"
    );
    assert!(sent[1].contains("the notes say 42"), "{sent:?}");
    assert_eq!(sent[2], "edited by the script");
}

/// Runs the REPL with colour configured and `extra` variables, sends one message whose reply
/// has a Rust block, and returns the screen with its escape sequences.
fn highlighted_screen(extra: &str) -> Option<String> {
    if tmux_missing() {
        return None;
    }
    let dir = scratch_root();
    let root = dir.path();
    let llm = FakeLlm::start(Script::new([Turn::text([
        "Code:\n\n```rust\nfn main() {}\n```\n\nDone.",
    ])]))
    .unwrap();
    let config = root.join("ybs.json");
    write_fake_llm_config(&config, &llm.base_url(), true);
    let command = ybs_command(root, "xterm-256color", extra, &config, "");
    let project = root.join("project");
    let tmux = Tmux::start(&root.join("tmux.sock"), &project, &command);
    tmux.wait_for("ybs>");
    tmux.keys(&["show code", "Enter"]);
    tmux.wait_for_after("Done.", "ybs>");
    Some(tmux.run(&["capture-pane", "-e", "-p", "-t", "ybs", "-S", "-200"]))
}

#[test]
fn code_blocks_are_highlighted_on_a_terminal_and_not_with_no_color() {
    let Some(coloured) = highlighted_screen("") else {
        return;
    };
    let line = coloured.lines().find(|l| l.contains("main")).unwrap();
    // Highlighting paints in 24-bit colour, with several colours on the line.
    assert!(line.matches("\x1b[38;2;").count() >= 2, "{line:?}");
    let Some(plain) = highlighted_screen("NO_COLOR=1") else {
        return;
    };
    let line = plain.lines().find(|l| l.contains("main")).unwrap();
    assert_eq!(line, "fn main() {}");
}
