//! End to end against the fake LLM and a real language server (pyright, installed by
//! `npm ci --prefix tests/lsp`): after the agent writes or edits a Python file, the errors
//! the server finds that the file did not have before go back to the model with the tool's
//! result; the server is stopped when ybs exits; a project's settings cannot name a server
//! command without trust.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod clients;
mod common;

use common::{Project, call, gone, text, tool_messages};
use serde_json::json;
use ybs_testkit::Turn;

/// A wrapper that runs node with its arguments and stays as its parent, so the test can see
/// whether the server's process group still runs by the wrapper's own (unique) path.
fn wrapper(project: &Project) -> String {
    let path = project.path("home/node-wrapper");
    std::fs::write(&path, "#!/bin/sh\nnode \"$@\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

fn with_pyright(project: &Project) -> Option<String> {
    let server = clients::pyright_langserver()?;
    let wrapper = wrapper(project);
    let command = json!([wrapper.clone(), server.display().to_string(), "--stdio"]);
    project.configure(|config| {
        config["lsp"] = json!({"servers": {"pyright": {"command": command, "patterns": ["*.py"]}},
                               "wait_seconds": 60});
    });
    Some(wrapper)
}

#[test]
fn a_new_error_goes_back_to_the_model_and_the_server_stops_at_exit() {
    let project = Project::new(vec![
        call(
            "w1",
            "write_file",
            json!({"path": "app.py", "content": "print(undefined_name)\n"}),
        ),
        Turn::text(["Written."]),
    ]);
    let Some(wrapper) = with_pyright(&project) else {
        return;
    };
    let output = project.ybs(&["exec", "--yes", "write app.py"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let bodies = project.bodies();
    let results = tool_messages(bodies.last().unwrap());
    let (_, result) = results.iter().find(|(id, _)| id == "w1").unwrap();
    assert!(
        result.contains("New errors from pyright after this change:"),
        "{result}"
    );
    assert!(
        result.contains("app.py:1:7: error: \"undefined_name\" is not defined"),
        "{result}"
    );
    assert!(gone(&wrapper), "the language server outlived ybs");
}

#[test]
fn an_error_the_file_had_before_is_not_repeated() {
    let project = Project::new(vec![
        call(
            "e1",
            "edit_file",
            json!({"path": "old.py", "old_text": "x = 1\n", "new_text": "x = 1\nprint(brand_new_name)\n"}),
        ),
        Turn::text(["Edited."]),
    ]);
    project.write("old.py", "print(old_missing)\nx = 1\n");
    let Some(_) = with_pyright(&project) else {
        return;
    };
    let output = project.ybs(&["exec", "--yes", "edit old.py"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let results = tool_messages(project.bodies().last().unwrap());
    let (_, result) = results.iter().find(|(id, _)| id == "e1").unwrap();
    assert!(
        result.contains("\"brand_new_name\" is not defined"),
        "{result}"
    );
    assert!(!result.contains("old_missing"), "{result}");
}

#[test]
fn a_projects_language_server_command_does_not_run_without_trust() {
    let project = Project::new(vec![
        call(
            "w1",
            "write_file",
            json!({"path": "app.py", "content": "print(1)\n"}),
        ),
        Turn::text(["Written."]),
    ]);
    let pwned = project.file("pwned");
    project.write(
        ".ybs.json",
        &json!({"lsp": {"servers": {"evil": {
            "command": ["sh", "-c", format!("touch {}", pwned.display())],
            "patterns": ["*.py"]}}}})
        .to_string(),
    );
    let output = project.ybs(&["exec", "--yes", "write app.py"]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        !pwned.exists(),
        "the project's server command ran: {stderr}"
    );
    assert!(stderr.contains("lsp.servers"), "{stderr}");
    assert_eq!(project.read("app.py"), "print(1)\n");
}
