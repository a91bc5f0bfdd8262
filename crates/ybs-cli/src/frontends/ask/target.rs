//! Which provider, URL and model a chat file's turn goes to: the chat's `endpoint:` (a URL, a
//! provider name, or a named endpoint of `llm.endpoints`), `backend:` and `model:`, each
//! unless the command line gave `--endpoint`/`--provider`/`--model`, which always win.

use std::collections::BTreeMap;

use serde_json::Value;
use ybs_providers::ProviderKind;

use ybs_agent::config::{Config, Source, Sources};

/// Whether the command line set `key`.
fn from_flag(sources: &Sources, key: &str) -> bool {
    matches!(sources.of(key), Source::Flag(_))
}

fn is_url(value: &str) -> bool {
    value.starts_with("http://") || value.starts_with("https://")
}

/// The provider a `backend` names: `responses` turns an OpenAI-compatible provider into the
/// Responses API (its URL kept); another provider name is that provider. `None` for a
/// backend ybs does not have.
fn with_backend(backend: &str) -> Option<String> {
    backend
        .trim()
        .parse::<ProviderKind>()
        .ok()
        .map(|kind| kind.name().to_owned())
}

/// Where a chat's turn goes, besides what [`apply`] changed in the configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// The named endpoint's request options.
    pub options: BTreeMap<String, Value>,
    /// What the chat asked for that ybs cannot do.
    pub warnings: Vec<String>,
    /// Whether someone chose the model for this endpoint (a flag, the chat, the named
    /// endpoint, or the configuration when the chat kept its endpoint). A model configured
    /// for one endpoint does not follow the chat to another: there the provider's default,
    /// or the model a server of one's own lists, is asked for.
    pub model_chosen: bool,
    /// Whether the chat sent the turn elsewhere than the configuration does (another
    /// provider or URL).
    pub moved: bool,
}

/// Applies the chat's `endpoint`, `backend` and `model` options (in force, as `options`)
/// to `config`, below the command line's flags. An `endpoint` that is neither a URL, a
/// provider nor a configured name is an error listing the names configured.
pub fn apply(
    config: &mut Config,
    sources: &Sources,
    options: &BTreeMap<String, String>,
) -> Result<Target, String> {
    let configured = (config.llm.provider.clone(), config.llm.endpoint.clone());
    let configured_model = !matches!(sources.of("llm.model"), Source::Default);
    let mut named_model = false;
    let mut endpoint_options = BTreeMap::new();
    let mut warnings = Vec::new();
    let provider_flag = from_flag(sources, "llm.provider");
    let endpoint_flag = from_flag(sources, "llm.endpoint");
    let model_flag = from_flag(sources, "llm.model");
    if let Some(value) = options.get("endpoint").map(|value| value.trim())
        && !provider_flag
        && !endpoint_flag
    {
        if is_url(value) {
            config.llm.endpoint = Some(value.to_owned());
        } else if let Some(named) = config.llm.endpoints.get(value).cloned() {
            if let Some(provider) = &named.provider {
                config.llm.provider = provider.clone();
                config.llm.endpoint = None;
            }
            if let Some(url) = &named.url {
                config.llm.endpoint = Some(url.clone());
            }
            if let Some(backend) = &named.backend {
                match with_backend(backend) {
                    Some(provider) => config.llm.provider = provider,
                    None => {
                        return Err(format!(
                            "llm.endpoints.{value}.backend `{backend}` is not a ybs provider"
                        ));
                    }
                }
            }
            if let (Some(model), false) = (&named.model, model_flag) {
                config.llm.model = model.clone();
                named_model = true;
            }
            if named.api_key.is_some() {
                config.llm.api_key = named.api_key.clone();
            }
            endpoint_options = named.options.clone();
        } else if let Ok(kind) = value.parse::<ProviderKind>() {
            config.llm.provider = kind.name().to_owned();
        } else {
            let known: Vec<&str> = config.llm.endpoints.keys().map(String::as_str).collect();
            let known = if known.is_empty() {
                "none are configured (llm.endpoints in the configuration)".to_owned()
            } else {
                format!("the configured ones are {}", known.join(", "))
            };
            return Err(format!(
                "endpoint `{value}` is not a URL, a provider or a named endpoint: {known}"
            ));
        }
    }
    if let Some(backend) = options.get("backend")
        && !provider_flag
    {
        match with_backend(backend) {
            Some(provider) => config.llm.provider = provider,
            None => warnings.push(format!(
                "backend `{}` is not a ybs provider; using {}",
                backend.trim(),
                config.llm.provider
            )),
        }
    }
    let moved = (&config.llm.provider, &config.llm.endpoint) != (&configured.0, &configured.1);
    let mut model_chosen = model_flag || named_model || (configured_model && !moved);
    if let Some(model) = options.get("model")
        && !model_flag
    {
        config.llm.model = model.trim().to_owned();
        model_chosen = true;
    }
    Ok(Target {
        options: endpoint_options,
        warnings,
        model_chosen,
        moved,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use ybs_agent::config::NamedEndpoint;

    fn options(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect()
    }

    fn config() -> Config {
        let mut config = Config::default();
        config.llm.endpoints.insert(
            "nano".into(),
            NamedEndpoint {
                provider: Some("openai".into()),
                backend: Some("responses".into()),
                model: Some("gpt-5-nano".into()),
                options: [("reasoning_effort".to_owned(), Value::from("low"))].into(),
                ..NamedEndpoint::default()
            },
        );
        config
    }

    #[test]
    fn a_named_endpoint_sets_provider_model_and_options() {
        let mut config = config();
        let target = apply(
            &mut config,
            &Sources::default(),
            &options(&[("endpoint", "nano")]),
        )
        .unwrap();
        assert!(target.warnings.is_empty());
        assert!(target.model_chosen);
        assert_eq!(config.llm.provider, "responses");
        assert_eq!(config.llm.model, "gpt-5-nano");
        assert_eq!(target.options["reasoning_effort"], "low");
    }

    #[test]
    fn an_unknown_name_lists_the_known_ones() {
        let error = apply(
            &mut config(),
            &Sources::default(),
            &options(&[("endpoint", "deep")]),
        )
        .unwrap_err();
        assert_eq!(
            error,
            "endpoint `deep` is not a URL, a provider or a named endpoint: the configured ones \
             are nano"
        );
    }

    #[test]
    fn backend_responses_keeps_the_url_and_the_chat_model_wins_over_the_endpoint() {
        let mut config = config();
        config.llm.provider = "openai-compatible".into();
        config.llm.endpoint = Some("http://127.0.0.1:8080/v1".into());
        let chat = options(&[("backend", "responses"), ("model", "tiny")]);
        assert!(
            apply(&mut config, &Sources::default(), &chat)
                .unwrap()
                .model_chosen
        );
        assert_eq!(config.llm.provider, "responses");
        assert_eq!(
            config.llm.endpoint.as_deref(),
            Some("http://127.0.0.1:8080/v1")
        );
        assert_eq!(config.llm.model, "tiny");
    }

    #[test]
    fn the_configured_model_does_not_follow_the_chat_to_another_endpoint() {
        let mut sources = Sources::default();
        sources.set(
            "llm.model",
            Source::File("/home/me/.config/ybs/config.json".into()),
        );
        let mut config = config();
        config.llm.provider = "anthropic".into();
        config.llm.model = "claude-sonnet-4-20250514".into();
        let kept = apply(&mut config.clone(), &sources, &options(&[])).unwrap();
        assert!(kept.model_chosen);
        let chat = options(&[("endpoint", "http://127.0.0.1:8080")]);
        let moved = apply(&mut config.clone(), &sources, &chat).unwrap();
        assert!(!moved.model_chosen && moved.moved);
        assert!(!kept.moved);
        let mut flagged = Sources::default();
        flagged.set("llm.model", Source::Flag("--model"));
        assert!(
            apply(&mut config.clone(), &flagged, &chat)
                .unwrap()
                .model_chosen
        );
        let named = options(&[("endpoint", "nano")]);
        assert!(apply(&mut config, &sources, &named).unwrap().model_chosen);
    }
}
