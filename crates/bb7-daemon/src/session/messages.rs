//! What the client changes on the active chat directly: its draft (`save_draft`), its model
//! and reasoning effort (`save_chat_settings`) and system messages (`add_system_message`).

use ybs_core::Message;

use super::Session;
use crate::store::global::GlobalState;
use crate::store::model::now;
use crate::wire::error::{Error, Result};

impl Session {
    /// `save_draft`: the text being typed, kept with the chat.
    pub(crate) fn save_draft(&mut self, draft: String) -> Result<()> {
        let active = self.active_chat()?;
        active.chat.draft = draft;
        Ok(active.save()?)
    }

    /// `save_chat_settings`: a non-empty `model` becomes the chat's (and, when
    /// `~/.bb7/state.json` can be read, the last used model there); `reasoning_effort` is
    /// stored as given.
    pub(crate) fn save_chat_settings(
        &mut self,
        model: Option<String>,
        reasoning_effort: Option<String>,
    ) -> Result<()> {
        let home = self.home.clone();
        let active = self.active_chat()?;
        if let Some(model) = model.filter(|model| !model.is_empty()) {
            // The first client writes `state.json` unlocked (truncate, then write): a file
            // caught half-written only skips the convenience, never the chat's setting.
            if let Err(err) = GlobalState::record_model(&home, &model) {
                tracing::warn!(error = %err, "last_model not recorded");
            }
            active.chat.model = model;
        }
        if let Some(effort) = reasoning_effort {
            active.chat.reasoning_effort = effort;
        }
        Ok(active.save()?)
    }

    /// `add_system_message`: the text comes from `message` (the first client's field) or
    /// `content`; none is `Missing required field: message`, blank text adds nothing.
    pub(crate) fn add_system_message(
        &mut self,
        content: Option<String>,
        message: Option<String>,
    ) -> Result<()> {
        let text = message.or(content).unwrap_or_default();
        let active = self.active_chat()?;
        if text.is_empty() {
            return Err(Error::MissingField("message"));
        }
        // As the first bb7: blank text is accepted and adds nothing.
        if text.trim().is_empty() {
            return Ok(());
        }
        active
            .chat
            .messages
            .push(Message::system(text).with_timestamp(now()));
        Ok(active.save()?)
    }
}
