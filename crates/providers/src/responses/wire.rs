//! The OpenAI Responses wire format (`POST /responses`), as far as this crate writes and
//! reads it. Input items and the streamed events' payloads are kept as JSON values where
//! they go back unchanged (reasoning items); the rest is typed.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `POST /responses` body.
#[derive(Debug, Serialize)]
pub(crate) struct Request<'a> {
    pub model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<&'a str>,
    pub input: Vec<Item>,
    pub stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_response_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<Reasoning>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<TextOptions>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_cache_key: Option<&'a str>,
}

#[derive(Debug, Serialize)]
pub(crate) struct Reasoning {
    pub effort: &'static str,
    pub summary: &'static str,
}

#[derive(Debug, Serialize)]
pub(crate) struct TextOptions {
    pub format: Value,
}

/// A tool: a function of ours, or one the API runs itself.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Tool<'a> {
    Function {
        name: &'a str,
        description: &'a str,
        parameters: &'a Value,
    },
    WebSearch,
}

/// One input item.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum Item {
    Message {
        role: &'static str,
        content: Content,
    },
    Typed(TypedItem),
    /// An item of an earlier reply sent back as it came (reasoning).
    Raw(Value),
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum Content {
    Text(String),
    Parts(Vec<ContentPart>),
}

#[derive(Debug, Serialize)]
#[serde(tag = "type")]
pub(crate) enum ContentPart {
    #[serde(rename = "input_text")]
    Text { text: String },
    #[serde(rename = "input_image")]
    Image { image_url: String },
    #[serde(rename = "input_file")]
    File { filename: String, file_data: String },
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum TypedItem {
    FunctionCall {
        call_id: String,
        name: String,
        arguments: String,
    },
    FunctionCallOutput {
        call_id: String,
        output: String,
    },
}

/// One streamed event: its `type` and the fields this crate reads.
#[derive(Debug, Deserialize)]
pub(crate) struct Event {
    #[serde(rename = "type")]
    pub kind: String,
    pub response: Option<Response>,
    pub item: Option<Value>,
    pub output_index: Option<usize>,
    /// The item an event is about (llama.cpp gives this but no `output_index`).
    pub item_id: Option<String>,
    pub delta: Option<String>,
    pub message: Option<String>,
    pub code: Option<Value>,
    pub error: Option<Value>,
}

/// The response object of `response.created` / `.completed` / `.incomplete` / `.failed`.
#[derive(Debug, Deserialize)]
pub(crate) struct Response {
    pub id: Option<String>,
    pub usage: Option<WireUsage>,
    pub error: Option<Value>,
    pub incomplete_details: Option<Value>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireUsage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub total_tokens: Option<u64>,
    pub input_tokens_details: Option<InputDetails>,
    pub output_tokens_details: Option<OutputDetails>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct InputDetails {
    pub cached_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct OutputDetails {
    pub reasoning_tokens: Option<u64>,
}
