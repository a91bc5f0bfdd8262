//! Environment variables that set configuration keys.
//!
//! Every scalar or string-list key has a variable named after its path: `llm.model` is
//! `YBS_LLM_MODEL`, `tools.builtin.run_shell.timeout_seconds` is
//! `YBS_TOOLS_BUILTIN_RUN_SHELL_TIMEOUT_SECONDS`. The most used keys also have short names
//! (`YBS_MODEL`, `YBS_PROVIDER`, `YBS_ENDPOINT`, `YBS_API_KEY`); the long name wins when both
//! are set. `NO_COLOR` (any non-empty value) turns `ui.color` off. Empty variables count as
//! unset. Lists are comma-separated.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::error::{ConfigError, ConfigWarning};
use super::merge::set_path;
use super::source::{Source, Sources};

/// The short names, applied before the long ones.
const ALIASES: [(&str, &str); 4] = [
    ("YBS_PROVIDER", "llm.provider"),
    ("YBS_MODEL", "llm.model"),
    ("YBS_ENDPOINT", "llm.endpoint"),
    ("YBS_API_KEY", "llm.api_key"),
];

/// Keys whose default is `null` (the model's value) but which take whole numbers.
const NULLABLE_WHOLE: [&str; 2] = ["llm.max_tokens", "context.max_tokens"];

/// The prefix of ybs's variables.
pub const PREFIX: &str = "YBS_";

/// The type of a settable key, read from its default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Bool,
    Whole,
    Fraction,
    List,
}

impl Kind {
    fn of(default: &Value) -> Option<Kind> {
        match default {
            Value::Null | Value::String(_) => Some(Kind::Text),
            Value::Bool(_) => Some(Kind::Bool),
            Value::Number(number) if number.is_u64() => Some(Kind::Whole),
            Value::Number(_) => Some(Kind::Fraction),
            // Lists of text; an empty default (`tools.external`) holds objects.
            Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_string) => {
                Some(Kind::List)
            }
            Value::Array(_) | Value::Object(_) => None,
        }
    }

    fn expected(self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::Bool => "true or false",
            Kind::Whole => "a whole number",
            Kind::Fraction => "a number",
            Kind::List => "a comma-separated list",
        }
    }

    fn read(self, text: &str) -> Option<Value> {
        match self {
            Kind::Text => Some(Value::String(text.to_owned())),
            Kind::Bool => match text.trim().to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" | "on" => Some(Value::Bool(true)),
                "false" | "0" | "no" | "off" => Some(Value::Bool(false)),
                _ => None,
            },
            Kind::Whole => text.trim().parse::<u64>().ok().map(Value::from),
            Kind::Fraction => text
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|value| value.is_finite())
                .map(Value::from),
            Kind::List => Some(Value::Array(
                text.split(',')
                    .map(str::trim)
                    .filter(|item| !item.is_empty())
                    .map(|item| Value::String(item.to_owned()))
                    .collect(),
            )),
        }
    }
}

/// One variable and the key it sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvKey {
    /// The variable.
    pub var: String,
    /// The dotted key path.
    pub key: String,
    kind: Kind,
}

/// Every variable ybs reads, in the order they are applied, built from the defaults.
pub fn env_keys(defaults: &Map<String, Value>) -> Vec<EnvKey> {
    let mut leaves = Vec::new();
    collect_leaves(defaults, "", &mut leaves);
    let kind_of = |key: &str| {
        leaves
            .iter()
            .find(|(leaf, _)| leaf == key)
            .map(|(_, kind)| *kind)
    };
    let mut keys: Vec<EnvKey> = ALIASES
        .iter()
        .filter_map(|(var, key)| {
            Some(EnvKey {
                var: (*var).to_owned(),
                key: (*key).to_owned(),
                kind: kind_of(key)?,
            })
        })
        .collect();
    keys.extend(leaves.iter().map(|(key, kind)| EnvKey {
        var: format!("{PREFIX}{}", key.to_ascii_uppercase().replace('.', "_")),
        key: key.clone(),
        kind: *kind,
    }));
    keys
}

fn collect_leaves(object: &Map<String, Value>, prefix: &str, out: &mut Vec<(String, Kind)>) {
    for (key, value) in object {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match value {
            Value::Object(inner) => collect_leaves(inner, &path, out),
            Value::Null if NULLABLE_WHOLE.contains(&path.as_str()) => {
                out.push((path, Kind::Whole));
            }
            other => {
                if let Some(kind) = Kind::of(other) {
                    out.push((path, kind));
                }
            }
        }
    }
}

/// Applies the variables of `env` to `merged`, recording their sources. Unknown `YBS_`
/// variables are returned as warnings.
pub fn apply_env(
    env: &BTreeMap<String, String>,
    defaults: &Map<String, Value>,
    merged: &mut Map<String, Value>,
    sources: &mut Sources,
) -> Result<Vec<ConfigWarning>, ConfigError> {
    if env.get("NO_COLOR").is_some_and(|value| !value.is_empty()) {
        set_path(
            merged,
            "ui.color",
            Value::Bool(false),
            Source::Env("NO_COLOR".into()),
            sources,
        );
    }
    let keys = env_keys(defaults);
    for entry in &keys {
        let Some(text) = env.get(&entry.var).filter(|text| !text.is_empty()) else {
            continue;
        };
        let value = entry.kind.read(text).ok_or_else(|| ConfigError::EnvValue {
            var: entry.var.clone(),
            value: text.clone(),
            key: entry.key.clone(),
            expected: entry.kind.expected(),
        })?;
        set_path(
            merged,
            &entry.key,
            value,
            Source::Env(entry.var.clone()),
            sources,
        );
    }
    Ok(env
        .keys()
        .filter(|var| var.starts_with(PREFIX))
        .filter(|var| !keys.iter().any(|entry| &entry.var == *var))
        .map(|var| ConfigWarning::UnknownEnvVar { var: var.clone() })
        .collect())
}

/// The variables of this process that ybs reads (`YBS_*` and `NO_COLOR`), skipping any that
/// are not valid UTF-8.
pub fn process_env() -> BTreeMap<String, String> {
    std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .filter(|(name, _)| name.starts_with(PREFIX) || name == "NO_COLOR")
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::config::schema::Config;

    fn defaults() -> Map<String, Value> {
        match serde_json::to_value(Config::default()) {
            Ok(Value::Object(map)) => map,
            other => panic!("{other:?}"),
        }
    }

    fn apply(vars: &[(&str, &str)]) -> Result<(Value, Sources, Vec<String>), String> {
        let env = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let mut merged = defaults();
        let mut sources = Sources::default();
        let warnings = apply_env(&env, &defaults(), &mut merged, &mut sources)
            .map_err(|err| err.to_string())?;
        Ok((
            Value::Object(merged),
            sources,
            warnings.iter().map(ToString::to_string).collect(),
        ))
    }

    #[test]
    fn every_scalar_key_has_a_variable_named_after_its_path() {
        let vars: Vec<String> = env_keys(&defaults()).into_iter().map(|k| k.var).collect();
        for var in [
            "YBS_MODEL",
            "YBS_LLM_MODEL",
            "YBS_LLM_API_KEY",
            "YBS_CONTEXT_COMPACTION_THRESHOLD",
            "YBS_SAFETY_BLOCKED_COMMANDS",
            "YBS_TOOLS_BUILTIN_RUN_SHELL_TIMEOUT_SECONDS",
            "YBS_UI_SHOW_REASONING",
        ] {
            assert!(vars.iter().any(|v| v == var), "{var} missing from {vars:?}");
        }
        assert!(!vars.iter().any(|v| v == "YBS_TOOLS_EXTERNAL"));
    }

    #[test]
    fn variables_set_typed_values_with_their_source() -> Result<(), String> {
        let (merged, sources, warnings) = apply(&[
            ("YBS_MODEL", "short"),
            ("YBS_LLM_MODEL", "long"),
            ("YBS_LLM_TEMPERATURE", "0.2"),
            ("YBS_AGENT_MAX_ITERATIONS", "7"),
            ("YBS_GIT_AUTO_COMMIT", "no"),
            ("YBS_SAFETY_BLOCKED_COMMANDS", "sudo, curl ,"),
            ("YBS_PROVIDER", ""),
        ])?;
        assert!(warnings.is_empty());
        assert_eq!(merged["llm"]["model"], json!("long"));
        assert_eq!(
            sources.of("llm.model"),
            &Source::Env("YBS_LLM_MODEL".into())
        );
        assert_eq!(merged["llm"]["temperature"], json!(0.2));
        assert_eq!(merged["agent"]["max_iterations"], json!(7));
        assert_eq!(merged["git"]["auto_commit"], json!(false));
        assert_eq!(
            merged["safety"]["blocked_commands"],
            json!(["sudo", "curl"])
        );
        assert_eq!(merged["llm"]["provider"], json!("ollama"));
        assert_eq!(sources.of("llm.provider"), &Source::Default);
        Ok(())
    }

    #[test]
    fn no_color_turns_colour_off() -> Result<(), String> {
        let (merged, sources, _) = apply(&[("NO_COLOR", "1")])?;
        assert_eq!(merged["ui"]["color"], json!(false));
        assert_eq!(sources.of("ui.color"), &Source::Env("NO_COLOR".into()));
        let (merged, _, _) = apply(&[("NO_COLOR", "")])?;
        assert_eq!(merged["ui"]["color"], json!(true));
        Ok(())
    }

    #[test]
    fn a_bad_value_names_the_variable_and_key() {
        assert_eq!(
            apply(&[("YBS_AGENT_MAX_ITERATIONS", "many")])
                .err()
                .as_deref(),
            Some(
                "environment variable YBS_AGENT_MAX_ITERATIONS=\"many\" is not valid for \
                 agent.max_iterations: expected a whole number"
            )
        );
        assert_eq!(
            apply(&[("YBS_UI_COLOR", "maybe")]).err().as_deref(),
            Some(
                "environment variable YBS_UI_COLOR=\"maybe\" is not valid for ui.color: \
                 expected true or false"
            )
        );
    }

    #[test]
    fn unknown_ybs_variables_are_warned_about() -> Result<(), String> {
        let (_, _, warnings) = apply(&[("YBS_MODLE", "x")])?;
        assert_eq!(
            warnings,
            [
                "environment variable YBS_MODLE is not a ybs setting (ignored); `ybs config` lists the keys"
            ]
        );
        Ok(())
    }
}
