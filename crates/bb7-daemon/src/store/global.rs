//! Per-user files: the config `~/.config/bb7/config.json` (honouring `XDG_CONFIG_HOME`), the
//! state `~/.bb7/state.json` (favorite models, last used model), global chats under
//! `~/.bb7/chats` and logs under `~/.bb7/logs`. `HOME` is read from the environment so tests
//! can point it at a temporary directory.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::store::atomic;
use crate::store::error::{Error, Result};

/// The model used when nothing else names one.
pub const FALLBACK_MODEL: &str = "anthropic/claude-sonnet-4.6";

/// Where the per-user files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    /// The user's home directory.
    pub home: PathBuf,
    /// `$XDG_CONFIG_HOME/bb7` or `~/.config/bb7`.
    pub config_dir: PathBuf,
}

impl Home {
    /// From `HOME` and `XDG_CONFIG_HOME`.
    pub fn from_env() -> Home {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/"));
        let xdg = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|dir| dir.is_absolute());
        Home::new(home, xdg)
    }

    /// From explicit directories (`xdg_config_home` as `XDG_CONFIG_HOME` would be).
    pub fn new(home: PathBuf, xdg_config_home: Option<PathBuf>) -> Home {
        let config_dir = xdg_config_home
            .unwrap_or_else(|| home.join(".config"))
            .join("bb7");
        Home { home, config_dir }
    }

    /// `~/.bb7`.
    pub fn bb7_dir(&self) -> PathBuf {
        self.home.join(".bb7")
    }

    /// `~/.bb7/chats`.
    pub fn global_chats_dir(&self) -> PathBuf {
        self.bb7_dir().join("chats")
    }

    /// `~/.bb7/logs`.
    pub fn logs_dir(&self) -> PathBuf {
        self.bb7_dir().join("logs")
    }

    /// `~/.bb7/state.json`.
    pub fn state_path(&self) -> PathBuf {
        self.bb7_dir().join("state.json")
    }

    /// The config file.
    pub fn config_path(&self) -> PathBuf {
        self.config_dir.join("config.json")
    }

    /// The global instructions file.
    pub fn global_instructions_path(&self) -> PathBuf {
        self.config_dir.join("instructions.md")
    }

    /// The system prompt override.
    pub fn system_prompt_path(&self) -> PathBuf {
        self.config_dir.join("system_prompt.txt")
    }
}

/// `config.json`. Every field is optional here; the part that sends checks `api_key`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// The provider's API key (OpenRouter's unless `provider` names another).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// API base URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Model for new chats; when set it overrides the last used model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_model: Option<String>,
    /// Model for titles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title_model: Option<String>,
    /// Every other setting (`provider`, `diff_mode`, ...), kept for the sending half.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Config {
    /// Reads the config; a missing file is `Ok(None)`, a broken one an error naming it.
    pub fn load(home: &Home) -> Result<Option<Config>> {
        let path = home.config_path();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(Error::io("read", &path)(err)),
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|err| Error::Corrupt {
                path,
                why: err.to_string(),
            })
    }

    /// The explicitly configured default model, if any.
    pub fn explicit_default_model(&self) -> Option<&str> {
        self.default_model
            .as_deref()
            .filter(|model| !model.is_empty())
    }
}

/// `~/.bb7/state.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GlobalState {
    /// Favorite models.
    #[serde(default)]
    pub favorites: Vec<String>,
    /// The last model the user chose.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub last_model: String,
    /// Other fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl GlobalState {
    /// Reads the state; missing or unreadable state is empty (it is only a convenience).
    pub fn load(home: &Home) -> GlobalState {
        std::fs::read_to_string(home.state_path())
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    /// Changes the state file under an advisory lock (`state.json.lock`): read, change,
    /// write atomically. Fields are handled as raw JSON, so none this version does not know
    /// is ever dropped, and two daemons (or a daemon and anything else taking the lock) never
    /// lose each other's updates. An unreadable file is left alone (error), not replaced.
    pub fn update(home: &Home, change: impl FnOnce(&mut Map<String, Value>)) -> Result<()> {
        use fs4::fs_std::FileExt;
        let path = home.state_path();
        let dir = home.bb7_dir();
        std::fs::create_dir_all(&dir).map_err(Error::io("create directory", &dir))?;
        let lock_path = dir.join("state.json.lock");
        let lock = std::fs::File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(Error::io("open", &lock_path))?;
        lock.lock_exclusive()
            .map_err(Error::io("lock", &lock_path))?;
        let result = (|| {
            let mut fields = match std::fs::read_to_string(&path) {
                Ok(text) if text.trim().is_empty() => Map::new(),
                Ok(text) => match serde_json::from_str::<Value>(&text) {
                    Ok(Value::Object(fields)) => fields,
                    Ok(_) | Err(_) => {
                        return Err(Error::Corrupt {
                            path: path.clone(),
                            why: "not a JSON object".into(),
                        });
                    }
                },
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => Map::new(),
                Err(err) => return Err(Error::io("read", &path)(err)),
            };
            let before = fields.clone();
            change(&mut fields);
            if fields == before {
                return Ok(());
            }
            atomic::write_json(&path, &fields)
        })();
        let _ = FileExt::unlock(&lock);
        result
    }

    /// Records `model` as the last used one (`last_model`), keeping every other field.
    pub fn record_model(home: &Home, model: &str) -> Result<()> {
        if model.is_empty() {
            return Ok(());
        }
        GlobalState::update(home, |fields| {
            fields.insert("last_model".into(), Value::String(model.to_owned()));
        })
    }
}

/// The model of a new chat: the config's explicit `default_model`, else the one the client
/// suggests, else the last used one, else [`FALLBACK_MODEL`].
pub fn new_chat_model(config: Option<&Config>, requested: Option<&str>, home: &Home) -> String {
    if let Some(model) = config.and_then(Config::explicit_default_model) {
        return model.to_owned();
    }
    if let Some(model) = requested.filter(|model| !model.is_empty()) {
        return model.to_owned();
    }
    let state = GlobalState::load(home);
    if !state.last_model.is_empty() {
        return state.last_model;
    }
    FALLBACK_MODEL.to_owned()
}

/// Whether `path` exists as a file.
pub fn exists(path: &Path) -> bool {
    path.is_file()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn xdg_config_home_is_honoured() {
        let home = Home::new("/h".into(), Some("/x".into()));
        assert_eq!(home.config_path(), PathBuf::from("/x/bb7/config.json"));
        let home = Home::new("/h".into(), None);
        assert_eq!(
            home.config_path(),
            PathBuf::from("/h/.config/bb7/config.json")
        );
        assert_eq!(home.state_path(), PathBuf::from("/h/.bb7/state.json"));
    }

    #[test]
    fn model_selection_rules() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path().into(), None);
        assert_eq!(new_chat_model(None, None, &home), FALLBACK_MODEL);
        GlobalState::record_model(&home, "last/model").unwrap();
        assert_eq!(new_chat_model(None, None, &home), "last/model");
        assert_eq!(
            new_chat_model(None, Some("asked/model"), &home),
            "asked/model"
        );
        let config = Config {
            default_model: Some("cfg/model".into()),
            ..Config::default()
        };
        assert_eq!(
            new_chat_model(Some(&config), Some("asked/model"), &home),
            "cfg/model"
        );
    }
}
