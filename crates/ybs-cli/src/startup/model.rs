//! Which model a run asks for, and what the provider says about models: when nobody chose
//! one, the provider's own default (from its capabilities), or for a server of one's own the
//! model it lists; whether that server answers at all, said at once; a model the provider
//! does not have, in words that name it, how to choose another and what the provider lists.

use std::collections::BTreeMap;
use std::time::Duration;

use ybs_agent::config::Config;
use ybs_agent::setup;
use ybs_core::{ErrorKind, LlmError};
use ybs_providers::ProviderKind;

/// How long a provider has to list its models: as long as it has to tell a model's limits.
pub const LIST_WAIT: Duration = ybs_agent::limits::DISCOVERY_WAIT;

/// The most model names an error or warning lists.
const NAMES_SHOWN: usize = 8;

/// A model's name as ybs shows it: a server of one's own that did not answer has named none.
pub fn shown(model: &str) -> &str {
    if model.is_empty() {
        "(no model yet)"
    } else {
        model
    }
}

/// Who chose the model a run asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chooser {
    /// Someone did (a file, a variable, a flag, a chat file): it stays.
    Someone,
    /// Nobody: the provider's default model, else (a server of one's own: llama.cpp, LM
    /// Studio, vLLM...) the first model the server lists.
    Nobody,
    /// Nobody, and the run went elsewhere than configured (a chat file's `endpoint:`): a
    /// server of one's own there is asked for its model before a service's default is sent
    /// to it.
    NobodyHere,
}

impl Chooser {
    /// [`Chooser::Someone`] when `chosen`, else [`Chooser::Nobody`].
    pub fn from_sources(chosen: bool) -> Self {
        if chosen {
            Chooser::Someone
        } else {
            Chooser::Nobody
        }
    }
}

/// Settles `config`'s model for its provider as `chooser` says. A server on this machine or
/// the local network is asked for its list either way: the error is returned when it does
/// not answer, so the caller can say so before the user types anything.
pub fn settle(
    config: &mut Config,
    chooser: Chooser,
    env: &BTreeMap<String, String>,
) -> Option<LlmError> {
    let kind = config.llm.provider.parse::<ProviderKind>().ok()?;
    let capabilities = kind.capabilities();
    let endpoint = config.llm.endpoint.as_deref();
    let default = match chooser {
        Chooser::Someone if !config.llm.model.trim().is_empty() => None,
        Chooser::Someone | Chooser::Nobody => Some(capabilities.default_model),
        Chooser::NobodyHere => Some(capabilities.default_model_at(endpoint)),
    };
    if let Some(default) = default {
        config.llm.model = default.unwrap_or_default().to_owned();
    }
    if !capabilities.runs_locally(endpoint) {
        return None;
    }
    match listed(config, env) {
        Ok(models) => {
            if config.llm.model.is_empty()
                && let Some(first) = models.into_iter().next()
            {
                config.llm.model = first;
            }
            None
        }
        Err(error) if matches!(error.kind, ErrorKind::Network | ErrorKind::Timeout) => Some(error),
        // A server that answers without a list (404) still answers.
        Err(_) => None,
    }
}

/// The warning for a server that did not answer [`settle`]'s question.
pub fn unanswered(config: &Config, error: &LlmError) -> String {
    format!(
        "the {} server at {} does not answer ({}); start it, or choose another with \
         --provider/--endpoint (`ybs config` shows the effective values)",
        config.llm.provider,
        setup::endpoint(config),
        error.message
    )
}

/// The ids of the models `config`'s provider lists, asked on a thread of its own (callers
/// may or may not be inside a runtime), within [`LIST_WAIT`].
pub fn listed(config: &Config, env: &BTreeMap<String, String>) -> Result<Vec<String>, LlmError> {
    let provider = (setup::provider(config, env))
        .map_err(|error| LlmError::new(ErrorKind::BadRequest, error.to_string()))?;
    let ask = async {
        match tokio::time::timeout(LIST_WAIT, provider.list_models()).await {
            Ok(answer) => answer,
            Err(_) => Err(LlmError::new(
                ErrorKind::Timeout,
                format!("it did not list its models within {}s", LIST_WAIT.as_secs()),
            )),
        }
    };
    let answer = std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|error| LlmError::new(ErrorKind::Unknown, error.to_string()))?;
            runtime.block_on(ask)
        });
        worker.join()
    });
    let models =
        answer.map_err(|_| LlmError::new(ErrorKind::Unknown, "listing models failed"))??;
    Ok(models.into_iter().map(|model| model.id).collect())
}

/// `a, b, c and 12 more`: some of `models` for a message.
fn some_of(models: &[String]) -> String {
    let mut text = models
        .iter()
        .take(NAMES_SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if models.len() > NAMES_SHOWN {
        text.push_str(&format!(" and {} more", models.len() - NAMES_SHOWN));
    }
    text
}

/// A model-not-found `error` of `config`'s provider in the user's words: the model asked
/// for, the provider's own message, how to choose another and the models the provider
/// lists (when it lists any).
pub fn not_found(error: &LlmError, config: &Config) -> String {
    let listing = match listed(config, &BTreeMap::new()) {
        Ok(models) if !models.is_empty() => format!("; it lists {}", some_of(&models)),
        _ => String::new(),
    };
    let model = if config.llm.model.is_empty() {
        "(none named)"
    } else {
        config.llm.model.as_str()
    };
    format!(
        "the {} provider at {} has no model `{model}` ({}). Choose another with -m/--model \
         NAME (or llm.model in the configuration, /model NAME in the REPL){listing}",
        config.llm.provider,
        setup::endpoint(config),
        error.message
    )
}

/// The warning for switching to `model` when the provider answers its model list without
/// it; `None` when it lists it, or lists nothing, or does not answer.
pub fn unlisted(config: &Config, env: &BTreeMap<String, String>) -> Option<String> {
    let models = listed(config, env).ok()?;
    let model = &config.llm.model;
    let bare = |name: &str| name.strip_suffix(":latest").unwrap_or(name).to_owned();
    if models.is_empty() || models.iter().any(|id| bare(id) == bare(model)) {
        return None;
    }
    Some(format!(
        "the {} server does not list `{model}`; requests may fail. It lists {}",
        config.llm.provider,
        some_of(&models)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_provider_gets_its_own_default_model_unless_one_was_chosen() {
        let env = BTreeMap::new();
        for (provider, model) in [
            ("openai", "gpt-4.1"),
            ("anthropic", "claude-sonnet-4-20250514"),
            ("deepseek", "deepseek-chat"),
            ("openrouter", "anthropic/claude-sonnet-4"),
        ] {
            let mut config = Config::default();
            config.llm.provider = provider.to_owned();
            assert!(settle(&mut config, Chooser::Nobody, &env).is_none());
            assert_eq!(config.llm.model, model, "{provider}");
            config.llm.model = "mine".to_owned();
            assert!(settle(&mut config, Chooser::Someone, &env).is_none());
            assert_eq!(config.llm.model, "mine");
        }
    }

    #[test]
    fn a_server_that_is_down_is_said_at_once() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .map(|address| address.port())
            .unwrap_or(9);
        let mut config = Config::default();
        config.llm.provider = "llamacpp".to_owned();
        config.llm.endpoint = Some(format!("http://127.0.0.1:{port}/v1"));
        let error = settle(&mut config, Chooser::Nobody, &BTreeMap::new());
        let Some(error) = error else {
            panic!("a closed port answered");
        };
        assert_eq!(config.llm.model, "");
        let warning = unanswered(&config, &error);
        assert!(
            warning.starts_with(&format!(
                "the llamacpp server at http://127.0.0.1:{port}/v1 does not answer (cannot reach"
            )),
            "{warning}"
        );
    }

    #[test]
    fn some_names_are_listed() {
        let names: Vec<String> = (1..=10).map(|n| format!("m{n}")).collect();
        assert_eq!(some_of(&names[..2]), "m1, m2");
        assert_eq!(some_of(&names), "m1, m2, m3, m4, m5, m6, m7, m8 and 2 more");
    }
}
