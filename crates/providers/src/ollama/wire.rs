//! Ollama's native chat API (`/api/chat`, `/api/tags`, `/api/show`), as far as this crate
//! writes and reads it.
//!
//! In the types read, an absent `Option` field is `None` without a `#[serde(default)]`; that
//! attribute marks only the other fields a server may leave out.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::wire::FunctionTool;

/// `POST /api/chat` body.
#[derive(Debug, Serialize)]
pub(crate) struct Request<'a> {
    pub model: &'a str,
    pub messages: Vec<WireMessage>,
    pub stream: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<FunctionTool<'a>>,
    /// `"json"` or a JSON Schema.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<Value>,
    #[serde(skip_serializing_if = "Options::is_empty")]
    pub options: Options<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_alive: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub think: Option<&'static str>,
}

#[derive(Debug, Default, Serialize)]
pub(crate) struct Options<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_ctx: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_predict: Option<u32>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub stop: &'a [String],
}

impl Options<'_> {
    fn is_empty(&self) -> bool {
        self.num_ctx.is_none()
            && self.temperature.is_none()
            && self.top_p.is_none()
            && self.seed.is_none()
            && self.num_predict.is_none()
            && self.stop.is_empty()
    }
}

#[derive(Debug, Serialize)]
pub(crate) struct WireMessage {
    pub role: &'static str,
    pub content: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<OutCall>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
}

impl WireMessage {
    pub fn new(role: &'static str, content: String) -> Self {
        WireMessage {
            role,
            content,
            thinking: None,
            images: Vec::new(),
            tool_calls: Vec::new(),
            tool_name: None,
        }
    }
}

#[derive(Debug, Serialize)]
pub(crate) struct OutCall {
    pub function: OutFunction,
}

#[derive(Debug, Serialize)]
pub(crate) struct OutFunction {
    pub name: String,
    pub arguments: Value,
}

/// One NDJSON line of a streamed reply.
#[derive(Debug, Deserialize)]
pub(crate) struct Line {
    pub message: Option<LineMessage>,
    #[serde(default)]
    pub done: bool,
    pub done_reason: Option<String>,
    pub prompt_eval_count: Option<u64>,
    pub eval_count: Option<u64>,
    pub error: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct LineMessage {
    pub content: Option<String>,
    pub thinking: Option<String>,
    pub tool_calls: Option<Vec<InCall>>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct InCall {
    pub id: Option<String>,
    pub function: InFunction,
}

#[derive(Debug, Deserialize)]
pub(crate) struct InFunction {
    pub name: String,
    #[serde(default)]
    pub arguments: Value,
}

/// `GET /api/tags`.
#[derive(Debug, Deserialize)]
pub(crate) struct Tags {
    #[serde(default)]
    pub models: Vec<TagModel>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct TagModel {
    pub name: String,
}

/// `POST /api/show`.
#[derive(Debug, Deserialize)]
pub(crate) struct Show {
    #[serde(default)]
    pub model_info: Map<String, Value>,
    pub capabilities: Option<Vec<String>>,
    /// The Modelfile's parameters, one `name value` a line (`num_ctx 8192`).
    #[serde(default)]
    pub parameters: Option<String>,
}
