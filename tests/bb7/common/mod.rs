//! Helpers shared by the integration tests: a `bb7` process with its HOME in a temporary
//! directory, request/reply plumbing and redaction for snapshots.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

pub mod fixture;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, ExitStatus};

use serde_json::{Value, json};

mod streams;

/// A temporary world: a home directory and a project directory.
pub struct World {
    pub dir: tempfile::TempDir,
}

impl World {
    pub fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        std::fs::create_dir_all(dir.path().join("project")).unwrap();
        World { dir }
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    pub fn project(&self) -> PathBuf {
        self.dir.path().join("project").canonicalize().unwrap()
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    pub fn spawn(&self) -> Daemon {
        Daemon::spawn(&self.home())
    }

    pub fn write(&self, relative: &str, content: &str) {
        let path = self.project().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.project().join(relative)).unwrap()
    }

    pub fn chats_dir(&self) -> PathBuf {
        self.project().join(".bb7").join("chats")
    }

    /// Writes `~/.config/bb7/config.json`: the fake OpenRouter at `server_base` (its base
    /// URL), `model` as the default model and an API key, with `extra` keys over them.
    pub fn configure(&self, server_base: &str, model: &str, extra: Value) {
        let mut config = json!({
            "api_key": "sk-test",
            "base_url": format!("{server_base}/api/v1"),
            "default_model": model,
        });
        for (key, value) in extra.as_object().unwrap() {
            config[key] = value.clone();
        }
        let dir = self.home().join(".config/bb7");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    }

    /// A daemon on the project: `bb7_init` when it has no `.bb7/` yet, then `init`, both
    /// answered `ok`.
    pub fn open_project(&self) -> Daemon {
        let mut daemon = self.spawn();
        let root = self.project().display().to_string();
        if !self.project().join(".bb7").exists() {
            let reply = daemon.call(json!({"action":"bb7_init","project_root":root}));
            assert_eq!(reply["type"], "ok", "{reply}");
        }
        let reply = daemon.call(json!({"action":"init","project_root":root}));
        assert_eq!(reply["type"], "ok", "{reply}");
        daemon
    }
}

/// A running `bb7`.
pub struct Daemon {
    pub child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Daemon {
    pub fn spawn(home: &Path) -> Daemon {
        Daemon::spawn_with(home, &[])
    }

    fn from_child(mut child: Child) -> Daemon {
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Daemon {
            child,
            stdin,
            stdout,
            next_id: 0,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes a raw line.
    pub fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Reads one reply line (None at end of output).
    pub fn read_reply(&mut self) -> Option<Value> {
        let mut line = String::new();
        if self.stdout.read_line(&mut line).unwrap() == 0 {
            return None;
        }
        Some(
            serde_json::from_str(&line)
                .unwrap_or_else(|err| panic!("stdout is not JSON ({err}): {line:?}")),
        )
    }

    /// Sends `request` with a fresh request id and returns the reply to it.
    pub fn call(&mut self, mut request: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id.to_string();
        request["request_id"] = json!(id);
        self.send_line(&request.to_string());
        let reply = self.read_reply().expect("a reply");
        assert_eq!(
            reply["request_id"],
            json!(id),
            "reply to {request}: {reply}"
        );
        reply
    }

    /// Sends `request` as `id` and collects every line up to its final reply (`done`,
    /// `diff_error` or `error`); the chunks and other lines before it are kept too.
    pub fn stream(&mut self, id: &str, mut request: Value) -> Vec<Value> {
        request["request_id"] = json!(id);
        self.send_line(&request.to_string());
        let mut lines = Vec::new();
        loop {
            let line = self.read_reply().expect("a reply");
            let last = line["request_id"] == json!(id)
                && matches!(line["type"].as_str(), Some("done" | "diff_error" | "error"));
            lines.push(line);
            if last {
                return lines;
            }
        }
    }

    /// `send` of `content` as `id`, collected as [`stream`](Daemon::stream) does.
    pub fn send(&mut self, id: &str, content: &str) -> Vec<Value> {
        self.stream(id, json!({"action":"send","content":content}))
    }

    /// Takes stdin, for writing from another thread.
    pub fn take_stdin(&mut self) -> ChildStdin {
        self.stdin.take().expect("stdin open")
    }

    /// Closes stdin.
    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// Waits for the process and returns its status and stderr.
    pub fn wait(mut self) -> (ExitStatus, String) {
        use std::io::Read;
        self.stdin.take();
        let mut stderr = String::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            pipe.read_to_string(&mut stderr).unwrap();
        }
        let status = self.child.wait().unwrap();
        (status, stderr)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Replaces what changes from run to run: temporary paths, chat ids, times.
pub struct Redactor {
    pub replacements: Vec<(String, String)>,
}

impl Redactor {
    pub fn new(world: &World) -> Redactor {
        Redactor {
            replacements: vec![(world.root().display().to_string(), "[tmp]".into())],
        }
    }

    /// Names a chat id.
    pub fn id(&mut self, id: &str, name: &str) {
        self.replacements.push((id.to_owned(), format!("[{name}]")));
    }

    pub fn apply(&self, value: &Value) -> Value {
        self.walk(None, value)
    }

    fn walk(&self, key: Option<&str>, value: &Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), self.walk(Some(k), v)))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.walk(key, v)).collect()),
            Value::Number(_) if matches!(key, Some("duration")) => json!("[duration]"),
            Value::String(text) => {
                if matches!(key, Some("created" | "timestamp")) && !text.is_empty() {
                    return json!("[time]");
                }
                if matches!(key, Some("name")) && text.starts_with("Chat 20") {
                    return json!("Chat [date]");
                }
                let mut text = text.clone();
                for (from, to) in &self.replacements {
                    text = text.replace(from, to);
                }
                json!(text)
            }
            other => other.clone(),
        }
    }
}

/// The bodies of the chat-completion requests `server` received, in order.
pub fn chat_requests(server: &ybs_testkit::FakeLlm) -> Vec<Value> {
    server
        .requests()
        .into_iter()
        .filter(|request| request.path.ends_with("/chat/completions"))
        .map(|request| request.body)
        .collect()
}
