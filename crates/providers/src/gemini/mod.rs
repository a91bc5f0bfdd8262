//! Google's Gemini API (`generateContent`), natively: function calling, thought summaries
//! and thought signatures, thinking budgets and levels, inline images and PDFs, implicit
//! cache usage, and model limits from the models endpoint.

pub(crate) mod decode;
pub(crate) mod encode;
mod wire;

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderName};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use ybs_core::{ChatRequest, LlmError};

use crate::config::ProviderKind;
use crate::http::{Transport, secret_header};
use crate::images::load_images;
use crate::provider::{ChatStream, ModelInfo, ModelLimits, Provider};
use crate::wire::{extra_bytes, from_answer, model_for, path_segment, with_extra};

/// The API version this adapter speaks when the endpoint names none.
const API_VERSION: &str = "v1beta";

/// A provider speaking the Gemini API.
#[derive(Debug)]
pub struct GeminiProvider {
    http: Transport,
    /// The base URL with its version (`https://generativelanguage.googleapis.com/v1beta`).
    base: String,
    model: String,
}

impl GeminiProvider {
    pub(crate) fn new(http: Transport, base: String, model: String) -> Self {
        GeminiProvider { http, base, model }
    }

    /// The model of `request` as the path names it (without a `models/` prefix).
    fn model<'a>(&'a self, request: &'a ChatRequest) -> &'a str {
        let model = model_for(request, &self.model);
        model.strip_prefix("models/").unwrap_or(model)
    }

    fn encode(&self, request: &ChatRequest) -> Result<wire::Request, LlmError> {
        encode::encode(request, self.model(request))
    }

    /// The key goes in `x-goog-api-key`, not in the URL, so it is never part of a logged or
    /// quoted URL.
    fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(value) = (self.http.key.as_ref()).and_then(|key| secret_header(key.expose())) {
            headers.insert(HeaderName::from_static("x-goog-api-key"), value);
        }
        headers
    }
}

#[async_trait]
impl Provider for GeminiProvider {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Gemini
    }

    fn default_model(&self) -> &str {
        &self.model
    }

    fn request_body(&self, request: &ChatRequest) -> Result<Value, LlmError> {
        with_extra(self.encode(request)?, request)
    }

    fn stream(&self, request: &ChatRequest, cancel: CancellationToken) -> ChatStream {
        let url = format!(
            "{}/models/{}:streamGenerateContent?alt=sse",
            self.base,
            path_segment(self.model(request))
        );
        let body =
            load_images(request).and_then(|request| extra_bytes(self.encode(&request)?, &request));
        self.http.stream(url, self.headers(), body, cancel)
    }

    /// Every page of `GET /models`, keeping the models that generate content.
    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        let mut models = Vec::new();
        let mut page: Option<String> = None;
        loop {
            let mut url = format!("{}/models?pageSize=1000", self.base);
            if let Some(token) = &page {
                url.push_str("&pageToken=");
                url.push_str(&path_segment(token));
            }
            let value = self.http.get_json(&url, &self.headers()).await?;
            let list: wire::ModelList = from_answer(ProviderKind::Gemini, "model list", &value)?;
            models.extend(list.models.into_iter().filter_map(model_info));
            match list.next_page_token.filter(|token| !token.is_empty()) {
                // A server repeating its token would otherwise be asked forever.
                Some(token) if page.as_ref() != Some(&token) => page = Some(token),
                _ => return Ok(models),
            }
        }
    }

    async fn model_limits(&self, model: &str) -> Result<ModelLimits, LlmError> {
        let models = self.list_models().await?;
        let model = model.strip_prefix("models/").unwrap_or(model);
        Ok(ModelLimits::from_list(&models, model, "GET /v1beta/models"))
    }
}

/// A model of the list as bb7 and ybs show it; `None` for models that do not chat
/// (embeddings, image generation).
fn model_info(model: wire::WireModel) -> Option<ModelInfo> {
    let chats = (model.supported_generation_methods.iter())
        .any(|method| method == "generateContent" || method == "streamGenerateContent");
    if !chats {
        return None;
    }
    let id = model.name.strip_prefix("models/").unwrap_or(&model.name);
    let mut info = ModelInfo::new(id);
    if let Some(name) = model.display_name {
        info.name = name;
    }
    info.description = model.description;
    info.context_length = model.input_token_limit;
    info.max_completion_tokens = model.output_token_limit;
    info.supports_tools = Some(true);
    info.supports_reasoning = model.thinking;
    Some(info)
}

/// The versioned base URL of a Gemini endpoint: a URL without a version gets `/v1beta`.
pub(crate) fn base_url(endpoint: &str) -> String {
    let trimmed = endpoint.trim().trim_end_matches('/');
    let versioned = ["/v1beta", "/v1", "/v1alpha"]
        .iter()
        .any(|version| trimmed.ends_with(version));
    if versioned {
        trimmed.to_owned()
    } else {
        format!("{trimmed}/{API_VERSION}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_carry_a_version() {
        assert_eq!(
            base_url("https://generativelanguage.googleapis.com"),
            "https://generativelanguage.googleapis.com/v1beta"
        );
        assert_eq!(
            base_url("https://generativelanguage.googleapis.com/v1/"),
            "https://generativelanguage.googleapis.com/v1"
        );
        assert_eq!(path_segment("../x?y"), "..%2Fx%3Fy");
    }
}
