//! `/model` and `/provider NAME`: another provider or model for the rest of the session,
//! keeping the conversation, with a warning when it no longer fits the new model's window.

use std::io::Write;

use crate::agent::Agent;
use crate::config::Config;
use crate::render::Notice;
use crate::startup::host::Host;
use crate::startup::load;

/// The context window of `model` as the provider lists it; `None` when unknown or the list
/// does not come within a few seconds.
fn context_window(
    runtime: &tokio::runtime::Runtime,
    provider: &dyn ybs_providers::Provider,
    model: &str,
) -> Option<u64> {
    let listing = runtime.block_on(async {
        tokio::time::timeout(std::time::Duration::from_secs(5), provider.list_models()).await
    });
    let models = listing.ok()?.ok()?;
    models
        .into_iter()
        .find(|info| info.id == model)
        .and_then(|info| info.context_length)
}

/// Switches provider and/or model, keeping the conversation (spec 7.5).
pub(super) fn switch(
    (host, runtime): (&Host, &tokio::runtime::Runtime),
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
            let window = context_window(runtime, provider.as_ref(), &next.llm.model);
            agent.provider = provider;
            agent.settings.model = next.llm.model.clone();
            *config = next;
            let _ = writeln!(
                out,
                "now using {} {}",
                config.llm.provider, config.llm.model
            );
            let tokens = agent.conversation_tokens();
            if let Some(window) = window.filter(|&window| window < tokens as u64) {
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
