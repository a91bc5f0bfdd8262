//! The REPL on an 80-column terminal (tmux): ybs's own lines (the banner, the sandbox line,
//! a confirmation question, notices and errors, the usage line, `/help`, `/status`,
//! `ybs --help`) break between words, never inside one; slash commands and prompt files
//! complete with Tab; `/status` shows the session on one screen.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod pty;

use std::fs;

use pty::{Tmux, scratch_root, shell_quote, tmux_missing, write_fake_llm_config, ybs_command};
use serde_json::json;
use ybs_testkit::{FakeLlm, Script, Turn};

const COLUMNS: u16 = 80;

/// The screen's words in order, whitespace and line ends made one space: a word the terminal
/// broke at its edge shows here as two words.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Asserts that `sentence` shows on `screen` with every word whole.
fn shows_whole(screen: &str, sentence: &str) {
    assert!(
        flat(screen).contains(&flat(sentence)),
        "{sentence:?} is not shown whole on\n{screen}"
    );
}

/// Asserts that no line of `screen` fills the whole width: a line the terminal itself
/// wrapped fills it to the last column.
fn nothing_reaches_the_edge(screen: &str) {
    for line in screen.lines() {
        assert!(
            line.chars().count() < usize::from(COLUMNS),
            "a line reaches the edge (cut by the terminal):\n{line}\n\non\n{screen}"
        );
    }
}

fn start(root: &std::path::Path, llm: &FakeLlm, extra: &str, args: &str) -> Tmux {
    let config = root.join("ybs.json");
    write_fake_llm_config(&config, &llm.base_url(), false);
    let command = ybs_command(root, "xterm", extra, &config, args);
    Tmux::start_sized(
        &root.join("tmux.sock"),
        &root.join("project"),
        &command,
        (COLUMNS, 40),
    )
}

#[test]
fn ybs_own_lines_wrap_between_words_at_80_columns() {
    if tmux_missing() {
        return;
    }
    let root = scratch_root();
    let long = "a-file-name-that-is-long-enough-to-need-its-own-line-here.txt";
    let llm = FakeLlm::start(Script::new([
        Turn::tool_call(
            "w1",
            "write_file",
            json!({"path": "made.txt", "content": "hello\n"}),
        ),
        Turn::text(["Wrote it."]),
    ]))
    .unwrap();
    let tmux = start(root.path(), &llm, "", "");
    let banner = tmux.wait_for("ybs>");
    shows_whole(&banner, "/help for commands, Ctrl-D to exit.");
    nothing_reaches_the_edge(&banner);
    tmux.keys(&[&format!("write @{long} now"), "Enter"]);
    // The question may be wrapped: wait for its last word.
    let asked = tmux.wait_for("(a rule):");
    shows_whole(&asked, &format!("warning: cannot attach @{long}:"));
    shows_whole(&asked, "Allow? [y]es / [n]o / [a]lways (a rule):");
    nothing_reaches_the_edge(&asked);
    tmux.keys(&["y", "Enter"]);
    let done = tmux.wait_for_after("Wrote it.", "ybs>");
    shows_whole(&done, "tokens:");
    tmux.keys(&["/approval sometimes-maybe-when-the-moon-is-full", "Enter"]);
    let refused = tmux.wait_for("or full-auto");
    shows_whole(
        &refused,
        "error: unknown approval mode `sometimes-maybe-when-the-moon-is-full`: ask, auto-edit or \
         full-auto",
    );
    tmux.keys(&["/help", "Enter"]);
    let help = tmux.wait_for("Keys: Ctrl-G");
    shows_whole(
        &help,
        "/undo put back the files the last turn changed and drop the turn (again for earlier \
         ones)",
    );
    nothing_reaches_the_edge(&help);
    assert_eq!(
        fs::read_to_string(root.path().join("project/made.txt")).unwrap(),
        "hello\n"
    );
}

#[test]
fn slash_commands_and_prompt_files_complete_with_tab() {
    if tmux_missing() {
        return;
    }
    let root = scratch_root();
    let prompts = root.path().join("project/.ybs/prompts");
    fs::create_dir_all(&prompts).unwrap();
    fs::write(prompts.join("triage.md"), "Review $1 please.\n").unwrap();
    let llm = FakeLlm::start(Script::new([Turn::text(["Reviewed."])])).unwrap();
    let tmux = start(root.path(), &llm, "", "");
    tmux.wait_for("ybs>");
    tmux.keys(&["/sta", "Tab"]);
    tmux.wait_for("ybs> /status");
    tmux.keys(&["Enter"]);
    let status = tmux.wait_for("trust:");
    for label in [
        "model:",
        "window:",
        "approval:",
        "network:",
        "sandbox:",
        "MCP:",
    ] {
        assert!(status.contains(label), "{label} missing from\n{status}");
    }
    shows_whole(
        &status,
        "model: openai-compatible fake-model at http://127.0.0.1:",
    );
    shows_whole(&status, "approval: ask");
    shows_whole(&status, "MCP: no servers configured");
    nothing_reaches_the_edge(&status);
    tmux.keys(&["/tri", "Tab"]);
    tmux.wait_for("ybs> /triage");
    tmux.keys(&["src/lib.rs", "Enter"]);
    tmux.wait_for_after("Reviewed.", "ybs>");
    let sent = llm.requests().last().unwrap().body.to_string();
    assert!(sent.contains("Review src/lib.rs please."), "{sent}");
    tmux.keys(&["/qu", "Tab"]);
    tmux.wait_for("ybs> /quit");
    tmux.keys(&["Enter"]);
    // The session ends with ybs: tmux then has no session left to list.
    let start = std::time::Instant::now();
    while !tmux.run(&["list-sessions"]).is_empty() {
        assert!(start.elapsed() < pty::PATIENCE, "/quit did not end ybs");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn help_of_the_command_line_wraps_at_80_columns() {
    if tmux_missing() {
        return;
    }
    let root = scratch_root();
    let llm = FakeLlm::start(Script::new([])).unwrap();
    let config = root.path().join("ybs.json");
    write_fake_llm_config(&config, &llm.base_url(), false);
    let command = format!(
        "{}; echo '[the end]'; sleep 60",
        ybs_command(root.path(), "xterm", "", &config, "--help")
    );
    let tmux = Tmux::start_sized(
        &root.path().join("tmux.sock"),
        &root.path().join("project"),
        &format!("sh -c {}", shell_quote(std::path::Path::new(&command))),
        (COLUMNS, 40),
    );
    let screen = tmux.wait_for("[the end]");
    let all = tmux.run(&["capture-pane", "-p", "-t", "ybs", "-S", "-2000"]);
    shows_whole(&all, "Disable shell sandboxing (DANGEROUS)");
    shows_whole(
        &all,
        "In the interactive session: /help lists the commands (Tab completes them);",
    );
    assert!(screen.contains("[the end]"));
}
