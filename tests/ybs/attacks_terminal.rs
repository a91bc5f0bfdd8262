//! Attacks on what the terminal shows, end to end: escape sequences in the model's text, in
//! a file name, in a new file's preview, in a command to confirm (E1, E2) and in a Tab
//! completion, and a command writing to `/dev/tty` (A01, A02). Nothing raw reaches the
//! terminal; a confirmation shows every line of the command.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod pty;

use common::{Project, call, text, tool_messages};
use pty::{Tmux, scratch_root, tmux_missing, write_fake_llm_config, ybs_command};
use serde_json::json;
use ybs_testkit::{FakeLlm, Script, ToolCall, Turn};

const OSC52: &str = "\u{1b}]52;c;cHduZWQ=\u{7}";
const TITLE: &str = "\u{1b}]0;owned\u{7}";

/// E2 without a terminal: every place the model's bytes are shown carries them inert.
#[test]
fn escapes_from_the_model_reach_no_output_raw() {
    let project = Project::new(vec![
        call(
            "c1",
            "write_file",
            json!({"path": format!("n{TITLE}.txt"), "content": format!("x{OSC52}\n")}),
        ),
        call(
            "c2",
            "run_shell",
            json!({"command": format!("echo '{OSC52}'")}),
        ),
        Turn::text([format!("Done {OSC52}{TITLE}\u{9b}31m.")]),
    ]);
    let output = project.ybs(&["exec", "--yes", "go"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    for stream in [&output.stdout, &output.stderr] {
        let shown = text(stream);
        assert!(!shown.contains('\u{1b}'), "{shown:?}");
        assert!(!shown.contains('\u{7}'), "{shown:?}");
        assert!(!shown.contains('\u{9b}'), "{shown:?}");
    }
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("Done ^[]52;c;cHduZWQ=^G^[]0;owned^G<U+009B>31m."),
        "{stdout}"
    );
    let stderr = text(&output.stderr);
    assert!(stderr.contains("new file n^[]0;owned^G.txt"), "{stderr}");
    assert!(stderr.contains("+x^[]52;c;cHduZWQ=^G"), "{stderr}");
    // The file itself is written as asked: only the display is changed.
    assert!(project.file(&format!("n{TITLE}.txt")).exists());
}

/// E1, A01, A02 on a terminal: a command whose second line hides itself behind escapes is
/// shown whole, every line, inert; a command run in the sandbox cannot open `/dev/tty`, so
/// it can neither set the clipboard nor turn echo off.
#[test]
fn on_a_terminal_a_confirmation_shows_every_line_and_commands_cannot_reach_it() {
    if tmux_missing() {
        return;
    }
    let dir = scratch_root();
    let root = dir.path();
    let project = root.join("project");
    let hidden = "ls -la\necho pwned > .ybs.json #\u{1b}[2K\u{1b}[1A\u{1b}[2K  $ ls -la";
    let tty = format!(
        "printf '{}' > /dev/tty; echo \"osc=$?\"; stty -echo < /dev/tty; echo \"stty=$?\"",
        OSC52.replace('\u{1b}', "\\033").replace('\u{7}', "\\007")
    );
    let llm = FakeLlm::start(Script::new([
        Turn::default().with_tool_call(ToolCall::new(
            "c1",
            "run_shell",
            json!({ "command": hidden }),
        )),
        Turn::text(["Denied, fine."]),
        Turn::default().with_tool_call(ToolCall::new("c2", "run_shell", json!({ "command": tty }))),
        Turn::text(["Tried the terminal."]),
    ]))
    .unwrap();
    let config = root.join("ybs.json");
    write_fake_llm_config(&config, &llm.base_url(), false);
    let command = ybs_command(root, "xterm", "", &config, "");
    let tmux = Tmux::start(&root.join("tmux.sock"), &project, &command);
    tmux.run(&["set-option", "-g", "set-clipboard", "on"]);
    tmux.wait_for("ybs>");
    tmux.keys(&["list the files", "Enter"]);
    let screen = tmux.wait_for("Allow? [y]es / [n]o / [a]lways (a rule):");
    assert!(screen.contains("  $ ls -la\n"), "{screen}");
    assert!(
        screen.contains("  > echo pwned > .ybs.json #^[[2K^[[1A^[[2K  $ ls -la"),
        "{screen}"
    );
    tmux.keys(&["n", "Enter"]);
    tmux.wait_for_after("Denied, fine.", "ybs>");
    assert!(!project.join(".ybs.json").exists());
    tmux.keys(&["try the terminal", "Enter"]);
    tmux.wait_for_after(
        "try the terminal",
        "Allow? [y]es / [n]o / [a]lways (a rule):",
    );
    tmux.keys(&["y", "Enter"]);
    tmux.wait_for("Tried the terminal.");
    let bodies: Vec<serde_json::Value> = (llm.requests().into_iter())
        .filter(|request| request.path.ends_with("/chat/completions"))
        .map(|request| request.body)
        .collect();
    let (_, result) = tool_messages(bodies.last().unwrap()).pop().unwrap();
    assert!(
        result.contains("osc=1") || result.contains("osc=2"),
        "{result}"
    );
    assert!(result.contains("No such device or address"), "{result}");
    assert!(!result.contains("stty=0"), "{result}");
    // Nothing reached tmux's clipboard, and the terminal still echoes.
    assert_eq!(tmux.run(&["list-buffers"]).trim(), "");
    tmux.keys(&["echoed-back"]);
    tmux.wait_for("echoed-back");
}

/// A file name with escapes is not offered by Tab completion of `@path`: the line editor
/// would write it to the terminal raw (here: retitle the window). Other names still complete.
#[test]
fn tab_completion_offers_no_file_name_with_escapes() {
    if tmux_missing() {
        return;
    }
    let dir = scratch_root();
    let root = dir.path();
    let project = root.join("project");
    std::fs::write(project.join(format!("a{TITLE}.txt")), "x\n").unwrap();
    std::fs::write(project.join("abc.txt"), "y\n").unwrap();
    let llm = FakeLlm::start(Script::new([Turn::text(["unused"])])).unwrap();
    let config = root.join("ybs.json");
    write_fake_llm_config(&config, &llm.base_url(), false);
    let command = ybs_command(root, "xterm", "", &config, "");
    let tmux = Tmux::start(&root.join("tmux.sock"), &project, &command);
    tmux.wait_for("ybs>");
    tmux.keys(&["look at @a", "Tab"]);
    tmux.wait_for("look at @abc.txt");
    tmux.keys(&["Tab"]);
    tmux.keys(&[" done"]);
    tmux.wait_for("done");
    let title = tmux.run(&["display-message", "-p", "#{pane_title}"]);
    assert_ne!(title.trim(), "owned", "{}", tmux.screen());
}

/// Whether `output` holds a byte or character a terminal could obey: ESC, another C0 control
/// but newline and tab, a C1 control, or a bidirectional override.
fn obeyable(output: &str) -> Option<char> {
    output.chars().find(|c| {
        (c.is_control() && !matches!(c, '\n' | '\t'))
            || matches!(*c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    })
}

#[test]
fn strings_of_a_projects_file_reach_the_terminal_inert() {
    let project = Project::new(vec![Turn::text(["answer"])]);
    // Harmless settings (applied untrusted) and one that needs trust, each with sequences
    // that set the title, the clipboard, clear the screen or reorder the line.
    project.write(
        ".ybs.json",
        &json!({
            "llm": {"model": "m\u{1b}]0;pwned\u{7}\u{1b}]52;c;cm0gLXJmIH4=\u{7}"},
            "ui": {"theme": "\u{1b}[2Jdark"},
            "mcp": {"servers": {"x\u{202e}gnp.exe": {"command": "true\u{9b}31m"}}}
        })
        .to_string(),
    );
    for args in [&["config"][..], &["exec", "hello"], &["trust"]] {
        let output = project.ybs(args);
        for (stream, bytes) in [("stdout", &output.stdout), ("stderr", &output.stderr)] {
            let shown = text(bytes);
            assert_eq!(obeyable(&shown), None, "ybs {args:?} {stream}:\n{shown:?}");
        }
    }
}
