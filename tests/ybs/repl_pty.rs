//! The REPL on a real terminal: `ybs` runs in a detached tmux session (a pseudo-terminal)
//! against the in-process fake LLM; keys are sent with `tmux send-keys` and the screen read
//! with `tmux capture-pane`. Checks a slash command, the spinner while the model is slow
//! to answer, the confirmation prompt answered with `y`, Ctrl-D leaving, and `exec` saying
//! that it reads its task from the terminal. Skipped (with a note) where tmux is not
//! installed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod pty;

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use pty::{PATIENCE, Tmux, scratch_root, tmux_missing, write_fake_llm_config, ybs_command};
use serde_json::json;
use ybs_testkit::{FakeLlm, Script, ToolCall, Turn};

#[test]
fn the_repl_on_a_terminal_runs_slash_commands_and_asks_for_confirmation() {
    if tmux_missing() {
        return;
    }
    let dir = scratch_root();
    let root = dir.path();
    let llm = FakeLlm::start(Script::new([
        // Slow to answer, so the spinner shows (and must not block the turn).
        Turn::default()
            .with_tool_call(ToolCall::new(
                "c1",
                "write_file",
                json!({"path": "pty.txt", "content": "from the terminal"}),
            ))
            .with_delay_ms(600),
        Turn::text(["I wrote pty.txt."]),
    ]))
    .unwrap();
    let config = root.join("ybs.json");
    write_fake_llm_config(&config, &llm.base_url(), true);
    let command = ybs_command(root, "xterm", "", &config, "");
    let project = root.join("project");
    let tmux = Tmux::start(&root.join("tmux.sock"), &project, &command);
    tmux.wait_for("ybs>");
    tmux.keys(&["/provider current", "Enter"]);
    tmux.wait_for_after("openai-compatible fake-model at http://127.0.0.1:", "ybs>");
    tmux.keys(&["please write pty.txt", "Enter"]);
    tmux.wait_for("waiting for the model…");
    tmux.wait_for("Allow? [y]es / [n]o / [a]lways (a rule):");
    tmux.keys(&["y", "Enter"]);
    // Ctrl-D only means end of input once the line editor is reading again.
    tmux.wait_for_after("I wrote pty.txt.", "ybs>");
    assert_eq!(
        fs::read_to_string(project.join("pty.txt")).unwrap(),
        "from the terminal"
    );
    // A key sent while the line editor switches the terminal mode can be lost: repeat
    // Ctrl-D until ybs (the pane's process, exec'd by `env`) has exited.
    let pid = tmux.run(&["display-message", "-p", "-t", "ybs", "#{pane_pid}"]);
    let stat = PathBuf::from(format!("/proc/{}/stat", pid.trim()));
    let start = Instant::now();
    while fs::read_to_string(&stat).is_ok_and(|stat| !stat.contains(") Z ")) {
        assert!(
            start.elapsed() < PATIENCE,
            "Ctrl-D did not exit:\n{}",
            tmux.screen()
        );
        tmux.keys(&["C-d"]);
        std::thread::sleep(Duration::from_millis(200));
    }
    let history = fs::read_to_string(root.join("data/ybs/history")).unwrap();
    assert!(history.contains("please write pty.txt"), "{history}");
}

#[test]
fn on_a_terminal_the_confirmation_shows_a_coloured_diff_and_undo_puts_the_file_back() {
    if tmux_missing() {
        return;
    }
    let dir = scratch_root();
    let root = dir.path();
    let project = root.join("project");
    fs::write(project.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    let llm = FakeLlm::start(Script::new([
        Turn::default().with_tool_call(ToolCall::new(
            "c1",
            "edit_file",
            json!({"path": "a.txt", "old_text": "two", "new_text": "TWO"}),
        )),
        Turn::text(["I changed a.txt."]),
    ]))
    .unwrap();
    let config = root.join("ybs.json");
    write_fake_llm_config(&config, &llm.base_url(), true);
    let command = ybs_command(root, "xterm", "", &config, "");
    let tmux = Tmux::start(&root.join("tmux.sock"), &project, &command);
    tmux.wait_for("ybs>");
    tmux.keys(&["change a.txt", "Enter"]);
    let screen = tmux.wait_for("Allow? [y]es / [n]o / [a]lways (a rule):");
    let diff = "  a.txt: +1 -1\n  @@ -1,3 +1,3 @@\n   one\n  -two\n  +TWO\n   three\n";
    assert!(screen.contains(diff), "{screen}");
    // In colour: removed lines red, added lines green.
    let coloured = tmux.run(&["capture-pane", "-e", "-p", "-t", "ybs", "-S", "-200"]);
    assert!(coloured.contains("\u{1b}[31m  -two"), "{coloured:?}");
    assert!(coloured.contains("\u{1b}[32m  +TWO"), "{coloured:?}");
    tmux.keys(&["y", "Enter"]);
    tmux.wait_for_after("I changed a.txt.", "+1 -1 a.txt");
    assert_eq!(
        fs::read_to_string(project.join("a.txt")).unwrap(),
        "one\nTWO\nthree\n"
    );
    tmux.wait_for_after("+1 -1 a.txt", "ybs>");
    tmux.keys(&["/undo", "Enter"]);
    tmux.wait_for("the turn was dropped from the conversation");
    assert_eq!(
        fs::read_to_string(project.join("a.txt")).unwrap(),
        "one\ntwo\nthree\n"
    );
}

#[test]
fn exec_without_a_task_on_a_terminal_says_it_reads_one() {
    if tmux_missing() {
        return;
    }
    let dir = scratch_root();
    let root = dir.path();
    let llm = FakeLlm::start(Script::new([Turn::text(["Done from exec."])])).unwrap();
    let config = root.join("ybs.json");
    write_fake_llm_config(&config, &llm.base_url(), false);
    let exec = ybs_command(root, "xterm", "", &config, "exec");
    // The pane stays after ybs ends, to be read.
    let command = format!("{exec}; echo exit=$?; sleep 60");
    let tmux = Tmux::start(&root.join("tmux.sock"), &root.join("project"), &command);
    tmux.wait_for("reading the task from the terminal; end it with Ctrl-D");
    tmux.keys(&["say hi", "Enter", "C-d"]);
    tmux.wait_for_after("Done from exec.", "exit=0");
    let requests = llm.requests();
    let chat = (requests.iter())
        .find(|request| request.path.ends_with("/chat/completions"))
        .unwrap();
    assert!(chat.body.to_string().contains("say hi"), "{}", chat.body);
}
