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
use crate::provider::{ChatStream, ModelInfo, Provider};
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
        let url = format!("{}/api/show", self.base);
        let value = self
            .http
            .post_json(&url, &HeaderMap::new(), &json!({ "model": name }))
            .await?;
        let show: wire::Show = from_answer(ProviderKind::Ollama, "model details", &value)?;
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
        Ok(info)
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
