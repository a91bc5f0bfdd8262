//! Building a provider from its config.

use std::sync::Arc;

use crate::anthropic::{self, AnthropicProvider};
use crate::azure::{AzureApi, AzureProvider, Target};
use crate::bedrock::{self, BedrockProvider};
use crate::config::{ApiKey, Protocol, ProviderConfig, ProviderKind};
use crate::error::ConfigError;
use crate::gemini::{self, GeminiProvider};
use crate::http::Transport;
use crate::ollama::{self, OllamaProvider};
use crate::openai::{self, OpenAiProvider};
use crate::provider::Provider;
use crate::responses::ResponsesProvider;
use crate::vertex::credentials::TokenSource;
use crate::vertex::{self, Publisher, VertexProvider};

/// Builds the provider `config` describes, reading a missing API key from the kind's
/// environment variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `OPENROUTER_API_KEY`,
/// `DEEPSEEK_API_KEY`, `GEMINI_API_KEY`, `AZURE_OPENAI_API_KEY`).
pub fn build(config: &ProviderConfig) -> Result<Arc<dyn Provider>, ConfigError> {
    build_with_env(config, |name| std::env::var(name).ok())
}

/// [`build`], with the environment given as a lookup function.
pub fn build_with_env(
    config: &ProviderConfig,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Arc<dyn Provider>, ConfigError> {
    let kind = config.kind;
    if kind.protocol() == Protocol::Unavailable {
        return Err(ConfigError::Unavailable { kind });
    }
    let key = resolve_api_key(config, &env)?;
    let endpoint = match (&config.endpoint, kind.default_endpoint()) {
        (Some(endpoint), _) if !endpoint.trim().is_empty() => endpoint.trim().to_owned(),
        (_, Some(default)) => default.to_owned(),
        (_, None) => return Err(ConfigError::MissingEndpoint { kind }),
    };
    check_endpoint(&endpoint)?;
    let http = Transport::new(kind, config.timeouts, config.retry, key)?;
    let model = config.model.clone();
    Ok(match kind.protocol() {
        Protocol::Anthropic => Arc::new(AnthropicProvider::new(
            http,
            anthropic::base_url(&endpoint),
            model,
        )),
        Protocol::Ollama => Arc::new(OllamaProvider::new(
            http,
            ollama::base_url(&endpoint),
            model,
            config.ollama.clone(),
        )),
        Protocol::AzureChat => Arc::new(AzureProvider::new(
            http,
            Target::parse(&endpoint)?,
            AzureApi::Chat,
            model,
        )),
        Protocol::AzureResponses => Arc::new(AzureProvider::new(
            http,
            Target::parse(&endpoint)?,
            AzureApi::Responses,
            model,
        )),
        Protocol::Vertex | Protocol::VertexAnthropic => {
            // The key, when given, is an access token; else credentials are looked for.
            let tokens = TokenSource::find(http.key.clone(), &env)?;
            let default = kind.default_endpoint().unwrap_or_default();
            let base = vertex::base_url(config.endpoint.as_deref(), default, &tokens, &env)?;
            check_endpoint(&base)?;
            let publisher = if kind.protocol() == Protocol::Vertex {
                Publisher::Google
            } else {
                Publisher::Anthropic
            };
            Arc::new(VertexProvider::new(http, base, publisher, model, tokens))
        }
        Protocol::Bedrock => {
            // The key, when given, is a Bedrock API key; else AWS credentials sign.
            let setup = bedrock::credentials::find(http.key.clone(), &env)?;
            let urls = bedrock::base_urls(config.endpoint.as_deref(), &setup.region);
            check_endpoint(&urls.0)?;
            Arc::new(BedrockProvider::new(http, urls, setup, model))
        }
        Protocol::Gemini => Arc::new(GeminiProvider::new(
            http,
            gemini::base_url(&endpoint),
            model,
        )),
        Protocol::Responses => Arc::new(ResponsesProvider::new(
            http,
            crate::responses::base_url(&endpoint),
            model,
        )),
        Protocol::OpenAi | Protocol::Unavailable => Arc::new(OpenAiProvider::new(
            http,
            openai::base_url(&endpoint),
            model,
            config.openrouter.clone(),
        )),
    })
}

/// The API key: the config's, else the kind's environment variable; an error for hosted
/// services that have neither.
pub fn resolve_api_key(
    config: &ProviderConfig,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<ApiKey>, ConfigError> {
    let from_config = config
        .api_key
        .clone()
        .filter(|key| !key.expose().is_empty());
    let key = from_config.or_else(|| {
        config
            .kind
            .api_key_env()
            .and_then(&env)
            .map(ApiKey::new)
            .filter(|key| !key.expose().is_empty())
    });
    let needed = (config.kind.capabilities()).needs_api_key(config.endpoint.as_deref());
    if key.is_none() && needed {
        return Err(ConfigError::MissingApiKey { kind: config.kind });
    }
    Ok(key)
}

fn check_endpoint(endpoint: &str) -> Result<(), ConfigError> {
    let invalid = |reason: &str| ConfigError::InvalidEndpoint {
        endpoint: endpoint.to_owned(),
        reason: reason.to_owned(),
    };
    let Some((scheme, rest)) = endpoint.split_once("://") else {
        return Err(invalid("no http:// or https:// scheme"));
    };
    if scheme != "http" && scheme != "https" {
        return Err(invalid("the scheme must be http or https"));
    }
    if rest.is_empty() || rest.starts_with('/') {
        return Err(invalid("no host"));
    }
    reqwest::Url::parse(endpoint).map_err(|error| invalid(&error.to_string()))?;
    Ok(())
}

/// The kinds this platform can use, for `/provider list` and error messages.
pub fn available_kinds() -> Vec<ProviderKind> {
    ProviderKind::ALL
        .into_iter()
        .filter(|kind| kind.is_available())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn keys_come_from_config_then_env() {
        let config = ProviderConfig::new(ProviderKind::OpenRouter, "m");
        let env = |name: &str| (name == "OPENROUTER_API_KEY").then(|| "sk-or-env".to_owned());
        assert_eq!(
            resolve_api_key(&config, env).unwrap().unwrap().expose(),
            "sk-or-env"
        );
        let config = config.with_api_key("sk-or-config");
        assert_eq!(
            resolve_api_key(&config, env).unwrap().unwrap().expose(),
            "sk-or-config"
        );
        let local = ProviderConfig::new(ProviderKind::Ollama, "m");
        assert_eq!(resolve_api_key(&local, no_env).unwrap(), None);
    }

    #[test]
    fn hosted_services_need_a_key() {
        let config = ProviderConfig::new(ProviderKind::OpenAi, "gpt");
        let err = build_with_env(&config, no_env).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no API key for OpenAI: set OPENAI_API_KEY or `api_key` in the config"
        );
        // Anthropic's API needs one at Anthropic or any hosted endpoint, not at a server on
        // this machine or the local network (llama.cpp speaks it too).
        let anthropic = ProviderConfig::new(ProviderKind::Anthropic, "claude");
        assert!(build_with_env(&anthropic, no_env).is_err());
        let hosted = anthropic.clone().with_endpoint("https://api.example.com");
        assert!(build_with_env(&hosted, no_env).is_err());
        for local in ["http://127.0.0.1:8080", "http://localhost:8080/v1/messages"] {
            let config = anthropic.clone().with_endpoint(local);
            assert_eq!(resolve_api_key(&config, no_env).unwrap(), None, "{local}");
            assert!(build_with_env(&config, no_env).is_ok(), "{local}");
        }
    }

    #[test]
    fn apple_is_refused_with_the_alternatives() {
        let config = ProviderConfig::new(ProviderKind::Apple, "foundation");
        let err = build_with_env(&config, no_env).unwrap_err();
        assert_eq!(
            err,
            ConfigError::Unavailable {
                kind: ProviderKind::Apple
            }
        );
        assert!(
            err.to_string()
                .contains("use one of: openai, openrouter, anthropic, ollama")
        );
        assert!(!available_kinds().contains(&ProviderKind::Apple));
    }

    #[test]
    fn custom_servers_need_a_valid_endpoint() {
        let config = ProviderConfig::new(ProviderKind::OpenAiCompatible, "m");
        assert_eq!(
            build_with_env(&config, no_env).unwrap_err(),
            ConfigError::MissingEndpoint {
                kind: ProviderKind::OpenAiCompatible
            }
        );
        let config = config.with_endpoint("localhost:8080");
        assert_eq!(
            build_with_env(&config, no_env).unwrap_err().to_string(),
            "invalid endpoint \"localhost:8080\": no http:// or https:// scheme (expected \
             something like https://host/v1)"
        );
        let config = ProviderConfig::new(ProviderKind::OpenAiCompatible, "m")
            .with_endpoint("http://127.0.0.1:9/v1");
        let provider = build_with_env(&config, no_env).unwrap();
        assert_eq!(provider.kind(), ProviderKind::OpenAiCompatible);
        assert_eq!(provider.default_model(), "m");
    }

    #[test]
    fn debug_output_hides_the_key() {
        let config = ProviderConfig::new(ProviderKind::Anthropic, "claude")
            .with_api_key("sk-ant-secret-key");
        let provider = build_with_env(&config, no_env).unwrap();
        let shown = format!("{provider:?}");
        assert!(!shown.contains("sk-ant-secret-key"), "{shown}");
    }
}
