use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cache::CacheBreakpoints;
use crate::message::Message;
use crate::tool::{ToolChoice, ToolSpec};

/// A provider-neutral chat request; each provider adapter encodes it in its own wire format.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The model id, as the provider names it.
    pub model: String,
    /// The system prompt, sent the way the provider wants it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The conversation.
    pub messages: Vec<Message>,
    /// Tools the model may call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
    /// Whether and which tool the model must call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Nucleus sampling: sample only from the tokens that make up this much probability.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    /// A seed for repeatable sampling (OpenAI-compatible servers and Ollama; Anthropic has
    /// none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The most tokens the reply may have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// How hard a reasoning model should think.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Sequences that end the reply.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
    /// The form of the reply (text by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<ResponseFormat>,
    /// A key that lets the provider reuse a cached prompt prefix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache_key: Option<String>,
    /// Where to ask for prompt-cache breakpoints, for providers that cache only on request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheBreakpoints>,
    /// Which upstream providers a router (OpenRouter) may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing: Option<ProviderRouting>,
    /// The stored reply this request continues (OpenAI Responses `previous_response_id`):
    /// the provider already holds everything up to it, so `messages` are only what follows.
    /// Providers without stored replies ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_response_id: Option<String>,
    /// Whether the provider should store the reply for a later `previous_response_id`
    /// (OpenAI Responses `store`); `None` leaves the provider's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<bool>,
    /// Offer the provider's hosted web search where it has one: OpenAI Responses' `web_search`
    /// tool, Anthropic's `web_search_20250305` server tool, OpenRouter's `:online` models.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub web_search: bool,
    /// Further top-level fields of the request body, passed through unchanged (a chat
    /// file's `option:` lines); a field the encoder writes itself is not overridden.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra: serde_json::Map<String, Value>,
}

impl ChatRequest {
    /// A request for `model` with `messages` and nothing else set.
    pub fn new(model: impl Into<String>, messages: Vec<Message>) -> Self {
        ChatRequest {
            model: model.into(),
            messages,
            ..ChatRequest::default()
        }
    }

    /// Sets the system prompt.
    pub fn with_system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
        self
    }

    /// Sets the tools.
    pub fn with_tools(mut self, tools: Vec<ToolSpec>) -> Self {
        self.tools = tools;
        self
    }
}

/// How hard a reasoning model should think.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffort {
    /// As little as the model allows.
    Minimal,
    /// A little.
    Low,
    /// The usual default.
    Medium,
    /// A lot.
    High,
}

impl ReasoningEffort {
    /// The lowercase name used by the APIs.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningEffort::Minimal => "minimal",
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
        }
    }
}

impl fmt::Display for ReasoningEffort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ReasoningEffort {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "minimal" => Ok(ReasoningEffort::Minimal),
            "low" => Ok(ReasoningEffort::Low),
            "medium" => Ok(ReasoningEffort::Medium),
            "high" => Ok(ReasoningEffort::High),
            other => Err(format!(
                "unknown reasoning effort {other:?}: use minimal, low, medium or high"
            )),
        }
    }
}

/// The form of the reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponseFormat {
    /// Free text.
    Text,
    /// Any JSON object.
    Json,
    /// JSON matching a schema.
    JsonSchema {
        /// A name for the schema.
        name: String,
        /// The JSON Schema.
        schema: Value,
        /// Whether the provider must follow the schema exactly.
        #[serde(default)]
        strict: bool,
    },
}

/// Routing preferences for a router such as OpenRouter, serialized as its `provider` object.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ProviderRouting {
    /// Upstream providers to try, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order: Vec<String>,
    /// Only these upstream providers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub only: Vec<String>,
    /// Never these upstream providers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore: Vec<String>,
    /// Whether other providers may be used when the preferred ones fail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_fallbacks: Option<bool>,
    /// Only providers that support every parameter of the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require_parameters: Option<bool>,
    /// Whether providers that may store or train on the data are allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_collection: Option<DataCollection>,
    /// Only providers with zero data retention.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zdr: Option<bool>,
    /// Sort providers by `price`, `throughput` or `latency`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort: Option<String>,
}

/// Whether upstream providers that collect data are allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DataCollection {
    /// Allowed.
    Allow,
    /// Not allowed.
    Deny,
}
