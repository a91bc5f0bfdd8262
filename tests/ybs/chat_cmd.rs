//! `ybs chat parse|print|expand` through the binary, and `ask` applying a chat file's options
//! to the request it sends: on the Responses API (the format document's muffin-baking example
//! continued by `previous_response_id`, web search), named endpoints, flags over the file,
//! writing back once, PDFs, `tool:` and `task:` lines.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Project, text};
use serde_json::{Value, json};
use ybs_testkit::Turn;

#[test]
fn ask_sends_the_options_in_force_and_warns_about_the_rest() {
    let project = Project::new(vec![Turn::text(["one"]), Turn::text(["two"])]);
    let chat = "option: temperature 0.2\nsticky_option: max_tokens 77\noption: stop [\"END\"]\n\
                option: frobnicate 1\noption: top_p 0.5\nsticky_option: seed 7\n\nuser:\nfirst\n";
    project.write("o.chat", chat);
    let output = project.ybs(&["ask", "--chat", "o.chat"]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    let body = &project.bodies()[0];
    // A key ybs has no name for goes into the body as it is.
    assert_eq!(body["frobnicate"], 1);
    assert_eq!(
        body["temperature"].as_f64().map(|t| (t * 100.0).round()),
        Some(20.0)
    );
    assert_eq!(body["max_tokens"], 77);
    assert_eq!(body["stop"], json!(["END"]));
    assert_eq!(body["top_p"], 0.5);
    assert_eq!(body["seed"], 7);
    // After the assistant's reply the `option:` values are cleared; the sticky one stays.
    let output = project.ybs(&["ask", "--chat", "o.chat", "second"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        !text(&output.stderr).contains("warning"),
        "{}",
        text(&output.stderr)
    );
    let body = &project.bodies()[1];
    assert_eq!(
        body["temperature"].as_f64().map(|t| (t * 100.0).round()),
        Some(70.0)
    );
    assert_eq!(body["max_tokens"], 77);
    assert!(body.get("stop").is_none(), "{body}");
    assert!(body.get("top_p").is_none(), "{body}");
    assert_eq!(body["seed"], 7);
}

#[test]
fn an_option_the_provider_refuses_is_a_warning_and_the_question_is_asked_without_it() {
    let refusal = json!({"error": {"message": "Unrecognized request argument supplied: frobnicate",
        "type": "invalid_request_error", "param": null, "code": null}});
    let project = Project::new(vec![
        Turn::fault(ybs_testkit::Fault::Status {
            status: 400,
            body: Some(refusal.to_string()),
            retry_after: None,
        }),
        Turn::text(["answered"]),
    ]);
    project.write(
        "o.chat",
        "option: frobnicate 1\noption: service_tier flex\n\nuser:\nhello\n",
    );
    let output = project.ybs(&["ask", "--chat", "o.chat"]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("ybs: warning: o.chat: the provider refused option frobnicate"),
        "{stderr}"
    );
    assert!(stderr.contains("asked again without it"), "{stderr}");
    let bodies = project.bodies();
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0]["frobnicate"], 1);
    assert!(bodies[1].get("frobnicate").is_none(), "{}", bodies[1]);
    assert_eq!(bodies[1]["service_tier"], "flex");
    let written = project.read("o.chat");
    assert!(written.ends_with("answered\n"), "{written}");
    assert_eq!(written.matches("user:").count(), 1, "{written}");
}

#[test]
fn chat_parse_print_and_expand_work_through_the_binary() {
    let project = Project::new(Vec::new());
    project.write("a.chat", "user:\nhello\n\nassistant:\nhi\n");
    let output = project.ybs(&["chat", "parse", "a.chat"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let parsed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        parsed,
        json!([{"role": "user", "content": "hello", "lines": [1, 2]},
               {"role": "assistant", "content": "hi", "lines": [4, 5]}])
    );
    let printed = project.ybs_with_input(&["chat", "print"], &parsed.to_string());
    assert!(printed.status.success());
    project.write("b.chat", &text(&printed.stdout));
    let again = project.ybs(&["chat", "parse", "b.chat"]);
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    let strip = |value: &Value| -> Vec<(Value, Value)> {
        (value.as_array().unwrap().iter())
            .map(|m| (m["role"].clone(), m["content"].clone()))
            .collect()
    };
    assert_eq!(strip(&again), strip(&parsed));
    let expanded = project.ybs(&["chat", "expand", "a.chat"]);
    assert!(expanded.status.success());
    let value: Value = serde_json::from_slice(&expanded.stdout).unwrap();
    assert_eq!(value["messages"][1]["content"], "hi");
    let missing = project.ybs(&["chat", "expand", "none.chat"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(text(&missing.stderr).starts_with("ybs: error: "));
}

#[test]
fn chat_expand_reads_no_file_the_sandbox_blocks() {
    let project = Project::new(Vec::new());
    let ssh = project.path("home/.ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    std::fs::write(ssh.join("id_rsa"), "PRIVATE KEY 26").unwrap();
    for line in ["file", "import"] {
        project.write(
            "key.chat",
            &format!(
                "{line}: {}\n\nuser:\nwhat is this?\n",
                ssh.join("id_rsa").display()
            ),
        );
        let output = project.ybs(&["chat", "expand", "key.chat"]);
        assert_eq!(output.status.code(), Some(1), "{line}");
        assert!(
            text(&output.stderr).contains("may not be read"),
            "{line}: {}",
            text(&output.stderr)
        );
        assert!(!text(&output.stdout).contains("PRIVATE KEY 26"), "{line}");
    }
}

/// The format document's Responses API example (baking muffins with a tool), continued by its
/// `previous_response_id`.
const SECTION_7: &str = "user:

endpoint: nano
agent: Baking

bake some muffins using bake_muffin_tray, use blueberries

function_call: {\"name\":\"bake_muffin_tray\",\"arguments\":{\"blueberries\":true},\"id\":\"call_123\"}
function_call_output: {\"name\":\"bake_muffin_tray\",\"content\":\"...\",\"id\":\"call_123\"}

assistant:

Blueberry muffins are in the oven.

previous_response_id: resp_034e...

Can you also bake one without blueberries?
";

fn responses_bodies(project: &Project) -> Vec<Value> {
    (project.llm.requests().into_iter())
        .filter(|request| request.path == "/v1/responses")
        .map(|request| request.body)
        .collect()
}

fn parsed(project: &Project, file: &str) -> Vec<(String, String)> {
    let output = project.ybs(&["chat", "parse", file]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let messages: Value = serde_json::from_slice(&output.stdout).unwrap();
    (messages.as_array().unwrap().iter())
        .map(|m| {
            let field = |key: &str| m[key].as_str().unwrap().to_owned();
            (field("role"), field("content"))
        })
        .collect()
}

#[test]
fn the_section_7_example_continues_its_stored_response_and_writes_the_new_id() {
    let project = Project::new(vec![
        Turn::text(["Plain muffins ", "are baking too."]).with_web_search("muffin recipe"),
    ]);
    let url = project.llm.url("/v1");
    project.configure(|config| {
        config["llm"]["endpoints"] = json!({"nano": {"provider": "openai", "backend": "responses",
            "url": url, "model": "gpt-5-nano", "api_key": "sk-test",
            "options": {"reasoning_effort": "low"}}});
    });
    project.write("s.chat", &format!("{SECTION_7}\nwebsearch: true\n"));
    let before = parsed(&project, "s.chat");
    let output = project.ybs(&["ask", "--chat", "s.chat"]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let bodies = responses_bodies(&project);
    assert_eq!(bodies.len(), 1, "{stderr}");
    let body = &bodies[0];
    assert_eq!(body["model"], "gpt-5-nano");
    assert_eq!(body["previous_response_id"], "resp_034e...");
    assert_eq!(
        body["input"],
        json!([{"role": "user", "content": "Can you also bake one without blueberries?"}]),
        "only what follows the stored response is sent"
    );
    assert_eq!(body["reasoning"]["effort"], "low");
    assert!(
        (body["tools"].as_array().unwrap().iter()).any(|tool| tool["type"] == "web_search"),
        "{body}"
    );
    // The reply and the new id are appended; everything before is kept byte for byte.
    let file = project.read("s.chat");
    assert!(file.starts_with(SECTION_7), "{file}");
    assert!(
        file.ends_with(
            "assistant:\n\nPlain muffins are baking too.\n\nprevious_response_id: resp_fake_1\n"
        ),
        "{file}"
    );
    let after = parsed(&project, "s.chat");
    assert_eq!(after[..before.len()], before[..]);
    assert_eq!(
        after[before.len()..],
        [
            (
                "assistant".to_owned(),
                "Plain muffins are baking too.".to_owned()
            ),
            ("previous_response_id".to_owned(), "resp_fake_1".to_owned()),
        ]
    );
    // Run again without a new question: nothing is sent, nothing written.
    let output = project.ybs(&["ask", "--chat", "s.chat"]);
    assert!(output.status.success());
    assert!(
        text(&output.stderr)
            .contains("nothing to send: s.chat has no user message after its last reply"),
        "{}",
        text(&output.stderr)
    );
    assert_eq!(responses_bodies(&project).len(), 1);
    assert_eq!(project.read("s.chat"), file);
    // A question continues from the new id; `ybs undo` takes the turn back.
    project.llm.push_turn(Turn::text(["Done."]));
    let output = project.ybs(&["ask", "--chat", "s.chat", "Thanks!"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let body = &responses_bodies(&project)[1];
    assert_eq!(body["previous_response_id"], "resp_fake_1");
    assert_eq!(
        body["input"],
        json!([{"role": "user", "content": "Thanks!"}])
    );
    let output = project.ybs(&["undo", "--yes"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(project.read("s.chat"), file);
}

#[test]
fn a_failed_turn_writes_nothing_not_even_the_question() {
    let project = Project::new(vec![ybs_testkit::Turn::fault(ybs_testkit::Fault::status(
        400,
    ))]);
    project.write("f.chat", "user:\nfirst\n\nassistant:\nhello\n");
    let output = project.ybs(&["ask", "--chat", "f.chat", "second"]);
    assert!(!output.status.success());
    assert!(
        text(&output.stderr).contains("f.chat is unchanged; the question was not written"),
        "{}",
        text(&output.stderr)
    );
    assert_eq!(
        project.read("f.chat"),
        "user:\nfirst\n\nassistant:\nhello\n"
    );
}

#[test]
fn flags_win_over_the_chat_and_unknown_endpoints_are_errors() {
    let project = Project::new(vec![Turn::text(["ok"])]);
    project.write("m.chat", "model: from-file\nbackend: ollama\n\nuser:\nhi\n");
    let output = project.ybs(&[
        "ask",
        "--chat",
        "m.chat",
        "--model",
        "from-flag",
        "-p",
        "openai-compatible",
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(project.bodies()[0]["model"], "from-flag");
    project.configure(|config| {
        config["llm"]["endpoints"] = json!({"nano": {"model": "m"}, "deep": {"model": "d"}});
    });
    project.write("e.chat", "endpoint: fast\n\nuser:\nhi\n");
    let output = project.ybs(&["ask", "--chat", "e.chat"]);
    assert!(!output.status.success());
    assert!(
        text(&output.stderr).contains(
            "e.chat: endpoint `fast` is not a URL, a provider or a named endpoint: the \
             configured ones are deep, nano"
        ),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn a_pdf_the_provider_cannot_take_is_an_error_naming_its_line() {
    let project = Project::new(vec![Turn::text(["ok"])]);
    project.write("paper.pdf", "%PDF-1.4");
    project.write("p.chat", "user:\nRead this.\n\npdf: paper.pdf\n");
    let output = project.ybs(&["ask", "--chat", "p.chat"]);
    assert!(!output.status.success());
    let stderr = text(&output.stderr);
    assert!(stderr.contains("p.chat:4: pdf "), "{stderr}");
    assert!(stderr.contains("cannot take PDF documents"), "{stderr}");
    // The Responses API gets it as a file.
    project.configure(|config| config["llm"]["provider"] = json!("responses"));
    let output = project.ybs(&["ask", "--chat", "p.chat"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let body = &responses_bodies(&project)[0];
    let part = &body["input"][1]["content"][0];
    assert_eq!(part["type"], "input_file", "{body}");
    assert_eq!(part["filename"], "paper.pdf");
    assert_eq!(
        part["file_data"],
        "data:application/pdf;base64,JVBERi0xLjQ="
    );
}

#[test]
fn tool_lines_name_every_word_and_tasks_need_none() {
    let project = Project::new(vec![Turn::text(["ok"])]);
    project.write("t.chat", "tool: read_file list_files\n\nuser:\nhi\n");
    let output = project.ybs(&["ask", "--chat", "t.chat"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let names: Vec<Value> = (project.bodies()[0]["tools"].as_array().unwrap().iter())
        .map(|tool| tool["function"]["name"].clone())
        .collect();
    assert_eq!(names, [json!("read_file"), json!("list_files")]);
    project.write("u.chat", "tool: read_file frobnicate\n\nuser:\nhi\n");
    let output = project.ybs(&["ask", "--chat", "u.chat"]);
    assert!(!output.status.success());
    assert!(
        text(&output.stderr).contains("u.chat:1: unknown tool `frobnicate`"),
        "{}",
        text(&output.stderr)
    );
    project.llm.push_turn(Turn::text(["seen"]));
    project.write("notes.txt", "alpha\n");
    project.write(
        "k.chat",
        "user:\nWhat do the notes say?\n\ntask: read_file path=notes.txt\n",
    );
    let output = project.ybs(&["ask", "--chat", "k.chat"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let body = &project.bodies()[1];
    assert!(
        body.get("tools").is_none(),
        "no tool: line, no tools offered: {body}"
    );
    assert!(body.to_string().contains("alpha"), "{body}");
    // The task's trace is in the file once; the reply follows it.
    let file = project.read("k.chat");
    assert_eq!(file.matches("function_call_output").count(), 0, "{file}");
    assert!(file.ends_with("assistant:\n\nseen\n"), "{file}");
}
