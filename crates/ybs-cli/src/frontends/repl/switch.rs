//! `/model` and `/provider NAME`: another provider or model for the rest of the session,
//! keeping the conversation, with the new model's own limits (learnt as at startup) and a
//! warning when the conversation no longer fits its window.

use std::io::Write;

use crate::startup::load;
use ybs_agent::Agent;
use ybs_agent::Notice;
use ybs_agent::config::{Config, LoadedConfig};
use ybs_agent::host::Host;

/// Switches provider and/or model, keeping the conversation. A provider gets its
/// default endpoint and its environment variable's key, except the one ybs started with,
/// which gets its configured endpoint and key back (an `openai-compatible` server named with
/// `--endpoint` has no default to fall back on).
pub(super) fn switch(
    (host, runtime, loaded): (&Host, &tokio::runtime::Runtime, &LoadedConfig),
    agent: &mut Agent,
    config: &mut Config,
    provider: Option<String>,
    model: Option<String>,
    out: &mut dyn Write,
) {
    let mut next = config.clone();
    let named = model.is_some();
    if let Some(provider) = provider {
        use_provider(&mut next, &loaded.config, provider);
        // Another provider does not get the model of the one before: its own default, or
        // the model its server lists (the one ybs started with gets its model back).
        if !named {
            next.llm.model = loaded.config.llm.model.clone();
            let same = next.llm.provider == loaded.config.llm.provider;
            let chooser = crate::startup::model::Chooser::from_sources(same);
            if let Some(error) = crate::startup::model::settle(&mut next, chooser, &host.env) {
                let warning = crate::startup::model::unanswered(&next, &error);
                load::notice(config, Notice::Warning, &warning, out);
            }
        }
    }
    if let Some(model) = model {
        next.llm.model = model;
        if let Some(warning) = crate::startup::model::unlisted(&next, &host.env) {
            load::notice(config, Notice::Warning, &warning, out);
        }
    }
    match ybs_agent::setup::provider(&next, &host.env) {
        Ok(provider) => {
            // The new model's own window and output limit (the configured ones still win).
            let limits = ybs_agent::limits::discover_on(
                runtime,
                &next,
                &loaded.sources,
                provider.as_ref(),
                &agent.settings.prices,
            );
            // Ollama is told the window it loads the model with.
            let provider = if provider.kind().capabilities().window_set_per_request {
                ybs_agent::setup::provider_with_window(&next, &host.env, Some(limits.window.tokens))
                    .unwrap_or(provider)
            } else {
                provider
            };
            agent.provider = provider;
            agent.settings.model = next.llm.model.clone();
            agent.set_limits(limits);
            *config = next;
            let _ = writeln!(
                out,
                "now using {} {} ({}; context from {})",
                config.llm.provider,
                crate::startup::model::shown(&config.llm.model),
                agent.limits.short(),
                agent.limits.window.source
            );
            let tokens = agent.conversation_tokens();
            let window = agent.limits.window.tokens;
            if window < tokens as u64 {
                let message = format!(
                    "the conversation (about {tokens} tokens) is larger than the context window \
                     of {} ({window} tokens); older messages will be dropped on the next turn \
                     (or /compact now)",
                    config.llm.model
                );
                load::notice(config, Notice::Warning, &message, out);
            }
        }
        Err(error) => load::notice(config, Notice::Error, &error.to_string(), out),
    }
}

/// `next` with `provider`: the configured endpoint and key are those of the provider ybs
/// `started` with, so another provider gets its own default endpoint and its own environment
/// variable's key (not a key meant for someone else), and the started one gets them back.
fn use_provider(next: &mut Config, started: &Config, provider: String) {
    let same = provider == started.llm.provider;
    next.llm.endpoint = same.then(|| started.llm.endpoint.clone()).flatten();
    next.llm.api_key = same.then(|| started.llm.api_key.clone()).flatten();
    next.llm.provider = provider;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_provider_gets_neither_the_endpoint_nor_the_key_and_the_first_gets_them_back() {
        let mut started = Config::default();
        started.llm.provider = "openai-compatible".into();
        started.llm.endpoint = Some("http://127.0.0.1:8093/v1".into());
        started.llm.api_key = Some("sk-for-that-server".into());
        let mut next = started.clone();
        use_provider(&mut next, &started, "llamacpp".into());
        assert_eq!(next.llm.provider, "llamacpp");
        assert_eq!(next.llm.endpoint, None);
        assert_eq!(next.llm.api_key, None);
        use_provider(&mut next, &started, "openai-compatible".into());
        assert_eq!(next.llm.endpoint, started.llm.endpoint);
        assert_eq!(next.llm.api_key, started.llm.api_key);
    }
}
