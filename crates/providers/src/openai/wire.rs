//! The OpenAI chat-completions wire format (with OpenRouter's and DeepSeek's additions), as
//! far as this crate writes and reads it.
//!
//! In the types read, an absent `Option` field is `None` without a `#[serde(default)]`; that
//! attribute marks only the other fields a server may leave out.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::wire::CacheControl;
use ybs_core::ProviderRouting;

use crate::wire::FunctionTool;

/// `POST /chat/completions` body.
#[derive(Debug, Serialize)]
pub(crate) struct Request<'a> {
    pub model: std::borrow::Cow<'a, str>,
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
    pub top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
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
    Text {
        text: String,
        /// OpenRouter, for Anthropic models: a cache breakpoint after this part.
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ImageUrl {
        image_url: ImageUrl,
    },
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

/// A whole `chat.completion` (a request with `"stream": false`).
#[derive(Debug, Deserialize)]
pub(crate) struct Completion {
    #[serde(default)]
    pub choices: Vec<CompletionChoice>,
    pub usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct CompletionChoice {
    pub message: Option<Delta>,
    pub finish_reason: Option<String>,
}

/// One streamed `chat.completion.chunk` (or an error object in its place).
#[derive(Debug, Deserialize)]
pub(crate) struct Chunk {
    #[serde(default)]
    pub choices: Vec<Choice>,
    pub usage: Option<WireUsage>,
    pub error: Option<Value>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Choice {
    #[serde(default)]
    pub index: u32,
    pub delta: Option<Delta>,
    pub finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct Delta {
    pub content: Option<String>,
    pub reasoning: Option<String>,
    pub reasoning_content: Option<String>,
    pub reasoning_details: Option<Vec<Value>>,
    pub tool_calls: Option<Vec<ToolCallDelta>>,
    pub refusal: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ToolCallDelta {
    pub index: Option<usize>,
    pub id: Option<String>,
    pub function: Option<FunctionDelta>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct FunctionDelta {
    pub name: Option<String>,
    pub arguments: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireUsage {
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub total_tokens: Option<u64>,
    pub prompt_tokens_details: Option<PromptDetails>,
    pub completion_tokens_details: Option<CompletionDetails>,
    /// OpenRouter: what the request cost, in credits.
    pub cost: Option<f64>,
    /// DeepSeek: prompt tokens served from its cache.
    pub prompt_cache_hit_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct PromptDetails {
    pub cached_tokens: Option<u64>,
    /// OpenRouter: prompt tokens written to the cache (Anthropic models).
    pub cache_write_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct CompletionDetails {
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
    pub name: Option<String>,
    /// OpenRouter.
    pub context_length: Option<u64>,
    /// vLLM.
    pub max_model_len: Option<u64>,
    /// llama.cpp: `n_ctx`, the window it was started with.
    pub meta: Option<ModelMeta>,
    pub pricing: Option<WirePricing>,
    pub supported_parameters: Option<Vec<String>>,
    /// OpenRouter.
    pub top_provider: Option<TopProvider>,
    /// OpenRouter and OpenAI (Unix seconds).
    pub created: Option<Value>,
    /// OpenRouter.
    pub description: Option<String>,
    #[serde(default)]
    pub expiration_date: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ModelMeta {
    pub n_ctx: Option<u64>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct TopProvider {
    pub max_completion_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WirePricing {
    pub prompt: Option<Value>,
    pub completion: Option<Value>,
    pub input_cache_read: Option<Value>,
    pub input_cache_write: Option<Value>,
    pub internal_reasoning: Option<Value>,
    pub discount: Option<Value>,
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
