//! End to end against the fake LLM: `run_shell` with `background: true` starts a job and
//! answers at once; `read_job_output` gives its new output, `stop_job` ends it, `/jobs` lists
//! it, and the session's end stops what still runs (the process is gone afterwards). A
//! server started in the background answers the next command, with the sandbox off and in
//! it (the session's loopback network).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod pty;

use common::{Project, call, gone, text, tool_messages};
use serde_json::{Value, json};
use ybs_testkit::Turn;

fn succeeds(output: &std::process::Output) -> String {
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    stderr
}

fn result_of(body: &Value, id: &str) -> Value {
    let content = (tool_messages(body).into_iter())
        .find(|(call, _)| call == id)
        .map(|(_, content)| content)
        .unwrap_or_else(|| panic!("no result of {id} in {body}"));
    serde_json::from_str(&content).unwrap_or(Value::String(content))
}

#[test]
fn a_background_job_is_started_read_and_stopped() {
    let marker = "sleep 7201";
    let project = Project::new(vec![
        call(
            "c1",
            "run_shell",
            json!({"command": format!("echo first line; touch ready; exec {marker}"), "background": true}),
        ),
        // Waits for the job to have written its line (it touches `ready` after it).
        call(
            "c2",
            "run_shell",
            json!({"command": "until [ -e ready ]; do sleep 0.05; done; echo seen"}),
        ),
        call("c3", "read_job_output", json!({"job_id": 1})),
        call("c4", "read_job_output", json!({"job_id": 1})),
        call("c5", "stop_job", json!({"job_id": 1})),
        call("c6", "read_job_output", json!({"job_id": 9})),
        Turn::text(["Done."]),
    ]);
    project.configure(|config| config["agent"]["max_iterations"] = json!(10));
    let stderr = succeeds(&project.ybs(&["exec", "--yes", "start a job"]));
    let bodies = project.bodies();
    let last = bodies.last().unwrap();
    // The jobs' tools are offered once there is a job.
    let offered = |body: &Value| body["tools"].to_string().contains("\"read_job_output\"");
    assert!(!offered(&bodies[0]) && offered(&bodies[1]));

    let started = result_of(last, "c1");
    assert_eq!(started["job_id"], 1, "{started}");
    assert_eq!(started["running"], true);

    let first = result_of(last, "c3");
    assert_eq!(first["running"], true, "{first}");
    assert!(
        first["output"].as_str().unwrap().contains("first line"),
        "{first}"
    );
    // Only what is new: nothing came since.
    let second = result_of(last, "c4");
    assert_eq!(second["output"], "", "{second}");

    let stopped = result_of(last, "c5");
    assert_eq!(stopped["running"], false, "{stopped}");
    assert_eq!(stopped["stopped"], true, "{stopped}");
    assert!(gone(marker), "the job's process still runs");

    let unknown = result_of(last, "c6");
    assert!(
        unknown
            .to_string()
            .contains("no background job 9 in this session (jobs: 1)"),
        "{unknown}"
    );
    assert!(stderr.contains("Started job 1"), "{stderr}");
}

#[test]
fn the_sessions_end_stops_its_jobs_and_says_so() {
    let marker = "sleep 7202";
    let project = Project::new(vec![
        call(
            "c1",
            "run_shell",
            json!({"command": format!("echo serving; exec {marker}"), "background": true}),
        ),
        Turn::text(["Started."]),
    ]);
    // The REPL from a pipe: a message, /jobs, /exit.
    let output = project.ybs_with_input(&[], "start it\ny\n/jobs\n/exit\n");
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(stdout.contains("job 1  running"), "{stdout}");
    assert!(
        stdout.contains(&format!("echo serving; exec {marker}")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "stopped 1 background job still running: 1 (echo serving; exec {marker})"
        )),
        "{stdout}"
    );
    assert!(gone(marker), "the job outlived the session");

    // exec too: its job ends with it.
    let marker = "sleep 7203";
    let project = Project::new(vec![
        call(
            "c1",
            "run_shell",
            json!({"command": format!("exec {marker}"), "background": true}),
        ),
        Turn::text(["Started."]),
    ]);
    succeeds(&project.ybs(&["exec", "--yes", "start it"]));
    assert!(gone(marker), "the job outlived ybs exec");
    // The job's placeholders for ybs's names went with it.
    for name in [".ybs.json", ".ybs"] {
        assert!(!project.file(name).exists(), "{name} was left behind");
    }
}

#[test]
fn a_background_job_is_confirmed_like_any_command_and_blocked_commands_stay_blocked() {
    let project = Project::new(vec![
        call(
            "c1",
            "run_shell",
            json!({"command": "touch made-by-job", "background": true}),
        ),
        Turn::text(["Done."]),
    ]);
    // Answered "no" at the confirmation.
    let output = project.ybs_with_input(&["exec", "start it"], "n\n");
    let result = result_of(project.bodies().last().unwrap(), "c1");
    assert!(!project.file("made-by-job").exists(), "{result}");
    assert!(
        result.to_string().to_lowercase().contains("denied")
            || result.to_string().to_lowercase().contains("declined"),
        "{result} {}",
        text(&output.stderr)
    );

    let project = Project::new(vec![
        call(
            "c1",
            "run_shell",
            json!({"command": "touch made-by-job; rm -rf /", "background": true}),
        ),
        Turn::text(["Done."]),
    ]);
    project.configure(|config| config["safety"]["blocked_commands"] = json!(["rm -rf /"]));
    succeeds(&project.ybs(&["exec", "--yes", "start it"]));
    let result = result_of(project.bodies().last().unwrap(), "c1");
    assert!(result.to_string().contains("blocked"), "{result}");
    assert!(!project.file("made-by-job").exists());
}

/// ybs killed (`SIGKILL`, no chance to stop anything) while a job and a command run: both
/// die with it, with whatever they started inside the sandbox.
#[test]
fn a_killed_ybs_takes_its_jobs_and_commands_with_it() {
    let (job, command) = ("sleep 7302", "sleep 7303");
    let project = Project::new(vec![
        call(
            "c1",
            "run_shell",
            json!({"command": format!("{job} & exec {job}"), "background": true}),
        ),
        call(
            "c2",
            "run_shell",
            json!({"command": format!("exec {command}"), "timeout_seconds": 600}),
        ),
        Turn::text(["Done."]),
    ]);
    let mut ybs = project
        .command(&["exec", "--yes", "work"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !(common::process_with(job) && common::process_with(command)) {
        assert!(
            std::time::Instant::now() < deadline,
            "the job and the command did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    ybs.kill().unwrap();
    ybs.wait().unwrap();
    assert!(gone(job), "the job outlived the killed ybs");
    assert!(gone(command), "the command outlived the killed ybs");
}

/// A free port on 127.0.0.1 (taken and let go).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// The model starts a dev server as a job and fetches a page from it with the next command;
/// what that command printed.
fn serve_and_fetch(sandbox: bool) -> Option<Value> {
    let port = free_port();
    let project = Project::new(vec![
        call(
            "c1",
            "run_shell",
            json!({"command": format!("exec python3 -m http.server {port} --bind 127.0.0.1"), "background": true}),
        ),
        call(
            "c2",
            "run_shell",
            json!({"command": format!(
                "for i in $(seq 100); do python3 -c 'import urllib.request,sys; print(urllib.request.urlopen(\"http://127.0.0.1:{port}/page.txt\").read().decode())' 2>/dev/null && exit 0; sleep 0.1; done; exit 1"
            ), "timeout_seconds": 30}),
        ),
        call("c3", "stop_job", json!({"job_id": 1})),
        Turn::text(["Done."]),
    ]);
    project.write("page.txt", "served-by-the-job\n");
    project.configure(|config| config["safety"]["sandbox_enabled"] = json!(sandbox));
    let stderr = succeeds(&project.ybs(&["exec", "--yes", "serve"]));
    if sandbox && stderr.contains("sandbox unavailable") {
        println!("skipped: no sandbox here");
        return None;
    }
    Some(result_of(project.bodies().last().unwrap(), "c2"))
}

#[test]
fn a_server_started_in_the_background_answers_the_next_command_without_the_sandbox() {
    let fetched = serve_and_fetch(false).unwrap();
    assert_eq!(fetched["exit_code"], 0, "{fetched}");
    assert!(
        (fetched["stdout"].as_str().unwrap()).contains("served-by-the-job"),
        "{fetched}"
    );
}

/// In the sandbox the server listens in the session's loopback network, which every
/// command without the network joins (the tools crate's security tests show that nothing
/// of the host is reachable from it, nor it from the host).
#[test]
fn in_the_sandbox_a_server_started_in_the_background_answers_the_next_command() {
    let Some(fetched) = serve_and_fetch(true) else {
        return;
    };
    assert_eq!(fetched["exit_code"], 0, "{fetched}");
    assert!(
        (fetched["stdout"].as_str().unwrap()).contains("served-by-the-job"),
        "{fetched}"
    );
    // `/status` says so, and who does not reach such a server.
    let status = text(&Project::new(vec![]).ybs_with_input(&[], "/status\n").stdout);
    assert!(
        status.contains(
            "a server a command starts on 127.0.0.1 answers the later commands, not your browser"
        ),
        "{status}"
    );
}

#[test]
fn on_a_terminal_jobs_lists_the_running_job_and_exit_stops_it() {
    use pty::{Tmux, scratch_root, tmux_missing, write_fake_llm_config, ybs_command};
    use ybs_testkit::{FakeLlm, Script, ToolCall};
    if tmux_missing() {
        return;
    }
    let marker = "sleep 7204";
    let dir = scratch_root();
    let root = dir.path();
    let llm = FakeLlm::start(Script::new([
        Turn::default().with_tool_call(ToolCall::new(
            "c1",
            "run_shell",
            json!({"command": format!("echo listening on 8000; exec {marker}"), "background": true}),
        )),
        Turn::text(["The job runs."]),
    ]))
    .unwrap();
    let config = root.join("ybs.json");
    write_fake_llm_config(&config, &llm.base_url(), false);
    let command = ybs_command(root, "xterm", "", &config, "");
    let tmux = Tmux::start(&root.join("tmux.sock"), &root.join("project"), &command);
    // The pane stays when ybs exits, so its last words can be read.
    tmux.run(&["set-option", "-t", "ybs", "remain-on-exit", "on"]);
    tmux.wait_for("ybs>");
    tmux.keys(&["start the server", "Enter"]);
    let asked = tmux.wait_for("Allow? [y]es / [n]o / [a]lways (a rule):");
    assert!(asked.contains("as a background job"), "{asked}");
    tmux.keys(&["y", "Enter"]);
    tmux.wait_for_after("The job runs.", "ybs>");
    assert!(tmux.screen().contains("Started job 1"), "{}", tmux.screen());
    tmux.keys(&["/jobs", "Enter"]);
    let screen = tmux.wait_for("| listening on 8000");
    assert!(screen.contains("job 1  running"), "{screen}");
    assert!(
        screen.contains(&format!("echo listening on 8000; exec {marker}")),
        "{screen}"
    );
    tmux.keys(&["/exit", "Enter"]);
    tmux.wait_for("stopped 1 background job still running: 1 (echo listening on 8000");
    assert!(gone(marker), "the job outlived the session");
}
