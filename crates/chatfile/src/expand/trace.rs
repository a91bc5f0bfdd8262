//! The tool-call trace as chat files write it: `function_call` and `function_call_output`
//! lines of one-line JSON, read into core [`ToolCall`]s and [`ToolResult`]s.

use serde_json::{Map, Value};
use ybs_core::{ToolCall, ToolResult};

use super::error::ExpandError;
use super::message::ExpandedMessage;

fn malformed(message: &ExpandedMessage, reason: impl Into<String>) -> ExpandError {
    ExpandError::MalformedTrace {
        at: message.source.clone(),
        role: message.role.clone(),
        reason: reason.into(),
    }
}

fn json_object(message: &ExpandedMessage) -> Result<Map<String, Value>, ExpandError> {
    match serde_json::from_str::<Value>(&message.content) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(malformed(message, "expected a JSON object")),
        Err(err) => Err(malformed(message, err.to_string())),
    }
}

fn string_field<'a>(object: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|key| object.get(*key).and_then(Value::as_str))
}

/// A `function_call`: `{"name","arguments","id"}` (also the OpenAI shape with the name and
/// arguments under `function`). Arguments may be JSON or a string of JSON.
pub(super) fn tool_call(message: &ExpandedMessage) -> Result<ToolCall, ExpandError> {
    let object = json_object(message)?;
    let function = object.get("function").and_then(Value::as_object);
    let name = string_field(&object, &["name"])
        .or_else(|| function.and_then(|f| string_field(f, &["name"])))
        .ok_or_else(|| malformed(message, "missing \"name\""))?;
    let id = string_field(&object, &["id", "call_id"])
        .ok_or_else(|| malformed(message, "missing \"id\""))?;
    let arguments = object
        .get("arguments")
        .or_else(|| function.and_then(|f| f.get("arguments")));
    Ok(match arguments {
        None | Some(Value::Null) => ToolCall::new(id, name, Value::Object(Map::new())),
        Some(Value::String(raw)) => ToolCall::from_raw_arguments(id, name, raw),
        Some(value) => ToolCall::new(id, name, value.clone()),
    })
}

/// A `function_call_output`: `{"id","content"}` (`tool_call_id` and `call_id` are accepted
/// for the id; content that is not a string is kept as its JSON text).
pub(super) fn tool_result(message: &ExpandedMessage) -> Result<ToolResult, ExpandError> {
    let object = json_object(message)?;
    let call_id = string_field(&object, &["id", "tool_call_id", "call_id"])
        .ok_or_else(|| malformed(message, "missing \"id\""))?;
    let content = match object.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Null) => String::new(),
        Some(value) => value.to_string(),
        None => return Err(malformed(message, "missing \"content\"")),
    };
    Ok(ToolResult {
        call_id: call_id.to_owned(),
        name: string_field(&object, &["name"]).map(str::to_owned),
        content,
        is_error: object
            .get("is_error")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    })
}
