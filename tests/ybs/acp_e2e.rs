//! `ybs acp` with the official ACP TypeScript SDK as the editor: a session whose prompt
//! leads to an edit the client approves through `session/request_permission`, a prompt
//! cancelled while it streams, and the session loaded again by a second `ybs acp`
//! (`tests/acp/client.mjs`); an editor offering its files, whose unsaved buffer ybs reads and
//! edits through it, an "always" answer kept as a permission rule, and plan mode
//! (`tests/acp/editor.mjs`). The model is the fake LLM.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod clients;
mod common;

use std::process::Stdio;

use common::{Project, call, text};
use serde_json::{Value, json};
use ybs_testkit::Turn;

/// The updates of `kind` (`sessionUpdate`) in a list the client saw.
fn updates<'a>(list: &'a Value, kind: &str) -> Vec<&'a Value> {
    (list.as_array().into_iter().flatten())
        .filter(|update| update["sessionUpdate"] == kind)
        .collect()
}

/// The text of the chunks of `kind`, joined.
fn chunks(list: &Value, kind: &str) -> String {
    (updates(list, kind).iter())
        .filter_map(|update| update["content"]["text"].as_str())
        .collect()
}

#[test]
fn an_editor_approves_an_edit_cancels_a_reply_and_loads_the_session_again() {
    let Some(node) = clients::node() else {
        return;
    };
    let story: Vec<String> = (0..40).map(|n| format!("word{n} ")).collect();
    let project = Project::new(vec![
        call(
            "c1",
            "edit_file",
            json!({"path": "a.txt", "old_text": "hello", "new_text": "goodbye"}),
        ),
        Turn::text(["Changed ", "it."]),
        Turn::text(story).with_delay_ms(150),
    ]);
    project.write("a.txt", "hello\n");
    let output = project
        .command_of(&node)
        .arg(clients::acp_dir().join("client.mjs"))
        .env("ACP_E2E_YBS", project.ybs_command_line().to_string())
        .env("ACP_E2E_PROJECT", project.path("project"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = text(&output.stdout);
    let stderr = text(&output.stderr);
    let report: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|error| panic!("{error}: {stdout}\n{stderr}"));
    assert!(output.status.success(), "{report:#}\n{stderr}");

    // initialize: images, embedded context, loadSession.
    let capabilities = &report["initialize"]["agentCapabilities"];
    assert_eq!(capabilities["loadSession"], true, "{report:#}");
    assert_eq!(capabilities["promptCapabilities"]["image"], true);
    assert_eq!(capabilities["promptCapabilities"]["embeddedContext"], true);
    let session_id = report["session"]["sessionId"].as_str().unwrap();
    assert!(session_id.starts_with("session-"), "{session_id}");
    assert_eq!(report["session"]["modes"]["currentModeId"], "ask");

    // The edit: one permission request with the diff and ybs's three choices, approved.
    let edit = &report["edit"];
    assert_eq!(edit["response"]["stopReason"], "end_turn", "{edit:#}");
    let permissions = edit["permissions"].as_array().unwrap();
    assert_eq!(permissions.len(), 1, "{edit:#}");
    let asked = &permissions[0];
    assert_eq!(asked["toolCallId"], "c1");
    assert_eq!(asked["title"], "Edit a.txt");
    assert_eq!(asked["kind"], "edit");
    assert_eq!(
        asked["options"],
        json!([
            ["allow_once", "allow_once"],
            ["always:0", "allow_always"],
            ["reject", "reject_once"]
        ])
    );
    let diff = &asked["content"][0];
    assert_eq!(diff["type"], "diff", "{asked:#}");
    assert_eq!(diff["oldText"], "hello\n");
    assert_eq!(diff["newText"], "goodbye\n");
    assert_eq!(
        diff["path"].as_str().unwrap(),
        project
            .file("a.txt")
            .canonicalize()
            .unwrap()
            .display()
            .to_string()
    );
    assert_eq!(project.read("a.txt"), "goodbye\n");
    // The call's life: announced pending, then running, then completed with its diff.
    let call_updates = &edit["updates"];
    let announced = updates(call_updates, "tool_call");
    assert_eq!(announced.len(), 1, "{call_updates:#}");
    // Pending is the default status, which the wire leaves out.
    assert!(
        announced[0]
            .get("status")
            .is_none_or(|status| status == "pending")
    );
    assert_eq!(announced[0]["kind"], "edit");
    let statuses: Vec<&str> = (updates(call_updates, "tool_call_update").iter())
        .filter_map(|update| update["status"].as_str())
        .collect();
    assert_eq!(statuses, ["in_progress", "completed"], "{call_updates:#}");
    assert_eq!(chunks(call_updates, "agent_message_chunk"), "Changed it.");
    let usage = updates(call_updates, "usage_update");
    assert_eq!(usage.len(), 1, "{call_updates:#}");
    assert!(usage[0]["used"].as_u64().unwrap() > 0);

    // The cancel: the reply stops early and the turn ends as cancelled.
    let cancel = &report["cancel"];
    assert_eq!(cancel["response"]["stopReason"], "cancelled", "{cancel:#}");
    let streamed = chunks(&cancel["updates"], "agent_message_chunk");
    assert!(streamed.starts_with("word0 "), "{streamed}");
    assert!(!streamed.contains("word39"), "{streamed}");
    assert_eq!(report["firstExit"], 0);

    // session/load in a new process replays the saved conversation, in order.
    let load = &report["load"];
    assert_eq!(
        load["response"]["modes"]["currentModeId"], "ask",
        "{load:#}"
    );
    let replayed = &load["updates"];
    let users = chunks(replayed, "user_message_chunk");
    assert!(
        users.starts_with("change hello to goodbye in a.txt"),
        "{users}"
    );
    assert!(users.ends_with("tell a long story"), "{users}");
    let replies = chunks(replayed, "agent_message_chunk");
    assert!(replies.contains("Changed it."), "{replies}");
    assert!(replies.contains("word0"), "{replies}");
    let loaded_calls = updates(replayed, "tool_call");
    assert_eq!(loaded_calls.len(), 1, "{replayed:#}");
    assert_eq!(loaded_calls[0]["title"], "Edit a.txt");
    // An id that could name another directory is refused.
    let bad = report["badLoad"].as_str().unwrap();
    assert!(bad.contains("not a ybs session id"), "{bad}");
    assert_eq!(report["secondExit"], 0);

    // The model saw the approved edit's result and the earlier turns.
    let bodies = project.bodies();
    assert_eq!(bodies.len(), 3, "{bodies:#?}");
    let results = common::tool_messages(&bodies[1]);
    assert_eq!(results.len(), 1);
    assert!(results[0].1.contains("\"success\":true"), "{results:?}");
}

/// Runs `script` (in `tests/acp`) against `project`; its JSON report.
fn run_client(node: &std::path::Path, project: &Project, script: &str) -> Value {
    let output = project
        .command_of(node)
        .arg(clients::acp_dir().join(script))
        .env("ACP_E2E_YBS", project.ybs_command_line().to_string())
        .env(
            "ACP_E2E_PROJECT",
            project.path("project").canonicalize().unwrap(),
        )
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = text(&output.stdout);
    let stderr = text(&output.stderr);
    let report: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|error| panic!("{error}: {stdout}\n{stderr}"));
    assert!(output.status.success(), "{report:#}\n{stderr}");
    report
}

#[test]
fn an_editor_s_unsaved_buffer_is_read_and_edited_through_it_and_plan_mode_shows_the_plan() {
    let Some(node) = clients::node() else {
        return;
    };
    let project = Project::new(vec![
        call("c1", "read_file", json!({"path": "a.txt"})),
        call(
            "c2",
            "edit_file",
            json!({"path": "a.txt", "old_text": "unsaved hello", "new_text": "edited once"}),
        ),
        call(
            "c3",
            "write_file",
            json!({"path": "a.txt", "content": "written\n"}),
        ),
        call(
            "c4",
            "write_file",
            json!({"path": "a.txt", "content": "written twice\n"}),
        ),
        Turn::text(["All done."]),
        Turn::text(["Plan:\n1. Add a test for parse\n2. Run cargo test\n"]),
        Turn::text(["Carried out."]),
    ]);
    project.write("a.txt", "hello\n");
    let report = run_client(&node, &project, "editor.mjs");
    let a_txt = project
        .file("a.txt")
        .canonicalize()
        .unwrap()
        .display()
        .to_string();

    // The modes: the approval modes and plan mode, starting with the configured `ask`.
    let modes = &report["modes"];
    assert_eq!(modes["currentModeId"], "ask", "{report:#}");
    let ids: Vec<&str> = (modes["availableModes"].as_array().unwrap().iter())
        .filter_map(|mode| mode["id"].as_str())
        .collect();
    assert_eq!(ids, ["ask", "auto-edit", "full-auto", "plan"]);

    // The model read the editor's buffer, not the disk.
    let bodies = project.bodies();
    assert_eq!(bodies.len(), 7, "{bodies:#?}");
    let read = common::tool_messages(&bodies[1]);
    assert!(read[0].1.contains("unsaved hello"), "{read:?}");
    assert!(
        (report["reads"].as_array().unwrap().iter()).all(|path| *path == json!(a_txt)),
        "{report:#}"
    );

    // The edit of the buffer it read needs no approval. One permission request, for the
    // first write, with the edited buffer as the old text and the rules ybs would keep;
    // "always" for `write_file(a.txt)` lets the second write run unasked.
    let edits = &report["phases"]["edits"];
    assert_eq!(edits["response"]["stopReason"], "end_turn", "{edits:#}");
    let permissions = report["permissions"].as_array().unwrap();
    assert_eq!(permissions.len(), 1, "{report:#}");
    assert_eq!(permissions[0]["toolCallId"], "c3");
    let diff = &permissions[0]["content"][0];
    assert_eq!(diff["oldText"], "edited once\n", "{diff:#}");
    assert_eq!(diff["newText"], "written\n");
    let always = &permissions[0]["options"][1];
    assert_eq!(
        *always,
        json!([
            "always:0",
            "allow_always",
            "Always allow `write_file(a.txt)` in this session"
        ])
    );
    let results = common::tool_messages(&bodies[4]);
    assert_eq!(results.len(), 4, "{results:?}");
    assert!(
        (results[1..].iter()).all(|(_, content)| content.contains("\"success\":true")),
        "{results:?}"
    );

    // Every write went through the editor; the disk was never written (the editor saves).
    assert_eq!(
        report["writes"],
        json!([
            [a_txt, "edited once\n"],
            [a_txt, "written\n"],
            [a_txt, "written twice\n"]
        ])
    );
    assert_eq!(report["buffers"][&a_txt], "written twice\n");
    assert_eq!(project.read("a.txt"), "hello\n");

    // Plan mode: the numbered steps as a pending plan.
    let plan = &report["phases"]["plan"]["updates"];
    let proposed = updates(plan, "plan");
    assert_eq!(proposed.len(), 1, "{plan:#}");
    assert_eq!(
        proposed[0]["entries"],
        json!([
            {"content": "Add a test for parse", "priority": "medium", "status": "pending"},
            {"content": "Run cargo test", "priority": "medium", "status": "pending"}
        ])
    );
    let system = bodies[5]["messages"][0]["content"]
        .as_str()
        .unwrap_or_default();
    assert!(system.contains("Plan mode is on"), "{system}");

    // Leaving plan mode: the next prompt hands the plan back; its steps run, then complete.
    let carry = &report["phases"]["carry"]["updates"];
    let statuses: Vec<&Value> = (updates(carry, "plan").iter())
        .map(|plan| &plan["entries"][0]["status"])
        .collect();
    assert_eq!(
        statuses,
        [&json!("in_progress"), &json!("completed")],
        "{carry:#}"
    );
    let messages = bodies[6]["messages"].as_array().unwrap();
    let last = messages.last().unwrap().to_string();
    assert!(last.contains("Plan mode is off"), "{last}");
    assert!(last.contains("1. Add a test for parse"), "{last}");
    assert!(last.contains("go ahead"), "{last}");

    let bad = report["badMode"].as_str().unwrap();
    assert!(bad.contains("ybs has no mode `yolo`"), "{bad}");
    assert_eq!(report["exit"], 0);
}
