//! OpenAI's Responses API (`POST /responses`), at OpenAI or any server that speaks it:
//! replies stored and continued by `previous_response_id`, the hosted `web_search` tool,
//! images and PDFs as input parts, reasoning items sent back as the API requires.

pub(crate) mod decode;
pub(crate) mod encode;
mod wire;

use async_trait::async_trait;
use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use ybs_core::{ChatRequest, LlmError};

use crate::config::ProviderKind;
use crate::http::{Transport, secret_header};
use crate::images::load_images;
use crate::local_server::listed_or_local;
use crate::provider::{ChatStream, ModelInfo, ModelLimits, Provider};
use crate::wire::{json_bytes, model_for};

/// A provider speaking OpenAI's Responses API.
#[derive(Debug)]
pub struct ResponsesProvider {
    http: Transport,
    /// The base URL, without a trailing slash (`https://api.openai.com/v1`).
    base: String,
    model: String,
}

impl ResponsesProvider {
    pub(crate) fn new(http: Transport, base: String, model: String) -> Self {
        ResponsesProvider { http, base, model }
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
        headers
    }
}

#[async_trait]
impl Provider for ResponsesProvider {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Responses
    }

    fn default_model(&self) -> &str {
        &self.model
    }

    fn request_body(&self, request: &ChatRequest) -> Result<Value, LlmError> {
        encode::encode(request, model_for(request, &self.model))
    }

    fn stream(&self, request: &ChatRequest, cancel: CancellationToken) -> ChatStream {
        let url = format!("{}/responses", self.base);
        let body = load_images(request).and_then(|request| {
            json_bytes(encode::encode(&request, model_for(&request, &self.model))?)
        });
        self.http.stream(url, self.headers(), body, cancel)
    }

    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        let url = format!("{}/models", self.base);
        let value = self.http.get_json(&url, &self.headers()).await?;
        crate::openai::models(ProviderKind::Responses, value)
    }

    /// `/models`, and for a server of one's own (llama.cpp speaks this API too) its `/props`
    /// and `/tokenize`.
    async fn model_limits(&self, model: &str) -> Result<ModelLimits, LlmError> {
        let listed = self.list_models().await;
        let server = (&self.http, self.base.as_str(), &self.headers());
        listed_or_local(listed, (model, "GET /models"), server).await
    }
}

/// The base URL of a Responses endpoint: a full `.../responses` (or `.../chat/completions`)
/// URL is cut back, and a bare `http://host:port` gets `/v1`.
pub(crate) fn base_url(endpoint: &str) -> String {
    let trimmed = endpoint.trim().trim_end_matches('/');
    let trimmed = trimmed.strip_suffix("/responses").unwrap_or(trimmed);
    crate::openai::base_url(trimmed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls() {
        assert_eq!(
            base_url("https://api.openai.com/v1/responses"),
            "https://api.openai.com/v1"
        );
        assert_eq!(
            base_url("http://127.0.0.1:8080"),
            "http://127.0.0.1:8080/v1"
        );
    }
}
