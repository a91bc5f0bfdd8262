//! Wire pieces that more than one format writes or reads the same way.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use ybs_core::{CacheTtl, ChatRequest, ErrorKind, LlmError, ToolCall, ToolSpec};

use crate::config::ProviderKind;
use crate::error::unexpected;

/// Anthropic's cache breakpoint, `{"type": "ephemeral"}` with `"ttl": "1h"` for the longer
/// cache; OpenRouter takes the same object on content parts for Anthropic models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct CacheControl {
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl: Option<&'static str>,
}

impl CacheControl {
    pub(crate) fn new(ttl: CacheTtl) -> Self {
        CacheControl {
            kind: "ephemeral",
            ttl: match ttl {
                CacheTtl::FiveMinutes => None,
                CacheTtl::OneHour => Some("1h"),
            },
        }
    }
}

/// The model `request` names, else the provider's `default`.
pub(crate) fn model_for<'a>(request: &'a ChatRequest, default: &'a str) -> &'a str {
    if request.model.is_empty() {
        default
    } else {
        &request.model
    }
}

/// An encoded request body as JSON (what `Provider::request_body` shows).
pub(crate) fn json_value(body: impl Serialize) -> Result<Value, LlmError> {
    serde_json::to_value(body)
        .map_err(|error| LlmError::new(ErrorKind::BadRequest, error.to_string()))
}

/// An encoded request body as the bytes sent.
pub(crate) fn json_bytes(body: impl Serialize) -> Result<Vec<u8>, LlmError> {
    serde_json::to_vec(&body)
        .map_err(|error| LlmError::new(ErrorKind::BadRequest, error.to_string()))
}

/// An encoded request body as JSON with the request's pass-through fields
/// ([`ChatRequest::extra`]) added; a field the encoder wrote is never overridden by one.
pub(crate) fn with_extra(body: impl Serialize, request: &ChatRequest) -> Result<Value, LlmError> {
    let mut value = json_value(body)?;
    if let Value::Object(fields) = &mut value {
        for (key, extra) in &request.extra {
            fields.entry(key.clone()).or_insert_with(|| extra.clone());
        }
    }
    Ok(value)
}

/// [`with_extra`] as the bytes sent.
pub(crate) fn extra_bytes(
    body: impl Serialize,
    request: &ChatRequest,
) -> Result<Vec<u8>, LlmError> {
    json_bytes(with_extra(body, request)?)
}

/// A JSON answer (model list, credits...) read as `T`; `what` names it in the error.
pub(crate) fn from_answer<T: DeserializeOwned>(
    kind: ProviderKind,
    what: &str,
    value: &Value,
) -> Result<T, LlmError> {
    T::deserialize(value)
        .map_err(|error| unexpected(kind, what, &error.to_string(), &value.to_string()))
}

/// A tool in OpenAI's function format, which Ollama takes too.
#[derive(Debug, Serialize)]
pub(crate) struct FunctionTool<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: Function<'a>,
    /// OpenRouter passes it on to Anthropic models: the tools end a cached prefix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

#[derive(Debug, Serialize)]
pub(crate) struct Function<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub parameters: &'a Value,
}

/// The request's tools in the function format.
pub(crate) fn function_tools(tools: &[ToolSpec]) -> Vec<FunctionTool<'_>> {
    tools
        .iter()
        .map(|tool| FunctionTool {
            kind: "function",
            function: Function {
                name: &tool.name,
                description: &tool.description,
                parameters: &tool.parameters,
            },
            cache_control: None,
        })
        .collect()
}

/// A call's arguments for formats that take them as an object (Anthropic, Ollama): `{}` when
/// the model wrote something else or JSON that did not parse.
pub(crate) fn arguments_object(call: &ToolCall) -> Value {
    match &call.arguments {
        Value::Object(_) if call.arguments_error.is_none() => call.arguments.clone(),
        _ => json!({}),
    }
}

/// `text` as one path segment or query value: everything but unreserved characters and `@`
/// escaped, so a model or deployment name can never change the rest of the URL (`../`, `?`,
/// `#`); `@` stays, as Vertex AI's model versions are written (`claude-sonnet-4-5@20250929`).
pub(crate) fn path_segment(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'@' => {
                char::from(byte).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}
