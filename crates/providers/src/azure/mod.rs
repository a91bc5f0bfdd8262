//! Azure OpenAI: OpenAI's Chat Completions and Responses APIs served from one's own Azure
//! resource. The bodies, streams and decoders are OpenAI's (the encoders of `openai/` and
//! `responses/` are used as they are); what differs is where requests go (a deployment's
//! URL with an `api-version`, or the resource's `/openai/v1` API) and the key, sent in
//! an `api-key` header, or as a bearer token when it is one (`Bearer <Entra ID token>`).

mod target;

use async_trait::async_trait;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use ybs_core::{ChatRequest, LlmError};

use crate::config::{OpenRouterOptions, ProviderKind};
use crate::http::{Transport, secret_header};
use crate::images::load_images;
use crate::provider::{ChatStream, ModelInfo, Provider};
use crate::wire::{json_bytes, model_for, with_extra};

pub(crate) use target::Target;

/// Which of OpenAI's APIs a deployment is spoken to with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AzureApi {
    /// `/chat/completions`.
    Chat,
    /// `/responses`.
    Responses,
}

/// A provider speaking to an Azure OpenAI resource.
#[derive(Debug)]
pub struct AzureProvider {
    http: Transport,
    target: Target,
    api: AzureApi,
    model: String,
}

impl AzureProvider {
    pub(crate) fn new(http: Transport, target: Target, api: AzureApi, model: String) -> Self {
        AzureProvider {
            http,
            target,
            api,
            model,
        }
    }

    /// The body of `request`, whose images must have been loaded. Azure serves OpenAI's own
    /// API, so the request is written as for OpenAI.
    fn body(&self, request: &ChatRequest) -> Result<Value, LlmError> {
        let model = self.target.model(model_for(request, &self.model));
        match self.api {
            AzureApi::Chat => {
                let options = OpenRouterOptions::default();
                let body =
                    crate::openai::encode::encode(request, model, ProviderKind::OpenAi, &options)?;
                with_extra(body, request)
            }
            AzureApi::Responses => crate::responses::encode::encode(request, model),
        }
    }

    fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        let Some(key) = &self.http.key else {
            return headers;
        };
        let key = key.expose();
        let name = if key.starts_with("Bearer ") {
            AUTHORIZATION
        } else {
            HeaderName::from_static("api-key")
        };
        if let Some(value) = secret_header(key) {
            headers.insert(name, value);
        }
        headers
    }
}

#[async_trait]
impl Provider for AzureProvider {
    fn kind(&self) -> ProviderKind {
        self.http.kind
    }

    fn default_model(&self) -> &str {
        &self.model
    }

    fn request_body(&self, request: &ChatRequest) -> Result<Value, LlmError> {
        self.body(request)
    }

    fn stream(&self, request: &ChatRequest, cancel: CancellationToken) -> ChatStream {
        let model = model_for(request, &self.model);
        let url = match self.api {
            AzureApi::Chat => self.target.chat_url(model),
            AzureApi::Responses => self.target.responses_url(),
        };
        let body = load_images(request).and_then(|request| json_bytes(self.body(&request)?));
        self.http.stream(url, self.headers(), body, cancel)
    }

    /// The models the resource can deploy (`GET /openai/models`); their windows come from
    /// the catalog, as the list names none.
    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        let value = (self.http)
            .get_json(&self.target.models_url(), &self.headers())
            .await?;
        crate::openai::models(self.http.kind, value)
    }
}
