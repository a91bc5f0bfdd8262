//! `ybs mcp-server` with the official MCP Python SDK as the calling agent
//! (`tests/mcp/client.py`): the tools are listed, a task runs against the fake LLM and
//! returns its reply, the files it changed and a session id, the session continues, and an
//! approval nobody can answer is refused.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod clients;
mod common;

use std::process::Stdio;

use common::{Project, call, text};
use serde_json::{Value, json};
use ybs_testkit::Turn;

#[test]
fn an_agent_lists_the_tools_runs_a_task_and_continues_its_session() {
    let Some(python) = clients::python() else {
        return;
    };
    let project = Project::new(vec![
        call(
            "w1",
            "write_file",
            json!({"path": "notes.txt", "content": "remember\n"}),
        ),
        Turn::text(["Wrote ", "notes.txt."]),
        Turn::text(["Done."]),
        call(
            "w2",
            "write_file",
            json!({"path": "x.txt", "content": "x\n"}),
        ),
        Turn::text(["I could not write x.txt."]),
    ]);
    let output = project
        .command_of(&python)
        .arg(clients::mcp_dir().join("client.py"))
        .env("MCP_E2E_YBS", project.ybs_command_line().to_string())
        .env("MCP_E2E_PROJECT", project.path("project"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = text(&output.stdout);
    let stderr = text(&output.stderr);
    let report: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|error| panic!("{error}: {stdout}\n{stderr}"));
    assert!(output.status.success(), "{report:#}\n{stderr}");

    let tools = &report["tools"];
    assert_eq!(
        tools["run_task"]["required"],
        json!(["prompt"]),
        "{tools:#}"
    );
    assert_eq!(
        tools["continue_session"]["required"],
        json!(["session_id", "prompt"])
    );

    // run_task: the reply, the file it wrote, a session id; progress told along the way.
    let run = &report["run"];
    assert_eq!(run["is_error"], false, "{run:#}");
    assert_eq!(run["text"], json!(["Wrote notes.txt."]));
    let structured = &run["structured"];
    assert_eq!(structured["reply"], "Wrote notes.txt.");
    assert_eq!(structured["files_changed"], json!(["notes.txt"]));
    assert_eq!(structured["stop"], "finished");
    let session_id = structured["session_id"].as_str().unwrap();
    assert!(session_id.starts_with("session-"), "{session_id}");
    assert_eq!(project.read("notes.txt"), "remember\n");
    let progress: Vec<&str> = (report["progress"].as_array().unwrap().iter())
        .filter_map(Value::as_str)
        .collect();
    assert!(
        progress.contains(&"calling write_file notes.txt"),
        "{progress:?}"
    );
    assert!(progress.contains(&"write_file done"), "{progress:?}");

    // continue_session: the same conversation goes on.
    let again = &report["continue"];
    assert_eq!(again["structured"]["reply"], "Done.", "{again:#}");
    assert_eq!(again["structured"]["session_id"], session_id);
    let bodies = project.bodies();
    let third = bodies[2]["messages"].to_string();
    assert!(third.contains("create notes.txt"), "{third}");
    assert!(third.contains("now delete nothing"), "{third}");

    // Without `approval: auto`, nobody can approve the write: it is refused, not run.
    let refused = &report["refused"];
    assert_eq!(
        refused["structured"]["files_changed"],
        json!([]),
        "{refused:#}"
    );
    assert!(!project.file("x.txt").exists());
    // The caller is told what was refused and which argument allows it.
    assert_eq!(
        refused["structured"]["refused"],
        json!(["write_file x.txt"]),
        "{refused:#}"
    );
    let told = refused["text"][0].as_str().unwrap();
    assert!(told.starts_with("I could not write x.txt."), "{told}");
    assert!(
        told.contains("ybs refused write_file x.txt: it needs approval")
            && told.contains("approval: \"auto\""),
        "{told}"
    );
    let results = common::tool_messages(&bodies[4]);
    assert!(
        results
            .iter()
            .any(|(id, content)| id == "w2" && content.contains("denied")),
        "{results:?}"
    );

    // A bad argument is an error result naming it, and asks no model.
    let bad = &report["bad"];
    assert_eq!(bad["is_error"], true, "{bad:#}");
    let message = bad["text"][0].as_str().unwrap();
    assert!(message.contains("approval `ask`"), "{message}");
    assert_eq!(bodies.len(), 5);
}
