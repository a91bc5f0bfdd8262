//! Ollama's native API (`/api/chat` with NDJSON streaming, `/api/tags`, `/api/show`).

pub(crate) mod decode;
mod encode;
mod wire;

use async_trait::async_trait;
use futures::{StreamExt, TryStreamExt};
use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use ybs_core::{ChatRequest, LlmError};

use crate::config::{OllamaOptions, ProviderKind};
use crate::http::Transport;
use crate::images::load_images;
use crate::provider::{ChatStream, ModelInfo, ModelLimits, Provider};
use crate::wire::{extra_bytes, from_answer, model_for, with_extra};

/// A provider speaking Ollama's native API.
#[derive(Debug)]
pub struct OllamaProvider {
    http: Transport,
    /// The base URL (`http://localhost:11434`).
    base: String,
    model: String,
    options: OllamaOptions,
}

impl OllamaProvider {
    pub(crate) fn new(
        http: Transport,
        base: String,
        model: String,
        options: OllamaOptions,
    ) -> Self {
        OllamaProvider {
            http,
            base,
            model,
            options,
        }
    }

    /// The wire body for `request`, whose images must have been loaded.
    fn encode<'a>(&'a self, request: &'a ChatRequest) -> Result<wire::Request<'a>, LlmError> {
        encode::encode(request, model_for(request, &self.model), &self.options)
    }

    /// What `/api/show` says about a model: its context length and whether it calls tools
    /// and thinks (from `capabilities`, on Ollama versions that list them).
    async fn show(&self, name: String) -> Result<ModelInfo, LlmError> {
        Ok(self.show_wire(name).await?.0)
    }

    /// `/api/show` as a [`ModelInfo`] and the Modelfile's `num_ctx`, if it sets one.
    async fn show_wire(&self, name: String) -> Result<(ModelInfo, Option<u64>), LlmError> {
        let url = format!("{}/api/show", self.base);
        let value = self
            .http
            .post_json(&url, &HeaderMap::new(), &json!({ "model": name }))
            .await?;
        let show: wire::Show = from_answer(ProviderKind::Ollama, "model details", &value)?;
        let num_ctx = (show.parameters.as_deref().unwrap_or_default().lines())
            .filter_map(|line| line.trim().strip_prefix("num_ctx"))
            .find_map(|value| value.trim().parse::<u64>().ok());
        let mut info = ModelInfo::new(name);
        info.context_length = show
            .model_info
            .iter()
            .find(|(key, _)| key.ends_with(".context_length"))
            .and_then(|(_, value)| value.as_u64());
        if let Some(capabilities) = &show.capabilities {
            let has = |name: &str| Some(capabilities.iter().any(|c| c == name));
            info.supports_tools = has("tools");
            info.supports_reasoning = has("thinking");
        }
        Ok((info, num_ctx))
    }
}

#[async_trait]
impl Provider for OllamaProvider {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Ollama
    }

    fn default_model(&self) -> &str {
        &self.model
    }

    fn request_body(&self, request: &ChatRequest) -> Result<Value, LlmError> {
        with_extra(self.encode(request)?, request)
    }

    fn stream(&self, request: &ChatRequest, cancel: CancellationToken) -> ChatStream {
        let url = format!("{}/api/chat", self.base);
        let body =
            load_images(request).and_then(|request| extra_bytes(self.encode(&request)?, &request));
        self.http.stream(url, HeaderMap::new(), body, cancel)
    }

    /// `/api/show`: the model's trained context length (the Modelfile's `num_ctx` when it
    /// sets a smaller one). Ollama loads a model with the `num_ctx` a request asks for.
    async fn model_limits(&self, model: &str) -> Result<ModelLimits, LlmError> {
        let (info, num_ctx) = self.show_wire(model.to_owned()).await?;
        let window = match (info.context_length, num_ctx) {
            (Some(trained), Some(set)) => Some(trained.min(set)),
            (trained, set) => trained.or(set),
        };
        Ok(ModelLimits {
            context_window: window,
            max_output: None,
            source: "POST /api/show".to_owned(),
            chars_per_token: None,
        })
    }

    /// The local models from `/api/tags`, each completed by `/api/show` (four at a time).
    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        let url = format!("{}/api/tags", self.base);
        let value = self.http.get_json(&url, &HeaderMap::new()).await?;
        let tags: wire::Tags = from_answer(ProviderKind::Ollama, "model list", &value)?;
        futures::stream::iter(tags.models.into_iter().map(|model| self.show(model.name)))
            .buffered(4)
            .try_collect()
            .await
    }
}

/// The base URL of an Ollama endpoint: `/api/chat`, `/api` or `/v1` at the end are cut off.
pub(crate) fn base_url(endpoint: &str) -> String {
    let mut base = endpoint.trim().trim_end_matches('/');
    for suffix in ["/api/chat", "/api", "/v1"] {
        base = base.strip_suffix(suffix).unwrap_or(base);
    }
    base.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls() {
        assert_eq!(
            base_url("http://localhost:11434/"),
            "http://localhost:11434"
        );
        assert_eq!(base_url("http://h:1/api/chat"), "http://h:1");
        assert_eq!(base_url("http://h:1/v1"), "http://h:1");
    }
}
