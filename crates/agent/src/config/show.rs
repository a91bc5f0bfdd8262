//! `ybs config`: every effective value with its source, secrets masked.

use std::fmt::Write as _;

use serde_json::Value;

use super::load::LoadedConfig;
use super::schema::Config;
use super::source::Source;

/// The top-level keys in the order the spec's schema lists them (then `mcp`).
const SECTION_ORDER: [&str; 9] = [
    "version", "llm", "context", "agent", "safety", "tools", "git", "ui", "mcp",
];

/// Values longer than this push the source column out instead of widening every line.
const MAX_ALIGN: usize = 60;

/// The effective configuration as text: the files considered, then one `key = value  # source`
/// line per value, with API keys and other secrets masked.
pub fn show(loaded: &LoadedConfig) -> String {
    let mut out = String::from("# Configuration files, in order (later ones win):\n");
    for status in &loaded.files {
        let note = if status.loaded { "" } else { " (not found)" };
        let _ = writeln!(out, "#   {}{note}", status.file.path.display());
    }
    let mut lines = Vec::new();
    let value = serde_json::to_value(&loaded.config).unwrap_or(Value::Null);
    leaves(&value, "", &mut lines);
    // Sections in `SECTION_ORDER`; keys within a section alphabetically.
    lines.sort_by_key(|(key, _)| {
        let section = key.split(['.', '[']).next().unwrap_or("");
        let rank = SECTION_ORDER.iter().position(|name| *name == section);
        (rank.unwrap_or(SECTION_ORDER.len()), key.clone())
    });
    let width = lines
        .iter()
        .map(|(key, value)| key.len() + 3 + value.len())
        .filter(|len| *len <= MAX_ALIGN)
        .max()
        .unwrap_or(0);
    for (key, value) in lines {
        let source = loaded.sources.of(&key);
        let assignment = format!("{key} = {value}");
        let note = match (key.as_str(), value.as_str()) {
            ("llm.endpoint", "null") => " (the provider's own endpoint)",
            ("llm.api_key", "null") => " (the provider's usual environment variable)",
            _ => "",
        };
        let _ = writeln!(out, "{assignment:<width$}  # {source}{note}");
    }
    out
}

/// `loaded` as the REPL's `/config` shows it once `current` has replaced its configuration:
/// every value that differs from the loaded one (`/effort`, `/model`, `/approval`...) says it
/// was set in this session, not where the loaded value came from.
pub fn with_session_changes(loaded: &LoadedConfig, current: &Config) -> LoadedConfig {
    let flat = |config: &Config| {
        let mut lines = Vec::new();
        leaves(
            &serde_json::to_value(config).unwrap_or(Value::Null),
            "",
            &mut lines,
        );
        lines
    };
    let before: std::collections::BTreeMap<String, String> =
        flat(&loaded.config).into_iter().collect();
    let mut shown = loaded.clone();
    for (key, value) in flat(current) {
        if before.get(&key) != Some(&value) {
            shown.sources.set(&key, Source::Session);
        }
    }
    shown.config = current.clone();
    shown
}

/// Flattens `value` into `(dotted key, JSON text)` pairs. Lists of scalars stay on one line;
/// lists of objects are listed element by element.
fn leaves(value: &Value, key: &str, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (name, inner) in map {
                let path = if key.is_empty() {
                    name.clone()
                } else {
                    format!("{key}.{name}")
                };
                leaves(inner, &path, out);
            }
        }
        Value::Array(items) if items.iter().any(Value::is_object) => {
            for (index, item) in items.iter().enumerate() {
                leaves(item, &format!("{key}[{index}]"), out);
            }
        }
        Value::String(text) if is_secret_key(key) => {
            out.push((key.to_owned(), Value::String(mask_secret(text)).to_string()));
        }
        other => out.push((key.to_owned(), other.to_string())),
    }
}

/// Whether the value at `key` is a credential: API keys, tokens, passwords, and every MCP
/// server header and environment variable (they usually carry tokens).
pub fn is_secret_key(key: &str) -> bool {
    let last = key.rsplit('.').next().unwrap_or(key).to_ascii_lowercase();
    let named_secret = [
        "api_key",
        "key",
        "token",
        "secret",
        "password",
        "authorization",
    ]
    .iter()
    .any(|word| last == *word || last.ends_with(&format!("_{word}")));
    let in_mcp_bag =
        key.starts_with("mcp.servers.") && (key.contains(".headers.") || key.contains(".env."));
    named_secret || in_mcp_bag
}

/// A secret as shown to people: its last four characters when it is long enough that they
/// give nothing away, else nothing.
pub fn mask_secret(secret: &str) -> String {
    let chars: Vec<char> = secret.chars().collect();
    if chars.len() >= 16 {
        let tail: String = chars[chars.len() - 4..].iter().collect();
        format!("***{tail}")
    } else {
        String::from("***")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Sources;

    #[test]
    fn secrets_are_recognised_by_name_and_place() {
        for key in [
            "llm.api_key",
            "x.openrouter_api_key",
            "a.token",
            "mcp.servers.gh.headers.X-Custom",
            "mcp.servers.gh.env.GITHUB_PAT",
        ] {
            assert!(is_secret_key(key), "{key}");
        }
        for key in [
            "llm.model",
            "context.max_tokens",
            "mcp.servers.gh.command",
            "git.monkey",
        ] {
            assert!(!is_secret_key(key), "{key}");
        }
    }

    #[test]
    fn values_changed_in_the_session_say_so() {
        let loaded = LoadedConfig {
            config: Config::default(),
            sources: Sources::default(),
            warnings: Vec::new(),
            files: Vec::new(),
            untrusted: Vec::new(),
            extensions: Default::default(),
        };
        let mut current = Config::default();
        current.llm.reasoning_effort = Some(ybs_core::ReasoningEffort::High);
        let text = show(&with_session_changes(&loaded, &current));
        let line = |key: &str| {
            (text.lines())
                .find(|line| line.starts_with(&format!("{key} = ")))
                .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
                .unwrap_or_default()
        };
        assert_eq!(
            line("llm.reasoning_effort"),
            "llm.reasoning_effort = \"high\" # set in this session"
        );
        assert_eq!(
            line("llm.model"),
            format!("llm.model = \"{}\" # default", current.llm.model)
        );
    }

    #[test]
    fn masks_keep_at_most_the_last_four_characters() {
        assert_eq!(mask_secret("sk-proj-abcdefghijklmnop"), "***mnop");
        assert_eq!(mask_secret("short-secret"), "***");
        assert_eq!(mask_secret(""), "***");
    }
}
