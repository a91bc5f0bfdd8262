//! A `run_shell` call granted the network: it reaches a local listener, and every other layer
//! of the sandbox stays (files outside the root, blocked paths, writes outside). Without the
//! grant, or where the policy allows no network, it reaches nothing.

use std::io::Read;
use std::net::TcpListener;

use serde_json::{Value, json};
use ybs_tools::ShellPolicy;

use crate::common::{Fixture, PRIVATE, SECRET};

fn networked(f: &Fixture, command: &str) -> Value {
    f.call(
        "run_shell",
        json!({"command": command, "timeout_seconds": 20, "network": true, "reason": "test"}),
    )
    .unwrap()
}

fn allowing() -> Fixture {
    Fixture::with_policy(ShellPolicy {
        network_allowed: true,
        ..ShellPolicy::default()
    })
}

#[test]
fn a_call_granted_the_network_reaches_localhost_and_nothing_else_changes() {
    let f = allowing();
    let before = f.snapshot_outside();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let out = f.outside.display();
    let result = networked(
        &f,
        &format!(
            "bash -c 'echo hello > /dev/tcp/127.0.0.1/{port}' && echo sent; \
             cat {out}/secret.txt; cat private/key.txt; echo x > {out}/new.txt; \
             echo x > /tmp/ybs-network-escape.txt"
        ),
    );
    let (mut stream, _) = listener.accept().unwrap();
    let mut got = String::new();
    stream.read_to_string(&mut got).unwrap();
    assert_eq!(got, "hello\n");
    assert!(
        result["stdout"].as_str().unwrap().contains("sent"),
        "{result}"
    );
    let text = result.to_string();
    assert!(
        !text.contains(SECRET) && !text.contains(PRIVATE),
        "{result}"
    );
    assert!(
        (result["stderr"].as_str().unwrap()).contains("Permission denied"),
        "{result}"
    );
    assert!(!std::path::Path::new("/tmp/ybs-network-escape.txt").exists());
    assert_eq!(
        f.snapshot_outside(),
        before,
        "something outside the root changed"
    );
}

#[test]
fn without_the_grant_or_the_policy_the_network_stays_off() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("bash -c 'echo hello > /dev/tcp/127.0.0.1/{port}'");
    // The policy allows the network, but this call did not ask for it.
    let f = allowing();
    let result = f
        .call(
            "run_shell",
            json!({"command": connect, "timeout_seconds": 20}),
        )
        .unwrap();
    // Refused by seccomp, or, in the session's loopback network, by nobody listening there.
    assert_ne!(result["exit_code"], 0, "{result}");
    let stderr = result["stderr"].as_str().unwrap();
    assert!(
        stderr.contains("Operation not permitted") || stderr.contains("Connection refused"),
        "{result}"
    );
    // The call asks, but the policy allows no network: refused before running.
    let f = Fixture::new();
    let error = f.err(
        "run_shell",
        json!({"command": connect, "network": true, "reason": "test"}),
    );
    assert!(error.contains("network access is off here"), "{error}");
    // Only a boolean asks.
    let error = allowing().err("run_shell", json!({"command": connect, "network": "yes"}));
    assert!(error.contains("must be a boolean"), "{error}");
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_err(), "a command reached the listener");
}
