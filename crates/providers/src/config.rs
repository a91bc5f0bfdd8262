//! What a provider is built from: its kind, endpoint, API key, default model, timeouts and
//! retry policy, plus the few settings only one backend reads.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::retry::RetryPolicy;

/// Which backend to talk to. The OpenAI-compatible presets differ only in their default base
/// URL, the environment variable their key comes from, and a few request fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    /// OpenAI's own API.
    OpenAi,
    /// OpenRouter (OpenAI-compatible, plus models, credits, routing and reasoning details).
    OpenRouter,
    /// DeepSeek's OpenAI-compatible API (wants `reasoning_content` back on later turns).
    DeepSeek,
    /// LM Studio's local server.
    LmStudio,
    /// LocalAI.
    LocalAi,
    /// vLLM's OpenAI-compatible server.
    Vllm,
    /// llama.cpp's `llama-server`.
    LlamaCpp,
    /// Any other OpenAI-compatible server; needs an endpoint.
    OpenAiCompatible,
    /// OpenAI's Responses API (`/v1/responses`), at OpenAI or any server that speaks it
    /// (llama.cpp's `llama-server`...): stored replies continued by id, hosted web search,
    /// PDF input.
    Responses,
    /// Anthropic Messages.
    Anthropic,
    /// Ollama's native API.
    Ollama,
    /// Google's Gemini API (`generateContent`), natively.
    Gemini,
    /// Azure OpenAI's Chat Completions, at a deployment of one's own resource.
    Azure,
    /// Azure OpenAI's Responses API, at one's own resource.
    AzureResponses,
    /// Gemini models on Google Cloud's Vertex AI.
    Vertex,
    /// Anthropic's Claude models on Google Cloud's Vertex AI.
    VertexAnthropic,
    /// Amazon Bedrock's Converse API (Claude, Nova, Llama... in one's AWS account).
    Bedrock,
    /// Apple Foundation Models: named so it can be refused with a clear message; not
    /// available on this platform.
    Apple,
}

/// The wire protocol a kind speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    OpenAi,
    Responses,
    Anthropic,
    Ollama,
    Gemini,
    AzureChat,
    AzureResponses,
    Vertex,
    VertexAnthropic,
    Bedrock,
    Unavailable,
}

impl ProviderKind {
    /// Every kind, in the order they are listed to users.
    pub const ALL: [ProviderKind; 18] = [
        ProviderKind::OpenAi,
        ProviderKind::OpenRouter,
        ProviderKind::Anthropic,
        ProviderKind::Ollama,
        ProviderKind::DeepSeek,
        ProviderKind::LmStudio,
        ProviderKind::LocalAi,
        ProviderKind::Vllm,
        ProviderKind::LlamaCpp,
        ProviderKind::OpenAiCompatible,
        ProviderKind::Responses,
        ProviderKind::Gemini,
        ProviderKind::Azure,
        ProviderKind::AzureResponses,
        ProviderKind::Vertex,
        ProviderKind::VertexAnthropic,
        ProviderKind::Bedrock,
        ProviderKind::Apple,
    ];

    /// The name used in configs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::OpenRouter => "openrouter",
            ProviderKind::DeepSeek => "deepseek",
            ProviderKind::LmStudio => "lmstudio",
            ProviderKind::LocalAi => "localai",
            ProviderKind::Vllm => "vllm",
            ProviderKind::LlamaCpp => "llamacpp",
            ProviderKind::OpenAiCompatible => "openai-compatible",
            ProviderKind::Responses => "responses",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Ollama => "ollama",
            ProviderKind::Gemini => "gemini",
            ProviderKind::Azure => "azure",
            ProviderKind::AzureResponses => "azure-responses",
            ProviderKind::Vertex => "vertex",
            ProviderKind::VertexAnthropic => "vertex-anthropic",
            ProviderKind::Bedrock => "bedrock",
            ProviderKind::Apple => "apple",
        }
    }

    /// The name people know the backend by, for messages.
    pub fn display_name(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "OpenAI",
            ProviderKind::OpenRouter => "OpenRouter",
            ProviderKind::DeepSeek => "DeepSeek",
            ProviderKind::LmStudio => "LM Studio",
            ProviderKind::LocalAi => "LocalAI",
            ProviderKind::Vllm => "vLLM",
            ProviderKind::LlamaCpp => "llama.cpp",
            ProviderKind::OpenAiCompatible => "the OpenAI-compatible server",
            ProviderKind::Responses => "the Responses API",
            ProviderKind::Anthropic => "Anthropic",
            ProviderKind::Ollama => "Ollama",
            ProviderKind::Gemini => "Gemini",
            ProviderKind::Azure => "Azure OpenAI",
            ProviderKind::AzureResponses => "Azure OpenAI's Responses API",
            ProviderKind::Vertex => "Vertex AI",
            ProviderKind::VertexAnthropic => "Claude on Vertex AI",
            ProviderKind::Bedrock => "Amazon Bedrock",
            ProviderKind::Apple => "Apple Foundation Models",
        }
    }

    /// Whether this platform can use the kind at all.
    pub fn is_available(self) -> bool {
        self != ProviderKind::Apple
    }

    /// The names of the kinds this platform can use, comma-separated, for messages.
    pub fn available_names() -> String {
        ProviderKind::ALL
            .iter()
            .filter(|kind| kind.is_available())
            .map(|kind| kind.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub(crate) fn protocol(self) -> Protocol {
        match self {
            ProviderKind::Anthropic => Protocol::Anthropic,
            ProviderKind::Ollama => Protocol::Ollama,
            ProviderKind::Responses => Protocol::Responses,
            ProviderKind::Gemini => Protocol::Gemini,
            ProviderKind::Azure => Protocol::AzureChat,
            ProviderKind::AzureResponses => Protocol::AzureResponses,
            ProviderKind::Vertex => Protocol::Vertex,
            ProviderKind::VertexAnthropic => Protocol::VertexAnthropic,
            ProviderKind::Bedrock => Protocol::Bedrock,
            ProviderKind::Apple => Protocol::Unavailable,
            _ => Protocol::OpenAi,
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for ProviderKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for ProviderKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// The error of parsing an unknown provider name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown provider {name:?}: use one of {}",
    ProviderKind::available_names()
)]
pub struct UnknownProvider {
    /// The name given.
    pub name: String,
}

impl FromStr for ProviderKind {
    type Err = UnknownProvider;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let wanted = name.trim().to_ascii_lowercase().replace('_', "-");
        let kind = match wanted.as_str() {
            "openai" => ProviderKind::OpenAi,
            "responses" | "openai-responses" => ProviderKind::Responses,
            "openrouter" => ProviderKind::OpenRouter,
            "deepseek" => ProviderKind::DeepSeek,
            "lmstudio" | "lm-studio" => ProviderKind::LmStudio,
            "localai" => ProviderKind::LocalAi,
            "vllm" => ProviderKind::Vllm,
            "llamacpp" | "llama.cpp" | "llama-cpp" | "llama-server" => ProviderKind::LlamaCpp,
            "openai-compatible" | "openai-compat" | "custom" => ProviderKind::OpenAiCompatible,
            "anthropic" | "claude" => ProviderKind::Anthropic,
            "ollama" => ProviderKind::Ollama,
            "gemini" | "google-gemini" => ProviderKind::Gemini,
            "azure" | "azure-openai" => ProviderKind::Azure,
            "azure-responses" | "azure-openai-responses" => ProviderKind::AzureResponses,
            "vertex" | "vertex-ai" | "vertex-gemini" => ProviderKind::Vertex,
            "vertex-anthropic" | "vertex-claude" => ProviderKind::VertexAnthropic,
            "bedrock" | "aws-bedrock" | "amazon-bedrock" => ProviderKind::Bedrock,
            "apple" | "apple-foundation" | "foundation" => ProviderKind::Apple,
            _ => {
                return Err(UnknownProvider {
                    name: name.to_owned(),
                });
            }
        };
        Ok(kind)
    }
}

/// An API key. Its `Debug` and `Display` print `***`, so it cannot leak into logs or error
/// messages by accident; [`expose`](ApiKey::expose) gives the text for the request header.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into().trim().to_owned())
    }

    /// The key itself, for the request header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl From<&str> for ApiKey {
    fn from(key: &str) -> Self {
        ApiKey::new(key)
    }
}

impl From<String> for ApiKey {
    fn from(key: String) -> Self {
        ApiKey::new(key)
    }
}

/// How long to wait for what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Establishing the TCP (and TLS) connection.
    pub connect: Duration,
    /// The longest silence allowed while streaming: before the response headers and between
    /// two pieces of the body (keep-alive comments count as activity).
    pub idle: Duration,
    /// The whole streamed request, retries included.
    pub overall: Duration,
    /// A request that does not stream (model lists, credits), each attempt.
    pub request: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(10),
            idle: Duration::from_secs(120),
            // Long enough for a slow local model writing a long reply.
            overall: Duration::from_secs(30 * 60),
            request: Duration::from_secs(30),
        }
    }
}

/// OpenRouter's account-level options: attribution headers and privacy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenRouterOptions {
    /// Sent as `HTTP-Referer` (the app's URL, for OpenRouter's rankings).
    pub app_url: Option<String>,
    /// Sent as `X-Title` (the app's name).
    pub app_title: Option<String>,
    /// Allow upstream providers that may train on the data; when false every request carries
    /// `provider.data_collection: "deny"`.
    pub allow_training: bool,
    /// Allow providers that keep the data for a while; when false every request carries
    /// `provider.zdr: true`.
    pub allow_data_retention: bool,
}

impl Default for OpenRouterOptions {
    fn default() -> Self {
        OpenRouterOptions {
            app_url: None,
            app_title: None,
            allow_training: false,
            allow_data_retention: true,
        }
    }
}

/// Ollama's options.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OllamaOptions {
    /// `options.num_ctx`: the context window to load the model with. Without it Ollama
    /// silently truncates prompts to its small default.
    pub num_ctx: Option<u32>,
    /// `keep_alive`: how long the model stays loaded after the request (`"5m"`, `"-1"`).
    pub keep_alive: Option<String>,
}

/// Everything needed to build a provider with [`build`](crate::build).
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderConfig {
    /// Which backend.
    pub kind: ProviderKind,
    /// The base URL (`https://api.openai.com/v1`, `http://localhost:11434`...); the kind's
    /// default when `None`. A full endpoint URL (`.../chat/completions`, `.../v1/messages`,
    /// `.../api/chat`) is accepted too.
    pub endpoint: Option<String>,
    /// The API key; when `None` it comes from the kind's environment variable.
    pub api_key: Option<ApiKey>,
    /// The model used when a request names none.
    pub model: String,
    /// Timeouts.
    pub timeouts: Timeouts,
    /// Retries of failed requests.
    pub retry: RetryPolicy,
    /// OpenRouter's options (ignored by other kinds).
    pub openrouter: OpenRouterOptions,
    /// Ollama's options (ignored by other kinds).
    pub ollama: OllamaOptions,
}

impl ProviderConfig {
    /// A config for `kind` and `model` with every other setting at its default.
    pub fn new(kind: ProviderKind, model: impl Into<String>) -> Self {
        ProviderConfig {
            kind,
            endpoint: None,
            api_key: None,
            model: model.into(),
            timeouts: Timeouts::default(),
            retry: RetryPolicy::default(),
            openrouter: OpenRouterOptions::default(),
            ollama: OllamaOptions::default(),
        }
    }

    /// Sets the endpoint.
    pub fn with_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// Sets the API key.
    pub fn with_api_key(mut self, key: impl Into<ApiKey>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Sets the retry policy.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Sets the timeouts.
    pub fn with_timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for kind in ProviderKind::ALL {
            assert_eq!(kind.name().parse::<ProviderKind>(), Ok(kind));
        }
        assert_eq!("LM_Studio".parse(), Ok(ProviderKind::LmStudio));
        assert_eq!("llama.cpp".parse(), Ok(ProviderKind::LlamaCpp));
    }

    #[test]
    fn kinds_are_config_strings() {
        let kind: ProviderKind = serde_json::from_str("\"lm-studio\"").unwrap();
        assert_eq!(kind, ProviderKind::LmStudio);
        assert_eq!(serde_json::to_string(&kind).unwrap(), "\"lmstudio\"");
        let err = serde_json::from_str::<ProviderKind>("\"bard\"").unwrap_err();
        assert!(
            err.to_string().starts_with("unknown provider \"bard\""),
            "{err}"
        );
    }

    #[test]
    fn unknown_name_lists_the_choices() {
        let err = "bard".parse::<ProviderKind>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown provider \"bard\": use one of openai, openrouter, anthropic, ollama, \
             deepseek, lmstudio, localai, vllm, llamacpp, openai-compatible, responses, gemini, \
             azure, azure-responses, vertex, vertex-anthropic, bedrock"
        );
        assert_eq!("gemini".parse(), Ok(ProviderKind::Gemini));
    }

    #[test]
    fn keys_never_print() {
        let config = ProviderConfig::new(ProviderKind::OpenAi, "gpt").with_api_key("sk-secret");
        let shown = format!("{config:?} {}", ApiKey::new("sk-secret"));
        assert!(!shown.contains("sk-secret"), "{shown}");
        assert!(shown.contains("***"));
        assert_eq!(config.api_key.unwrap().expose(), "sk-secret");
    }
}
