//! Chat titles: `generate_title` and the automatic title after the chat's first exchange
//! (only when `title_model` is set; never a paid call the user did not enable). A short
//! non-streamed request (temperature 0.5) from the user's message and the attached file
//! names; the answer is
//! trimmed, stripped of quotes and cut to 80 characters with `...`. The new name is saved
//! and announced with `{"type":"title_updated","chat_id":..,"title":..}` (no request id).

use std::time::Duration;

use tokio_util::sync::CancellationToken;
use ybs_core::{ChatRequest, ErrorKind, LlmError, Message};

use crate::send::settings::Settings;
use crate::send::shared::Shared;
use crate::wire::replies::TitleUpdated;
use crate::wire::reply::Reply;

/// Longest title, in characters.
pub const MAX_TITLE: usize = 80;
/// How long a title request may take.
pub const TIMEOUT: Duration = Duration::from_secs(30);
/// The sampling temperature of a title request (steady, short answers).
pub const TEMPERATURE: f32 = 0.5;

const INSTRUCTION: &str = "Write a title of 3 to 6 words for a chat that starts with the \
user message below. Answer with the title only: no quotes, no trailing punctuation.";

/// Cleans a model's answer into a title: trimmed, quotes stripped, at most 80 characters.
pub fn clean(raw: &str) -> String {
    let first = raw.trim().lines().next().unwrap_or("").trim();
    let title = first
        .trim_matches(|c: char| matches!(c, '"' | '\'' | '`' | '“' | '”' | '‘' | '’'))
        .trim();
    if title.chars().count() <= MAX_TITLE {
        return title.to_owned();
    }
    let cut: String = title.chars().take(MAX_TITLE - 3).collect();
    format!("{}...", cut.trim_end())
}

/// Asks `model` for a title for a chat starting with `content`.
pub async fn generate(settings: &Settings, model: &str, content: &str) -> Result<String, LlmError> {
    let provider = settings
        .provider(model)
        .map_err(|err| LlmError::new(ErrorKind::BadRequest, err.to_string()))?;
    let mut request =
        ChatRequest::new(model, vec![Message::user(content)]).with_system(INSTRUCTION);
    request.temperature = Some(TEMPERATURE);
    let reply = tokio::time::timeout(
        TIMEOUT,
        provider.complete_unstreamed(&request, CancellationToken::new()),
    )
    .await
    .map_err(|_| LlmError::new(ErrorKind::Timeout, "title request timed out after 30 s"))??;
    let title = clean(&reply.message.text_content());
    if title.is_empty() {
        return Err(LlmError::new(
            ErrorKind::Unknown,
            "the model returned an empty title",
        ));
    }
    Ok(title)
}

/// What a title is made from: the user's message and the names of the attached files.
pub fn prompt_text(message: &str, files: &[String]) -> String {
    if files.is_empty() {
        return message.to_owned();
    }
    format!(
        "User message: {message}\n\nContext files attached: {}",
        files.join(", ")
    )
}

/// The `title_updated` event.
pub fn event(chat_id: &str, title: &str) -> Reply {
    Reply::new(&TitleUpdated { chat_id, title })
}

/// Generates a title in the background, then renames the chat and sends `title_updated`,
/// unless the chat's name is no longer `name` (the user renamed it meanwhile: theirs stays).
pub fn spawn_automatic(
    shared: &Shared,
    settings: &Settings,
    model: String,
    (chat_id, global, name): (String, bool, String),
    content: String,
) {
    let shared = shared.clone();
    let settings = settings.clone();
    let runtime = shared.runtime.clone();
    runtime.spawn(async move {
        match generate(&settings, &model, &content).await {
            Ok(title) => shared.post(move |session, shared| {
                if session.chat_name(&chat_id, global).is_some_and(|now| now != name) {
                    tracing::info!(chat = %chat_id, "renamed by the user meanwhile: no automatic title");
                    return;
                }
                match session.chat_rename(&chat_id, &title, global) {
                    Ok(()) => shared.send(&event(&chat_id, &title)),
                    Err(err) => tracing::warn!(error = %err, "could not save the title"),
                }
            }),
            Err(err) => tracing::info!(error = %err, "no automatic title"),
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_cleaned_and_cut() {
        assert_eq!(clean("  \"Refactor physics\"\n"), "Refactor physics");
        assert_eq!(clean("'Quoted'"), "Quoted");
        let long = "word ".repeat(40);
        let title = clean(&long);
        assert!(title.chars().count() <= 80);
        assert!(title.starts_with("word word"));
        assert!(title.ends_with("..."));
    }
}
