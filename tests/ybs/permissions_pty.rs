//! The REPL's permission flows on a real terminal (tmux, as in `trust_pty.rs`), read off the
//! screen: "always" saving a rule in the project, `/permissions` listing and removing it,
//! `/approval` switching to full-auto, `/effort`, plan mode's prompt with its plan rejected,
//! edited in `$EDITOR` and carried out, a command's question for the network, and Ctrl-C at
//! a question.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod pty;

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;

use pty::{Tmux, scratch_root, shell_quote, tmux_missing, write_fake_llm_config, ybs_command};
use serde_json::{Value, json};
use ybs_testkit::{FakeLlm, Script, ToolCall, Turn};

fn call(id: &str, name: &str, arguments: Value) -> Turn {
    Turn::default().with_tool_call(ToolCall::new(id, name, arguments))
}

/// A temporary root with `home`, `data` and `project`, and a configuration for `llm`.
fn root_for(llm: &FakeLlm) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = scratch_root();
    let config = dir.path().join("ybs.json");
    write_fake_llm_config(&config, &llm.base_url(), false);
    (dir, config)
}

fn chat_bodies(llm: &FakeLlm) -> Vec<Value> {
    (llm.requests().into_iter())
        .filter(|request| request.path.ends_with("/chat/completions"))
        .map(|request| request.body)
        .collect()
}

#[test]
fn always_saves_a_rule_that_permissions_lists_and_removes_and_approval_switches() {
    if tmux_missing() {
        return;
    }
    let shell = || call("c", "run_shell", json!({"command": "echo first-run"}));
    let llm = FakeLlm::start(Script::new([
        shell(),
        Turn::text(["Reply one."]),
        shell(),
        Turn::text(["Reply two."]),
        call(
            "w",
            "write_file",
            json!({"path": "a.txt", "content": "hi\n"}),
        ),
        Turn::text(["Reply three."]),
        Turn::text(["Reply four."]),
    ]))
    .unwrap();
    let (dir, config) = root_for(&llm);
    let root = dir.path();
    let project = root.join("project");
    let command = ybs_command(root, "xterm", "", &config, "");
    let tmux = Tmux::start(&root.join("tmux.sock"), &project, &command);
    tmux.wait_for("ybs>");

    // "always": the rule on offer, the exact command kept for the project.
    tmux.keys(&["first", "Enter"]);
    let screen = tmux.wait_for("[a]lways (a rule):");
    assert!(screen.contains("$ echo first-run"), "{screen}");
    tmux.keys(&["a", "Enter"]);
    let screen = tmux.wait_for("(e.g. 1s; Enter: the first for the session;");
    assert!(screen.contains("[1] run_shell(echo first-run)"), "{screen}");
    // Only the call asked about is offered, never the whole tool.
    assert!(!screen.contains("[2]"), "{screen}");
    tmux.keys(&["1p", "Enter"]);
    let screen = tmux.wait_for_after("Reply one.", "ybs>");
    assert!(
        screen.contains("saved allow `run_shell(echo first-run)` in"),
        "{screen}"
    );
    // A rule the user saves keeps the project's trust: no word of trusting it later.
    assert!(
        !screen.contains("once you trust the project's settings"),
        "{screen}"
    );
    let saved: Value =
        serde_json::from_str(&fs::read_to_string(project.join(".ybs.json")).unwrap()).unwrap();
    assert_eq!(
        saved["safety"]["permissions"]["allow"],
        json!(["run_shell(echo first-run)"])
    );

    // The rule answers the same call: no second question.
    tmux.keys(&["second", "Enter"]);
    let screen = tmux.wait_for_after("Reply two.", "ybs>");
    assert_eq!(screen.matches("[a]lways (a rule):").count(), 1, "{screen}");

    // /permissions lists it with its layer and removes it, from the file too.
    tmux.keys(&["/permissions", "Enter"]);
    tmux.wait_for("1. allow run_shell(echo first-run)  (project)");
    tmux.keys(&["/permissions remove 1", "Enter"]);
    tmux.wait_for("removed allow run_shell(echo first-run) (project)");
    tmux.keys(&["/permissions", "Enter"]);
    tmux.wait_for("no permission rules");
    let saved: Value =
        serde_json::from_str(&fs::read_to_string(project.join(".ybs.json")).unwrap()).unwrap();
    assert_eq!(saved["safety"]["permissions"]["allow"], json!([]));

    // /approval full-auto: the write runs without a question.
    tmux.keys(&["/approval", "Enter"]);
    tmux.wait_for("approval: ask");
    tmux.keys(&["/approval full-auto", "Enter"]);
    tmux.wait_for("approval: full-auto");
    tmux.keys(&["third", "Enter"]);
    let screen = tmux.wait_for_after("Reply three.", "ybs>");
    assert_eq!(screen.matches("Allow? [y]es").count(), 1, "{screen}");
    assert_eq!(fs::read_to_string(project.join("a.txt")).unwrap(), "hi\n");

    // /effort shows and sets the reasoning effort the next request carries.
    tmux.keys(&["/effort", "Enter"]);
    tmux.wait_for("reasoning effort: not set (the model's default)");
    tmux.keys(&["/effort high", "Enter"]);
    tmux.wait_for("reasoning effort: high");
    tmux.keys(&["fourth", "Enter"]);
    tmux.wait_for_after("Reply four.", "ybs>");
    let bodies = chat_bodies(&llm);
    assert_eq!(bodies.last().unwrap()["reasoning_effort"], "high");
    assert!(bodies[0].get("reasoning_effort").is_none());
    tmux.keys(&["C-d"]);
}

/// An editor that changes "hi" into "bye" in the file it is given.
fn sed_editor(root: &Path) -> String {
    let script = root.join("editor.sh");
    fs::write(
        &script,
        "#!/bin/sh\nsed -i 's/saying hi/saying bye/' \"$1\"\n",
    )
    .unwrap();
    let mut permissions = fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    fs::set_permissions(&script, permissions).unwrap();
    format!("EDITOR={}", shell_quote(&script))
}

#[test]
fn plan_mode_shows_its_prompt_and_a_plan_is_rejected_then_edited_and_carried_out() {
    if tmux_missing() {
        return;
    }
    let llm = FakeLlm::start(Script::new([
        Turn::text(["1. Write a.txt saying hi."]),
        Turn::text(["1. Write a.txt saying hi, first draft gone."]),
        call(
            "w",
            "write_file",
            json!({"path": "a.txt", "content": "bye\n"}),
        ),
        Turn::text(["Carried out."]),
    ]))
    .unwrap();
    let (dir, config) = root_for(&llm);
    let root = dir.path();
    let project = root.join("project");
    let command = ybs_command(root, "xterm", &sed_editor(root), &config, "");
    let tmux = Tmux::start(&root.join("tmux.sock"), &project, &command);
    tmux.wait_for("ybs>");
    tmux.keys(&["/plan", "Enter"]);
    tmux.wait_for("plan mode on");
    tmux.wait_for("plan>");

    // Rejected: still planning, at the plan prompt.
    tmux.keys(&["write a.txt", "Enter"]);
    tmux.wait_for("approve this plan? [y]es / [e]dit / [n]o, keep planning:");
    tmux.keys(&["n", "Enter"]);
    let screen = tmux.wait_for_after("still in plan mode", "plan>");
    assert!(!screen.contains("plan mode off"), "{screen}");

    // Edited: the editor's version is what the agent carries out, with every tool.
    tmux.keys(&["try again", "Enter"]);
    tmux.wait_for_after("first draft gone.", "approve this plan?");
    tmux.keys(&["e", "Enter"]);
    tmux.wait_for("plan mode off: carrying out the plan");
    let screen = tmux.wait_for_after("write_file", "[a]lways (a rule):");
    assert!(screen.contains("a.txt"), "{screen}");
    tmux.keys(&["y", "Enter"]);
    let screen = tmux.wait_for_after("Carried out.", "ybs>");
    let prompt = screen.trim_end().lines().last().unwrap_or_default();
    assert!(prompt.starts_with("ybs>"), "{screen}");
    assert_eq!(fs::read_to_string(project.join("a.txt")).unwrap(), "bye\n");
    let bodies = chat_bodies(&llm);
    assert_eq!(bodies.len(), 4);
    let sent = bodies[2]["messages"].as_array().unwrap();
    let last = sent.last().unwrap()["content"].as_str().unwrap();
    assert!(
        last.contains("1. Write a.txt saying bye, first draft gone."),
        "{last}"
    );
    tmux.keys(&["C-d"]);
}

#[test]
fn the_banner_says_the_network_and_its_question_shows_the_reason() {
    if tmux_missing() {
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut line = String::new();
            let _ = BufReader::new(&stream).read_line(&mut line);
            let _ = stream.write_all(b"HTTP/1.0 200 OK\r\n\r\nserved-over-tcp");
        }
    });
    let fetch = format!(
        "bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}; printf \"GET / HTTP/1.0\\r\\n\\r\\n\" >&3; cat <&3'"
    );
    let llm = FakeLlm::start(Script::new([
        call(
            "n",
            "run_shell",
            json!({"command": fetch, "network": true, "reason": "fetch the test page"}),
        ),
        Turn::text(["Fetched."]),
    ]))
    .unwrap();
    let (dir, config) = root_for(&llm);
    let root = dir.path();
    let project = root.join("project");
    let command = ybs_command(root, "xterm", "", &config, "");
    let tmux = Tmux::start(&root.join("tmux.sock"), &project, &command);
    let screen = tmux.wait_for("ybs>");
    assert!(screen.contains(", network ask)"), "{screen}");
    tmux.keys(&["fetch it", "Enter"]);
    // The question is longer than the terminal is wide: read it unwrapped.
    let screen = tmux.wait_for("Allow? [y]es").replace('\n', "");
    assert!(
        screen.contains("it asks for the network: \"fetch the test page\" (safety.network: ask)"),
        "{screen}"
    );
    tmux.keys(&["y", "Enter"]);
    tmux.wait_for_after("Fetched.", "ybs>");
    let bodies = chat_bodies(&llm);
    let sent = bodies[1]["messages"].as_array().unwrap();
    let result = sent.last().unwrap()["content"].as_str().unwrap();
    assert!(result.contains("served-over-tcp"), "{result}");
    tmux.keys(&["C-d"]);
}

#[test]
fn ctrl_c_at_a_question_cancels_the_turn_without_waiting_for_enter() {
    if tmux_missing() {
        return;
    }
    let shell = || call("c", "run_shell", json!({"command": "echo asked"}));
    let llm = FakeLlm::start(Script::new([shell(), shell(), Turn::text(["Ran it."])])).unwrap();
    let (dir, config) = root_for(&llm);
    let root = dir.path();
    let command = ybs_command(root, "xterm", "", &config, "");
    let tmux = Tmux::start(&root.join("tmux.sock"), &root.join("project"), &command);
    tmux.wait_for("ybs>");
    tmux.keys(&["first", "Enter"]);
    tmux.wait_for("[a]lways (a rule):");
    tmux.keys(&["C-c"]);
    let screen = tmux.wait_for("warning: turn cancelled");
    assert!(screen.contains("✗ run_shell"), "{screen}");
    // The REPL is back, and the next question is answered as usual.
    tmux.keys(&["second", "Enter"]);
    tmux.wait_for_after("second", "[a]lways (a rule):");
    tmux.keys(&["y", "Enter"]);
    tmux.wait_for("Ran it.");
    assert_eq!(chat_bodies(&llm).len(), 3);
}
