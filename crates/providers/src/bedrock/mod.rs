//! Amazon Bedrock through its Converse API: `POST /model/{modelId}/converse-stream` at
//! `https://bedrock-runtime.REGION.amazonaws.com`, the request signed with SigV4 (`sign`)
//! by the credentials AWS's tools would use (`credentials`), the reply in AWS's binary
//! event stream (cut by `framing`, decoded by `decode`), errors named by their exception
//! (`errors`).

pub(crate) mod credentials;
pub(crate) mod decode;
pub(crate) mod encode;
pub(crate) mod errors;
mod sign;

use std::time::SystemTime;

use async_trait::async_trait;
use futures::StreamExt;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use ybs_core::{ChatRequest, LlmError};

use crate::config::ProviderKind;
use crate::http::Transport;
use crate::images::load_images;
use crate::provider::{ChatStream, ModelInfo, Provider};
use crate::wire::{json_bytes, model_for, path_segment};
use credentials::AwsSetup;
use sign::signed_headers;

/// A provider calling models on Amazon Bedrock.
#[derive(Debug)]
pub struct BedrockProvider {
    http: Transport,
    /// The runtime's base URL, without a trailing `/`.
    base: String,
    /// The control plane's base URL (the model list), without a trailing `/`.
    control: String,
    setup: AwsSetup,
    model: String,
}

/// The runtime and control-plane base URLs: the configured endpoint for both (a proxy or
/// a fake serves both), else AWS's hosts of the region.
pub(crate) fn base_urls(endpoint: Option<&str>, region: &str) -> (String, String) {
    match endpoint.map(str::trim).filter(|url| !url.is_empty()) {
        Some(url) => {
            let url = url.trim_end_matches('/').to_owned();
            (url.clone(), url)
        }
        None => (
            format!("https://bedrock-runtime.{region}.amazonaws.com"),
            format!("https://bedrock.{region}.amazonaws.com"),
        ),
    }
}

impl BedrockProvider {
    pub(crate) fn new(
        http: Transport,
        (base, control): (String, String),
        setup: AwsSetup,
        model: String,
    ) -> Self {
        BedrockProvider {
            http,
            base,
            control,
            setup,
            model,
        }
    }

    fn url(&self, model: &str) -> String {
        format!(
            "{}/model/{}/converse-stream",
            self.base,
            path_segment(model)
        )
    }

    fn sign(
        &self,
        method: &str,
        url: &str,
        body: &[u8],
    ) -> Result<reqwest::header::HeaderMap, LlmError> {
        let setup = &self.setup;
        signed_headers(
            &setup.credentials,
            &setup.region,
            method,
            url,
            body,
            SystemTime::now(),
        )
    }
}

#[async_trait]
impl Provider for BedrockProvider {
    fn kind(&self) -> ProviderKind {
        self.http.kind
    }

    fn default_model(&self) -> &str {
        &self.model
    }

    fn request_body(&self, request: &ChatRequest) -> Result<Value, LlmError> {
        encode::encode(request, model_for(request, &self.model))
    }

    /// Signs the exact bytes sent, then streams.
    fn stream(&self, request: &ChatRequest, cancel: CancellationToken) -> ChatStream {
        let model = model_for(request, &self.model);
        let url = self.url(model);
        let body =
            load_images(request).and_then(|request| json_bytes(encode::encode(&request, model)?));
        let headers = match &body {
            Ok(body) => self.sign("POST", &url, body),
            Err(error) => Err(error.clone()),
        };
        match headers {
            Ok(headers) => self.http.stream(url, headers, body, cancel),
            Err(error) => futures::stream::once(async move { Err(error) }).boxed(),
        }
    }

    /// The foundation models of the region that answer in text (`ListFoundationModels`);
    /// the configured model alone when the credentials may not list them.
    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        let url = format!("{}/foundation-models?byOutputModality=TEXT", self.control);
        let listed = match self.sign("GET", &url, b"") {
            Ok(headers) => self.http.get_json(&url, &headers).await,
            Err(error) => Err(error),
        };
        let value = match listed {
            Ok(value) => value,
            Err(error) => {
                tracing::warn!(%error, "cannot list Amazon Bedrock's models; using the configured one");
                return Ok(vec![ModelInfo::new(self.model.clone())]);
            }
        };
        let summaries = value["modelSummaries"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut models: Vec<ModelInfo> = (summaries.iter())
            .filter(|summary| {
                summary
                    .pointer("/modelLifecycle/status")
                    .is_none_or(|status| status == "ACTIVE")
            })
            .filter_map(|summary| {
                let mut model = ModelInfo::new(summary["modelId"].as_str()?);
                if let Some(name) = summary["modelName"].as_str() {
                    let provider = summary["providerName"].as_str().unwrap_or_default();
                    model.name = format!("{provider} {name}").trim().to_owned();
                }
                Some(model)
            })
            .collect();
        if !models.iter().any(|model| model.id == self.model) {
            models.insert(0, ModelInfo::new(self.model.clone()));
        }
        Ok(models)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hosts_follow_the_region_unless_an_endpoint_is_given() {
        assert_eq!(
            base_urls(None, "eu-central-1"),
            (
                "https://bedrock-runtime.eu-central-1.amazonaws.com".to_owned(),
                "https://bedrock.eu-central-1.amazonaws.com".to_owned()
            )
        );
        let (runtime, control) = base_urls(Some("http://127.0.0.1:9/ "), "us-east-1");
        assert_eq!(
            (runtime.as_str(), control.as_str()),
            ("http://127.0.0.1:9", "http://127.0.0.1:9")
        );
    }
}
