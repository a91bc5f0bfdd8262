//! End-to-end tests of the agent: the `ybs` binary against the in-process fake LLM, in a
//! temporary project with HOME and XDG directories of its own. The scripted model reads,
//! edits and lists files; confirmations, loop detection, iteration limits, dry runs, retries,
//! `ask --chat` and `--resume` are checked through the files and the recorded requests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use common::{Project, call, text, tool_messages};
use serde_json::{Value, json};
use ybs_testkit::{Fault, Model, Script, Turn};

#[test]
fn a_multi_step_task_reads_edits_and_lists_real_files() {
    let project = Project::new(vec![
        call("c1", "read_file", json!({"path": "greet.txt"})),
        call(
            "c2",
            "edit_file",
            json!({"path": "greet.txt", "old_text": "Hello", "new_text": "Goodbye"}),
        ),
        call(
            "c3",
            "write_file",
            json!({"path": "notes/new.txt", "content": "fresh\n"}),
        ),
        call("c4", "list_files", json!({"pattern": "**/*.txt"})),
        Turn::text(["Done: ", "greet.txt edited, notes/new.txt written."]),
    ]);
    project.write("greet.txt", "Hello, world\n");
    let output = project.ybs(&["exec", "--yes", "fix the greeting"]);
    let stdout = text(&output.stdout);
    assert!(
        output.status.success(),
        "{}\n{}",
        stdout,
        text(&output.stderr)
    );
    assert_eq!(project.read("greet.txt"), "Goodbye, world\n");
    assert_eq!(project.read("notes/new.txt"), "fresh\n");
    assert!(
        stdout.contains("Done: greet.txt edited, notes/new.txt written."),
        "{stdout}"
    );
    let bodies = project.bodies();
    assert_eq!(bodies.len(), 5);
    assert_eq!(
        bodies[0]["messages"].as_array().unwrap().last().unwrap()["content"],
        "fix the greeting"
    );
    let tools: Vec<&str> = (bodies[0]["tools"].as_array().unwrap().iter())
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        tools.contains(&"read_file") && tools.contains(&"edit_file"),
        "{tools:?}"
    );
    // The list the model got names the new directory.
    let results = tool_messages(&bodies[4]);
    assert_eq!(results.len(), 4);
    assert!(results[0].1.contains("Hello, world"), "{:?}", results[0]);
    assert!(results[3].1.contains("notes/new.txt"), "{:?}", results[3]);
    // The session was saved as a .chat file with the trace.
    let sessions = fs::read_dir(project.path("data/ybs/sessions"))
        .unwrap()
        .count();
    assert_eq!(sessions, 1);
}

#[test]
fn exec_without_yes_denies_confirmations_and_tells_the_model() {
    let project = Project::new(vec![
        call(
            "c1",
            "write_file",
            json!({"path": "out.txt", "content": "x"}),
        ),
        Turn::text(["I could not write the file."]),
    ]);
    let output = project.ybs(&["exec", "write out.txt"]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!project.file("out.txt").exists());
    assert!(
        stderr.contains(
            "warning: write_file needs confirmation and nobody can answer here; it was denied \
             (run with --yes to allow such calls)"
        ),
        "{stderr}"
    );
    let results = tool_messages(&project.bodies()[1]);
    assert!(
        results[0]
            .1
            .contains("The user denied this call of write_file; it did not run."),
        "{results:?}"
    );
}

#[test]
fn the_same_call_three_times_stops_the_turn() {
    let read = || call("r", "read_file", json!({"path": "a.txt"}));
    let project = Project::new(vec![read(), read(), read(), Turn::text(["never sent"])]);
    project.write("a.txt", "a\n");
    let output = project.ybs(&["exec", "loop"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "warning: the agent called read_file with the same arguments 3 times in a row; \
             stopping this turn"
        ),
        "{stderr}"
    );
    assert_eq!(project.bodies().len(), 3);
    assert_eq!(project.llm.remaining_turns(), 1);
}

#[test]
fn max_iterations_stops_a_turn_that_never_ends() {
    let turns = (0..6)
        .map(|n| {
            call(
                &format!("c{n}"),
                "read_file",
                json!({"path": format!("f{n}.txt")}),
            )
        })
        .collect();
    let project = Project::new(turns);
    let output = project.ybs(&["exec", "go on forever"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "warning: stopped after 5 model requests (agent.max_iterations); the task may be \
             unfinished"
        ),
        "{stderr}"
    );
    assert_eq!(project.bodies().len(), 5);
}

#[test]
fn dry_run_shows_calls_and_executes_none() {
    let project = Project::new(vec![
        call(
            "c1",
            "write_file",
            json!({"path": "out.txt", "content": "x"}),
        ),
        Turn::text(["ok"]),
    ]);
    let output = project.ybs(&["--dry-run", "exec", "--yes", "write"]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("write_file"), "{stderr}");
    assert!(stderr.contains("dry run: not executed"), "{stderr}");
    assert!(!project.file("out.txt").exists());
    let results = tool_messages(&project.bodies()[1]);
    assert!(results[0].1.contains("Dry run"), "{results:?}");
}

#[test]
fn a_rate_limit_is_retried_then_the_reply_arrives() {
    let project = Project::new(vec![
        Turn::fault(Fault::status(429)),
        Turn::text(["after the wait"]),
    ]);
    let output = project.ybs(&["exec", "hi"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("after the wait"));
    assert_eq!(project.bodies().len(), 2);
}

#[test]
fn an_unreachable_provider_names_the_endpoint_and_how_to_change_it() {
    let project = Project::new(Vec::new());
    let output = project.ybs(&["--endpoint", "http://127.0.0.1:9/v1", "exec", "hi"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(
            "ybs: error: cannot reach the openai-compatible provider at http://127.0.0.1:9/v1: "
        ),
        "{stderr}"
    );
    assert!(stderr.contains("--provider/--endpoint"), "{stderr}");
}

#[test]
fn ask_appends_the_reply_and_its_trace_to_the_chat_file() {
    let project = Project::new(vec![
        call("c1", "read_file", json!({"path": "fact.txt"})),
        Turn::text(["The fact is 42."]),
    ]);
    project.write("fact.txt", "42\n");
    project.write("q.chat", "tool: read_file\n\nWhat is in fact.txt?\n");
    let output = project.ybs(&["ask", "--chat", "q.chat", "Answer briefly."]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let chat = project.read("q.chat");
    assert!(
        chat.starts_with("tool: read_file\n\nWhat is in fact.txt?\n"),
        "{chat}"
    );
    assert!(chat.contains("Answer briefly."), "{chat}");
    assert!(chat.contains("function_call: {"), "{chat}");
    assert!(chat.contains("function_call_output: {"), "{chat}");
    assert!(chat.trim_end().ends_with("The fact is 42."), "{chat}");
    let bodies = project.bodies();
    let tools: Vec<&str> = (bodies[0]["tools"].as_array().unwrap().iter())
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["read_file"]);
}

#[test]
fn resume_continues_the_newest_session_of_the_directory() {
    let project = Project::new(vec![
        Turn::text(["first answer"]),
        Turn::text(["second answer"]),
    ]);
    assert!(project.ybs(&["exec", "first question"]).status.success());
    let output = project.ybs(&["--resume", "exec", "second question"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let bodies = project.bodies();
    let contents: Vec<String> = (bodies[1]["messages"].as_array().unwrap().iter())
        .filter(|message| message["role"] != "system")
        .map(|message| message["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        contents,
        ["first question", "first answer", "second question"]
    );
    let dir = project.path("data/ybs/sessions");
    let session_dir = fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
    let files: Vec<_> = fs::read_dir(&session_dir).unwrap().collect();
    assert_eq!(files.len(), 1, "resuming writes to the same session file");
    let saved = fs::read_to_string(files[0].as_ref().unwrap().path()).unwrap();
    assert!(saved.contains("second answer"), "{saved}");
}

#[test]
fn resume_without_a_session_says_where_it_looked() {
    let project = Project::new(Vec::new());
    let output = project.ybs(&["--resume", "exec", "hi"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr.starts_with("ybs: error: no saved session for "),
        "{stderr}"
    );
    let _ = Path::new("");
}

#[test]
fn tools_lists_sources_and_tool_runs_one_call() {
    let project = Project::new(Vec::new());
    project.write("a.txt", "alpha\n");
    let output = project.ybs(&["tools"]);
    let stdout = text(&output.stdout);
    assert!(output.status.success());
    assert!(
        stdout
            .lines()
            .any(|line| line.starts_with("read_file") && line.contains("built-in")),
        "{stdout}"
    );
    let output = project.ybs(&["tool", "read_file", "{\"path\":\"a.txt\"}"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("alpha"));
    let output = project.ybs(&[
        "tool",
        "write_file",
        "{\"path\":\"b.txt\",\"content\":\"x\"}",
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stderr),
        "ybs: error: write_file needs confirmation and nobody can answer here; it was denied \
         (run with --yes to allow such calls)\n"
    );
    assert!(!project.file("b.txt").exists());
    let output = project.ybs(&["tool", "read_file", "{nope"]);
    assert!(
        text(&output.stderr)
            .starts_with("ybs: error: the arguments of read_file are not valid JSON")
    );
}

#[test]
fn the_repl_runs_messages_and_slash_commands_from_its_input() {
    let project = Project::new(vec![Turn::text(["Hi there."])]);
    let output = project.ybs_with_input(&[], "hello\n/bogus\n/provider current\n/model\n/tools\n");
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(stdout.contains("Hi there."), "{stdout}");
    assert!(stdout.contains("error: unknown command /bogus"), "{stdout}");
    // `/model` alone shows the same line as `/provider current`, limits included.
    assert_eq!(
        stdout
            .matches("openai-compatible fake-model at http://127.0.0.1:")
            .count(),
        2,
        "{stdout}"
    );
    assert!(stdout.contains("(context "), "{stdout}");
    assert!(stdout.contains("read_file  (built-in)"), "{stdout}");
    assert_eq!(project.bodies().len(), 1);
}

#[test]
fn switching_back_to_the_first_provider_gives_it_its_endpoint_and_key_again() {
    let project = Project::new(vec![Turn::text(["Back again."])]);
    project.configure(|config| config["llm"]["api_key"] = json!("sk-for-the-fake"));
    let output = project.ybs_with_input(
        &[],
        "/provider lmstudio\n/provider current\n/provider openai-compatible\nhello\n",
    );
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    // LM Studio gets its own endpoint and not the model of the server before it (its own
    // is the one it lists); the first provider gets its model back.
    assert!(stdout.contains("at http://localhost:1234/v1"), "{stdout}");
    assert!(!stdout.contains("lmstudio fake-model"), "{stdout}");
    assert!(!stdout.contains("needs an endpoint"), "{stdout}");
    assert!(stdout.contains("Back again."), "{stdout}");
    assert_eq!(project.bodies()[0]["model"], "fake-model");
    let requests = project.llm.requests();
    let chat = (requests.iter())
        .find(|request| request.path.ends_with("/chat/completions"))
        .unwrap();
    assert_eq!(
        chat.headers.get("authorization").map(String::as_str),
        Some("Bearer sk-for-the-fake")
    );
}

#[test]
fn the_repl_asks_before_a_call_that_needs_confirmation() {
    let project = Project::new(vec![
        call(
            "c1",
            "write_file",
            json!({"path": "yes.txt", "content": "y"}),
        ),
        Turn::text(["wrote it"]),
        call(
            "c2",
            "write_file",
            json!({"path": "no.txt", "content": "n"}),
        ),
        Turn::text(["did not"]),
    ]);
    let output = project.ybs_with_input(&[], "write yes\ny\nwrite no\nn\n");
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        stdout.contains(
            "`write_file` requires confirmation (safety.require_confirmation). Allow? [y]es / \
             [n]o / [a]lways (a rule): "
        ),
        "{stdout}"
    );
    assert_eq!(project.read("yes.txt"), "y");
    assert!(!project.file("no.txt").exists());
}

#[test]
fn sigint_during_a_tool_call_kills_the_command_and_ends_the_turn() {
    let project = Project::new(vec![
        call(
            "c1",
            "run_shell",
            json!({"command": "touch started && sleep 30 && touch finished"}),
        ),
        Turn::text(["never asked"]),
    ]);
    // The shell sandbox is not what this test is about; machines without Landlock run it too.
    project.configure(|config| config["safety"]["sandbox_enabled"] = json!(false));
    let child = project
        .command(&["exec", "--yes", "wait for a long command"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = project.file("started");
    for _ in 0..400 {
        if started.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(started.exists(), "the command never started");
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("turn cancelled"), "{stderr}");
    assert!(!project.file("finished").exists());
    // The model was not asked again after the cancelled call.
    assert_eq!(project.bodies().len(), 1);
}

#[test]
fn sigint_cancels_the_turn_and_keeps_the_partial_reply() {
    let slow = Turn::text(["partial line\n", "more ", "never ", "seen"]).with_delay_ms(300);
    let project = Project::new(vec![slow, Turn::text(["next"])]);
    let mut child = project
        .command(&["exec", "talk slowly"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first line shows that the reply is streaming: interrupt it then.
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert_eq!(first, "partial line\n");
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("turn cancelled; the partial reply is kept"),
        "{stderr}"
    );
    assert!(!rest.contains("seen"), "{rest}");
    let dir = project.path("data/ybs/sessions");
    let session_dir = fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
    let file = fs::read_dir(&session_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let saved = fs::read_to_string(file).unwrap();
    assert!(saved.contains("partial"), "{saved}");
    assert!(
        saved.contains("[cancelled by the user; the reply is incomplete]"),
        "{saved}"
    );
    assert!(!saved.contains("seen"), "{saved}");
}

#[test]
fn auto_commit_commits_exactly_the_files_the_turn_changed() {
    let project = Project::new(vec![
        call(
            "c1",
            "write_file",
            json!({"path": "made.txt", "content": "new\n"}),
        ),
        Turn::text(["made it"]),
    ]);
    let config = project.path("config/ybs.json");
    let mut value: Value = serde_json::from_str(&fs::read_to_string(&config).unwrap()).unwrap();
    value["git"] = json!({"auto_commit": true, "commit_message_prefix": "[ybs]"});
    fs::write(&config, value.to_string()).unwrap();
    project.git(&["init", "-q"]);
    project.write("user.txt", "the user's own work\n");
    let output = project.ybs(&["exec", "--yes", "make a file"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(
        project.git(&["log", "--format=%s"]).trim(),
        "[ybs] make a file"
    );
    assert_eq!(
        project.git(&["show", "--name-only", "--format="]).trim(),
        "made.txt"
    );
    assert!(
        project
            .git(&["status", "--porcelain"])
            .contains("?? user.txt")
    );
}

#[test]
fn sighup_reloads_external_tools_in_the_repl() {
    let project = Project::new(Vec::new());
    let mut child = project
        .command(&[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut banner = String::new();
    stdout.read_line(&mut banner).unwrap();
    assert!(banner.starts_with("ybs "), "{banner}");
    // A sidecar tool appears after the start.
    let tools = project.path("home/.ybs/tools");
    fs::create_dir_all(&tools).unwrap();
    fs::write(tools.join("hello"), "#!/bin/sh\necho '{}'\n").unwrap();
    let mut permissions = fs::metadata(tools.join("hello")).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    fs::set_permissions(tools.join("hello"), permissions).unwrap();
    fs::write(
        tools.join("hello.tool.json"),
        json!({"name": "hello", "description": "Says hello", "parameters": {}}).to_string(),
    )
    .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // The signal is handled asynchronously: ask again until the reload shows.
    let mut seen = String::new();
    for _ in 0..100 {
        Command::new("kill")
            .args(["-HUP", &child.id().to_string()])
            .status()
            .unwrap();
        stdin.write_all(b"/tools\n").unwrap();
        let mut line = String::new();
        while !line.starts_with("run_shell") {
            line.clear();
            stdout.read_line(&mut line).unwrap();
            seen.push_str(&line);
        }
        if seen.contains("external tools reloaded: hello") {
            break;
        }
    }
    drop(stdin);
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(seen.contains("external tools reloaded: hello"), "{seen}");
    assert!(
        rest.contains("hello  (sidecar)") || seen.contains("hello  (sidecar)"),
        "{seen}{rest}"
    );
}

#[test]
fn a_scripted_turn_renders_as_in_the_snapshot() {
    let project = Project::new(vec![
        call("c1", "read_file", json!({"path": "a.txt"})).with_text(["Let me look.\n"]),
        Turn::text(["# Result\n\nThe file says **alpha**:\n\n```text\nalpha\n```\n"])
            .with_usage(ybs_testkit::Usage::new(1200, 34)),
    ]);
    project.write("a.txt", "alpha\n");
    let output = project.ybs(&["exec", "what is in a.txt?"]);
    assert!(output.status.success());
    let root = project
        .dir
        .path()
        .canonicalize()
        .unwrap()
        .display()
        .to_string();
    let rendered = format!(
        "--- stdout\n{}--- stderr\n{}",
        text(&output.stdout),
        text(&output.stderr)
    )
    .replace(&root, "[TMP]");
    insta::assert_snapshot!(rendered);
}

#[test]
fn switching_to_a_smaller_model_warns_and_keeps_the_conversation() {
    let project = Project::with_script(
        Script::new([
            Turn::text(["a long answer ".repeat(40)]),
            Turn::text(["still here"]),
        ])
        .with_models([
            Model::new("tiny-model", 20),
            Model::new("roomy-model", 100_000),
        ]),
    );
    let config = project.path("config/ybs.json");
    let mut value: Value = serde_json::from_str(&fs::read_to_string(&config).unwrap()).unwrap();
    value["llm"]["provider"] = json!("openrouter");
    value["llm"]["api_key"] = json!("test-key");
    value["llm"]["endpoint"] = json!(format!("{}/api/v1", project.llm.base_url()));
    fs::write(&config, value.to_string()).unwrap();
    // tiny-model's 20 tokens hold not even ybs's prompt: nothing is sent to it; the
    // conversation is still there for the next model.
    let output = project.ybs_with_input(
        &[],
        "hello\n/model tiny-model\nagain\n/model roomy-model\nonce more\n",
    );
    let stdout = text(&output.stdout);
    let all = format!("{stdout}{}", text(&output.stderr));
    assert!(output.status.success(), "{all}");
    assert!(
        stdout.contains("now using openrouter tiny-model (context 20, output 256;"),
        "{stdout}"
    );
    assert!(
        stdout.contains("is larger than the context window of tiny-model (20 tokens)"),
        "{stdout}"
    );
    assert!(all.contains("context window of 20 tokens"), "{all}");
    assert!(all.contains("nothing was sent"), "{all}");
    assert!(
        stdout.contains("now using openrouter roomy-model (context 100k,"),
        "{stdout}"
    );
    let bodies = project.bodies();
    assert_eq!(bodies.len(), 2, "{all}");
    assert_eq!(bodies[1]["model"], "roomy-model");
    let contents: Vec<&str> = (bodies[1]["messages"].as_array().unwrap().iter())
        .filter(|message| message["role"] == "user")
        .map(|message| message["content"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(contents.first(), Some(&"hello"), "{contents:?}");
    assert_eq!(contents.last(), Some(&"once more"), "{contents:?}");
}

#[test]
fn ask_uses_the_chat_files_model_and_format() {
    let project = Project::new(vec![Turn::text(["{\"answer\": 42}"])]);
    project.write("j.chat", "model: other-model\nformat: json\n\nGive JSON.\n");
    let output = project.ybs(&["ask", "--chat", "j.chat"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let body = &project.bodies()[0];
    assert_eq!(body["model"], "other-model");
    assert_eq!(body["response_format"], json!({"type": "json_object"}));
    assert!(
        body.get("tools")
            .is_none_or(|tools| tools.as_array().is_some_and(Vec::is_empty))
    );
    assert!(
        project
            .read("j.chat")
            .trim_end()
            .ends_with("{\"answer\": 42}")
    );
    project.write("bad.chat", "format: yaml\n\nx\n");
    let output = project.ybs(&["ask", "--chat", "bad.chat"]);
    assert_eq!(
        text(&output.stderr),
        "ybs: error: format `yaml` is not json, json_object, text or a JSON Schema object\n"
    );
}
