//! Anthropic Messages (`/v1/messages`), with extended thinking and tool use.

pub(crate) mod decode;
pub(crate) mod encode;
mod wire;

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use ybs_core::{ChatRequest, LlmError};

use crate::config::ProviderKind;
use crate::http::{Transport, secret_header};
use crate::images::load_images;
use crate::local_server::listed_or_local;
use crate::provider::{ChatStream, ModelInfo, ModelLimits, Provider};
use crate::wire::{extra_bytes, from_answer, model_for, with_extra};

/// The API version this adapter speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A provider speaking Anthropic's Messages API.
#[derive(Debug)]
pub struct AnthropicProvider {
    http: Transport,
    /// The base URL without `/v1` (`https://api.anthropic.com`).
    base: String,
    model: String,
}

impl AnthropicProvider {
    pub(crate) fn new(http: Transport, base: String, model: String) -> Self {
        AnthropicProvider { http, base, model }
    }

    /// The wire body for `request`, whose images must have been loaded.
    fn encode<'a>(&'a self, request: &'a ChatRequest) -> Result<wire::Request<'a>, LlmError> {
        encode::encode(request, model_for(request, &self.model))
    }

    fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(value) = self
            .http
            .key
            .as_ref()
            .and_then(|key| secret_header(key.expose()))
        {
            headers.insert(HeaderName::from_static("x-api-key"), value);
        }
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        headers
    }
}

#[async_trait]
impl Provider for AnthropicProvider {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Anthropic
    }

    fn default_model(&self) -> &str {
        &self.model
    }

    fn request_body(&self, request: &ChatRequest) -> Result<Value, LlmError> {
        with_extra(self.encode(request)?, request)
    }

    fn stream(&self, request: &ChatRequest, cancel: CancellationToken) -> ChatStream {
        let url = format!("{}/v1/messages", self.base);
        let body =
            load_images(request).and_then(|request| extra_bytes(self.encode(&request)?, &request));
        self.http.stream(url, self.headers(), body, cancel)
    }

    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        let url = format!("{}/v1/models?limit=1000", self.base);
        let value = self.http.get_json(&url, &self.headers()).await?;
        let list: wire::ModelList = from_answer(ProviderKind::Anthropic, "model list", &value)?;
        Ok(list
            .data
            .into_iter()
            .map(|model| {
                let mut info = ModelInfo::new(model.id);
                if let Some(name) = model.display_name {
                    info.name = name;
                }
                info.supports_tools = Some(true);
                info
            })
            .collect())
    }

    /// `/v1/models`, and for a server of one's own (llama.cpp speaks this API too) its
    /// `/props` and `/tokenize`.
    async fn model_limits(&self, model: &str) -> Result<ModelLimits, LlmError> {
        let listed = self.list_models().await;
        let server = (&self.http, self.base.as_str(), &self.headers());
        listed_or_local(listed, (model, "GET /v1/models"), server).await
    }
}

/// The base URL of an Anthropic endpoint: `/v1/messages` or `/v1` at the end are cut off.
pub(crate) fn base_url(endpoint: &str) -> String {
    let trimmed = endpoint.trim().trim_end_matches('/');
    let trimmed = trimmed.strip_suffix("/messages").unwrap_or(trimmed);
    trimmed.strip_suffix("/v1").unwrap_or(trimmed).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls() {
        assert_eq!(
            base_url("https://api.anthropic.com"),
            "https://api.anthropic.com"
        );
        assert_eq!(
            base_url("https://api.anthropic.com/v1/"),
            "https://api.anthropic.com"
        );
        assert_eq!(
            base_url("http://127.0.0.1:8/v1/messages"),
            "http://127.0.0.1:8"
        );
    }
}
