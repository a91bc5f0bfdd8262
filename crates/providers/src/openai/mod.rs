//! OpenAI-compatible chat completions: OpenAI, OpenRouter (with its model list, credits,
//! reasoning details and provider preferences), DeepSeek, LM Studio, LocalAI, vLLM,
//! llama.cpp and any custom server.

pub(crate) mod decode;
pub(crate) mod encode;
mod wire;

use async_trait::async_trait;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use ybs_core::{Accumulator, ChatRequest, ErrorKind, FinishReason, LlmError, Reply, StreamEvent};

use crate::config::{OpenRouterOptions, ProviderKind};
use crate::http::{Transport, secret_header};
use crate::images::load_images;
use crate::local_server::{is_local, read_llama_cpp_props, server_root};
use crate::provider::{Balance, ChatStream, ModelInfo, ModelLimits, Pricing, Provider};
use crate::wire::{extra_bytes, from_answer, model_for, with_extra};

/// A provider speaking OpenAI's chat-completions API.
#[derive(Debug)]
pub struct OpenAiProvider {
    http: Transport,
    /// The base URL, without a trailing slash (`https://api.openai.com/v1`).
    base: String,
    model: String,
    openrouter: OpenRouterOptions,
}

impl OpenAiProvider {
    pub(crate) fn new(
        http: Transport,
        base: String,
        model: String,
        openrouter: OpenRouterOptions,
    ) -> Self {
        OpenAiProvider {
            http,
            base,
            model,
            openrouter,
        }
    }

    /// The wire body for `request`, whose images must have been loaded.
    fn encode<'a>(&'a self, request: &'a ChatRequest) -> Result<wire::Request<'a>, LlmError> {
        let model = model_for(request, &self.model);
        encode::encode(request, model, self.http.kind, &self.openrouter)
    }

    fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(value) = self
            .http
            .key
            .as_ref()
            .and_then(|key| secret_header(&format!("Bearer {}", key.expose())))
        {
            headers.insert(AUTHORIZATION, value);
        }
        if self.http.kind == ProviderKind::OpenRouter {
            let extra = [
                ("http-referer", &self.openrouter.app_url),
                ("x-title", &self.openrouter.app_title),
            ];
            for (name, value) in extra {
                if let Some(value) = value.as_deref().and_then(|v| HeaderValue::from_str(v).ok()) {
                    headers.insert(HeaderName::from_static(name), value);
                }
            }
        }
        headers
    }
}

#[async_trait]
impl Provider for OpenAiProvider {
    fn kind(&self) -> ProviderKind {
        self.http.kind
    }

    fn default_model(&self) -> &str {
        &self.model
    }

    fn request_body(&self, request: &ChatRequest) -> Result<Value, LlmError> {
        with_extra(self.encode(request)?, request)
    }

    fn stream(&self, request: &ChatRequest, cancel: CancellationToken) -> ChatStream {
        let url = format!("{}/chat/completions", self.base);
        let body =
            load_images(request).and_then(|request| extra_bytes(self.encode(&request)?, &request));
        self.http.stream(url, self.headers(), body, cancel)
    }

    async fn complete_unstreamed(
        &self,
        request: &ChatRequest,
        cancel: CancellationToken,
    ) -> Result<Reply, LlmError> {
        let url = format!("{}/chat/completions", self.base);
        let request = load_images(request)?;
        let mut body = self.encode(&request)?;
        body.stream = false;
        body.stream_options = None;
        let body = with_extra(body, &request)?;
        let headers = self.headers();
        let answer = tokio::select! {
            answer = self.http.post_json(&url, &headers, &body) => answer?,
            () = cancel.cancelled() => {
                return Err(LlmError::new(ErrorKind::Cancelled, "the request was cancelled"));
            }
        };
        let completion: wire::Completion = from_answer(self.http.kind, "completion", &answer)?;
        let mut accumulator = Accumulator::new();
        let choice = completion.choices.into_iter().next();
        let finish = choice
            .as_ref()
            .and_then(|choice| choice.finish_reason.clone());
        let message = choice.and_then(|choice| choice.message);
        if let Some(text) = message.as_ref().and_then(|message| message.content.clone()) {
            accumulator.push(StreamEvent::TextDelta { text });
        }
        if let Some(wire) = &completion.usage {
            accumulator.push(StreamEvent::Usage(decode::usage(wire)));
        }
        accumulator.push(StreamEvent::Done {
            finish_reason: finish.map_or(FinishReason::Stop, |reason| {
                FinishReason::from_provider(&reason)
            }),
        });
        Ok(accumulator.finish())
    }

    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        let url = format!("{}/models", self.base);
        let value = self.http.get_json(&url, &self.headers()).await?;
        models(self.http.kind, value)
    }

    /// `/models` (`context_length`, vLLM's `max_model_len`, llama.cpp's `meta.n_ctx`,
    /// OpenRouter's `top_provider.max_completion_tokens`); for llama.cpp, LocalAI and any
    /// server on this machine or the local network (whichever kind names it) also llama.cpp's
    /// `/props` (the window of a request slot, which is what a request may fill) and
    /// `/tokenize` (how its tokenizer counts); for LM Studio and unnamed servers still
    /// without a window, LM Studio's `/api/v0/models`.
    async fn model_limits(&self, model: &str) -> Result<ModelLimits, LlmError> {
        let listed = self.list_models().await;
        let mut limits = match &listed {
            Ok(models) => ModelLimits::from_list(models, model, "GET /models"),
            Err(_) => ModelLimits::default(),
        };
        let local = matches!(
            self.http.kind,
            ProviderKind::LlamaCpp | ProviderKind::OpenAiCompatible | ProviderKind::LocalAi
        ) || is_local(&self.base);
        // A server that did not answer its model list will not answer `/props` either.
        let refused = listed.as_ref().is_err_and(crate::retry::never_reached);
        if local && !refused {
            let root = server_root(&self.base);
            read_llama_cpp_props(&self.http, root, &self.headers(), &mut limits).await;
        }
        // LM Studio, or an unnamed server on this machine or the local network.
        let lm_studio = match self.http.kind {
            ProviderKind::LmStudio => true,
            ProviderKind::OpenAiCompatible => is_local(&self.base),
            _ => false,
        };
        if lm_studio && !refused && limits.context_window.is_none() {
            if let Some((window, field)) = self.lm_studio_window(model).await {
                limits.context_window = Some(window);
                limits.source = format!("GET /api/v0/models ({field})");
            }
        }
        if limits.is_empty() {
            listed?;
        }
        Ok(limits)
    }

    async fn balance(&self) -> Result<Option<Balance>, LlmError> {
        if self.http.kind != ProviderKind::OpenRouter {
            return Ok(None);
        }
        let url = format!("{}/credits", self.base);
        let value = self.http.get_json(&url, &self.headers()).await?;
        let credits: wire::Credits = from_answer(self.http.kind, "credits", &value)?;
        Ok(Some(Balance {
            total_credits: credits.data.total_credits,
            total_usage: credits.data.total_usage,
        }))
    }
}

impl OpenAiProvider {
    /// LM Studio's own entry of `model` (`/api/v0/models/{id}`, else found in
    /// `/api/v0/models`): the window it is loaded with (`loaded_context_length`), else the
    /// most it can be loaded with (`max_context_length`); `None` from other servers.
    async fn lm_studio_window(&self, model: &str) -> Option<(u64, &'static str)> {
        let root = server_root(&self.base);
        let headers = self.headers();
        let mut url = reqwest::Url::parse(&format!("{root}/api/v0/models")).ok()?;
        url.path_segments_mut().ok()?.push(model);
        let entry = match self.http.get_json(url.as_str(), &headers).await {
            Ok(entry) if entry.get("id").is_some() => entry,
            _ => {
                let list = (self.http)
                    .get_json(&format!("{root}/api/v0/models"), &headers)
                    .await
                    .ok()?;
                let data = list.get("data").and_then(Value::as_array)?;
                let found = data.iter().find(|entry| entry["id"] == model)?;
                found.clone()
            }
        };
        let field = |name: &'static str| {
            let tokens = entry.get(name).and_then(Value::as_u64).filter(|n| *n > 0);
            tokens.map(|tokens| (tokens, name))
        };
        field("loaded_context_length").or_else(|| field("max_context_length"))
    }
}

/// A `/models` answer as [`ModelInfo`]s. OpenRouter's `supported_parameters` tell whether a
/// model takes tools (`tools`) and reasoning (`reasoning`, `include_reasoning`).
pub(crate) fn models(kind: ProviderKind, value: Value) -> Result<Vec<ModelInfo>, LlmError> {
    let list: wire::ModelList = from_answer(kind, "model list", &value)?;
    Ok(list
        .data
        .into_iter()
        .map(|model| {
            let supports = |names: &[&str]| {
                model
                    .supported_parameters
                    .as_ref()
                    .map(|params| params.iter().any(|param| names.contains(&param.as_str())))
            };
            let price = |value: &Option<Value>| match value {
                Some(Value::String(text)) => Some(text.clone()),
                Some(Value::Number(number)) => Some(number.to_string()),
                _ => None,
            };
            let pricing = model.pricing.as_ref().and_then(|pricing| {
                Some(Pricing {
                    prompt: price(&pricing.prompt)?,
                    completion: price(&pricing.completion)?,
                    input_cache_read: price(&pricing.input_cache_read),
                    input_cache_write: price(&pricing.input_cache_write),
                    internal_reasoning: price(&pricing.internal_reasoning),
                    discount: match &pricing.discount {
                        Some(Value::Number(number)) => number.as_f64(),
                        Some(Value::String(text)) => text.parse().ok(),
                        _ => None,
                    },
                })
            });
            let n_ctx = model.meta.as_ref().and_then(|meta| meta.n_ctx);
            ModelInfo {
                name: model.name.clone().unwrap_or_else(|| model.id.clone()),
                context_length: model.context_length.or(model.max_model_len).or(n_ctx),
                supports_tools: supports(&["tools"]),
                supports_reasoning: supports(&["reasoning", "include_reasoning"]),
                pricing,
                max_completion_tokens: model
                    .top_provider
                    .as_ref()
                    .and_then(|top| top.max_completion_tokens),
                created: model.created.as_ref().and_then(Value::as_i64),
                description: model.description.clone().filter(|text| !text.is_empty()),
                expiration_date: model.expiration_date.clone(),
                id: model.id,
            }
        })
        .collect())
}

/// The base URL of an OpenAI-compatible endpoint: a full `.../chat/completions` URL is cut
/// back, and a bare `http://host:port` gets `/v1`.
pub(crate) fn base_url(endpoint: &str) -> String {
    let trimmed = endpoint.trim().trim_end_matches('/');
    let trimmed = trimmed.strip_suffix("/chat/completions").unwrap_or(trimmed);
    let after_scheme = trimmed.split_once("://").map_or(trimmed, |(_, rest)| rest);
    if after_scheme.contains('/') {
        trimmed.to_owned()
    } else {
        format!("{trimmed}/v1")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn base_urls() {
        assert_eq!(
            base_url("https://api.openai.com/v1/"),
            "https://api.openai.com/v1"
        );
        assert_eq!(
            base_url("https://openrouter.ai/api/v1/chat/completions"),
            "https://openrouter.ai/api/v1"
        );
        assert_eq!(
            base_url("http://localhost:1234"),
            "http://localhost:1234/v1"
        );
        assert_eq!(
            base_url("http://127.0.0.1:9/api/v1"),
            "http://127.0.0.1:9/api/v1"
        );
    }

    #[test]
    fn openrouter_models_map_supported_parameters() {
        let value = json!({"data": [
            {"id": "anthropic/claude-sonnet-4", "name": "Claude Sonnet 4", "context_length": 200000,
             "pricing": {"prompt": "0.000003", "completion": "0.000015",
                         "input_cache_read": "0.0000003", "input_cache_write": "0.00000375",
                         "internal_reasoning": "0", "discount": 0},
             "created": 1747930371, "description": "Balanced.",
             "top_provider": {"context_length": 200000, "max_completion_tokens": 64000},
             "supported_parameters": ["tools", "reasoning", "temperature"]},
            {"id": "plain", "supported_parameters": ["temperature"]},
            {"id": "gpt-4o", "object": "model", "owned_by": "openai"},
            {"id": "local", "max_model_len": 8192},
            {"id": "tiny", "owned_by": "llamacpp", "meta": {"n_ctx": 4096, "n_ctx_train": 32768}}
        ]});
        let got = models(ProviderKind::OpenRouter, value).unwrap();
        assert_eq!(
            serde_json::to_value(&got).unwrap(),
            json!([
                {"id": "anthropic/claude-sonnet-4", "name": "Claude Sonnet 4",
                 "context_length": 200000, "supports_tools": true, "supports_reasoning": true,
                 "pricing": {"prompt": "0.000003", "completion": "0.000015",
                             "input_cache_read": "0.0000003", "input_cache_write": "0.00000375",
                             "internal_reasoning": "0", "discount": 0.0},
                 "max_completion_tokens": 64000, "created": 1747930371,
                 "description": "Balanced."},
                {"id": "plain", "name": "plain", "supports_tools": false, "supports_reasoning": false},
                {"id": "gpt-4o", "name": "gpt-4o"},
                {"id": "local", "name": "local", "context_length": 8192},
                {"id": "tiny", "name": "tiny", "context_length": 4096}
            ])
        );
        let err = models(ProviderKind::OpenAi, json!({"data": "nope"})).unwrap_err();
        assert!(
            err.message
                .starts_with("unexpected model list from OpenAI: invalid type"),
            "{}",
            err.message
        );
    }
}
