//! The harness of the end-to-end tests: a temporary project with HOME and XDG directories of
//! its own, the in-process fake LLM, and the `ybs` binary run in it.
#![allow(dead_code)]

use std::cell::Cell;
use std::fs;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use ybs_testkit::{FakeLlm, Script, ToolCall, Turn};

/// Two tests for each replay `name(nobody: bool)`: `name::as_the_user` runs it as the user
/// who runs the tests, `name::as_nobody` as `nobody` (skipped unless that user is root).
#[macro_export]
macro_rules! both_users {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[test]
                fn as_the_user() {
                    super::$name(false);
                }

                #[test]
                fn as_nobody() {
                    super::$name(true);
                }
            }
        )*
    };
}

pub struct Project {
    pub dir: tempfile::TempDir,
    pub llm: FakeLlm,
    /// Whether ybs (and the test's git) run as [`NOBODY`]: see [`Project::run_as_nobody`].
    nobody: Cell<bool>,
}

/// The uid (and gid) of `nobody`, which attacks are replayed as when the tests run as root.
pub const NOBODY: u32 = 65534;

pub fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    fs::metadata("/proc/self").is_ok_and(|meta| meta.uid() == 0)
}

/// Gives `path` and everything below it to `nobody`.
pub fn give_to_nobody(path: &Path) {
    std::os::unix::fs::lchown(path, Some(NOBODY), Some(NOBODY)).unwrap();
    if fs::symlink_metadata(path).unwrap().is_dir() {
        for entry in fs::read_dir(path).unwrap().flatten() {
            give_to_nobody(&entry.path());
        }
    }
}

impl Project {
    pub fn new(turns: Vec<Turn>) -> Project {
        Project::with_script(Script::new(turns))
    }

    pub fn with_script(script: Script) -> Project {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["home", "data", "config", "project"] {
            fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let llm = FakeLlm::start(script).unwrap();
        let config = json!({
            "llm": {"provider": "openai-compatible", "model": "fake-model",
                    "endpoint": format!("{}/v1", llm.base_url())},
            "agent": {"max_iterations": 5, "retry_attempts": 2, "retry_backoff_base_ms": 1},
            "safety": {"sandbox_allowed_paths": ["./"]},
            "ui": {"color": false}
        });
        fs::write(dir.path().join("config/ybs.json"), config.to_string()).unwrap();
        Project {
            dir,
            llm,
            nobody: Cell::new(false),
        }
    }

    /// From now on ybs and [`Project::git`] run as `nobody`, and the scratch directory (HOME,
    /// the data and config directories, the project) is handed to it: an attack replayed as
    /// an unprivileged user. `false` when the tests do not run as root: the caller skips,
    /// since the tests then run unprivileged anyway.
    pub fn run_as_nobody(&self) -> bool {
        if !running_as_root() {
            println!("skipped: the tests already run unprivileged");
            return false;
        }
        give_to_nobody(self.dir.path());
        self.nobody.set(true);
        true
    }

    /// Whether ybs runs as `nobody` (see [`Project::run_as_nobody`]).
    pub fn as_nobody(&self) -> bool {
        self.nobody.get()
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    pub fn file(&self, relative: &str) -> PathBuf {
        self.path("project").join(relative)
    }

    pub fn write(&self, relative: &str, text: &str) {
        fs::write(self.file(relative), text).unwrap();
    }

    pub fn read(&self, relative: &str) -> String {
        fs::read_to_string(self.file(relative)).unwrap()
    }

    pub fn ybs(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// Runs ybs with `input` on its stdin (the REPL reads lines from a pipe).
    pub fn ybs_with_input(&self, args: &[&str], input: &str) -> Output {
        let mut child = self
            .command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // ybs may end (a refusal) before it reads what it was given: a closed pipe is fine.
        let written = child.stdin.take().unwrap().write_all(input.as_bytes());
        if let Err(error) = written {
            assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe, "{error}");
        }
        child.wait_with_output().unwrap()
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let config = self.path("config/ybs.json");
        let mut command = self.command_of(&ybs_e2e::binary("ybs"));
        command.arg("-c").arg(&config).args(args);
        command
    }

    /// `program` run in the project with the project's HOME, XDG directories and git
    /// identity (for a client that starts ybs itself).
    pub fn command_of(&self, program: &std::path::Path) -> Command {
        let mut command = Command::new(program);
        command
            .current_dir(self.path("project"))
            .env_clear()
            .env("HOME", self.path("home"))
            .env("XDG_DATA_HOME", self.path("data"))
            .env("XDG_CONFIG_HOME", self.path("config"))
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid");
        if self.nobody.get() {
            command.uid(NOBODY).gid(NOBODY);
        }
        command
    }

    /// The command line of ybs with this project's configuration, as a JSON array (for a
    /// client that starts ybs itself).
    pub fn ybs_command_line(&self) -> Value {
        json!([
            ybs_e2e::binary("ybs").display().to_string(),
            "-c",
            self.path("config/ybs.json").display().to_string()
        ])
    }

    pub fn git(&self, args: &[&str]) -> String {
        let mut git = Command::new("git");
        if self.nobody.get() {
            git.uid(NOBODY).gid(NOBODY);
        }
        let output = git
            .args(args)
            .current_dir(self.path("project"))
            .env("HOME", self.path("home"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "git {args:?}: {}",
            text(&output.stderr)
        );
        text(&output.stdout)
    }

    /// The chat request bodies the fake LLM received.
    pub fn bodies(&self) -> Vec<Value> {
        (self.llm.requests().into_iter())
            .filter(|request| request.path.ends_with("/chat/completions"))
            .map(|request| request.body)
            .collect()
    }
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub fn call(id: &str, name: &str, arguments: Value) -> Turn {
    Turn::default().with_tool_call(ToolCall::new(id, name, arguments))
}

/// The tool messages of a request body, as (tool_call_id, content).
pub fn tool_messages(body: &Value) -> Vec<(String, String)> {
    (body["messages"].as_array().unwrap().iter())
        .filter(|message| message["role"] == "tool")
        .map(|message| {
            (
                message["tool_call_id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                message["content"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}
impl Project {
    /// Changes the configuration file: `change` gets its JSON.
    pub fn configure(&self, change: impl FnOnce(&mut Value)) {
        let path = self.path("config/ybs.json");
        let mut value: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        change(&mut value);
        fs::write(&path, value.to_string()).unwrap();
    }
}

/// A second fake server on 127.0.0.1 playing the attacker: it answers and records every
/// request that reaches it.
pub fn attacker() -> FakeLlm {
    FakeLlm::start(Script::new([Turn::text(["pwned"])])).unwrap()
}

/// Fails when anything reached `attacker`.
pub fn assert_no_request(attacker: &FakeLlm) {
    let seen = attacker.requests();
    assert!(seen.is_empty(), "the attacker received {seen:?}");
}

impl Project {
    /// Runs ybs in the project with `key` as `OPENAI_API_KEY`, the credential an attack
    /// would steal.
    pub fn ybs_with_key(&self, key: &str, args: &[&str]) -> Output {
        self.command(args)
            .env("OPENAI_API_KEY", key)
            .output()
            .unwrap()
    }
}

/// Whether a process whose command line holds `marker` runs on this machine.
pub fn process_with(marker: &str) -> bool {
    let Ok(entries) = fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        fs::read(entry.path().join("cmdline")).is_ok_and(|line| {
            String::from_utf8_lossy(&line)
                .replace('\0', " ")
                .contains(marker)
        })
    })
}

/// Waits until no process holds `marker` (a killed process may take a moment to be reaped
/// by its parent); `false` if one still does after a generous while.
pub fn gone(marker: &str) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while process_with(marker) {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    true
}
