//! Provider adapters: turns a [`ybs_core::ChatRequest`] into a stream of
//! [`ybs_core::StreamEvent`]s for OpenAI-compatible servers (OpenAI, OpenRouter, DeepSeek,
//! LM Studio, LocalAI, vLLM, llama.cpp, any custom URL), Anthropic Messages and Ollama, with
//! retries, timeouts, cancellation, model lists and account balance.
//!
//! Build a provider from a [`ProviderConfig`] with [`build`], then call
//! [`Provider::stream`] (events as they arrive) or [`Provider::complete`] (the whole
//! [`ybs_core::Reply`]):
//!
//! ```no_run
//! use futures::StreamExt;
//! use tokio_util::sync::CancellationToken;
//! use ybs_core::{ChatRequest, Message, StreamEvent};
//! use ybs_providers::{ProviderConfig, ProviderKind, build};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let provider = build(&ProviderConfig::new(ProviderKind::Ollama, "qwen3:14b"))?;
//! let request = ChatRequest::new("", vec![Message::user("Hello")]);
//! let mut stream = provider.stream(&request, CancellationToken::new());
//! while let Some(event) = stream.next().await {
//!     if let StreamEvent::TextDelta { text } = event? {
//!         print!("{text}");
//!     }
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Each adapter keeps its wire types private, with a pure encoder (request to JSON body,
//! see the `request_body` methods) and a pure decoder (frames to events, see [`replay`]).
//! Transport, SSE/NDJSON framing, retries and cancellation are shared. Errors are core
//! [`ybs_core::LlmError`]s classified by [`ybs_core::classify`], carrying the provider's own
//! message; API keys never appear in them, in logs or in `Debug` output.

mod anthropic;
mod config;
mod decode;
mod error;
mod factory;
mod framing;
mod http;
mod images;
mod ollama;
mod openai;
mod provider;
mod retry;
mod text;
mod wire;

pub use anthropic::{ANTHROPIC_VERSION, AnthropicProvider};
pub use config::{
    ApiKey, OllamaOptions, OpenRouterOptions, ProviderConfig, ProviderKind, Timeouts,
    UnknownProvider,
};
pub use decode::replay;
pub use error::ConfigError;
pub use factory::{available_kinds, build, build_with_env, resolve_api_key};
pub use ollama::OllamaProvider;
pub use openai::OpenAiProvider;
pub use provider::{Balance, ChatStream, ModelInfo, Pricing, Provider};
pub use retry::RetryPolicy;
