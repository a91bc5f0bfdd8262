//! End to end against the fake LLM: a `run_shell` call that asks for the network
//! (`network: true`, with a reason) reaches a server on 127.0.0.1 only when it is allowed
//! (`safety.network` `ask` answered yes or `--yes`, or `on`), never when `off`, and a command
//! that does not ask stays without the network. A project file cannot loosen the setting.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{Project, call, text, tool_messages};
use serde_json::json;
use ybs_testkit::Turn;

/// What the server answers, so a result that holds it reached the server.
const ANSWER: &str = "hello-from-the-local-server";

/// A tiny HTTP server on 127.0.0.1 that counts the requests it answered.
struct Server {
    port: u16,
    served: Arc<AtomicUsize>,
}

impl Server {
    fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let served = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&served);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut line = String::new();
                let _ = BufReader::new(&stream).read_line(&mut line);
                count.fetch_add(1, Ordering::SeqCst);
                let _ = write!(
                    stream,
                    "HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n{ANSWER}",
                    ANSWER.len()
                );
            }
        });
        Server { port, served }
    }

    fn served(&self) -> usize {
        self.served.load(Ordering::SeqCst)
    }

    /// A tiny client: curl where there is one, else bash's `/dev/tcp`.
    fn fetch(&self) -> String {
        let port = self.port;
        if std::process::Command::new("curl")
            .arg("--version")
            .output()
            .is_ok_and(|output| output.status.success())
        {
            format!("curl -sS http://127.0.0.1:{port}/")
        } else {
            format!(
                "bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}; printf \"GET / HTTP/1.0\\r\\n\\r\\n\" >&3; cat <&3'"
            )
        }
    }
}

/// The model fetches from the server, asking for the network or not.
fn fetching(server: &Server, network: bool) -> Vec<Turn> {
    let mut args = json!({"command": server.fetch()});
    if network {
        args["network"] = json!(true);
        args["reason"] = json!("fetch the test page");
    }
    vec![call("c1", "run_shell", args), Turn::text(["Done."])]
}

fn result_of(project: &Project) -> String {
    let bodies = project.bodies();
    let results = tool_messages(bodies.last().unwrap());
    assert_eq!(results.len(), 1, "{results:?}");
    results[0].1.clone()
}

#[test]
fn a_call_that_asks_reaches_the_server_with_yes_and_is_refused_when_off() {
    let server = Server::start();
    let project = Project::new(fetching(&server, true));
    let output = project.ybs(&["exec", "--yes", "fetch it"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let result = result_of(&project);
    assert!(result.contains(ANSWER), "{result}");
    assert_eq!(server.served(), 1);

    // Off: refused before running, with a message to the model; --yes changes nothing.
    let project = Project::new(fetching(&server, true));
    let output = project.ybs(&["exec", "--yes", "--network", "off", "fetch it"]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let result = result_of(&project);
    assert!(result.contains("network access is off here"), "{result}");
    assert!(
        stderr.contains("run_shell asked for the network; refused (safety.network: off)"),
        "{stderr}"
    );
    assert_eq!(server.served(), 1, "the refused call reached the server");

    // Without --yes nobody can answer the question: denied.
    let project = Project::new(fetching(&server, true));
    let output = project.ybs(&["exec", "fetch it"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(result_of(&project).contains("denied"));
    assert_eq!(server.served(), 1);
}

#[test]
fn without_network_true_the_sandbox_still_blocks_the_command() {
    let server = Server::start();
    let project = Project::new(fetching(&server, false));
    project.configure(|config| config["safety"]["network"] = json!("on"));
    let output = project.ybs(&["exec", "--yes", "fetch it"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let result = result_of(&project);
    assert!(!result.contains(ANSWER), "{result}");
    assert!(result.contains("\"exit_code\":"), "{result}");
    assert!(!result.contains("\"exit_code\":0"), "{result}");
    assert_eq!(server.served(), 0);
}

#[test]
fn the_question_shows_the_reason_and_the_answer_decides() {
    let server = Server::start();
    // No confirmation for run_shell otherwise: the network alone asks.
    let project = Project::new(fetching(&server, true));
    project.configure(|config| {
        config["safety"]["require_confirmation"] = json!(["write_file", "delete_file"]);
    });
    let output = project.ybs_with_input(&[], "fetch it\nn\n");
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(stdout.contains("sandbox on, network ask"), "{stdout}");
    assert!(
        stdout.contains(
            "`run_shell`: it asks for the network: \"fetch the test page\" (safety.network: ask). \
             Allow? [y]es"
        ),
        "{stdout}"
    );
    assert!(result_of(&project).contains("denied"));
    assert_eq!(server.served(), 0);

    let project = Project::new(fetching(&server, true));
    let output = project.ybs_with_input(&[], "fetch it\ny\n");
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    // With run_shell's own confirmation, one question says both.
    assert!(
        stdout.contains(
            "(safety.require_confirmation); it asks for the network: \"fetch the test page\""
        ),
        "{stdout}"
    );
    assert!(result_of(&project).contains(ANSWER));
    assert_eq!(server.served(), 1);
}

#[test]
fn on_runs_it_like_any_command_and_a_project_file_cannot_turn_it_on() {
    let server = Server::start();
    let unconfirmed = |project: &Project| {
        project.configure(|config| {
            config["safety"]["require_confirmation"] = json!(["write_file", "delete_file"]);
        });
    };
    let project = Project::new(fetching(&server, true));
    unconfirmed(&project);
    project.configure(|config| config["safety"]["network"] = json!("on"));
    let output = project.ybs(&["exec", "fetch it"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(result_of(&project).contains(ANSWER));
    assert_eq!(server.served(), 1);

    // The same from the project's own file: not applied, the question stays (and nobody
    // can answer it in exec).
    let project = Project::new(fetching(&server, true));
    unconfirmed(&project);
    project.write(".ybs.json", r#"{"safety": {"network": "on"}}"#);
    let output = project.ybs(&["exec", "fetch it"]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr
            .lines()
            .any(|line| line.contains(" safety.network ignored") && line.contains(".ybs.json")),
        "{stderr}"
    );
    assert!(result_of(&project).contains("denied"));
    assert_eq!(server.served(), 1);
    // While "off" from the project applies without trust.
    let project = Project::new(fetching(&server, true));
    project.write(".ybs.json", r#"{"safety": {"network": "off"}}"#);
    let output = project.ybs(&["exec", "--yes", "fetch it"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(result_of(&project).contains("network access is off here"));
    assert_eq!(server.served(), 1);
}
