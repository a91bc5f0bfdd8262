//! The one trait every backend implements, and what it answers besides chats.

use std::fmt;

use async_trait::async_trait;
use futures::StreamExt;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use ybs_core::{Accumulator, ChatRequest, LlmError, Reply, StreamEvent};

use crate::config::ProviderKind;

/// The events of one streamed reply. After an `Err` the stream ends; everything before it
/// was really received, so a caller can keep the partial reply.
pub type ChatStream = BoxStream<'static, Result<StreamEvent, LlmError>>;

/// A chat backend.
#[async_trait]
pub trait Provider: Send + Sync + fmt::Debug {
    /// Which kind of backend this is.
    fn kind(&self) -> ProviderKind;

    /// The model used when a request names none.
    fn default_model(&self) -> &str;

    /// The JSON body [`stream`](Provider::stream) would send for `request` (images given by
    /// path are not read: give them as data or URLs). For dry runs, logs and tests.
    fn request_body(&self, request: &ChatRequest) -> Result<serde_json::Value, LlmError>;

    /// Streams the reply to `request`.
    ///
    /// Failed attempts are retried by the configured policy as long as no event was
    /// delivered. The stream ends with an `Err` of kind `Cancelled` soon after `cancel`
    /// fires, and dropping the stream closes the connection.
    fn stream(&self, request: &ChatRequest, cancel: CancellationToken) -> ChatStream;

    /// The whole reply to `request`, collected from [`stream`](Provider::stream) with the
    /// core [`Accumulator`].
    async fn complete(
        &self,
        request: &ChatRequest,
        cancel: CancellationToken,
    ) -> Result<Reply, LlmError> {
        let mut stream = self.stream(request, cancel);
        let mut accumulator = Accumulator::new();
        while let Some(event) = stream.next().await {
            accumulator.push(event?);
        }
        Ok(accumulator.finish())
    }

    /// The whole reply to `request` from one request that is not streamed, where the backend
    /// has such a call (OpenAI-compatible: `"stream": false`); other backends stream and
    /// collect as [`complete`](Provider::complete) does. For short side requests (chat
    /// titles) whose answer is only useful whole.
    async fn complete_unstreamed(
        &self,
        request: &ChatRequest,
        cancel: CancellationToken,
    ) -> Result<Reply, LlmError> {
        self.complete(request, cancel).await
    }

    /// The models the backend offers.
    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError>;

    /// What the backend says about the limits of `model`: its context window and the most
    /// tokens one reply may have, where it says (from [`list_models`](Provider::list_models)
    /// unless the backend has a better source). Fields it does not give are `None`.
    async fn model_limits(&self, model: &str) -> Result<ModelLimits, LlmError> {
        let models = self.list_models().await?;
        Ok(ModelLimits::from_list(&models, model, "GET /models"))
    }

    /// The account's balance, for backends that have one (OpenRouter); `None` otherwise.
    async fn balance(&self) -> Result<Option<Balance>, LlmError> {
        Ok(None)
    }
}

/// One model a backend offers, in the form of bb7's `models` reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// The id requests name it by.
    pub id: String,
    /// A readable name (the id when the backend gives none).
    pub name: String,
    /// The context window in tokens, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_length: Option<u64>,
    /// Whether it can call tools, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_tools: Option<bool>,
    /// Whether it reasons (and can be asked how hard), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_reasoning: Option<bool>,
    /// Prices, when the backend says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pricing: Option<Pricing>,
    /// The most tokens one reply may have (OpenRouter's `top_provider.max_completion_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_completion_tokens: Option<u64>,
    /// When the backend added the model (Unix seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<i64>,
    /// The backend's description of the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// When the backend retires the model (OpenRouter's `expiration_date`), if planned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiration_date: Option<String>,
}

impl ModelInfo {
    /// A model known only by its id.
    pub fn new(id: impl Into<String>) -> Self {
        let id = id.into();
        ModelInfo {
            name: id.clone(),
            id,
            context_length: None,
            supports_tools: None,
            supports_reasoning: None,
            pricing: None,
            max_completion_tokens: None,
            created: None,
            description: None,
            expiration_date: None,
        }
    }
}

/// A model's limits as its backend gives them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelLimits {
    /// The context window in tokens (prompt and reply together).
    pub context_window: Option<u64>,
    /// The most tokens one reply may have.
    pub max_output: Option<u64>,
    /// Where the backend said it (`GET /models`, `GET /props`, `POST /api/show`).
    pub source: String,
    /// Characters per token of the server's own tokenizer, where it can be asked (llama.cpp's
    /// `/tokenize`): local models' tokenizers differ much from the usual four.
    pub chars_per_token: Option<f64>,
}

impl ModelLimits {
    /// The limits of `model` in a model list (by id, or with a `:latest` suffix either way).
    pub fn from_list(models: &[ModelInfo], model: &str, source: &str) -> ModelLimits {
        let bare = |name: &str| name.strip_suffix(":latest").unwrap_or(name).to_owned();
        let found = (models.iter()).find(|info| info.id == model || bare(&info.id) == bare(model));
        ModelLimits {
            context_window: found.and_then(|info| info.context_length),
            max_output: found.and_then(|info| info.max_completion_tokens),
            source: source.to_owned(),
            chars_per_token: None,
        }
    }

    /// Whether the backend said nothing.
    pub fn is_empty(&self) -> bool {
        self.context_window.is_none() && self.max_output.is_none()
    }
}

/// Prices per token, as decimal strings in the provider's currency (OpenRouter: dollars).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pricing {
    /// Per prompt token.
    pub prompt: String,
    /// Per reply token.
    pub completion: String,
    /// Per prompt token read from the provider's cache, when priced apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_cache_read: Option<String>,
    /// Per prompt token written to the provider's cache, when priced apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_cache_write: Option<String>,
    /// Per reasoning token, when priced apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub internal_reasoning: Option<String>,
    /// The discount OpenRouter applies (a fraction), when it gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discount: Option<f64>,
}

/// An account's credits, as OpenRouter's `/credits` reports them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Balance {
    /// Credits bought.
    pub total_credits: f64,
    /// Credits spent.
    pub total_usage: f64,
}

impl Balance {
    /// What is left.
    pub fn remaining(&self) -> f64 {
        self.total_credits - self.total_usage
    }
}
