//! End to end against the fake LLM: the tools of a daily agent. The task list
//! (`todo_write`) shown as it changes and kept in the session; `web_fetch` of a page on
//! 127.0.0.1 (which asks first, loopback too); read-only calls of one reply run at once; the
//! `task` sub-agent; hooks and the test loop; a command's long output cut inside the result.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Project, call, text, tool_messages};
use serde_json::json;
use ybs_testkit::Turn;

fn succeeds(output: &std::process::Output) -> String {
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    stderr
}

#[test]
fn the_task_list_is_shown_as_it_changes_and_kept_in_the_session() {
    let project = Project::new(vec![
        call(
            "t1",
            "todo_write",
            json!({"todos": [
                {"content": "read the code", "status": "in_progress"},
                {"content": "fix the bug", "status": "pending"}
            ]}),
        ),
        call(
            "t2",
            "todo_write",
            json!({"todos": [
                {"content": "read the code", "status": "completed"},
                {"content": "fix the bug", "status": "in_progress"}
            ]}),
        ),
        call(
            "t3",
            "todo_write",
            json!({"todos": [{"content": "", "status": "pending"}]}),
        ),
        Turn::text(["Done."]),
        Turn::text(["Resumed."]),
    ]);
    let stderr = succeeds(&project.ybs(&["exec", "fix it"]));
    let first = stderr.find("Tasks (0 of 2 done):\n  [>] read the code\n  [ ] fix the bug");
    let second = stderr.find("Tasks (1 of 2 done):\n  [x] read the code\n  [>] fix the bug");
    assert!(
        first.is_some() && second.is_some() && first < second,
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("Tasks (").count(),
        2,
        "a bad list is not shown"
    );
    let results = tool_messages(project.bodies().last().unwrap());
    assert!(results[1].1.contains("1 of 2 done"), "{results:?}");
    assert!(results[2].1.contains("has no content"), "{results:?}");
    // The calls are part of the saved session: a resumed one sends them again.
    succeeds(&project.ybs(&["--resume", "exec", "go on"]));
    let resumed = project.bodies().last().unwrap().to_string();
    assert!(
        resumed.contains("todo_write") && resumed.contains("1 of 2 done"),
        "{resumed}"
    );
    // The model is offered the tool.
    let tools: Vec<String> = (project.bodies()[0]["tools"].as_array().unwrap().iter())
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(tools.iter().any(|name| name == "todo_write"), "{tools:?}");
}

fn fetch(id: &str, url: &str) -> Turn {
    call(id, "web_fetch", json!({ "url": url }))
}

const PAGE: &str = "<html><head><title>Docs</title><script>steal()</script></head>\
    <body><h1>Install</h1><p>Run <code>cargo add ybs</code>.</p></body></html>";

#[test]
fn web_fetch_asks_once_per_host_loopback_too_and_returns_markdown() {
    let web = ybs_testkit::FakeWeb::start().unwrap();
    web.page("/docs", "text/html; charset=utf-8", PAGE);
    web.page("/image", "image/png", "\u{89}PNG");
    let other_host = web.url("/docs").replace("127.0.0.1", "localhost");
    let redirect = web.url(&format!("/redirect?to={other_host}"));
    let project = Project::new(vec![
        fetch("f1", &web.url("/docs")),
        fetch("f2", &web.url("/docs?again")),
        fetch("f3", &redirect),
        fetch("f4", &web.url("/image")),
        Turn::text(["Read."]),
    ]);
    // The REPL asks for the first fetch of 127.0.0.1 only; the answer covers the host.
    let output = project.ybs_with_input(&[], "read the docs\ny\n");
    let all = format!("{}{}", text(&output.stdout), text(&output.stderr));
    assert!(output.status.success(), "{all}");
    assert_eq!(all.matches("Allow? [y]es").count(), 1, "{all}");
    assert!(
        all.contains(&format!(
            "`web_fetch` of {} (host {}, this machine (loopback)). Allow?",
            web.url("/docs"),
            web.url("").trim_start_matches("http://")
        )),
        "{all}"
    );
    let results = tool_messages(project.bodies().last().unwrap());
    let page: serde_json::Value = serde_json::from_str(&results[0].1).unwrap();
    let content = page["content"].as_str().unwrap();
    assert!(
        content.contains("Install") && content.contains("`cargo add ybs`"),
        "{content}"
    );
    assert!(!content.contains("steal"), "{content}");
    assert_eq!(page["status"], 200);
    assert!(results[1].1.contains("Install"), "{results:?}");
    // A redirect to another host is not followed: the model is told where it leads.
    assert!(
        results[2].1.contains("redirects to another host") && results[2].1.contains("localhost"),
        "{results:?}"
    );
    assert!(
        results[3].1.contains("image/png") && results[3].1.contains("not text"),
        "{results:?}"
    );
    assert_eq!(
        web.paths(),
        ["/docs", "/docs", "/redirect", "/image"],
        "the page on the other host was not fetched"
    );
}

#[test]
fn web_fetch_is_denied_when_nobody_can_answer_and_runs_with_yes() {
    let web = ybs_testkit::FakeWeb::start().unwrap();
    web.page("/docs", "text/html", PAGE);
    let project = Project::new(vec![fetch("f1", &web.url("/docs")), Turn::text(["No."])]);
    succeeds(&project.ybs(&["exec", "read the docs"]));
    let results = tool_messages(project.bodies().last().unwrap());
    assert!(results[0].1.contains("denied"), "{results:?}");
    assert!(web.paths().is_empty(), "nothing was fetched");

    let project = Project::new(vec![fetch("f1", &web.url("/docs")), Turn::text(["Yes."])]);
    succeeds(&project.ybs(&["exec", "--yes", "read the docs"]));
    let results = tool_messages(project.bodies().last().unwrap());
    assert!(results[0].1.contains("Install"), "{results:?}");

    // A deny rule refuses the host even with --yes.
    let project = Project::new(vec![fetch("f1", &web.url("/docs")), Turn::text(["No."])]);
    project.configure(|config| {
        config["safety"]["permissions"] = json!({"deny": ["web_fetch(127.0.0.1)"]});
    });
    let stderr = succeeds(&project.ybs(&["exec", "--yes", "read the docs"]));
    assert!(
        stderr.contains("web_fetch refused by the user rule deny `web_fetch(127.0.0.1)`"),
        "{stderr}"
    );
    assert_eq!(web.paths().len(), 1, "only the --yes run fetched");
}

#[test]
fn calls_that_change_nothing_run_at_once_and_answer_in_order() {
    let web = ybs_testkit::FakeWeb::start().unwrap();
    let project = Project::new(vec![
        Turn::default()
            .with_tool_call(ybs_testkit::ToolCall::new(
                "a",
                "web_fetch",
                json!({"url": web.url("/together/a")}),
            ))
            .with_tool_call(ybs_testkit::ToolCall::new(
                "b",
                "read_file",
                json!({"path": "notes.txt"}),
            ))
            .with_tool_call(ybs_testkit::ToolCall::new(
                "c",
                "web_fetch",
                json!({"url": web.url("/together/c")}),
            )),
        Turn::text(["Both."]),
    ]);
    project.write("notes.txt", "a note\n");
    succeeds(&project.ybs(&["exec", "--yes", "fetch both"]));
    let results = tool_messages(project.bodies().last().unwrap());
    let ids: Vec<&str> = results.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "c"]);
    assert!(results[0].1.contains("together"), "{results:?}");
    assert!(results[1].1.contains("a note"), "{results:?}");
    assert!(results[2].1.contains("together"), "{results:?}");
}

#[test]
fn a_task_runs_a_read_only_sub_agent_whose_report_and_usage_come_back() {
    use ybs_testkit::Usage;
    let project = Project::new(vec![
        call(
            "t1",
            "task",
            json!({"description": "find the number", "prompt": "Read notes.txt and report the number."}),
        )
        .with_usage(Usage::new(10, 1)),
        call("s1", "read_file", json!({"path": "notes.txt"})).with_usage(Usage::new(100, 5)),
        Turn::text(["The note says 42."]).with_usage(Usage::new(100, 5)),
        Turn::text(["The number is 42."]).with_usage(Usage::new(10, 1)),
    ]);
    project.write("notes.txt", "the number: 42\n");
    let stderr = succeeds(&project.ybs(&["exec", "what is the number?"]));
    let bodies = project.bodies();
    assert_eq!(bodies.len(), 4);
    // The sub-agent: a fresh conversation with the model's prompt, read-only tools, no task.
    let sub = &bodies[1];
    let messages = sub["messages"].as_array().unwrap();
    assert!(
        messages[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("You are a sub-agent")
    );
    assert_eq!(
        messages[1]["content"],
        "Read notes.txt and report the number."
    );
    assert_eq!(messages.len(), 2, "{messages:?}");
    let tools: Vec<&str> = (sub["tools"].as_array().unwrap().iter())
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["read_file", "list_files", "search_files"]);
    // Its report is the task's result; its usage counts in the turn's.
    let results = tool_messages(&bodies[3]);
    assert_eq!(results[0].0, "t1");
    assert!(results[0].1.contains("The note says 42."), "{results:?}");
    assert!(
        stderr.contains("sub-agent started: find the number"),
        "{stderr}"
    );
    assert!(stderr.contains("tokens: 220 in · 12 out"), "{stderr}");
    // The parent's conversation has none of the sub-agent's messages.
    let parent = bodies[3]["messages"].to_string();
    assert!(!parent.contains("s1"), "{parent}");
}

#[test]
fn hooks_refuse_calls_format_after_writes_and_send_test_failures_back() {
    let project = Project::new(vec![
        call("c1", "run_shell", json!({"command": "echo forbidden"})),
        call(
            "c2",
            "write_file",
            json!({"path": "a.txt", "content": "broken\n"}),
        ),
        Turn::text(["Done."]),
        call(
            "c3",
            "write_file",
            json!({"path": "a.txt", "content": "fixed\n"}),
        ),
        Turn::text(["Fixed."]),
    ]);
    project.configure(|config| {
        config["agent"]["max_iterations"] = json!(10);
        config["hooks"] = json!({
            "before_tool": [{"tools": ["run_shell"], "command":
                "case \"$YBS_TOOL_ARGS\" in *forbidden*) echo 'no forbidden words'; exit 1;; esac"}],
            "after_tool": [{"tools": ["write_file"], "command": "echo \"$YBS_TOOL\" >> fmt.log"}],
            "test": "grep -q fixed a.txt || { echo 'a.txt is not fixed'; exit 1; }",
            "max_rounds": 2
        });
    });
    let stderr = succeeds(&project.ybs(&["exec", "--yes", "fix a.txt"]));
    let bodies = project.bodies();
    assert_eq!(bodies.len(), 5, "{stderr}");
    let results = tool_messages(&bodies[1]);
    assert!(
        results[0]
            .1
            .contains("Refused by the user's before_tool hook")
            && results[0].1.contains("no forbidden words"),
        "{results:?}"
    );
    assert!(
        stderr.contains("run_shell refused by the before_tool hook"),
        "{stderr}"
    );
    assert_eq!(project.read("fmt.log"), "write_file\nwrite_file\n");
    // The failing test went back to the model as a message of the turn.
    let last = bodies[3]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "user");
    let failure = last["content"].as_str().unwrap();
    assert!(
        failure.contains("The test command") && failure.contains("a.txt is not fixed"),
        "{failure}"
    );
    assert!(
        stderr.contains("its output goes back to the model (round 1 of 2)"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("running the test command").count(),
        2,
        "{stderr}"
    );
    assert_eq!(project.read("a.txt"), "fixed\n");
}

#[test]
fn a_project_file_cannot_set_hooks_without_trust() {
    let project = Project::new(vec![
        call(
            "c1",
            "write_file",
            json!({"path": "a.txt", "content": "x\n"}),
        ),
        Turn::text(["Done."]),
    ]);
    project.write(
        ".ybs.json",
        &json!({"hooks": {"after_tool": [{"command": "touch pwned"}], "test": "touch pwned"}})
            .to_string(),
    );
    let stderr = succeeds(&project.ybs(&["exec", "--yes", "write"]));
    assert!(!project.file("pwned").exists(), "{stderr}");
    assert!(stderr.contains("hooks"), "{stderr}");
}

#[test]
fn web_search_uses_the_providers_hosted_search_where_there_is_one() {
    let sent = |provider: &str, endpoint: &str, path: &str, enabled: bool| {
        let project = Project::new(vec![Turn::text(["Found."])]);
        let endpoint = format!("{}{endpoint}", project.llm.base_url());
        project.configure(|config| {
            config["llm"] = json!({"provider": provider, "model": "some-model",
                                   "endpoint": endpoint, "api_key": "sk-test"});
            config["tools"]["builtin"]["web_search"]["enabled"] = json!(enabled);
        });
        succeeds(&project.ybs(&["exec", "search the web"]));
        (project.llm.requests().into_iter())
            .find(|request| request.path.ends_with(path))
            .unwrap()
            .body
    };
    let anthropic = sent("anthropic", "", "/messages", true);
    let tools = anthropic["tools"].as_array().unwrap();
    assert!(
        tools
            .iter()
            .any(|tool| tool["type"] == "web_search_20250305" && tool["name"] == "web_search"),
        "{tools:?}"
    );
    let responses = sent("responses", "/v1", "/responses", true);
    let tools = responses["tools"].as_array().unwrap();
    assert!(
        tools.iter().any(|tool| tool["type"] == "web_search"),
        "{tools:?}"
    );
    let openrouter = sent("openrouter", "/api/v1", "/chat/completions", true);
    assert_eq!(openrouter["model"], "some-model:online");
    // Not offered where the provider has no hosted search, nor when it is off (the default).
    let plain = sent("openai-compatible", "/v1", "/chat/completions", true);
    assert_eq!(plain["model"], "some-model");
    assert!(!plain.to_string().contains("web_search"));
    let off = sent("anthropic", "", "/messages", false);
    assert!(!off.to_string().contains("web_search_20250305"));
}

#[test]
fn sigint_cancels_a_running_sub_agent_with_the_turn() {
    use std::io::{BufRead, BufReader, Read};
    use std::process::{Command, Stdio};
    let slow =
        Turn::text(["one ", "two ", "three ", "four ", "five ", "never seen"]).with_delay_ms(500);
    let project = Project::new(vec![
        call(
            "t1",
            "task",
            json!({"description": "slow look", "prompt": "Look slowly."}),
        ),
        slow,
        Turn::text(["not asked"]),
    ]);
    let mut child = project
        .command(&["exec", "look"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    while !seen.contains("sub-agent started: slow look") {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "{seen}");
        seen.push_str(&line);
    }
    // The sub-agent's request has reached the model: interrupt while it streams.
    while project.bodies().len() < 2 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    stderr.read_to_string(&mut seen).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{seen}");
    assert!(seen.contains("turn cancelled"), "{seen}");
    assert_eq!(project.bodies().len(), 2, "the model was not asked again");
    let dir = project.path("data/ybs/sessions");
    let session_dir = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let file = std::fs::read_dir(&session_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let saved = std::fs::read_to_string(file).unwrap();
    assert!(
        saved.contains("The sub-agent was cancelled by the user."),
        "{saved}"
    );
    assert!(!saved.contains("never seen"), "{saved}");
}

#[test]
fn a_test_that_keeps_failing_goes_back_at_most_max_rounds_times() {
    let project = Project::new(vec![
        call(
            "c1",
            "write_file",
            json!({"path": "a.txt", "content": "one\n"}),
        ),
        Turn::text(["Done."]),
        call(
            "c2",
            "write_file",
            json!({"path": "a.txt", "content": "two\n"}),
        ),
        Turn::text(["Done again."]),
        Turn::text(["never asked"]),
    ]);
    project.configure(|config| {
        config["agent"]["max_iterations"] = json!(10);
        config["hooks"] = json!({"lint": "echo 'lint says no'; exit 3", "max_rounds": 1});
    });
    let stderr = succeeds(&project.ybs(&["exec", "--yes", "change a.txt"]));
    assert_eq!(project.bodies().len(), 4, "{stderr}");
    assert!(stderr.contains("(round 1 of 1)"), "{stderr}");
    assert!(
        stderr.contains("the lint command `echo 'lint says no'; exit 3` still fails (exit code 3) after 1 rounds; stopping here"),
        "{stderr}"
    );
    assert_eq!(project.llm.remaining_turns(), 1);
}

#[test]
fn a_long_command_output_is_cut_inside_it_and_its_last_lines_are_shown() {
    let project = Project::new(vec![
        call("c1", "run_shell", json!({"command": "seq 1 5000"})),
        Turn::text(["Counted."]),
    ]);
    let stderr = succeeds(&project.ybs(&["exec", "--yes", "count"]));
    // The summary reads the cut result: its exit code and last lines, not its size.
    assert!(stderr.contains("✓ Ran seq 1 5000: exit code 0"), "{stderr}");
    assert!(stderr.contains("    4999\n    5000\n"), "{stderr}");
    // The model gets JSON, the output cut in its middle.
    let bodies = project.bodies();
    let (_, result) = tool_messages(bodies.last().unwrap()).pop().unwrap();
    let value: serde_json::Value = serde_json::from_str(&result).unwrap();
    let stdout = value["stdout"].as_str().unwrap();
    assert!(stdout.starts_with("1\n2\n"), "{stdout}");
    assert!(stdout.ends_with("4999\n5000\n"), "{stdout}");
    assert!(stdout.contains("[... output truncated: "), "{stdout}");
    assert_eq!(value["exit_code"], 0);
}

#[test]
fn ybs_tools_lists_the_hosted_web_search_when_it_is_enabled() {
    let project = Project::new(Vec::new());
    let listed = text(&project.ybs(&["tools"]).stdout);
    assert!(!listed.contains("web_search"), "{listed}");
    project.configure(|config| {
        config["tools"]["builtin"]["web_search"] = json!({"enabled": true});
    });
    // The fake server speaks the Chat Completions format, which has no hosted search.
    let output = project.ybs(&["tools"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let listed = text(&output.stdout);
    let line = (listed.lines())
        .find(|line| line.starts_with("web_search "))
        .unwrap_or_else(|| panic!("no web_search in {listed}"));
    assert!(
        line.contains("hosted")
            && line.ends_with(
                "enabled, but provider openai-compatible has no hosted search: not offered"
            ),
        "{line}"
    );
    project.configure(|config| {
        config["llm"]["provider"] = json!("anthropic");
        config["llm"]["api_key"] = json!("sk-test");
    });
    let listed = text(&project.ybs(&["tools"]).stdout);
    assert!(
        listed.lines().any(|line| line.starts_with("web_search ")
            && line.ends_with("the provider's hosted web search (anthropic runs it)")),
        "{listed}"
    );
}

/// Two sessions in one project run commands at the same moment: each command holds
/// placeholders for ybs's missing names while it runs, and one session's command ending (and
/// removing its placeholder) must not make the other's fail to start or make it say it
/// created the other's placeholder.
#[test]
fn commands_of_sessions_side_by_side_in_one_project_all_run() {
    let project = Project::new(vec![]);
    let command = r#"{"command": "echo ran"}"#;
    let runs: Vec<std::process::Child> = (0..24)
        .map(|_| {
            project
                .command(&["tool", "--yes", "run_shell", command])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for run in runs {
        let output = run.wait_with_output().unwrap();
        let stdout = text(&output.stdout);
        assert!(output.status.success(), "{}", text(&output.stderr));
        let result: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(result["stdout"], "ran\n", "{result}");
        assert!(
            !(result["stderr"].as_str().unwrap()).contains("this command created"),
            "{result}"
        );
    }
    for name in [".ybs", ".ybs.json"] {
        assert!(!project.file(name).exists(), "{name} was left behind");
    }
}
