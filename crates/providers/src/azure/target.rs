//! Where an Azure OpenAI endpoint sends requests: the URL forms of Azure's REST reference.

use crate::error::ConfigError;
use crate::wire::path_segment;

/// The `api-version` of the Chat Completions data plane used when the endpoint names none
/// (the latest generally available one).
pub(crate) const DEFAULT_API_VERSION: &str = "2024-10-21";

/// What the configured endpoint names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// The resource (`https://NAME.openai.azure.com`): each model is the deployment of that
    /// name, at `/openai/deployments/{model}` with an `api-version`.
    Resource { root: String, api_version: String },
    /// One deployment (`.../openai/deployments/NAME`), which serves whatever model is asked.
    Deployment {
        root: String,
        base: String,
        name: String,
        api_version: String,
    },
    /// The resource's v1 API (`.../openai/v1`): no `api-version`; the body's model names
    /// the deployment.
    V1 { root: String, base: String },
}

impl Target {
    /// Reads an endpoint: its `api-version` query parameter (else [`DEFAULT_API_VERSION`])
    /// and which of the forms above its path is.
    pub(crate) fn parse(endpoint: &str) -> Result<Target, ConfigError> {
        let url =
            reqwest::Url::parse(endpoint.trim()).map_err(|error| ConfigError::InvalidEndpoint {
                endpoint: endpoint.to_owned(),
                reason: error.to_string(),
            })?;
        let api_version = (url.query_pairs())
            .find(|(name, _)| name == "api-version")
            .map_or_else(
                || DEFAULT_API_VERSION.to_owned(),
                |(_, value)| value.into_owned(),
            );
        let mut origin = url.origin().ascii_serialization();
        let path = url.path().trim_end_matches('/');
        let path = ["/chat/completions", "/responses"]
            .iter()
            .find_map(|operation| path.strip_suffix(operation))
            .unwrap_or(path);
        let Some((prefix, rest)) = path.split_once("/openai") else {
            origin.push_str(path);
            return Ok(Target::Resource {
                root: origin,
                api_version,
            });
        };
        let root = format!("{origin}{prefix}");
        let base = format!("{root}/openai{rest}");
        if let Some(name) = rest.strip_prefix("/deployments/") {
            return Ok(Target::Deployment {
                root,
                base,
                name: name.to_owned(),
                api_version,
            });
        }
        if rest == "/v1" {
            return Ok(Target::V1 { root, base });
        }
        Ok(Target::Resource { root, api_version })
    }

    /// The model the body names: a deployment endpoint's own name when it has one.
    pub(crate) fn model<'a>(&'a self, requested: &'a str) -> &'a str {
        match self {
            Target::Deployment { name, .. } if requested.is_empty() => name,
            _ => requested,
        }
    }

    /// Where a chat completion of `model` is posted.
    pub(crate) fn chat_url(&self, model: &str) -> String {
        match self {
            Target::Resource { root, api_version } => format!(
                "{root}/openai/deployments/{}/chat/completions?api-version={api_version}",
                path_segment(model)
            ),
            Target::Deployment {
                base, api_version, ..
            } => format!("{base}/chat/completions?api-version={api_version}"),
            Target::V1 { base, .. } => format!("{base}/chat/completions"),
        }
    }

    /// Where a Responses request is posted: the resource's v1 API, which needs no version.
    pub(crate) fn responses_url(&self) -> String {
        format!("{}/openai/v1/responses", self.root())
    }

    /// The model list of the resource.
    pub(crate) fn models_url(&self) -> String {
        match self {
            Target::Resource { root, api_version }
            | Target::Deployment {
                root, api_version, ..
            } => {
                format!("{root}/openai/models?api-version={api_version}")
            }
            Target::V1 { base, .. } => format!("{base}/models"),
        }
    }

    fn root(&self) -> &str {
        match self {
            Target::Resource { root, .. }
            | Target::Deployment { root, .. }
            | Target::V1 { root, .. } => root,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_resource_sends_each_model_to_its_deployment() {
        let target = Target::parse("https://contoso.openai.azure.com/").unwrap();
        assert_eq!(
            target.chat_url("gpt-4.1"),
            "https://contoso.openai.azure.com/openai/deployments/gpt-4.1/chat/completions\
             ?api-version=2024-10-21"
        );
        assert_eq!(
            target.responses_url(),
            "https://contoso.openai.azure.com/openai/v1/responses"
        );
        assert_eq!(
            target.chat_url("../../x?y"),
            "https://contoso.openai.azure.com/openai/deployments/..%2F..%2Fx%3Fy/chat/completions\
             ?api-version=2024-10-21"
        );
    }

    #[test]
    fn a_deployment_url_keeps_its_version_and_name() {
        let target = Target::parse(
            "https://contoso.openai.azure.com/openai/deployments/prod-4o/chat/completions\
             ?api-version=2025-01-01-preview",
        )
        .unwrap();
        assert_eq!(
            target.chat_url("ignored"),
            "https://contoso.openai.azure.com/openai/deployments/prod-4o/chat/completions\
             ?api-version=2025-01-01-preview"
        );
        assert_eq!(target.model(""), "prod-4o");
        assert_eq!(
            target.models_url(),
            "https://contoso.openai.azure.com/openai/models?api-version=2025-01-01-preview"
        );
    }

    #[test]
    fn the_v1_api_needs_no_version() {
        let target = Target::parse("http://127.0.0.1:9/openai/v1").unwrap();
        assert_eq!(
            target.chat_url("gpt-5-mini"),
            "http://127.0.0.1:9/openai/v1/chat/completions"
        );
        assert_eq!(target.models_url(), "http://127.0.0.1:9/openai/v1/models");
    }
}
