//! A chat file's `option:` and `sticky_option:` values applied to `ask`'s request: sampling,
//! length, stop sequences and reasoning effort, by Scout's names and by the OpenAI and
//! Anthropic parameter names; `websearch`; any other key passed through to the request body
//! (the provider rejects what it does not take). Which are still in force (a transient option is cleared by each
//! `assistant` message) is the chat file crate's [`Options`]; an option ybs cannot honour is a
//! warning naming the file and line, never a silent drop.

use std::collections::BTreeMap;
use std::path::Path;

use ybs_chatfile::{Options, parse};

use ybs_agent::AgentSettings;

/// Options `ask` reads elsewhere (the model, provider, endpoint and reply format).
const HANDLED_ELSEWHERE: [&str; 4] = ["model", "backend", "endpoint", "format"];

/// The line of `path` that last set each option still in force (its key as in
/// [`Options`]); options that come from imported files are not found here.
fn option_lines(text: &str) -> BTreeMap<String, usize> {
    let mut sticky = BTreeMap::new();
    let mut transient: BTreeMap<String, usize> = BTreeMap::new();
    for message in parse(text) {
        let line = message.span.start;
        match message.role.as_str() {
            "assistant" => transient.clear(),
            "option" | "sticky_option" => {
                let key = (message.content.split_whitespace().next())
                    .unwrap_or_default()
                    .to_owned();
                if message.role == "option" {
                    transient.insert(key, line);
                } else {
                    sticky.insert(key, line);
                }
            }
            "format" | "persist" | "websearch" => {
                transient.insert(message.role, line);
            }
            "endpoint" | "backend" | "model" | "agent" | "previous_response_id" => {
                sticky.insert(message.role, line);
            }
            _ => {}
        }
    }
    sticky.extend(transient);
    sticky
}

/// What one option does to the request, or why it cannot.
fn apply_one(key: &str, value: &str, settings: &mut AgentSettings) -> Result<(), String> {
    let value = value.trim();
    match key {
        "temperature" => {
            let number: f32 = value
                .parse()
                .map_err(|_| format!("temperature `{value}` is not a number"))?;
            settings.temperature = Some(number);
        }
        "max_tokens" | "max_output_tokens" | "max_completion_tokens" | "max_tokens_to_sample" => {
            let number: u32 = value
                .parse()
                .map_err(|_| format!("{key} `{value}` is not a whole number"))?;
            settings.max_tokens = Some(number);
        }
        "stop" | "stop_sequences" => {
            settings.stop = if value.starts_with('[') {
                serde_json::from_str::<Vec<String>>(value)
                    .map_err(|e| format!("{key} `{value}` is not a JSON list of strings: {e}"))?
            } else {
                vec![value.to_owned()]
            };
        }
        "reasoning_effort" | "reasoning" | "effort" | "thinking" => {
            settings.reasoning_effort = Some(value.parse()?);
        }
        "top_p" => {
            let number: f32 = value
                .parse()
                .map_err(|_| format!("top_p `{value}` is not a number"))?;
            settings.top_p = Some(number);
        }
        "seed" => {
            let number: u64 = value
                .parse()
                .map_err(|_| format!("seed `{value}` is not a whole number"))?;
            settings.seed = Some(number);
        }
        "persist" => return Err("persist is not supported by ybs (ignored)".into()),
        // The turn's conversation and chain are `ask`'s.
        "previous_response_id" => {}
        "websearch" => {
            settings.extras.web_search = !matches!(value, "false" | "no" | "off" | "0");
        }
        "agent" => return Err(format!("{key} is not supported by ybs (ignored)")),
        // Any other key goes into the request body as it is: a JSON value, else a string.
        _ => {
            let value = serde_json::from_str(value)
                .unwrap_or_else(|_| serde_json::Value::String(value.to_owned()));
            settings.extras.body.insert(key.to_owned(), value);
        }
    }
    Ok(())
}

/// The options passed through as they are (`body`) that a provider's refusal `message`
/// names; all of them when it names none but speaks of an unknown or unsupported parameter
/// (ybs's own request is one the provider takes); none otherwise.
pub fn refused(body: &serde_json::Map<String, serde_json::Value>, message: &str) -> Vec<String> {
    let named: Vec<String> = (body.keys())
        .filter(|key| message.contains(key.as_str()))
        .cloned()
        .collect();
    let lower = message.to_ascii_lowercase();
    let about_parameters = [
        "unrecognized",
        "unknown",
        "unsupported",
        "not permitted",
        "extra",
    ]
    .iter()
    .any(|word| lower.contains(word));
    if named.is_empty() && about_parameters {
        body.keys().cloned().collect()
    } else {
        named
    }
}

/// Applies the options in force to `settings`; returns one warning per option that could
/// not be honoured, as `FILE:LINE: ...`.
pub fn apply(
    options: &Options,
    path: &Path,
    text: &str,
    settings: &mut AgentSettings,
) -> Vec<String> {
    let lines = option_lines(text);
    let mut warnings = Vec::new();
    for (key, value) in options.effective() {
        if HANDLED_ELSEWHERE.contains(&key.as_str()) {
            continue;
        }
        if let Err(why) = apply_one(&key, &value, settings) {
            let at = match lines.get(&key) {
                Some(line) => format!("{}:{line}", path.display()),
                None => path.display().to_string(),
            };
            warnings.push(format!("{at}: {why}"));
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use ybs_chatfile::Expander;

    use super::*;
    use ybs_agent::config::Config;

    fn settings() -> AgentSettings {
        let config = Config::default();
        // A project apart from the home directory: ybs refuses to work in the home itself.
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        std::fs::create_dir_all(dir.path().join("project")).unwrap();
        let around = ybs_agent::setup::Surroundings {
            cwd: dir.path().join("project"),
            home: Some(dir.path().join("home")),
            env: BTreeMap::new(),
        };
        let (agent, _) = ybs_agent::AgentBuilder::new(&config, around)
            .build()
            .unwrap();
        agent.settings
    }

    fn run(text: &str) -> (AgentSettings, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.chat");
        std::fs::write(&path, text).unwrap();
        let expansion = Expander::new(dir.path()).expand_file(&path).unwrap();
        let mut settings = settings();
        let warnings = apply(&expansion.options, Path::new("a.chat"), text, &mut settings);
        (settings, warnings)
    }

    #[test]
    fn a_refusal_names_the_passed_through_options_it_is_about() {
        let mut body = serde_json::Map::new();
        body.insert("frobnicate".into(), 3.into());
        body.insert("service_tier".into(), "flex".into());
        let named = refused(&body, "Unrecognized request argument supplied: frobnicate");
        assert_eq!(named, ["frobnicate"]);
        let all = refused(&body, "Unknown parameter in the request");
        assert_eq!(all, ["frobnicate", "service_tier"]);
        assert!(refused(&body, "messages[0].content is too long").is_empty());
        assert!(refused(&serde_json::Map::new(), "unknown parameter x").is_empty());
    }

    #[test]
    fn options_reach_the_settings_by_either_name() {
        let (settings, warnings) = run(
            "option: temperature 0.2\nsticky_option: max_output_tokens 300\n\
             option: stop [\"END\", \"STOP\"]\noption: reasoning_effort high\n\nuser:\nhi\n",
        );
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(settings.temperature, Some(0.2));
        assert_eq!(settings.max_tokens, Some(300));
        assert_eq!(settings.stop, ["END", "STOP"]);
        assert_eq!(
            settings.reasoning_effort,
            Some(ybs_core::ReasoningEffort::High)
        );
    }

    #[test]
    fn an_assistant_message_clears_options_but_not_sticky_ones() {
        let (settings, warnings) = run(
            "option: temperature 0.2\nsticky_option: max_tokens 300\n\nuser:\nhi\n\n\
             assistant:\nhello\n\nuser:\nagain\n",
        );
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(
            settings.temperature,
            Some(0.7),
            "the configured value again"
        );
        assert_eq!(settings.max_tokens, Some(300));
    }

    #[test]
    fn what_cannot_be_honoured_is_a_warning_with_file_and_line() {
        let (settings, warnings) = run(
            "user:\nhi\n\noption: frobnicate 3\npersist: true\nprevious_response_id: r1\n\
             option: temperature warm\noption: top_p lots\nsticky_option: seed 42\n\
             option: service_tier flex\nwebsearch: true\nagent: Baking\n",
        );
        assert_eq!(settings.temperature, Some(0.7));
        assert_eq!(settings.seed, Some(42));
        assert_eq!(settings.extras.body["frobnicate"], 3);
        assert_eq!(settings.extras.body["service_tier"], "flex");
        assert!(settings.extras.web_search);
        let all = warnings.join("\n");
        assert!(all.contains("a.chat:5: persist is not supported"), "{all}");
        assert!(all.contains("agent is not supported"), "{all}");
        assert!(
            all.contains("a.chat:7: temperature `warm` is not a number"),
            "{all}"
        );
        assert!(
            all.contains("a.chat:8: top_p `lots` is not a number"),
            "{all}"
        );
        assert_eq!(warnings.len(), 4, "{all}");
    }
}
