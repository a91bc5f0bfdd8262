//! Vertex AI: Google's Gemini models (the Gemini wire of `gemini/`) and Anthropic's Claude
//! models (the Messages wire of `anthropic/`, as Vertex takes it) in a Google Cloud project
//! and region, with Google credentials (see `credentials`).

pub(crate) mod credentials;
mod models;

use std::sync::Arc;

use async_trait::async_trait;
use futures::StreamExt;
use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use ybs_core::{ChatRequest, LlmError};

use crate::config::ProviderKind;
use crate::error::ConfigError;
use crate::http::{Transport, secret_header};
use crate::images::load_images;
use crate::provider::{ChatStream, ModelInfo, Provider};
use crate::wire::{json_bytes, json_value, model_for, path_segment, with_extra};
use credentials::TokenSource;

/// The `anthropic_version` Vertex AI wants in a Claude request's body.
pub const VERTEX_ANTHROPIC_VERSION: &str = "vertex-2023-10-16";

/// Whose models a Vertex provider calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Publisher {
    /// Gemini, through `:streamGenerateContent`.
    Google,
    /// Claude, through `:streamRawPredict`.
    Anthropic,
}

/// A provider calling models on Vertex AI.
#[derive(Debug)]
pub struct VertexProvider {
    http: Transport,
    /// `https://HOST/v1/projects/PROJECT/locations/REGION`.
    base: String,
    publisher: Publisher,
    model: String,
    tokens: Arc<TokenSource>,
}

impl VertexProvider {
    pub(crate) fn new(
        http: Transport,
        base: String,
        publisher: Publisher,
        model: String,
        tokens: Arc<TokenSource>,
    ) -> Self {
        VertexProvider {
            http,
            base,
            publisher,
            model,
            tokens,
        }
    }

    /// The body of `request`, whose images must have been loaded: Gemini's as it is;
    /// Anthropic's without `model` (the URL names it) and with Vertex's `anthropic_version`.
    fn body(&self, request: &ChatRequest) -> Result<Value, LlmError> {
        let model = model_for(request, &self.model);
        match self.publisher {
            Publisher::Google => {
                with_extra(crate::gemini::encode::encode(request, model)?, request)
            }
            Publisher::Anthropic => {
                let mut body = json_value(crate::anthropic::encode::encode(request, model)?)?;
                if let Value::Object(fields) = &mut body {
                    fields.remove("model");
                    fields.insert(
                        "anthropic_version".to_owned(),
                        json!(VERTEX_ANTHROPIC_VERSION),
                    );
                }
                Ok(body)
            }
        }
    }

    fn url(&self, model: &str) -> String {
        let (publisher, method) = match self.publisher {
            Publisher::Google => ("google", "streamGenerateContent?alt=sse"),
            Publisher::Anthropic => ("anthropic", "streamRawPredict"),
        };
        let model = model.strip_prefix("models/").unwrap_or(model);
        format!(
            "{}/publishers/{publisher}/models/{}:{method}",
            self.base,
            path_segment(model)
        )
    }
}

#[async_trait]
impl Provider for VertexProvider {
    fn kind(&self) -> ProviderKind {
        self.http.kind
    }

    fn default_model(&self) -> &str {
        &self.model
    }

    fn request_body(&self, request: &ChatRequest) -> Result<Value, LlmError> {
        self.body(request)
    }

    /// Gets an access token first (the one in hand while it is valid), then streams. A
    /// token refused with a 401 before anything arrived (revoked early) is replaced by a
    /// fresh one once.
    fn stream(&self, request: &ChatRequest, cancel: CancellationToken) -> ChatStream {
        let url = self.url(model_for(request, &self.model));
        let body = load_images(request).and_then(|request| json_bytes(self.body(&request)?));
        let http = self.http.clone();
        let tokens = Arc::clone(&self.tokens);
        async_stream::stream! {
            let mut refreshed = false;
            loop {
                let token = tokio::select! {
                    biased;
                    _ = cancel.cancelled() => Err(crate::http::cancelled()),
                    token = tokens.token(&http) => token,
                };
                let headers = match token {
                    Ok(token) => bearer(token.expose()),
                    Err(error) => {
                        yield Err(error);
                        return;
                    }
                };
                let mut events = http.stream(url.clone(), headers, body.clone(), cancel.clone());
                let first = events.next().await;
                if let Some(Err(error)) = &first
                    && error.status == Some(401)
                    && !refreshed
                    && tokens.refreshable()
                {
                    tracing::warn!(error = %error, "Vertex AI refused the access token; fetching a fresh one");
                    tokens.forget().await;
                    refreshed = true;
                    continue;
                }
                if let Some(event) = first {
                    yield event;
                }
                while let Some(event) = events.next().await {
                    yield event;
                }
                return;
            }
        }
        .boxed()
    }

    /// The publisher's models of Model Garden (their limits from the catalog); the
    /// configured one alone when they cannot be listed.
    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        let headers = match self.tokens.token(&self.http).await {
            Ok(token) => bearer(token.expose()),
            Err(error) => {
                tracing::warn!(%error, "no token to list Vertex AI's models");
                return Ok(vec![ModelInfo::new(self.model.clone())]);
            }
        };
        let get = |url: String| {
            let headers = headers.clone();
            async move { self.http.get_json(&url, &headers).await }
        };
        let publisher = match self.publisher {
            Publisher::Google => "google",
            Publisher::Anthropic => "anthropic",
        };
        Ok(models::list(&self.base, publisher, &self.model, get).await)
    }
}

fn bearer(token: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    if let Some(value) = secret_header(&format!("Bearer {token}")) {
        headers.insert(AUTHORIZATION, value);
    }
    headers
}

/// The variables Google's and Anthropic's tools read the project from, in order.
const PROJECT_VARIABLES: [&str; 3] = [
    "GOOGLE_CLOUD_PROJECT",
    "ANTHROPIC_VERTEX_PROJECT_ID",
    "CLOUDSDK_CORE_PROJECT",
];
/// The variables they read the region from, in order.
const REGION_VARIABLES: [&str; 2] = ["GOOGLE_CLOUD_LOCATION", "CLOUD_ML_REGION"];

/// The project-and-region base of requests. An endpoint naming them
/// (`https://us-east5-aiplatform.googleapis.com/v1/projects/P/locations/us-east5`) is used as
/// it is; otherwise they come from the environment (the project else from the credentials;
/// the region else `global`) and the host from the region.
pub(crate) fn base_url(
    endpoint: Option<&str>,
    default_endpoint: &str,
    tokens: &TokenSource,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ConfigError> {
    let endpoint = endpoint.map(str::trim).filter(|url| !url.is_empty());
    if let Some(url) = endpoint
        && let Some(at) = url.find("/projects/")
    {
        let rest = &url[at..];
        let parts: Vec<&str> = rest.split('/').collect();
        if parts.len() >= 5 && parts[3] == "locations" {
            return Ok(format!("{}{}", &url[..at], parts[..5].join("/")));
        }
    }
    let first = |names: &[&str]| {
        (names.iter())
            .find_map(|name| env(name).map(|value| value.trim().to_owned()))
            .filter(|value| !value.is_empty())
    };
    let project = first(&PROJECT_VARIABLES)
        .or_else(|| tokens.project.clone())
        .ok_or_else(|| {
            ConfigError::Credentials(
                "no Google Cloud project: set GOOGLE_CLOUD_PROJECT, or name it in the endpoint \
                 (https://REGION-aiplatform.googleapis.com/v1/projects/PROJECT/locations/REGION)"
                    .to_owned(),
            )
        })?;
    let region = first(&REGION_VARIABLES).unwrap_or_else(|| "global".to_owned());
    for (what, value) in [("project", &project), ("region", &region)] {
        let plain = (value.bytes())
            .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-');
        if !plain {
            return Err(ConfigError::Credentials(format!(
                "the Google Cloud {what} {value:?} is not a {what} name (lowercase letters, digits, -)"
            )));
        }
    }
    let host = match endpoint {
        Some(url) => url.trim_end_matches('/').trim_end_matches("/v1").to_owned(),
        None if region == "global" => default_endpoint.to_owned(),
        None => format!("https://{region}-aiplatform.googleapis.com"),
    };
    Ok(format!("{host}/v1/projects/{project}/locations/{region}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::config::ApiKey;

    fn fixed() -> TokenSource {
        let found = TokenSource::find(Some(ApiKey::new("ya29.t")), &|_| None).unwrap();
        Arc::try_unwrap(found).unwrap()
    }

    #[test]
    fn project_and_region_come_from_the_endpoint_or_the_environment() {
        let tokens = fixed();
        let default = "https://aiplatform.googleapis.com";
        let named = "https://us-east5-aiplatform.googleapis.com/v1/projects/p1/locations/us-east5/publishers/x";
        assert_eq!(
            base_url(Some(named), default, &tokens, &|_| None).unwrap(),
            "https://us-east5-aiplatform.googleapis.com/v1/projects/p1/locations/us-east5"
        );
        let env = |name: &str| match name {
            "ANTHROPIC_VERTEX_PROJECT_ID" => Some("p2".to_owned()),
            "CLOUD_ML_REGION" => Some("europe-west1".to_owned()),
            _ => None,
        };
        assert_eq!(
            base_url(None, default, &tokens, &env).unwrap(),
            "https://europe-west1-aiplatform.googleapis.com/v1/projects/p2/locations/europe-west1"
        );
        let global = |name: &str| (name == "GOOGLE_CLOUD_PROJECT").then(|| "p3".to_owned());
        assert_eq!(
            base_url(None, default, &tokens, &global).unwrap(),
            "https://aiplatform.googleapis.com/v1/projects/p3/locations/global"
        );
        let err = base_url(None, default, &tokens, &|_| None).unwrap_err();
        assert!(err.to_string().contains("GOOGLE_CLOUD_PROJECT"), "{err}");
    }

    #[test]
    fn a_region_cannot_change_the_host() {
        let tokens = fixed();
        let env = |name: &str| match name {
            "GOOGLE_CLOUD_PROJECT" => Some("p".to_owned()),
            "CLOUD_ML_REGION" => Some("attacker.example/x#".to_owned()),
            _ => None,
        };
        let err = base_url(None, "https://aiplatform.googleapis.com", &tokens, &env)
            .unwrap_err()
            .to_string();
        assert!(err.contains("is not a region name"), "{err}");
    }
}
