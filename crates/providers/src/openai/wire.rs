//! The OpenAI chat-completions wire format (with OpenRouter's and DeepSeek's additions), as
//! far as this crate writes and reads it.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ybs_core::ProviderRouting;

use crate::wire::FunctionTool;

/// `POST /chat/completions` body.
#[derive(Debug, Serialize)]
pub(crate) struct Request<'a> {
    pub model: &'a str,
    pub messages: Vec<WireMessage>,
    pub stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<FunctionTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<&'static str>,
    /// OpenRouter's unified reasoning control.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<Reasoning>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub stop: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_format: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_cache_key: Option<&'a str>,
    /// OpenRouter's provider preferences.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<ProviderRouting>,
}

#[derive(Debug, Serialize)]
pub(crate) struct StreamOptions {
    pub include_usage: bool,
}

#[derive(Debug, Serialize)]
pub(crate) struct Reasoning {
    pub effort: &'static str,
}

/// One message of the conversation.
#[derive(Debug, Serialize)]
pub(crate) struct WireMessage {
    pub role: &'static str,
    /// Text, content parts, or null (an assistant message with only tool calls).
    pub content: Option<Content>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<WireToolCall>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// DeepSeek and most local servers: the reasoning of an earlier turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// OpenRouter: reasoning text of an earlier turn (when it came without details).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// OpenRouter: the reasoning items of an earlier turn, unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_details: Option<Vec<Value>>,
}

impl WireMessage {
    pub fn new(role: &'static str, content: Option<Content>) -> Self {
        WireMessage {
            role,
            content,
            tool_calls: Vec::new(),
            tool_call_id: None,
            reasoning_content: None,
            reasoning: None,
            reasoning_details: None,
        }
    }
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum Content {
    Text(String),
    Parts(Vec<ContentPart>),
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ContentPart {
    Text { text: String },
    ImageUrl { image_url: ImageUrl },
}

#[derive(Debug, Serialize)]
pub(crate) struct ImageUrl {
    pub url: String,
}

#[derive(Debug, Serialize)]
pub(crate) struct WireToolCall {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: CallFunction,
}

#[derive(Debug, Serialize)]
pub(crate) struct CallFunction {
    pub name: String,
    pub arguments: String,
}

/// One streamed `chat.completion.chunk` (or an error object in its place).
#[derive(Debug, Deserialize)]
pub(crate) struct Chunk {
    #[serde(default)]
    pub choices: Vec<Choice>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
    #[serde(default)]
    pub error: Option<Value>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Choice {
    #[serde(default)]
    pub index: u32,
    #[serde(default)]
    pub delta: Option<Delta>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct Delta {
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub reasoning: Option<String>,
    #[serde(default)]
    pub reasoning_content: Option<String>,
    #[serde(default)]
    pub reasoning_details: Option<Vec<Value>>,
    #[serde(default)]
    pub tool_calls: Option<Vec<ToolCallDelta>>,
    #[serde(default)]
    pub refusal: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ToolCallDelta {
    #[serde(default)]
    pub index: Option<usize>,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub function: Option<FunctionDelta>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct FunctionDelta {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub arguments: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireUsage {
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    #[serde(default)]
    pub completion_tokens: Option<u64>,
    #[serde(default)]
    pub total_tokens: Option<u64>,
    #[serde(default)]
    pub prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    pub completion_tokens_details: Option<CompletionDetails>,
    /// OpenRouter: what the request cost, in credits.
    #[serde(default)]
    pub cost: Option<f64>,
    /// DeepSeek: prompt tokens served from its cache.
    #[serde(default)]
    pub prompt_cache_hit_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct PromptDetails {
    #[serde(default)]
    pub cached_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct CompletionDetails {
    #[serde(default)]
    pub reasoning_tokens: Option<u64>,
}

/// `GET /models` (OpenAI, OpenRouter, vLLM, LM Studio...).
#[derive(Debug, Deserialize)]
pub(crate) struct ModelList {
    #[serde(default)]
    pub data: Vec<WireModel>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireModel {
    pub id: String,
    #[serde(default)]
    pub name: Option<String>,
    /// OpenRouter.
    #[serde(default)]
    pub context_length: Option<u64>,
    /// vLLM.
    #[serde(default)]
    pub max_model_len: Option<u64>,
    #[serde(default)]
    pub pricing: Option<WirePricing>,
    #[serde(default)]
    pub supported_parameters: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WirePricing {
    #[serde(default)]
    pub prompt: Option<Value>,
    #[serde(default)]
    pub completion: Option<Value>,
}

/// OpenRouter `GET /credits`.
#[derive(Debug, Deserialize)]
pub(crate) struct Credits {
    pub data: CreditsData,
}

#[derive(Debug, Deserialize)]
pub(crate) struct CreditsData {
    pub total_credits: f64,
    pub total_usage: f64,
}
