//! The new tools on a real terminal (tmux, as in `repl_pty.rs`): `/help` lists them, the task
//! list shows on the screen as the model changes it, and a fetch of a page on 127.0.0.1 asks
//! first, saying the host is this machine.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod pty;

use pty::{Tmux, scratch_root, tmux_missing, write_fake_llm_config, ybs_command};
use serde_json::json;
use ybs_testkit::{FakeLlm, FakeWeb, Script, ToolCall, Turn};

#[test]
fn the_task_list_and_the_fetch_question_show_on_the_screen() {
    if tmux_missing() {
        return;
    }
    let dir = scratch_root();
    let root = dir.path();
    let web = FakeWeb::start().unwrap();
    web.page("/docs", "text/html", "<h1>Install</h1><p>Run it.</p>");
    let todos = json!({"todos": [
        {"content": "read the docs", "status": "in_progress"},
        {"content": "write the summary", "status": "pending"}
    ]});
    let llm = FakeLlm::start(Script::new([
        Turn::default().with_tool_call(ToolCall::new("t1", "todo_write", todos)),
        Turn::default().with_tool_call(ToolCall::new(
            "f1",
            "web_fetch",
            json!({"url": web.url("/docs")}),
        )),
        Turn::text(["Summary written."]),
    ]))
    .unwrap();
    let config = root.join("ybs.json");
    write_fake_llm_config(&config, &llm.base_url(), false);
    let command = ybs_command(root, "xterm", "", &config, "");
    let tmux = Tmux::start(&root.join("tmux.sock"), &root.join("project"), &command);
    tmux.wait_for("ybs>");
    tmux.keys(&["/help", "Enter"]);
    tmux.wait_for("its task list, shown as it changes");
    tmux.keys(&["summarise the docs", "Enter"]);
    let screen = tmux.wait_for("Allow? [y]es");
    assert!(
        screen.contains("Tasks (0 of 2 done):")
            && screen.contains("[>] read the docs")
            && screen.contains("[ ] write the summary"),
        "{screen}"
    );
    assert!(
        screen.contains("(host 127.0.0.1:") && screen.contains("this machine (loopback))"),
        "{screen}"
    );
    assert!(
        web.paths().is_empty(),
        "nothing is fetched before the answer"
    );
    tmux.keys(&["y", "Enter"]);
    tmux.wait_for_after("Summary written.", "ybs>");
    assert_eq!(web.paths(), ["/docs"]);
}
