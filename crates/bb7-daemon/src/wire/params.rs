//! The fields of the model-calling requests (`send`, `cancel`, `generate_title`,
//! `estimate_tokens`, `estimate_text_tokens`), read as the first bb7 reads them: a field of
//! the wrong type counts as absent, so does an empty string where text is needed, and a
//! field nobody knows is ignored. The readers below are their `deserialize_with`; the other
//! requests' fields are plain serde types, where a wrongly typed field is the error
//! `Invalid request: ...`.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// The parameters of `send`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct SendParams {
    /// The user's message; required (`Missing required field: content`).
    #[serde(default, deserialize_with = "text")]
    pub content: Option<String>,
    /// The model for this send (the chat keeps it); the chat's model when absent.
    #[serde(default, deserialize_with = "text")]
    pub model: Option<String>,
    /// The reasoning effort for this send; the chat's when absent. A value the provider
    /// layer does not know sends none.
    #[serde(default, deserialize_with = "text")]
    pub reasoning_effort: Option<String>,
    /// The failed edits of an earlier reply, for the model to repair.
    #[serde(default, deserialize_with = "retry_context")]
    pub retry_context: Option<RetryContext>,
}

/// One entry of `allow_includes`: the include's path as the directive writes it, alone
/// (the consent then binds to what the include sends when the request is handled), or with
/// the `digest` `project_includes` reported for it when the user was asked (the consent binds
/// to what the user saw).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum ConsentEntry {
    /// `"NOTES.md"`.
    Name(String),
    /// `{"path": "NOTES.md", "digest": "sha256:..."}`.
    Bound {
        /// The path as the directive writes it.
        path: String,
        /// What the user allowed it to send.
        digest: String,
    },
}

/// The failed edits of an earlier response, sent back by the client with `send`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RetryContext {
    /// The `errors` of the `diff_error`.
    pub errors: Vec<String>,
    /// The `tool_calls` of the `diff_error`.
    pub tool_calls: Vec<Value>,
}

impl RetryContext {
    /// Reads `retry_context: {errors, tool_calls}`; `None` when absent or empty. Errors that
    /// are not strings are kept as their JSON text.
    pub fn from_value(value: Option<&Value>) -> Option<RetryContext> {
        let value = value?;
        let errors: Vec<String> = value
            .get("errors")
            .and_then(Value::as_array)
            .map(|errors| {
                errors
                    .iter()
                    .map(|error| match error {
                        Value::String(text) => text.clone(),
                        other => other.to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let tool_calls = value
            .get("tool_calls")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        (!errors.is_empty() || !tool_calls.is_empty())
            .then_some(RetryContext { errors, tool_calls })
    }
}

/// `texts` of `estimate_text_tokens`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Texts {
    /// Not sent.
    #[default]
    Absent,
    /// A non-empty array: its strings in order (anything else in it counts as empty text).
    List(Vec<String>),
    /// Sent, but not a non-empty array (`Missing or empty 'texts' array`).
    Invalid,
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

/// A non-empty string; anything else is absent.
pub fn text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(deserializer)? {
        Value::String(text) if !text.is_empty() => Some(text),
        _ => None,
    })
}

/// A string, empty or not; anything else is absent.
pub fn string<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(deserializer)? {
        Value::String(text) => Some(text),
        _ => None,
    })
}

/// `true` or `false`; anything else is `false`.
pub fn flag<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    Ok(matches!(
        Value::deserialize(deserializer)?,
        Value::Bool(true)
    ))
}

/// A request id (string or number, see [`request_id_text`]); anything else is absent.
pub fn request_id<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    Ok(request_id_text(&Value::deserialize(deserializer)?))
}

/// `retry_context` as [`RetryContext::from_value`] reads it.
pub fn retry_context<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<RetryContext>, D::Error> {
    Ok(RetryContext::from_value(Some(&Value::deserialize(
        deserializer,
    )?)))
}

/// `texts`: see [`Texts`].
pub fn texts<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Texts, D::Error> {
    Ok(match Value::deserialize(deserializer)? {
        Value::Array(items) if !items.is_empty() => Texts::List(
            items
                .iter()
                .map(|item| item.as_str().unwrap_or_default().to_owned())
                .collect(),
        ),
        _ => Texts::Invalid,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn send(fields: Value) -> SendParams {
        serde_json::from_value(fields).unwrap()
    }

    #[test]
    fn wrongly_typed_or_empty_fields_count_as_absent() {
        assert_eq!(
            send(
                serde_json::json!({"content": 5, "model": "", "reasoning_effort": ["x"],
                "retry_context": null, "unknown": 1})
            ),
            SendParams::default()
        );
        let params = send(serde_json::json!({"content": "hi", "model": "m",
            "retry_context": {"errors": ["e", 3]}}));
        assert_eq!(params.content.as_deref(), Some("hi"));
        assert_eq!(params.model.as_deref(), Some("m"));
        assert_eq!(
            params.retry_context.unwrap().errors,
            vec!["e".to_owned(), "3".to_owned()]
        );
    }
}
