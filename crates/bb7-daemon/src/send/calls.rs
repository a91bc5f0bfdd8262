//! The model-side actions besides `send`: `estimate_tokens` (the context-budget breakdown,
//! cl100k), `estimate_text_tokens`, `get_models` (OpenRouter's list in the protocol's shape,
//! cached for a day), `get_balance` and `generate_title`. Network calls run in the
//! background and answer when they finish, so `ping`, `chat_get` or `cancel` never wait for
//! them; they time out after 30 s.

use serde_json::{Value, json};
use ybs_context_budget::estimate::{EstimateInput, FileInput, estimate_tokens};
use ybs_providers::ModelInfo;

use crate::protocol::error::{Error, Result, provider_message};
use crate::protocol::shared::Shared;
use crate::protocol::{Reply, Request};
use crate::send::settings::Settings;
use crate::send::{prompt, titles, tokens};
use crate::session::Session;

/// Handles one of the actions above. `Ok(None)` means the reply comes later, from a
/// background task (the network never blocks the session's thread).
pub fn handle(
    session: &mut Session,
    shared: &Shared,
    request_id: Option<String>,
    request: Request,
) -> Result<Option<Reply>> {
    match request {
        Request::EstimateTextTokens { args } => estimate_text(&args).map(Some),
        Request::EstimateTokens { args } => {
            let input = args
                .get("input_text")
                .and_then(Value::as_str)
                .unwrap_or_default();
            estimate(session, input).map(Some)
        }
        Request::GetModels { .. } => {
            if let Some(models) = session.fresh_models() {
                return Ok(Some(models_reply(models)));
            }
            let settings = Settings::load(session.home())?;
            spawn_models(shared, request_id, settings);
            Ok(None)
        }
        Request::GetBalance { .. } => {
            let settings = Settings::load(session.home())?;
            let provider = settings.provider("")?;
            shared.spawn_reply_for(request_id, async move {
                let balance = provider
                    .balance()
                    .await
                    .map_err(|err| Error::Invalid(provider_message(&err)))?
                    .ok_or_else(|| Error::Invalid("Balance not available for this API".into()))?;
                Ok(Reply::typed("balance")
                    .with("total_credits", balance.total_credits)
                    .with("total_usage", balance.total_usage))
            });
            Ok(None)
        }
        Request::GenerateTitle { args } => generate_title(session, shared, &args).map(Some),
        other => Err(Error::NotAvailable(other.action().to_owned())),
    }
}

/// `generate_title {chat_id, content}`: answered `ok` at once when `title_model` is set
/// (never a paid call the user did not enable); the title is made in the background and
/// announced with `title_updated`.
fn generate_title(
    session: &mut Session,
    shared: &Shared,
    args: &serde_json::Map<String, Value>,
) -> Result<Reply> {
    let text = |name: &str| {
        args.get(name)
            .and_then(Value::as_str)
            .filter(|text| !text.is_empty())
            .map(str::to_owned)
    };
    let chat_id = text("chat_id").ok_or(Error::MissingField("chat_id"))?;
    let content = text("content").ok_or(Error::MissingField("content"))?;
    let settings = Settings::load(session.home())?;
    let model = settings
        .title_model
        .clone()
        .ok_or_else(|| Error::Invalid("title_model not configured".into()))?;
    let active = session.active().filter(|active| active.chat.id == chat_id);
    let global = args.get("global").and_then(Value::as_bool).unwrap_or(false)
        || active.is_some_and(|active| active.chat.global);
    let files: Vec<String> = active
        .map(|active| {
            active
                .chat
                .context_files
                .iter()
                .map(|file| file.path.clone())
                .collect()
        })
        .unwrap_or_default();
    titles::spawn_automatic(
        shared,
        &settings,
        model,
        chat_id,
        global,
        titles::prompt_text(&content, &files),
    );
    Ok(Reply::ok())
}

/// The `models` reply.
fn models_reply(models: &[ModelInfo]) -> Reply {
    let models: Vec<Value> = models.iter().map(model_json).collect();
    Reply::typed("models").with("models", models)
}

/// Fetches the models list in the background, caches it on the session and replies.
fn spawn_models(shared: &Shared, request_id: Option<String>, settings: Settings) {
    let task_shared = shared.clone();
    shared.spawn_reply_for(request_id, async move {
        let models = fetch_models(&settings).await?;
        let reply = models_reply(&models);
        task_shared.post(move |session, _| session.set_models(models));
        Ok(reply)
    });
}

/// `estimate_text_tokens`: `texts` (the first client's form) gets an array of counts in the
/// same order; the single `text` form gets one number.
fn estimate_text(args: &serde_json::Map<String, Value>) -> Result<Reply> {
    let reply = Reply::typed("text_token_estimate");
    if let Some(text) = args.get("text").and_then(Value::as_str) {
        if !args.contains_key("texts") {
            return Ok(reply.with("tokens", tokens::count(text)));
        }
    }
    let texts = args
        .get("texts")
        .and_then(Value::as_array)
        .filter(|texts| !texts.is_empty())
        .ok_or_else(|| Error::Invalid("Missing or empty 'texts' array".into()))?;
    let counts: Vec<usize> = texts
        .iter()
        .map(|text| tokens::count(text.as_str().unwrap_or_default()))
        .collect();
    Ok(reply.with("tokens", counts))
}

/// Fetches OpenRouter's model list.
pub async fn fetch_models(settings: &Settings) -> Result<Vec<ModelInfo>> {
    let provider = settings.provider("")?;
    provider
        .list_models()
        .await
        .map_err(|err| Error::Invalid(provider_message(&err)))
}

/// One model in the protocol's shape, every key present as the first bb7 sends it (`0`,
/// `""` or `null` when the backend does not say): `id`, `name`, `description`, `created`,
/// `expiration_date`, `context_length`, `max_completion_tokens`, `supports_reasoning`,
/// `supports_tools` and `pricing` (`prompt`, `completion`, `input_cache_read`,
/// `input_cache_write`, `internal_reasoning`, `discount`).
pub fn model_json(model: &ModelInfo) -> Value {
    let pricing = model.pricing.as_ref();
    let price = |pick: fn(&ybs_providers::Pricing) -> Option<&str>| {
        pricing.and_then(pick).unwrap_or("").to_owned()
    };
    json!({
        "id": model.id,
        "name": model.name,
        "description": model.description.clone().unwrap_or_default(),
        "created": model.created.unwrap_or(0),
        "expiration_date": model.expiration_date,
        "context_length": model.context_length.unwrap_or(0),
        "max_completion_tokens": model.max_completion_tokens.unwrap_or(0),
        "supports_reasoning": model.supports_reasoning.unwrap_or(false),
        "supports_tools": model.supports_tools.unwrap_or(false),
        "pricing": {
            "prompt": price(|p| Some(p.prompt.as_str())),
            "completion": price(|p| Some(p.completion.as_str())),
            "input_cache_read": price(|p| p.input_cache_read.as_deref()),
            "input_cache_write": price(|p| p.input_cache_write.as_deref()),
            "internal_reasoning": price(|p| p.internal_reasoning.as_deref()),
            "discount": pricing.and_then(|p| p.discount).unwrap_or(0.0),
        },
    })
}

/// `estimate_tokens` for the active chat, with the text being typed (`input_text`) counted
/// and added to `total`, as the first bb7 does.
fn estimate(session: &mut Session, input_text: &str) -> Result<Reply> {
    let home = session.home().clone();
    let root = session.project_root().map(std::path::Path::to_path_buf);
    let active = session.active_chat()?;
    let global = active.chat.global;
    let mode = if global {
        None
    } else {
        Settings::load(&home)
            .ok()
            .map(|settings| settings.diff_mode)
            .or(Some(Default::default()))
    };
    let mut system = prompt::base_prompt(&home);
    if let Some(mode) = mode {
        system.push('\n');
        system.push_str(prompt::diff_mode_prompt(mode));
    }
    let blocks = prompt::instruction_blocks(&home, if global { None } else { root.as_deref() })
        .unwrap_or_default();
    let instructions: Vec<&str> = blocks.iter().map(String::as_str).collect();

    let mut contents: Vec<(String, Option<String>, Option<String>)> = Vec::new();
    for file in &active.chat.context_files {
        let context = active.read_snapshot(file).ok();
        let output = (file.section().is_none() && !global)
            .then(|| active.output_content(&file.path).ok())
            .flatten();
        contents.push((file.path.clone(), context, output));
    }
    if !global {
        for path in active.output_files()? {
            if active.chat.find_file(&path).is_none() {
                let output = active.output_content(&path).ok();
                contents.push((path, None, output));
            }
        }
    }
    let files: Vec<FileInput<'_>> = contents
        .iter()
        .map(|(path, context, output)| FileInput {
            path,
            context: context.as_deref(),
            output: output.as_deref(),
        })
        .collect();
    let estimate = estimate_tokens(
        tokens::counter(),
        &EstimateInput {
            system_prompt: &system,
            instructions: &instructions,
            history: &active.chat.messages,
            files: &files,
        },
    );
    let input_tokens = tokens::count(input_text);
    let estimate = ybs_context_budget::estimate::TokenEstimate {
        total: estimate.total + input_tokens,
        ..estimate
    };
    // As the first bb7: every file entry carries both counts (0 when there is none), and
    // `potential_savings` sums the original tokens of the files with output.
    let files: Vec<Value> = estimate
        .files
        .iter()
        .map(|file| {
            json!({
                "path": file.path,
                "tokens": file.tokens,
                "has_output": file.has_output,
                "original_tokens": file.original_tokens.unwrap_or(0),
                "output_tokens": file.output_tokens.unwrap_or(0),
            })
        })
        .collect();
    let savings: usize = estimate
        .files
        .iter()
        .filter(|file| file.has_output)
        .map(|file| file.original_tokens.unwrap_or(0))
        .sum();
    let mut reply = Reply::typed("token_estimate").with("input_text", input_tokens);
    if let Value::Object(fields) = serde_json::to_value(&estimate).unwrap_or(Value::Null) {
        for (key, value) in fields {
            reply.0.insert(key, value);
        }
    }
    Ok(reply
        .with("files", files)
        .with("potential_savings", savings))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use ybs_providers::Pricing;

    #[test]
    fn model_entries_carry_every_key() {
        let mut model = ModelInfo::new("a/b");
        model.context_length = Some(200_000);
        model.max_completion_tokens = Some(64_000);
        model.created = Some(1_747_930_371);
        model.description = Some("Balanced.".into());
        model.pricing = Some(Pricing {
            prompt: "0.000003".into(),
            completion: "0.000015".into(),
            input_cache_read: Some("0.0000003".into()),
            input_cache_write: Some("0.00000375".into()),
            internal_reasoning: None,
            discount: Some(0.1),
        });
        assert_eq!(
            model_json(&model),
            json!({"id": "a/b", "name": "a/b", "context_length": 200_000,
                "supports_reasoning": false, "supports_tools": false,
                "max_completion_tokens": 64_000, "created": 1_747_930_371,
                "description": "Balanced.", "expiration_date": null,
                "pricing": {"prompt": "0.000003", "completion": "0.000015",
                    "input_cache_read": "0.0000003", "input_cache_write": "0.00000375",
                    "internal_reasoning": "", "discount": 0.1}})
        );
        let bare = model_json(&ModelInfo::new("x/y"));
        for key in [
            "description",
            "created",
            "expiration_date",
            "max_completion_tokens",
        ] {
            assert!(bare.get(key).is_some(), "{key} missing");
        }
    }
}
