//! Helpers of the stream tests: the fake model server set up for a world, a daemon with
//! environment variables of its own (a log level), its log, a new chat, and a send started up
//! to its first chunk.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use ybs_testkit::{FakeLlm, Model, Script, Turn};

use super::{Daemon, World};

impl World {
    /// Starts the fake OpenRouter playing `turns` (its one model `test/model` has a
    /// 200,000-token window) and configures the world for it, with `extra` config keys.
    pub fn serve(&self, turns: Vec<Turn>, extra: Value) -> FakeLlm {
        let server =
            FakeLlm::start(Script::new(turns).with_models([Model::new("test/model", 200_000)]))
                .unwrap();
        self.configure(&server.base_url(), "test/model", extra);
        server
    }

    /// [`open_project`](World::open_project) with `env` set for the daemon.
    pub fn open_project_with(&self, env: &[(&str, &str)]) -> Daemon {
        let mut daemon = Daemon::spawn_with(&self.home(), env);
        let root = self.project().display().to_string();
        if !self.project().join(".bb7").exists() {
            let reply = daemon.call(json!({"action":"bb7_init","project_root":root}));
            assert_eq!(reply["type"], "ok", "{reply}");
        }
        let reply = daemon.call(json!({"action":"init","project_root":root}));
        assert_eq!(reply["type"], "ok", "{reply}");
        daemon
    }

    /// The daemon's log file so far ("" before it exists).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.home().join(".bb7/logs/bb7.log")).unwrap_or_default()
    }

    /// Waits (without limit: the test's own timeout ends a hang) until the log holds `text`.
    pub fn wait_for_log(&self, text: &str) {
        while !self.log().contains(text) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

impl Daemon {
    /// A `bb7` with its HOME at `home` and `env` set.
    pub fn spawn_with(home: &Path, env: &[(&str, &str)]) -> Daemon {
        let mut command = Command::new(ybs_e2e::binary("bb7"));
        command
            .env("HOME", home)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("BB7_LOG_STDERR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in env {
            command.env(key, value);
        }
        Daemon::from_child(command.spawn().expect("spawn bb7"))
    }

    /// `chat_new` named `name`: its id.
    pub fn new_chat(&mut self, name: &str) -> String {
        let reply = self.call(json!({"action":"chat_new","name":name}));
        reply["id"]
            .as_str()
            .unwrap_or_else(|| panic!("chat_new: {reply}"))
            .to_owned()
    }

    /// Sends `send {content}` as `request_id` and reads up to its first chunk (no final
    /// reply before it).
    pub fn start_send(&mut self, request_id: &str, content: &str) {
        self.send_line(
            &json!({"request_id":request_id,"action":"send","content":content}).to_string(),
        );
        loop {
            let line = self.read_reply().expect("a reply");
            if line["request_id"] == request_id {
                assert_eq!(line["type"], "chunk", "{line}");
                return;
            }
        }
    }
}
