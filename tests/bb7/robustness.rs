//! Malformed input never takes the daemon down: 10,000 random and mutated lines each get an
//! error reply; a line over 1 MiB is refused and skipped; end of input and SIGTERM exit
//! cleanly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write;

use bb7_daemon::wire::{TOO_LARGE, parse_line};
use common::World;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{Value, json};

const VALID: &[&str] = &[
    r#"{"request_id":"1","action":"context_add","path":"math.cs","content":"x","readonly":false}"#,
    r#"{"request_id":2,"action":"context_add_section","path":"a.cs","content":"x","start_line":1,"end_line":2}"#,
    r#"{"request_id":"3","action":"fork_chat","chat_id":"abc123","fork_message_index":4}"#,
    r#"{"request_id":"4","action":"apply_file_as","path":"a","destination":"b"}"#,
    r#"{"request_id":"5","action":"chat_edit","chat_id":"abc","message_index":1,"content":"c"}"#,
    r#"{"request_id":"6","action":"context_set_readonly","path":"a","readonly":true}"#,
];

/// Lines that are guaranteed not to be valid requests (checked with the daemon's own parser).
fn corpus(size: usize) -> Vec<String> {
    let mutated = (
        0..VALID.len(),
        proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0..4u8), 1..6),
    )
        .prop_map(|(which, edits)| {
            let mut bytes = VALID[which].as_bytes().to_vec();
            for (at, byte, kind) in edits {
                if bytes.is_empty() {
                    break;
                }
                let i = at.index(bytes.len());
                match kind {
                    0 => bytes[i] = byte,
                    1 => bytes.truncate(i),
                    2 => bytes.insert(i, byte),
                    _ => {
                        bytes.remove(i);
                    }
                }
            }
            String::from_utf8_lossy(&bytes).into_owned()
        });
    let strategy = prop_oneof![
        3 => mutated,
        1 => any::<Vec<u8>>().prop_map(|bytes| String::from_utf8_lossy(&bytes).into_owned()),
        1 => "\\PC{0,120}",
        1 => any::<i64>().prop_map(|n| n.to_string()),
        1 => "[a-z_]{1,24}".prop_map(|action| json!({"request_id": 9, "action": format!("x_{action}")}).to_string()),
        1 => (0..VALID.len(), "[a-z_]{1,12}").prop_map(|(which, field)| {
            let mut value: Value = serde_json::from_str(VALID[which]).unwrap();
            let object = value.as_object_mut().unwrap();
            let key = object.keys().filter(|key| *key != "action" && *key != "request_id").nth(field.len() % 3).cloned();
            if let Some(key) = key {
                if field.len() % 2 == 0 {
                    object.remove(&key);
                } else {
                    object.insert(key, json!([field]));
                }
            }
            value.to_string()
        }),
    ];
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    let mut lines = Vec::with_capacity(size);
    while lines.len() < size {
        let line = strategy
            .new_tree(&mut runner)
            .unwrap()
            .current()
            .replace(['\n', '\r'], " ");
        if line.trim().is_empty() || parse_line(&line).is_ok() {
            continue;
        }
        lines.push(line);
    }
    lines
}

#[test]
fn ten_thousand_malformed_lines_each_get_an_error() {
    let lines = corpus(10_000);
    let world = World::new();
    let mut daemon = world.spawn();
    let mut input = String::new();
    for line in &lines {
        input.push_str(line);
        input.push('\n');
    }
    // Requests that parse but fail before init (`Not initialized`, as the first bb7), answered
    // by the session in order.
    for _ in 0..100 {
        input.push_str(r#"{"action":"context_add","path":"x","content":"y"}"#);
        input.push('\n');
    }
    input.push_str(r#"{"request_id":"final","action":"chat_active"}"#);
    input.push('\n');
    let mut stdin = daemon.take_stdin();
    let writer = std::thread::spawn(move || {
        stdin.write_all(input.as_bytes()).unwrap();
        stdin.flush().unwrap();
        stdin
    });
    let mut errors = 0;
    let mut not_initialized = 0;
    loop {
        let reply = daemon.read_reply().expect("the daemon is still answering");
        assert_eq!(reply["type"], "error", "{reply}");
        if reply["request_id"] == "final" {
            assert_eq!(reply["message"], "Not initialized");
            break;
        }
        if reply["message"] == "Not initialized" {
            not_initialized += 1;
        }
        errors += 1;
    }
    assert_eq!(errors, lines.len() + 100);
    assert_eq!(not_initialized, 100);
    let mut stdin = writer.join().unwrap();
    stdin
        .write_all(b"{\"request_id\":\"alive\",\"action\":\"ping\"}\n")
        .unwrap();
    stdin.flush().unwrap();
    assert_eq!(
        daemon.read_reply().unwrap(),
        json!({"type": "ok", "request_id": "alive"})
    );
}

#[test]
fn oversized_lines_are_refused_and_skipped() {
    let world = World::new();
    let mut daemon = world.spawn();
    let big = format!(
        r#"{{"request_id":"big","action":"context_add","path":"a","content":"{}"}}"#,
        "x".repeat(1_100_000)
    );
    daemon.send_line(&big);
    let reply = daemon.read_reply().unwrap();
    assert_eq!(reply, json!({"type": "error", "message": TOO_LARGE}));
    assert_eq!(daemon.call(json!({"action": "ping"}))["type"], "ok");
    daemon.send_line(r#"{"request_id": 12, "action": "version"}"#);
    let reply = daemon.read_reply().unwrap();
    assert_eq!(
        reply["request_id"], "12",
        "numeric ids come back as strings"
    );
}

#[test]
fn end_of_input_exits_cleanly() {
    let world = World::new();
    let mut daemon = world.spawn();
    daemon.call(json!({"action": "ping"}));
    daemon.close_stdin();
    let (status, stderr) = daemon.wait();
    assert!(status.success(), "{status} {stderr}");
}

#[test]
fn sigterm_exits_cleanly_and_releases_the_chat_lock() {
    let world = World::new();
    let project = world.project().display().to_string();
    let mut daemon = world.spawn();
    daemon.call(json!({"action": "bb7_init", "project_root": project}));
    daemon.call(json!({"action": "init", "project_root": project}));
    let id = daemon.call(json!({"action": "chat_new"}))["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let lock = world.chats_dir().join(&id).join("lock");
    assert_eq!(
        std::fs::read_to_string(&lock).unwrap(),
        daemon.pid().to_string()
    );
    let pid = rustix::process::Pid::from_raw(daemon.pid() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let (status, stderr) = daemon.wait();
    assert!(status.success(), "{status} {stderr}");
    assert!(!lock.exists());
}
