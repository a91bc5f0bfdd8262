//! The model-calling settings of `~/.config/bb7/config.json`, checked before anything is sent:
//! a missing file is `Config file not found: ~/.config/bb7/config.json`, a missing or empty
//! `api_key` is `API key not set in config`, an unknown (or empty) `diff_mode` names the valid
//! values, a `diff_mode` that is not a string is `invalid config JSON` (as in the first bb7).

use std::sync::Arc;

use serde_json::Value;
use ybs_edit::DiffMode;
use ybs_providers::{OpenRouterOptions, Provider, ProviderConfig, ProviderKind, build};

use crate::store::global::{Config, Home};
use crate::wire::error::{Error, Result};

/// The config error of the protocol spec for a missing file.
pub const CONFIG_NOT_FOUND: &str = "Config file not found: ~/.config/bb7/config.json";
/// The config error of the protocol spec for a missing key.
pub const API_KEY_NOT_SET: &str = "API key not set in config";
/// The config error of the first bb7 for a field of the wrong JSON type.
pub const INVALID_JSON: &str = "invalid config JSON";
/// OpenRouter, when the config names no `base_url`.
pub const DEFAULT_BASE_URL: &str = "https://openrouter.ai/api/v1";

/// What a send needs from the config.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The OpenRouter key.
    pub api_key: String,
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

    /// Checks an already read config.
    pub fn from_config(config: &Config) -> Result<Settings> {
        let api_key = config
            .api_key
            .as_deref()
            .map(str::trim)
            .filter(|key| !key.is_empty())
            .ok_or_else(|| Error::Invalid(API_KEY_NOT_SET.into()))?
            .to_owned();
        let base_url = config
            .base_url
            .as_deref()
            .map(str::trim)
            .filter(|url| !url.is_empty())
            .unwrap_or(DEFAULT_BASE_URL)
            .trim_end_matches('/')
            .to_owned();
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

    /// The OpenRouter provider for `model` with these settings.
    pub fn provider(&self, model: &str) -> Result<Arc<dyn Provider>> {
        let mut config = ProviderConfig::new(ProviderKind::OpenRouter, model)
            .with_endpoint(self.base_url.clone())
            .with_api_key(self.api_key.clone());
        config.openrouter = OpenRouterOptions {
            app_url: Some("https://github.com/Ammerfest/bb7.nvim".into()),
            app_title: Some("BB-7".into()),
            allow_training: self.allow_training,
            allow_data_retention: self.allow_data_retention,
        };
        build(&config).map_err(|err| Error::Invalid(format!("Cannot set up the provider: {err}")))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn config(json: &str) -> Config {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn missing_key_and_bad_mode_are_errors() {
        let err = Settings::from_config(&config("{}")).unwrap_err();
        assert_eq!(err.to_string(), API_KEY_NOT_SET);
        let err = Settings::from_config(&config(r#"{"api_key":"  "}"#)).unwrap_err();
        assert_eq!(err.to_string(), API_KEY_NOT_SET);
        let err =
            Settings::from_config(&config(r#"{"api_key":"k","diff_mode":"fancy"}"#)).unwrap_err();
        assert!(err.to_string().starts_with("invalid diff_mode \"fancy\""));
        // Issue 32 item 11: as the first bb7, an empty mode is not the default and a
        // mode that is not a string is a JSON error.
        let err = Settings::from_config(&config(r#"{"api_key":"k","diff_mode":""}"#)).unwrap_err();
        assert!(
            err.to_string().starts_with("invalid diff_mode \"\""),
            "{err}"
        );
        for bad in ["1", "true", "[]", "{}"] {
            let text = format!(r#"{{"api_key":"k","diff_mode":{bad}}}"#);
            let err = Settings::from_config(&config(&text)).unwrap_err();
            assert_eq!(err.to_string(), INVALID_JSON);
        }
    }

    #[test]
    fn defaults_follow_the_spec() {
        let settings = Settings::from_config(&config(r#"{"api_key":"k"}"#)).unwrap();
        assert_eq!(settings.base_url, DEFAULT_BASE_URL);
        assert_eq!(settings.diff_mode, DiffMode::SearchReplaceMulti);
        assert!(settings.allow_data_retention && !settings.allow_training);
        assert!(!settings.explicit_cache_key && !settings.auto_retry_partial_edits);
        assert_eq!(settings.title_model, None);
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
