//! The model-calling settings of `~/.config/bb7/config.json`, checked before anything is sent:
//! a missing file is `Config file not found: ~/.config/bb7/config.json`, a missing or empty
//! `api_key` (for a provider that needs one, when its environment variable is not set either)
//! is `API key not set in config`, an unknown (or empty) `diff_mode` names the valid values, a
//! `diff_mode` that is not a string is `invalid config JSON` (as in the first bb7).
//!
//! The provider is chosen as in ybs: `provider` names its kind (`openrouter` when absent, so
//! the first bb7's config keeps working), `base_url` its endpoint (the kind's default when
//! absent), `api_key` its key (the kind's variable, such as `ANTHROPIC_API_KEY`, when absent).

use std::sync::Arc;

use serde_json::Value;
use ybs_edit::DiffMode;
use ybs_providers::{
    ApiKey, OpenRouterOptions, Provider, ProviderConfig, ProviderKind, build_with_env,
};

use crate::store::global::{Config, Home};
use crate::wire::error::{Error, Result};

/// The config error of the protocol spec for a missing file.
pub const CONFIG_NOT_FOUND: &str = "Config file not found: ~/.config/bb7/config.json";
/// The config error of the protocol spec for a missing key.
pub const API_KEY_NOT_SET: &str = "API key not set in config";
/// The config error for a provider without a default endpoint and no `base_url`.
pub const BASE_URL_NOT_SET: &str = "base_url not set in config";
/// The config error of the first bb7 for a field of the wrong JSON type.
pub const INVALID_JSON: &str = "invalid config JSON";
/// OpenRouter, when the config names no `provider` and no `base_url`.
pub const DEFAULT_BASE_URL: &str = "https://openrouter.ai/api/v1";
/// The provider when the config names none (the first bb7 spoke to OpenRouter only).
pub const DEFAULT_PROVIDER: ProviderKind = ProviderKind::OpenRouter;

/// What a send needs from the config.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Which kind of provider requests go to.
    pub provider: ProviderKind,
    /// The key: the config's, else the provider's environment variable; `None` for a
    /// provider that needs none.
    pub api_key: Option<String>,
    /// The API base URL.
    pub base_url: String,
    /// Which `edit_file` schema the model gets.
    pub diff_mode: DiffMode,
    /// Send `prompt_cache_key`.
    pub explicit_cache_key: bool,
    /// Allow providers that retain data (`zdr: true` when false).
    pub allow_data_retention: bool,
    /// Allow providers that train on data (`data_collection: "deny"` when false).
    pub allow_training: bool,
    /// Make one hidden repair request after failed edits.
    pub auto_retry_partial_edits: bool,
    /// Model for titles; no automatic titles without it.
    pub title_model: Option<String>,
}

impl Settings {
    /// Reads and checks the config.
    pub fn load(home: &Home) -> Result<Settings> {
        let config = Config::load(home)?.ok_or_else(|| Error::Invalid(CONFIG_NOT_FOUND.into()))?;
        Settings::from_config(&config)
    }

    /// Checks an already read config, reading a missing key from the process's environment.
    pub fn from_config(config: &Config) -> Result<Settings> {
        Settings::from_config_with_env(config, |name| std::env::var(name).ok())
    }

    /// [`from_config`](Settings::from_config), with the environment given as a lookup.
    pub fn from_config_with_env(
        config: &Config,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Settings> {
        let provider = match config.extra.get("provider") {
            None | Some(Value::Null) => DEFAULT_PROVIDER,
            Some(Value::String(name)) if name.trim().is_empty() => DEFAULT_PROVIDER,
            Some(Value::String(name)) => name
                .parse()
                .map_err(|err: ybs_providers::UnknownProvider| Error::Invalid(err.to_string()))?,
            Some(_) => return Err(Error::Invalid(INVALID_JSON.into())),
        };
        let capabilities = provider.capabilities();
        let base_url = config
            .base_url
            .as_deref()
            .map(str::trim)
            .filter(|url| !url.is_empty())
            .or(capabilities.default_base_url)
            .ok_or_else(|| Error::Invalid(format!("{BASE_URL_NOT_SET} for provider {provider}")))?
            .trim_end_matches('/')
            .to_owned();
        let non_empty = |key: &str| Some(key.trim().to_owned()).filter(|key| !key.is_empty());
        let api_key = (config.api_key.as_deref().and_then(non_empty))
            .or_else(|| (capabilities.api_key_env.and_then(&env)).and_then(|key| non_empty(&key)));
        if api_key.is_none() && capabilities.needs_api_key(Some(&base_url)) {
            return Err(Error::Invalid(API_KEY_NOT_SET.into()));
        }
        let diff_mode = match config.extra.get("diff_mode") {
            None | Some(Value::Null) => DiffMode::default(),
            Some(Value::String(text)) => text
                .parse()
                .map_err(|err: ybs_edit::DiffModeError| Error::Invalid(err.to_string()))?,
            // As the first bb7, whose config reader fails on a mistyped field.
            Some(_) => return Err(Error::Invalid(INVALID_JSON.into())),
        };
        let flag = |name: &str, default: bool| {
            config
                .extra
                .get(name)
                .and_then(Value::as_bool)
                .unwrap_or(default)
        };
        Ok(Settings {
            provider,
            api_key,
            base_url,
            diff_mode,
            explicit_cache_key: flag("explicit_cache_key", false),
            allow_data_retention: flag("allow_data_retention", true),
            allow_training: flag("allow_training", false),
            auto_retry_partial_edits: flag("auto_retry_partial_edits", false),
            title_model: config
                .title_model
                .clone()
                .filter(|model| !model.trim().is_empty()),
        })
    }

    /// The configured provider for `model` with these settings.
    pub fn provider(&self, model: &str) -> Result<Arc<dyn Provider>> {
        self.provider_with_window(model, None)
    }

    /// [`provider`](Settings::provider), telling a server that loads the model with the
    /// window a request names (Ollama, which otherwise cuts prompts to its small default)
    /// to load it with `window` tokens.
    pub fn provider_with_window(
        &self,
        model: &str,
        window: Option<usize>,
    ) -> Result<Arc<dyn Provider>> {
        let mut config =
            ProviderConfig::new(self.provider, model).with_endpoint(self.base_url.clone());
        if self.provider.capabilities().window_set_per_request {
            config.ollama.num_ctx = window.and_then(|window| u32::try_from(window).ok());
        }
        config.api_key = self.api_key.clone().map(ApiKey::new);
        // Read by OpenRouter only: bb7's attribution and the privacy settings.
        config.openrouter = OpenRouterOptions {
            app_url: Some("https://github.com/Ammerfest/bb7.nvim".into()),
            app_title: Some("BB-7".into()),
            allow_training: self.allow_training,
            allow_data_retention: self.allow_data_retention,
        };
        // The key was settled above; the environment is still read for what a kind finds
        // there besides a key (Vertex AI's Google credentials, project and region).
        build_with_env(&config, |name| std::env::var(name).ok())
            .map_err(|err| Error::Invalid(format!("Cannot set up the provider: {err}")))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn config(json: &str) -> Config {
        serde_json::from_str(json).unwrap()
    }

    /// The settings of `config` in an environment without any key.
    fn checked(config: &Config) -> Result<Settings> {
        Settings::from_config_with_env(config, |_| None)
    }

    #[test]
    fn missing_key_and_bad_mode_are_errors() {
        let err = checked(&config("{}")).unwrap_err();
        assert_eq!(err.to_string(), API_KEY_NOT_SET);
        let err = checked(&config(r#"{"api_key":"  "}"#)).unwrap_err();
        assert_eq!(err.to_string(), API_KEY_NOT_SET);
        let err = checked(&config(r#"{"api_key":"k","diff_mode":"fancy"}"#)).unwrap_err();
        assert!(err.to_string().starts_with("invalid diff_mode \"fancy\""));
        // As the first bb7, an empty mode is not the default and a
        // mode that is not a string is a JSON error.
        let err = checked(&config(r#"{"api_key":"k","diff_mode":""}"#)).unwrap_err();
        assert!(
            err.to_string().starts_with("invalid diff_mode \"\""),
            "{err}"
        );
        for bad in ["1", "true", "[]", "{}"] {
            let text = format!(r#"{{"api_key":"k","diff_mode":{bad}}}"#);
            let err = checked(&config(&text)).unwrap_err();
            assert_eq!(err.to_string(), INVALID_JSON);
        }
    }

    #[test]
    fn defaults_follow_the_spec() {
        let settings = checked(&config(r#"{"api_key":"k"}"#)).unwrap();
        assert_eq!(settings.base_url, DEFAULT_BASE_URL);
        assert_eq!(settings.diff_mode, DiffMode::SearchReplaceMulti);
        assert!(settings.allow_data_retention && !settings.allow_training);
        assert!(!settings.explicit_cache_key && !settings.auto_retry_partial_edits);
        assert_eq!(settings.title_model, None);
    }

    #[test]
    fn the_first_bb7s_config_is_openrouter() {
        let settings = checked(&config(r#"{"api_key":"k"}"#)).unwrap();
        assert_eq!(settings.provider, ProviderKind::OpenRouter);
        assert_eq!(settings.api_key.as_deref(), Some("k"));
        let settings = checked(&config(
            r#"{"api_key":"k","base_url":"http://127.0.0.1:9/api/v1/"}"#,
        ))
        .unwrap();
        assert_eq!(settings.base_url, "http://127.0.0.1:9/api/v1");
        assert_eq!(
            settings.provider("m").unwrap().kind(),
            ProviderKind::OpenRouter
        );
    }

    #[test]
    fn a_provider_is_chosen_as_in_ybs() {
        let settings = checked(&config(r#"{"provider":"anthropic","api_key":"k"}"#)).unwrap();
        assert_eq!(settings.provider, ProviderKind::Anthropic);
        assert_eq!(settings.base_url, "https://api.anthropic.com");
        // The key from the provider's own variable when the config has none.
        let env = |name: &str| (name == "ANTHROPIC_API_KEY").then(|| "sk-ant-env".to_owned());
        let settings =
            Settings::from_config_with_env(&config(r#"{"provider":"claude"}"#), env).unwrap();
        assert_eq!(settings.api_key.as_deref(), Some("sk-ant-env"));
        let err = checked(&config(r#"{"provider":"anthropic"}"#)).unwrap_err();
        assert_eq!(err.to_string(), API_KEY_NOT_SET);
        // Local servers need no key.
        for (name, url) in [
            ("ollama", "http://localhost:11434"),
            ("llamacpp", "http://localhost:8080/v1"),
            ("lmstudio", "http://localhost:1234/v1"),
        ] {
            let text = format!(r#"{{"provider":"{name}"}}"#);
            let settings = checked(&config(&text)).unwrap();
            assert_eq!((settings.api_key, settings.base_url.as_str()), (None, url));
        }
        let err = checked(&config(r#"{"provider":"openai-compatible"}"#)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "base_url not set in config for provider openai-compatible"
        );
        let local = r#"{"provider":"openai-compatible","base_url":"http://127.0.0.1:9/v1"}"#;
        let provider = checked(&config(local)).unwrap().provider("m").unwrap();
        assert_eq!(provider.kind(), ProviderKind::OpenAiCompatible);
    }

    #[test]
    fn an_unknown_or_mistyped_provider_is_an_error() {
        let err = checked(&config(r#"{"provider":"bard","api_key":"k"}"#)).unwrap_err();
        assert!(
            err.to_string().starts_with("unknown provider \"bard\""),
            "{err}"
        );
        let err = checked(&config(r#"{"provider":7,"api_key":"k"}"#)).unwrap_err();
        assert_eq!(err.to_string(), INVALID_JSON);
    }

    #[test]
    fn missing_file_is_the_protocol_error() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path().to_path_buf(), None);
        assert_eq!(
            Settings::load(&home).unwrap_err().to_string(),
            CONFIG_NOT_FOUND
        );
    }
}
