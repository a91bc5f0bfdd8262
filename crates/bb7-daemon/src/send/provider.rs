//! What bb7 asks of the configured provider besides a reply: its models with their limits,
//! learned the way the provider's capabilities say (the model list itself, the built-in
//! catalog for the hosted APIs whose lists name no windows, or a server of one's own asked
//! about each model), and its balance where it has one.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use ybs_providers::{Balance, LimitsSource, ModelInfo, PriceTable, Provider};

use crate::wire::error::{Error, Result, provider_message};

/// The answer to `get_balance` for a provider that has no balance (every one but
/// OpenRouter); the plugin then shows no credit.
pub const NO_BALANCE: &str = "Balance not available for this API";

/// How long a server of one's own has to say what it knows of one model.
const LIMITS_WAIT: Duration = Duration::from_secs(5);

/// How many of a local server's models are asked about at once.
const LIMITS_IN_FLIGHT: usize = 4;

/// The models `provider` offers, each with the context window and longest reply its
/// capabilities let bb7 learn.
pub async fn models(provider: &Arc<dyn Provider>) -> Result<Vec<ModelInfo>> {
    let mut models = provider
        .list_models()
        .await
        .map_err(|err| Error::Invalid(provider_message(&err)))?;
    match provider.kind().capabilities().limits {
        LimitsSource::ModelList => {}
        LimitsSource::Catalog => fill_from_catalog(&mut models),
        LimitsSource::LocalServer => fill_from_server(provider, &mut models).await,
    }
    Ok(models)
}

/// The windows of models the built-in catalog knows, where the list names none.
fn fill_from_catalog(models: &mut [ModelInfo]) {
    let Ok(catalog) = PriceTable::builtin() else {
        return;
    };
    for model in models.iter_mut() {
        if let Some(limits) = catalog.limits(&model.id) {
            model.context_length.get_or_insert(limits.context);
            model.max_completion_tokens.get_or_insert(limits.max_output);
        }
    }
}

/// What a server of one's own says of each model whose window the list does not name
/// (llama.cpp's `/props`, Ollama's `/api/show`, LM Studio's own list); a model it says
/// nothing of keeps what the list gave.
async fn fill_from_server(provider: &Arc<dyn Provider>, models: &mut [ModelInfo]) {
    let asked: Vec<(usize, String)> = (models.iter().enumerate())
        .filter(|(_, model)| model.context_length.is_none())
        .map(|(index, model)| (index, model.id.clone()))
        .collect();
    let answers: Vec<_> = futures::stream::iter(asked.into_iter().map(|(index, id)| {
        let provider = Arc::clone(provider);
        async move {
            let limits = tokio::time::timeout(LIMITS_WAIT, provider.model_limits(&id)).await;
            (index, limits.ok().and_then(|answer| answer.ok()))
        }
    }))
    .buffer_unordered(LIMITS_IN_FLIGHT)
    .collect()
    .await;
    for (index, limits) in answers {
        let (Some(model), Some(limits)) = (models.get_mut(index), limits) else {
            continue;
        };
        model.context_length = model.context_length.or(limits.context_window);
        model.max_completion_tokens = model.max_completion_tokens.or(limits.max_output);
    }
}

/// The account's balance, for a provider that has one; [`NO_BALANCE`] otherwise, without
/// asking the network.
pub async fn balance(provider: &Arc<dyn Provider>) -> Result<Balance> {
    if !provider.kind().capabilities().balance {
        return Err(Error::Invalid(NO_BALANCE.into()));
    }
    provider
        .balance()
        .await
        .map_err(|err| Error::Invalid(provider_message(&err)))?
        .ok_or_else(|| Error::Invalid(NO_BALANCE.into()))
}
