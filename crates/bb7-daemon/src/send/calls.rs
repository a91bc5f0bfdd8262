//! The model-side actions besides `send`: `estimate_tokens` (the context-budget breakdown,
//! cl100k), `estimate_text_tokens`, `get_models` (the provider's list in the protocol's shape,
//! with the limits [`provider`] learns, cached for a day), `get_balance` and `generate_title`. Network calls run in the
//! background and answer when they finish, so `ping`, `chat_get` or `cancel` never wait for
//! them; they time out after 30 s.

use serde_json::Value;
use ybs_context_budget::estimate::{EstimateInput, FileInput, estimate_tokens};
use ybs_providers::ModelInfo;

use crate::send::settings::Settings;
use crate::send::shared::Shared;
use crate::send::{prompt, provider, titles, tokens};
use crate::session::Session;
use crate::wire::error::{Error, Result};
use crate::wire::params::Texts;
use crate::wire::replies::{
    self, FileTokens, ModelEntry, Models, TextTokenEstimate, TokenCounts, TokenEstimate,
};
use crate::wire::reply::Reply;

/// `get_models`: fetched in the background, cached on the session and answered when it
/// arrives (always `None`: nothing is answered at once).
pub fn get_models(
    session: &mut Session,
    shared: &Shared,
    request_id: Option<String>,
) -> Result<Option<Models>> {
    // As the first bb7: every `get_models` asks the provider (the client's refresh must not
    // get a stale list); the answer also refreshes the cache `send` reads context windows from.
    let settings = Settings::load(session.home())?;
    let task_shared = shared.clone();
    shared.spawn_reply_for(request_id, async move {
        let models = fetch_models(&settings).await?;
        let reply = models_reply(&models);
        task_shared.post(move |session, _| session.set_models(models));
        Ok(Reply::new(&reply))
    });
    Ok(None)
}

/// `get_balance`: asked in the background, answered when the provider replies.
pub fn get_balance(
    session: &mut Session,
    shared: &Shared,
    request_id: Option<String>,
) -> Result<()> {
    let settings = Settings::load(session.home())?;
    let client = settings.provider("")?;
    shared.spawn_reply_for(request_id, async move {
        let balance = provider::balance(&client).await?;
        Ok(Reply::new(&replies::Balance {
            total_credits: balance.total_credits,
            total_usage: balance.total_usage,
        }))
    });
    Ok(())
}

/// `generate_title {chat_id, content}`: answered `ok` at once when `title_model` is set
/// (never a paid call the user did not enable); the title is made in the background and
/// announced with `title_updated`.
pub fn generate_title(
    session: &mut Session,
    shared: &Shared,
    chat_id: Option<String>,
    content: Option<String>,
    global: bool,
) -> Result<()> {
    let chat_id = chat_id.ok_or(Error::MissingField("chat_id"))?;
    let content = content.ok_or(Error::MissingField("content"))?;
    let settings = Settings::load(session.home())?;
    let model = settings
        .title_model
        .clone()
        .ok_or_else(|| Error::Invalid("title_model not configured".into()))?;
    let active = session.active().filter(|active| active.chat.id == chat_id);
    let global = global || active.is_some_and(|active| active.chat.global);
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
    let name = session.chat_name(&chat_id, global).unwrap_or_default();
    titles::spawn_automatic(
        shared,
        &settings,
        model,
        (chat_id, global, name),
        titles::prompt_text(&content, &files),
    );
    Ok(())
}

/// The `models` reply.
fn models_reply(models: &[ModelInfo]) -> Models {
    Models {
        models: models.iter().map(ModelEntry::from).collect(),
    }
}

/// `estimate_text_tokens`: `texts` (the first client's form) gets an array of counts in the
/// same order; the single `text` form gets one number.
pub fn estimate_text(text: Option<String>, texts: Texts) -> Result<TextTokenEstimate> {
    if let (Some(text), Texts::Absent) = (&text, &texts) {
        return Ok(TextTokenEstimate {
            tokens: TokenCounts::One(tokens::count(text)),
        });
    }
    let Texts::List(texts) = texts else {
        return Err(Error::Invalid("Missing or empty 'texts' array".into()));
    };
    Ok(TextTokenEstimate {
        tokens: TokenCounts::Each(texts.iter().map(|text| tokens::count(text)).collect()),
    })
}

/// Fetches the configured provider's model list, with the limits it lets bb7 learn.
pub async fn fetch_models(settings: &Settings) -> Result<Vec<ModelInfo>> {
    provider::models(&settings.provider("")?).await
}

/// One model in the protocol's shape ([`ModelEntry`]), as JSON.
pub fn model_json(model: &ModelInfo) -> Value {
    serde_json::to_value(ModelEntry::from(model)).unwrap_or(Value::Null)
}

/// What `estimate_tokens` counts, gathered on the session's thread by [`estimate`] and
/// counted elsewhere with [`EstimateJob::count`].
pub struct EstimateJob {
    system: String,
    instructions: Vec<String>,
    history: Vec<ybs_core::Message>,
    /// Each file's path, snapshot and output.
    contents: Vec<(String, Option<String>, Option<String>)>,
    input_text: String,
}

/// `estimate_tokens` for the active chat, with the text being typed (`input_text`) counted
/// and added to `total`, as the first bb7 does: gathers what is counted.
pub fn estimate(session: &mut Session, input_text: &str) -> Result<EstimateJob> {
    let home = session.home().clone();
    let root = session.project_root().map(std::path::Path::to_path_buf);
    let allowed = session.allowed_includes().to_vec();
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
    let instructions =
        prompt::instruction_blocks(&home, if global { None } else { root.as_deref() }, &allowed)
            .unwrap_or_default();

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
    Ok(EstimateJob {
        system,
        instructions,
        history: active.chat.messages.clone(),
        contents,
        input_text: input_text.to_owned(),
    })
}

impl EstimateJob {
    /// The `token_estimate` reply.
    pub fn count(self) -> TokenEstimate {
        let files: Vec<FileInput<'_>> = self
            .contents
            .iter()
            .map(|(path, context, output)| FileInput {
                path,
                context: context.as_deref(),
                output: output.as_deref(),
            })
            .collect();
        let instructions: Vec<&str> = self.instructions.iter().map(String::as_str).collect();
        let estimate = estimate_tokens(
            tokens::counter(),
            &EstimateInput {
                system_prompt: &self.system,
                instructions: &instructions,
                history: &self.history,
                files: &files,
            },
        );
        // As the first bb7: the text being typed counts in `total`, every file entry carries
        // both counts (its own tokens as `original_tokens`, 0 output when there is none),
        // and `potential_savings` sums the original tokens of the files with output.
        let input_tokens = tokens::count(&self.input_text);
        let potential_savings = estimate
            .files
            .iter()
            .filter(|file| file.has_output)
            .map(|file| file.original_tokens.unwrap_or(0))
            .sum();
        let files = estimate
            .files
            .into_iter()
            .map(|file| FileTokens {
                path: file.path,
                tokens: file.tokens,
                has_output: file.has_output,
                // A file without output is all original (the first bb7 counts it there too).
                original_tokens: file.original_tokens.unwrap_or(if file.has_output {
                    0
                } else {
                    file.tokens
                }),
                output_tokens: file.output_tokens.unwrap_or(0),
            })
            .collect();
        TokenEstimate {
            input_text: input_tokens,
            total: estimate.total + input_tokens,
            context_files: estimate.context_files,
            history: estimate.history,
            instructions: estimate.instructions,
            system_prompt: estimate.system_prompt,
            files,
            potential_savings,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;
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
