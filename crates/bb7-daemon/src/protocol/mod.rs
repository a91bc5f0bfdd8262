//! The wire protocol: one JSON request per stdin line, one JSON reply per stdout line.
//!
//! Requests are [`Request`], a serde enum tagged by `action`. [`parse_line`] never fails
//! without an answer: a line that is not JSON, not an object, names no or an unknown action, or
//! lacks a field yields the text of the `error` reply (`Invalid JSON: ...`, `Unknown action:
//! foo`, `Missing required field: path`) together with the request id when one could be read.
//! `request_id` may be a string or a number; replies always carry it as a string.

pub mod dispatch;
pub mod error;
pub mod server;
pub mod shared;

use serde::Deserialize;
use serde_json::{Map, Value};

/// Longest accepted request line, in bytes (1 MiB).
pub const MAX_LINE: usize = 1024 * 1024;

/// The error for a line over [`MAX_LINE`].
pub const TOO_LARGE: &str =
    "Request too large (max 1MB). Reduce context size or split the request.";

/// Every action name the daemon knows, including those of the sending half.
pub const ACTIONS: &[&str] = &[
    "bb7_init",
    "init",
    "chat_new",
    "chat_new_with_context",
    "chat_list",
    "chat_select",
    "chat_get",
    "chat_delete",
    "chat_rename",
    "chat_move",
    "chat_active",
    "chat_force_unlock",
    "search_chats",
    "chat_edit",
    "fork_chat",
    "message_delete",
    "save_draft",
    "save_chat_settings",
    "add_system_message",
    "context_add",
    "context_add_section",
    "context_update",
    "context_remove",
    "context_remove_section",
    "context_list",
    "context_set_readonly",
    "sync_context",
    "get_context_file",
    "get_output_file",
    "get_diff_paths",
    "get_file_statuses",
    "apply_file",
    "apply_file_as",
    "output_delete",
    "diff_local_done",
    "ping",
    "version",
    "shutdown",
    "prepare_instructions",
    "get_customization_info",
    "send",
    "cancel",
    "generate_title",
    "estimate_tokens",
    "estimate_text_tokens",
    "get_models",
    "get_balance",
];

/// A request, by action. Fields the client may leave out default to empty; handlers treat an
/// empty required string as missing, as the first bb7 did.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Request {
    Bb7Init {
        project_root: String,
    },
    Init {
        #[serde(default)]
        project_root: String,
    },
    ChatNew {
        #[serde(default)]
        name: String,
        #[serde(default)]
        model: Option<String>,
        #[serde(default)]
        global: bool,
    },
    ChatNewWithContext {
        source_chat_id: String,
        #[serde(default)]
        global: bool,
    },
    ChatList {
        #[serde(default)]
        global: bool,
    },
    ChatSelect {
        id: String,
        #[serde(default)]
        global: bool,
    },
    ChatGet,
    ChatDelete {
        id: String,
        #[serde(default)]
        global: bool,
    },
    ChatRename {
        id: String,
        name: String,
        #[serde(default)]
        global: bool,
    },
    ChatMove {
        #[serde(default)]
        id: String,
        #[serde(default)]
        to: String,
    },
    ChatActive,
    ChatForceUnlock {
        id: String,
        #[serde(default)]
        global: bool,
    },
    SearchChats {
        #[serde(default)]
        query: String,
        #[serde(default)]
        global: bool,
    },
    ChatEdit {
        #[serde(default)]
        chat_id: String,
        message_index: i64,
        #[serde(default)]
        content: String,
    },
    ForkChat {
        chat_id: String,
        fork_message_index: i64,
        #[serde(default)]
        global: bool,
    },
    /// Ours: removes the user message at `index` and the replies that follow it.
    MessageDelete {
        #[serde(default)]
        chat_id: String,
        index: i64,
    },
    SaveDraft {
        #[serde(default)]
        draft: String,
    },
    SaveChatSettings {
        #[serde(default)]
        model: Option<String>,
        #[serde(default)]
        reasoning_effort: Option<String>,
    },
    AddSystemMessage {
        #[serde(default)]
        content: Option<String>,
        /// The first bb7 client sends the text as `message`.
        #[serde(default)]
        message: Option<String>,
    },
    ContextAdd {
        path: String,
        #[serde(default)]
        content: String,
        #[serde(default)]
        readonly: bool,
    },
    ContextAddSection {
        path: String,
        #[serde(default)]
        content: String,
        start_line: i64,
        end_line: i64,
    },
    ContextUpdate {
        path: String,
        #[serde(default)]
        content: String,
    },
    ContextRemove {
        path: String,
    },
    ContextRemoveSection {
        path: String,
        start_line: i64,
        end_line: i64,
    },
    ContextList,
    ContextSetReadonly {
        path: String,
        readonly: bool,
    },
    SyncContext {
        #[serde(default)]
        path: Option<String>,
    },
    GetContextFile {
        path: String,
    },
    GetOutputFile {
        path: String,
    },
    GetDiffPaths {
        path: String,
    },
    GetFileStatuses,
    ApplyFile {
        path: String,
    },
    ApplyFileAs {
        path: String,
        destination: String,
    },
    OutputDelete {
        path: String,
    },
    DiffLocalDone {
        path: String,
    },
    Ping,
    Version,
    Shutdown,
    PrepareInstructions {
        level: String,
    },
    GetCustomizationInfo,
    /// The model-calling half, served by [`crate::send`] and [`crate::send::calls`].
    Send {
        #[serde(flatten)]
        args: Map<String, Value>,
    },
    Cancel {
        #[serde(flatten)]
        args: Map<String, Value>,
    },
    GenerateTitle {
        #[serde(flatten)]
        args: Map<String, Value>,
    },
    EstimateTokens {
        #[serde(flatten)]
        args: Map<String, Value>,
    },
    EstimateTextTokens {
        #[serde(flatten)]
        args: Map<String, Value>,
    },
    GetModels {
        #[serde(flatten)]
        args: Map<String, Value>,
    },
    GetBalance {
        #[serde(flatten)]
        args: Map<String, Value>,
    },
}

impl Request {
    /// The action name.
    pub fn action(&self) -> &'static str {
        match self {
            Request::Bb7Init { .. } => "bb7_init",
            Request::Init { .. } => "init",
            Request::ChatNew { .. } => "chat_new",
            Request::ChatNewWithContext { .. } => "chat_new_with_context",
            Request::ChatList { .. } => "chat_list",
            Request::ChatSelect { .. } => "chat_select",
            Request::ChatGet => "chat_get",
            Request::ChatDelete { .. } => "chat_delete",
            Request::ChatRename { .. } => "chat_rename",
            Request::ChatMove { .. } => "chat_move",
            Request::ChatActive => "chat_active",
            Request::ChatForceUnlock { .. } => "chat_force_unlock",
            Request::SearchChats { .. } => "search_chats",
            Request::ChatEdit { .. } => "chat_edit",
            Request::ForkChat { .. } => "fork_chat",
            Request::MessageDelete { .. } => "message_delete",
            Request::SaveDraft { .. } => "save_draft",
            Request::SaveChatSettings { .. } => "save_chat_settings",
            Request::AddSystemMessage { .. } => "add_system_message",
            Request::ContextAdd { .. } => "context_add",
            Request::ContextAddSection { .. } => "context_add_section",
            Request::ContextUpdate { .. } => "context_update",
            Request::ContextRemove { .. } => "context_remove",
            Request::ContextRemoveSection { .. } => "context_remove_section",
            Request::ContextList => "context_list",
            Request::ContextSetReadonly { .. } => "context_set_readonly",
            Request::SyncContext { .. } => "sync_context",
            Request::GetContextFile { .. } => "get_context_file",
            Request::GetOutputFile { .. } => "get_output_file",
            Request::GetDiffPaths { .. } => "get_diff_paths",
            Request::GetFileStatuses => "get_file_statuses",
            Request::ApplyFile { .. } => "apply_file",
            Request::ApplyFileAs { .. } => "apply_file_as",
            Request::OutputDelete { .. } => "output_delete",
            Request::DiffLocalDone { .. } => "diff_local_done",
            Request::Ping => "ping",
            Request::Version => "version",
            Request::Shutdown => "shutdown",
            Request::PrepareInstructions { .. } => "prepare_instructions",
            Request::GetCustomizationInfo => "get_customization_info",
            Request::Send { .. } => "send",
            Request::Cancel { .. } => "cancel",
            Request::GenerateTitle { .. } => "generate_title",
            Request::EstimateTokens { .. } => "estimate_tokens",
            Request::EstimateTextTokens { .. } => "estimate_text_tokens",
            Request::GetModels { .. } => "get_models",
            Request::GetBalance { .. } => "get_balance",
        }
    }
}

/// A line that could not be turned into a [`Request`]: the error text and the request id
/// when it could be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    /// The request id, if the line had one.
    pub request_id: Option<String>,
    /// The `message` of the error reply.
    pub message: String,
}

/// Parses one request line.
pub fn parse_line(line: &str) -> Result<(Option<String>, Request), Rejected> {
    let reject = |request_id: Option<String>, message: String| Rejected {
        request_id,
        message,
    };
    let value: Value =
        serde_json::from_str(line).map_err(|err| reject(None, format!("Invalid JSON: {err}")))?;
    let Value::Object(object) = value else {
        return Err(reject(
            None,
            "Invalid request: expected a JSON object".into(),
        ));
    };
    let request_id = object.get("request_id").and_then(request_id_text);
    let action = match object.get("action") {
        None | Some(Value::Null) => {
            return Err(reject(request_id, "Missing required field: action".into()));
        }
        Some(Value::String(action)) if action.is_empty() => {
            return Err(reject(request_id, "Missing required field: action".into()));
        }
        Some(Value::String(action)) => action.clone(),
        Some(other) => return Err(reject(request_id, format!("Unknown action: {other}"))),
    };
    if !ACTIONS.contains(&action.as_str()) {
        return Err(reject(request_id, format!("Unknown action: {action}")));
    }
    match Request::deserialize(Value::Object(object)) {
        Ok(request) => Ok((request_id, request)),
        Err(err) => Err(reject(request_id, field_error(&err.to_string()))),
    }
}

/// Rewrites serde's "missing field `x`" as the protocol's "Missing required field: x".
fn field_error(serde_message: &str) -> String {
    if let Some(rest) = serde_message.strip_prefix("missing field `") {
        if let Some(field) = rest.split('`').next() {
            return format!("Missing required field: {field}");
        }
    }
    format!("Invalid request: {serde_message}")
}

/// A request id as text: strings as they are, integral numbers without a fraction.
pub fn request_id_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(match (number.as_i64(), number.as_u64(), number.as_f64()) {
            (Some(int), _, _) => int.to_string(),
            (_, Some(int), _) => int.to_string(),
            (_, _, Some(float)) if float.fract() == 0.0 && float.abs() < 1e15 => {
                format!("{float:.0}")
            }
            _ => number.to_string(),
        }),
        _ => None,
    }
}

/// A reply line: a JSON object with a `type`, plus `request_id` when answering a request.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply(pub Map<String, Value>);

impl Reply {
    /// A reply of the given type.
    pub fn typed(kind: &str) -> Reply {
        let mut map = Map::new();
        map.insert("type".into(), kind.into());
        Reply(map)
    }

    /// `{"type": "ok"}`.
    pub fn ok() -> Reply {
        Reply::typed("ok")
    }

    /// `{"type": "error", "message": ...}`.
    pub fn error(message: impl Into<String>) -> Reply {
        Reply::typed("error").with("message", message.into())
    }

    /// Adds a field.
    pub fn with(mut self, key: &str, value: impl serde::Serialize) -> Reply {
        let value = serde_json::to_value(value).unwrap_or(Value::Null);
        self.0.insert(key.into(), value);
        self
    }

    /// Sets the request id (nothing when `None`).
    pub fn for_request(mut self, request_id: Option<&str>) -> Reply {
        if let Some(id) = request_id {
            self.0.insert("request_id".into(), id.into());
        }
        self
    }

    /// The `type` field.
    pub fn kind(&self) -> &str {
        self.0.get("type").and_then(Value::as_str).unwrap_or("")
    }

    /// The reply as one JSON line (without the newline).
    pub fn to_line(&self) -> String {
        Value::Object(self.0.clone()).to_string()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn rejected(line: &str) -> (Option<String>, String) {
        let err = parse_line(line).unwrap_err();
        (err.request_id, err.message)
    }

    #[test]
    fn request_ids_become_strings() {
        let (id, request) = parse_line(r#"{"request_id": 7, "action": "ping"}"#).unwrap();
        assert_eq!((id.as_deref(), request), (Some("7"), Request::Ping));
        let (id, _) = parse_line(r#"{"request_id": 7.0, "action": "ping"}"#).unwrap();
        assert_eq!(id.as_deref(), Some("7"));
        let (id, _) = parse_line(r#"{"request_id": "a-1", "action": "ping"}"#).unwrap();
        assert_eq!(id.as_deref(), Some("a-1"));
    }

    #[test]
    fn errors_name_the_problem() {
        assert_eq!(
            rejected(r#"{"request_id":"1","action":"foo"}"#),
            (Some("1".into()), "Unknown action: foo".into())
        );
        assert_eq!(
            rejected(r#"{"request_id":"2","action":"context_add"}"#),
            (Some("2".into()), "Missing required field: path".into())
        );
        assert_eq!(
            rejected(r#"{"request_id":3}"#),
            (Some("3".into()), "Missing required field: action".into())
        );
        assert_eq!(rejected("[1]").1, "Invalid request: expected a JSON object");
        assert!(rejected("{").1.starts_with("Invalid JSON: "));
        assert!(
            rejected(r#"{"action":"context_set_readonly","path":"a","readonly":"x"}"#)
                .1
                .starts_with("Invalid request: invalid type: string \"x\", expected a boolean")
        );
    }

    #[test]
    fn every_action_name_parses() {
        let minimal = serde_json::json!({
            "project_root": "/p", "source_chat_id": "a", "id": "a", "name": "n", "to": "global",
            "message_index": 0, "chat_id": "a", "fork_message_index": 0, "path": "p",
            "start_line": 1, "end_line": 2, "readonly": true, "destination": "d", "level": "project",
            "index": 0
        });
        for action in ACTIONS {
            let mut object = minimal.as_object().unwrap().clone();
            object.insert("action".into(), (*action).into());
            let line = Value::Object(object).to_string();
            let (_, request) = parse_line(&line).unwrap_or_else(|err| panic!("{action}: {err:?}"));
            assert_eq!(request.action(), *action);
        }
    }
}
