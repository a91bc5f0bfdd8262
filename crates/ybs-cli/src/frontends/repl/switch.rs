//! `/model` and `/provider NAME`: another provider or model for the rest of the session,
//! keeping the conversation, with the new model's own limits (learnt as at startup) and a
//! warning when the conversation no longer fits its window.

use std::io::Write;

use crate::agent::Agent;
use crate::config::{Config, Sources};
use crate::render::Notice;
use crate::startup::host::Host;
use crate::startup::load;

/// Switches provider and/or model, keeping the conversation (spec 7.5).
pub(super) fn switch(
    (host, runtime, sources): (&Host, &tokio::runtime::Runtime, &Sources),
    agent: &mut Agent,
    config: &mut Config,
    provider: Option<String>,
    model: Option<String>,
    out: &mut dyn Write,
) {
    let mut next = config.clone();
    if let Some(provider) = provider {
        next.llm.provider = provider;
        next.llm.endpoint = None;
    }
    if let Some(model) = model {
        next.llm.model = model;
    }
    match crate::agent::setup::provider(&next, &host.env) {
        Ok(provider) => {
            // The new model's own window and output limit (the configured ones still win).
            let limits = crate::agent::limits::discover_on(
                runtime,
                &next,
                sources,
                provider.as_ref(),
                &agent.settings.prices,
            );
            // Ollama is told the window it loads the model with.
            let provider = match provider.kind() {
                ybs_providers::ProviderKind::Ollama => crate::agent::setup::provider_with_window(
                    &next,
                    &host.env,
                    Some(limits.window.tokens),
                )
                .unwrap_or(provider),
                _ => provider,
            };
            agent.provider = provider;
            agent.settings.model = next.llm.model.clone();
            agent.set_limits(limits);
            *config = next;
            let _ = writeln!(
                out,
                "now using {} {} ({}; context from {})",
                config.llm.provider,
                config.llm.model,
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
