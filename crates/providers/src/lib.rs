//! Provider adapters: turns a [`ybs_core::ChatRequest`] into a stream of
//! [`ybs_core::StreamEvent`]s for OpenAI-compatible servers (OpenAI, OpenRouter, DeepSeek,
//! LM Studio, LocalAI, vLLM, llama.cpp, any custom URL), OpenAI's Responses API (at OpenAI or
//! any server that speaks it, Azure OpenAI's included), Anthropic Messages, Google's Gemini API
//! and Ollama, with
//! retries, timeouts, cancellation, model lists and account balance.
//!
//! # Layout
//!
//! - `openai/`, `responses/`, `anthropic/`, `gemini/`, `ollama/`, `azure/` (OpenAI's encoders
//!   and decoders at Azure's URLs), `vertex/` (Gemini's and Anthropic's at Vertex AI, with
//!   Google credentials): one folder per API, each with its private wire types
//!   (`wire`), a pure encoder (`encode`: request to JSON body), a pure decoder (`decode`:
//!   frames to events) and, in `mod.rs`, the [`Provider`] that sends through `http`.
//! - Below the adapters: what they are built from and report (`config`, `capabilities`:
//!   what each kind can do and needs, [`Capabilities`]; `error`, the
//!   [`Provider`] trait in `provider`, `retry`), and what several formats share (`wire`,
//!   `text`, `images`, the SSE/NDJSON `framing`, the `Decoder` trait in `decode`).
//! - Above the decoders: `decoders` (each kind's decoder and framing, and [`replay`]) and
//!   `http` (the transport: retries, timeouts, cancellation); at the top, `factory`
//!   ([`build`]). Apart: `prices` ([`PriceTable`]).
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
//! What a kind of provider can do and needs (an API key and its variable, the default base
//! URL and model, hosted web search, PDF input, how model limits are learned, local or
//! hosted, a balance) is one value, [`ProviderKind::capabilities`]; callers ask it rather
//! than matching on kinds:
//!
//! ```
//! use ybs_providers::{LimitsSource, ProviderKind};
//!
//! let ollama = ProviderKind::Ollama.capabilities();
//! assert!(!ollama.needs_api_key(None) && ollama.runs_locally(None));
//! assert_eq!(ollama.limits, LimitsSource::LocalServer);
//! let anthropic = ProviderKind::Anthropic.capabilities();
//! assert_eq!(anthropic.api_key_env, Some("ANTHROPIC_API_KEY"));
//! assert!(anthropic.document_input && anthropic.hosted_web_search);
//! ```
//!
//! [`replay`] runs a kind's decoder over a recorded body, without a network. Errors are core
//! [`ybs_core::LlmError`]s classified by [`ybs_core::classify`], carrying the provider's own
//! message; API keys never appear in them, in logs or in `Debug` output.
//!
//! Prompt caching: a request's [`ybs_core::CacheBreakpoints`] become Anthropic
//! `cache_control` blocks (directly, and for `anthropic/` models through OpenRouter); the other
//! APIs cache by themselves and ignore them. [`PriceTable`] prices a [`ybs_core::Usage`]
//! for the models it knows, cache reads and writes included:
//!
//! ```
//! use ybs_core::Usage;
//! use ybs_providers::PriceTable;
//!
//! let table = PriceTable::builtin().expect("the built-in table parses");
//! let price = table.lookup("anthropic/claude-sonnet-4.5").expect("a known model");
//! let usage = Usage { prompt_tokens: 10_000, cached_tokens: 9_000, completion_tokens: 500, ..Usage::default() };
//! let cost = price.cost(&usage);
//! assert!(cost.saved_by_cache > 0.0);
//! assert!(table.lookup("my-local-model").is_none());
//! ```

mod anthropic;
mod azure;
mod bedrock;
mod capabilities;
mod config;
mod decode;
mod decoders;
mod error;
mod factory;
mod framing;
mod gemini;
mod http;
mod images;
mod local_server;
mod ollama;
mod openai;
mod prices;
mod provider;
mod responses;
mod retry;
mod text;
mod user_files;
mod vertex;
mod wire;

pub use anthropic::{ANTHROPIC_VERSION, AnthropicProvider};
pub use azure::AzureProvider;
pub use bedrock::BedrockProvider;
pub use capabilities::{Capabilities, Hosting, KeyRequirement, LimitsSource};
pub use config::{
    ApiKey, OllamaOptions, OpenRouterOptions, ProviderConfig, ProviderKind, Timeouts,
    UnknownProvider,
};
pub use decoders::replay;
pub use error::ConfigError;
pub use factory::{available_kinds, build, build_with_env, resolve_api_key};
pub use gemini::GeminiProvider;
pub use ollama::OllamaProvider;
pub use openai::OpenAiProvider;
pub use prices::{CatalogLimits, Cost, ModelPrice, PriceError, PriceTable};
pub use provider::{Balance, ChatStream, ModelInfo, ModelLimits, Pricing, Provider};
pub use responses::ResponsesProvider;
pub use retry::{RetryPolicy, UNREACHABLE, never_reached};
pub use vertex::{VERTEX_ANTHROPIC_VERSION, VertexProvider};

/// The examples of this crate's `README.md`, run by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
