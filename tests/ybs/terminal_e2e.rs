//! The REPL of a daily agent on a real terminal (tmux, as in `repl_pty.rs`): tool results
//! shown as a person wants them (`Read src/main.rs (120 lines)`, a command's exit code and last
//! lines) while the model gets them whole, `/last`; `!command`; `/fork` and `/resume`; `/init`;
//! the bell when a turn ends or a confirmation waits, and none with `ui.notify: false`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod pty;

use std::fs;
use std::path::Path;

use pty::{Tmux, tmux_missing, ybs_command};
use serde_json::{Value, json};
use ybs_testkit::{FakeLlm, Script, ToolCall, Turn};

fn call(id: &str, name: &str, arguments: Value) -> Turn {
    Turn::default().with_tool_call(ToolCall::new(id, name, arguments))
}

/// A temporary root with `home`, `data` and `project`, and a configuration for `llm` with
/// `extra` merged into it (the shell sandbox off: it is not what these tests are about).
fn setup(root: &Path, llm: &FakeLlm, extra: Value) -> std::path::PathBuf {
    for sub in ["home", "data", "project"] {
        fs::create_dir_all(root.join(sub)).unwrap();
    }
    let mut config = json!({
        "llm": {"provider": "openai-compatible", "model": "fake-model",
                "endpoint": format!("{}/v1", llm.base_url())},
        "agent": {"retry_attempts": 0},
        "safety": {"sandbox_enabled": false},
        "ui": {"color": false},
        "git": {"auto_commit": false}
    });
    for (section, values) in extra.as_object().unwrap() {
        for (key, value) in values.as_object().unwrap() {
            config[section][key] = value.clone();
        }
    }
    let path = root.join("ybs.json");
    fs::write(&path, config.to_string()).unwrap();
    path
}

/// The messages of every chat request the fake LLM received.
fn requests(llm: &FakeLlm) -> Vec<Vec<Value>> {
    (llm.requests().into_iter())
        .filter(|request| request.path.ends_with("/chat/completions"))
        .map(|request| request.body["messages"].as_array().unwrap().clone())
        .collect()
}

#[test]
fn tool_results_read_as_a_person_wants_and_last_shows_them_whole() {
    if tmux_missing() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let llm = FakeLlm::start(Script::new([
        call("c1", "read_file", json!({"path": "src/main.rs"})),
        call(
            "c2",
            "edit_file",
            json!({"path": "src/main.rs", "old_text": "line 7\n",
                   "new_text": "line seven\nline 7b\n"}),
        ),
        call("c3", "list_files", json!({"pattern": "**/*"})),
        call("c4", "search_files", json!({"pattern": "needle"})),
        call(
            "c5",
            "run_shell",
            json!({"command": "seq 1 12; echo oops >&2; exit 3"}),
        ),
        Turn::text(["All done."]),
    ]))
    .unwrap();
    let config = setup(root, &llm, json!({}));
    let project = root.join("project");
    fs::create_dir_all(project.join("src")).unwrap();
    let main: String = (1..=120).map(|n| format!("line {n}\n")).collect();
    fs::write(project.join("src/main.rs"), &main).unwrap();
    fs::write(project.join("src/lib.rs"), "// needle\n").unwrap();
    fs::write(
        project.join("README.md"),
        "a needle here\nand a needle there\n",
    )
    .unwrap();
    let command = ybs_command(root, "xterm", "", &config, "--approval full-auto");
    let tmux = Tmux::start(&root.join("tmux.sock"), &project, &command);
    tmux.wait_for("ybs>");
    tmux.keys(&["/help", "Enter"]);
    let help = tmux.wait_for("/init");
    for listed in [
        "/last",
        "/resume [N]",
        "/fork",
        "Start it with ! to run a shell command",
    ] {
        assert!(help.contains(listed), "{listed} in\n{help}");
    }
    tmux.keys(&["go", "Enter"]);
    let screen = tmux.wait_for_after("All done.", "ybs>");
    for shown in [
        "✓ Read src/main.rs (120 lines)",
        "✓ Edited src/main.rs (+2 -1)",
        "+line seven",
        "✓ Listed 3 files",
        "✓ Found 3 matches in 2 files",
        "✗ Ran seq 1 12; echo oops >&2; exit 3: exit code 3",
        "… 8 more lines above (/last shows all)",
    ] {
        assert!(screen.contains(shown), "{shown:?} in\n{screen}");
    }
    // The last lines of the output, not the first ones, and no raw JSON.
    let tail = &screen[screen.find("exit code 3").unwrap()..];
    for line in ["    9", "    12", "    oops"] {
        assert!(tail.contains(&format!("\n{line}\n")), "{line:?} in\n{tail}");
    }
    assert!(!tail.contains("\n    8\n"), "{tail}");
    assert!(!screen.contains("\"total_lines\""), "{screen}");
    assert!(!screen.contains("\"exit_code\""), "{screen}");
    // The model got every result whole.
    let last = requests(&llm).pop().unwrap();
    let results: Vec<&str> = (last.iter())
        .filter(|message| message["role"] == "tool")
        .map(|message| message["content"].as_str().unwrap())
        .collect();
    assert_eq!(results.len(), 5, "{last:?}");
    assert!(results[0].contains("line 120") && results[0].contains("total_lines"));
    assert!(results[4].contains("\"exit_code\":3") && results[4].contains("1\\n2\\n3\\n"));
    // /last shows the whole output of the command.
    tmux.keys(&["/last", "Enter"]);
    let screen = tmux.wait_for_after("/last", "[exit code 3]");
    let whole = &screen[screen.rfind("/last").unwrap()..];
    for line in ["[stdout]", "1", "2", "8", "12", "[stderr]", "oops"] {
        assert!(
            whole.contains(&format!("\n{line}\n")),
            "{line:?} in\n{whole}"
        );
    }
}

#[test]
fn a_bang_command_runs_is_shown_and_reaches_the_model() {
    if tmux_missing() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let llm = FakeLlm::start(Script::new([Turn::text(["It printed bang-out."])])).unwrap();
    let config = setup(root, &llm, json!({}));
    let project = root.join("project");
    fs::write(project.join("marker.txt"), "from the project\n").unwrap();
    let command = ybs_command(root, "xterm", "", &config, "");
    let tmux = Tmux::start(&root.join("tmux.sock"), &project, &command);
    tmux.wait_for("ybs>");
    tmux.keys(&["!echo bang-out; cat marker.txt", "Enter"]);
    let screen = tmux.wait_for("✓ Ran echo bang-out; cat marker.txt: exit code 0");
    assert!(screen.contains("\nbang-out\n"), "{screen}");
    assert!(screen.contains("\nfrom the project\n"), "{screen}");
    assert!(
        requests(&llm).is_empty(),
        "the command alone asks the model nothing"
    );
    tmux.keys(&["what did it print?", "Enter"]);
    tmux.wait_for_after("what did it print?", "It printed bang-out.");
    let messages = requests(&llm).pop().unwrap();
    let users: Vec<String> = (messages.iter())
        .filter(|message| message["role"] == "user")
        .map(|message| message["content"].to_string())
        .collect();
    let ran = users.iter().find(|text| text.contains("bang-out")).unwrap();
    assert!(ran.contains("echo bang-out; cat marker.txt"), "{ran}");
    assert!(ran.contains("from the project"), "{ran}");
    assert!(users.last().unwrap().contains("what did it print?"));
    // A failing command is shown as failed.
    tmux.keys(&["!exit 7", "Enter"]);
    tmux.wait_for("✗ Ran exit 7: exit code 7");
}

#[test]
fn fork_and_resume_pick_sessions_on_a_terminal() {
    if tmux_missing() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let llm = FakeLlm::start(Script::new([
        Turn::text(["Answer one."]),
        Turn::text(["Answer two."]),
        Turn::text(["Answer three."]),
    ]))
    .unwrap();
    let config = setup(root, &llm, json!({}));
    let project = root.join("project");
    let command = ybs_command(root, "xterm", "", &config, "");
    let tmux = Tmux::start(&root.join("tmux.sock"), &project, &command);
    tmux.wait_for("ybs>");
    tmux.keys(&["the first question", "Enter"]);
    tmux.wait_for_after("Answer one.", "ybs>");
    tmux.keys(&["/fork", "Enter"]);
    tmux.wait_for("later turns are saved there");
    tmux.keys(&["a question of the fork", "Enter"]);
    let screen = tmux.wait_for_after("Answer two.", "ybs>");
    assert!(!screen.contains("warning"), "{screen}");
    tmux.keys(&["/resume", "Enter"]);
    let screen = tmux.wait_for("resume which");
    let picker = &screen[screen.rfind("/resume").unwrap()..];
    assert!(
        picker.contains("  1. ")
            && picker.contains("1 request, ")
            && picker.contains("the first question"),
        "{picker}"
    );
    // The session being written (the fork) is not offered.
    assert!(!picker.contains("  2. "), "{picker}");
    tmux.keys(&["1", "Enter"]);
    tmux.wait_for("resumed ");
    tmux.keys(&["and now?", "Enter"]);
    tmux.wait_for_after("and now?", "Answer three.");
    let messages = requests(&llm).pop().unwrap();
    let text = serde_json::to_string(&messages).unwrap();
    assert!(
        text.contains("the first question") && text.contains("Answer one."),
        "{text}"
    );
    assert!(!text.contains("a question of the fork"), "{text}");
}

#[test]
fn init_has_the_model_write_agents_md_after_approval() {
    if tmux_missing() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let agents = "# AGENTS.md\n\nBuild with `make`.\n";
    let llm = FakeLlm::start(Script::new([
        call("c1", "list_files", json!({"pattern": "*"})),
        call(
            "c2",
            "write_file",
            json!({"path": "AGENTS.md", "content": agents}),
        ),
        Turn::text(["Wrote AGENTS.md."]),
    ]))
    .unwrap();
    let config = setup(root, &llm, json!({}));
    let project = root.join("project");
    fs::write(project.join("Makefile"), "all:\n\ttrue\n").unwrap();
    let command = ybs_command(root, "xterm", "", &config, "");
    let tmux = Tmux::start(&root.join("tmux.sock"), &project, &command);
    tmux.wait_for("ybs>");
    tmux.keys(&["/init", "Enter"]);
    let screen = tmux.wait_for("Allow?");
    assert!(screen.contains("AGENTS.md"), "{screen}");
    assert!(screen.contains("+Build with `make`."), "{screen}");
    assert!(
        !project.join("AGENTS.md").exists(),
        "nothing is written before approval"
    );
    tmux.keys(&["y", "Enter"]);
    tmux.wait_for_after("Wrote AGENTS.md.", "ybs>");
    assert_eq!(
        fs::read_to_string(project.join("AGENTS.md")).unwrap(),
        agents
    );
    let first = &requests(&llm)[0];
    let asked = first.last().unwrap()["content"].to_string();
    assert!(asked.contains("Write an AGENTS.md file"), "{asked}");
}

/// The bytes the pane printed, as recorded by `pipe-pane`.
fn raw_run(notify: bool) -> String {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let llm = FakeLlm::start(Script::new([
        call(
            "c1",
            "write_file",
            json!({"path": "a.txt", "content": "a\n"}),
        ),
        Turn::text(["Finished the file."]),
    ]))
    .unwrap();
    let settings = json!({"ui": {"notify": notify, "notify_after_seconds": 0}});
    let config = setup(root, &llm, settings);
    let project = root.join("project");
    let command = ybs_command(root, "xterm", "", &config, "");
    let tmux = Tmux::start(&root.join("tmux.sock"), &project, &command);
    let raw = root.join("raw.log");
    let pipe = format!("cat >> '{}'", raw.display());
    tmux.run(&["pipe-pane", "-o", "-t", "ybs", &pipe]);
    tmux.wait_for("ybs>");
    tmux.keys(&["write a", "Enter"]);
    tmux.wait_for("Allow?");
    tmux.keys(&["y", "Enter"]);
    tmux.wait_for_after("Finished the file.", "ybs>");
    tmux.keys(&["/usage", "Enter"]);
    tmux.wait_for("model limits:");
    drop(tmux);
    String::from_utf8_lossy(&fs::read(&raw).unwrap()).into_owned()
}

#[test]
fn the_bell_rings_when_a_confirmation_waits_and_a_turn_ends_unless_turned_off() {
    if tmux_missing() {
        return;
    }
    let raw = raw_run(true);
    let asked = raw.find("Allow?").unwrap();
    let bell_before_asking = raw[..asked].rfind('\u{7}').unwrap();
    assert!(
        raw[bell_before_asking..asked].contains("requires confirmation"),
        "the bell comes with the question: {raw:?}"
    );
    let done = raw.find("Finished the file.").unwrap();
    assert!(
        raw[done..].contains('\u{7}'),
        "the end of the turn rings: {raw:?}"
    );
    let quiet = raw_run(false);
    assert!(quiet.contains("Finished the file."), "{quiet:?}");
    assert!(
        !quiet.contains('\u{7}'),
        "ui.notify: false rings nothing: {quiet:?}"
    );
}

#[test]
fn a_bang_command_does_not_run_in_a_dry_run_nor_with_run_shell_disabled() {
    let project = common::Project::new(Vec::new());
    let output = project.ybs_with_input(&["--dry-run"], "!touch made.txt\n");
    let shown = format!(
        "{}{}",
        common::text(&output.stdout),
        common::text(&output.stderr)
    );
    assert!(
        shown.contains("dry run: `touch made.txt` was not run"),
        "{shown}"
    );
    assert!(!project.file("made.txt").exists());
    project.configure(|config| {
        config["tools"] = json!({"builtin": {"run_shell": {"enabled": false}}})
    });
    let output = project.ybs_with_input(&[], "!touch made.txt\n");
    let shown = format!(
        "{}{}",
        common::text(&output.stdout),
        common::text(&output.stderr)
    );
    assert!(shown.contains("which is disabled here"), "{shown}");
    assert!(!project.file("made.txt").exists());
    assert!(project.bodies().is_empty());
}

#[test]
fn a_bang_command_runs_in_the_sandbox() {
    let project = common::Project::new(Vec::new());
    let outside = project.dir.path().join("outside.txt");
    let line = format!(
        "!echo inside > inside.txt; touch '{}'; echo status $?\n",
        outside.display()
    );
    let output = project.ybs_with_input(&[], &line);
    let stdout = common::text(&output.stdout);
    // The banner says "sandbox on" only when every layer applies.
    if !stdout.contains(", sandbox on, ") {
        eprintln!("no full sandbox on this machine: skipping\n{stdout}");
        return;
    }
    assert!(stdout.contains("\nstatus 1\n"), "{stdout}");
    assert_eq!(project.read("inside.txt"), "inside\n");
    assert!(
        !outside.exists(),
        "the sandbox kept the command in the project"
    );
}
