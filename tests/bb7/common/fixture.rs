//! The world the send tests start from: the fake OpenRouter serving [`MODEL`], a project
//! with `src/a.rs` (writable) and `docs/readme.md` (read-only), both in a new chat's context.

use serde_json::{Value, json};
use ybs_testkit::{FakeLlm, Model, Script, ToolCall};

use super::{Daemon, World};

/// The model the fake server lists and the config names.
pub const MODEL: &str = "test/model";

/// A running daemon on a project with a chat, and the fake server it talks to.
pub struct Setup {
    pub world: World,
    pub server: FakeLlm,
    pub daemon: Daemon,
    pub chat: String,
}

impl Setup {
    /// Starts the fake server with `script` (listing [`MODEL`] with a 200k window), writes
    /// the config (with the `extra` keys), the project's `src/a.rs` (holding `a_rs`) and
    /// `docs/readme.md`, and opens a chat `t` with both files in context.
    pub fn start(script: Script, a_rs: &str, extra: Value) -> Setup {
        let world = World::new();
        let server = FakeLlm::start(script.with_models([Model::new(MODEL, 200_000)])).unwrap();
        world.configure(&server.base_url(), MODEL, extra);
        world.write("src/a.rs", a_rs);
        world.write("docs/readme.md", "# Readme\n");
        let mut daemon = world.open_project();
        let chat = daemon.call(json!({"action":"chat_new","name":"t"}))["id"]
            .as_str()
            .unwrap()
            .to_owned();
        for (path, readonly) in [("src/a.rs", false), ("docs/readme.md", true)] {
            let content = world.read(path);
            let reply = daemon.call(
                json!({"action":"context_add","path":path,"content":content,"readonly":readonly}),
            );
            assert_eq!(reply["type"], "ok", "{reply}");
        }
        Setup {
            world,
            server,
            daemon,
            chat,
        }
    }

    /// Whether the chat has an output file at `path`.
    pub fn has_output(&self, path: &str) -> bool {
        has_output(&self.world, &self.chat, path)
    }
}

/// Whether `chat` has an output file at `path`.
pub fn has_output(world: &World, chat: &str, path: &str) -> bool {
    world
        .chats_dir()
        .join(chat)
        .join("output")
        .join(path)
        .exists()
}

/// A `write_file` call.
pub fn write_call(path: &str, content: &str) -> ToolCall {
    ToolCall::new("w", "write_file", json!({"path":path,"content":content}))
}

/// The text of the last message of `role` in a chat-completions request body.
pub fn message_text(body: &Value, role: &str) -> String {
    let messages = body["messages"].as_array().unwrap();
    let message = messages.iter().rev().find(|m| m["role"] == role).unwrap();
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        other => panic!("unexpected content {other}"),
    }
}
