//! Reading one request line: [`parse_line`] never fails without an answer. A line that is
//! not JSON, not an object, names no or an unknown action, or lacks a field yields the text
//! of the `error` reply (`Invalid JSON: ...`, `Unknown action: foo`, `Missing required
//! field: path`) together with the request id when one could be read. `request_id` may be a
//! string or a number; replies always carry it as a string.

use serde::Deserialize;
use serde_json::Value;

use crate::wire::params::request_id_text;
use crate::wire::requests::{ACTIONS, Request};

/// Longest accepted request line, in bytes (1 MiB).
pub const MAX_LINE: usize = 1024 * 1024;

/// The error for a line over [`MAX_LINE`].
pub const TOO_LARGE: &str =
    "Request too large (max 1MB). Reduce context size or split the request.";

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
        assert_eq!(
            (id.as_deref(), request),
            (
                Some("7"),
                Request::Ping(crate::wire::requests::fields::Ping {})
            )
        );
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
