//! Rewriting a chat's history: `chat_edit` (back to a user message, which becomes the
//! draft), `fork_chat` (a new chat up to a user message) and `message_delete` (a user
//! message and the reply that followed it).

use ybs_core::Role;

use super::Session;
use crate::session::history;
use crate::store::model::{Chat, message_text};
use crate::wire::error::{Error, Result};
use crate::wire::replies::ForkResult;

impl Session {
    pub(crate) fn chat_edit(
        &mut self,
        chat_id: &str,
        index: i64,
        content: &str,
    ) -> Result<Vec<history::ContextWarning>> {
        let active = self.active_chat()?;
        if !chat_id.is_empty() && chat_id != active.chat.id {
            return Err(Error::Invalid("Chat is not active".into()));
        }
        let index = user_message_index(&active.chat, index, "message index out of range", "edit")?;
        let restored = history::restore(
            &active.chat,
            index,
            active.store.fs(),
            &active.context_dir()?,
            active.root.as_deref(),
        )?;
        let draft = if content.is_empty() {
            message_text(&active.chat.messages[index])
        } else {
            content.to_owned()
        };
        active.chat.messages.truncate(index);
        active.chat.draft = draft;
        active.chat.context_files = restored
            .files
            .iter()
            .map(|(file, _)| file.clone())
            .collect();
        if let Some(message) = restored.warning_message() {
            active.chat.messages.push(message);
        }
        active.drop_orphan_outputs()?;
        active.save()?;
        Ok(restored.warnings)
    }

    pub(crate) fn fork(&mut self, chat_id: &str, index: i64, global: bool) -> Result<ForkResult> {
        let store = self.store(global)?;
        let source = self.load(&store, chat_id)?;
        let index = user_message_index(&source, index, "fork index out of range", "fork from")?;
        let restored = history::restore(
            &source,
            index,
            store.fs(),
            &store.context_dir(&source.id)?,
            self.root.as_deref(),
        )?;
        let fork_text = message_text(&source.messages[index]);
        let name = if source.name.starts_with("Fork of ") {
            source.name.clone()
        } else {
            format!("Fork of {}", source.name)
        };
        let mut chat = Chat::new(String::new(), name, source.model.clone(), store.is_global());
        chat.reasoning_effort = source.reasoning_effort.clone();
        chat.draft = fork_text.clone();
        chat.messages = source.messages[..index].to_vec();
        let chat = store.create(chat)?;
        let context_dir = store.context_dir(&chat.id)?;
        let mut active = self.open(store, chat)?;
        for (file, content) in &restored.files {
            crate::store::atomic::write_in(
                active.store.fs(),
                &crate::store::active::storage_path(&context_dir, file)?,
                content.as_bytes(),
            )?;
            active.chat.context_files.push(file.clone());
        }
        if let Some(message) = restored.warning_message() {
            active.chat.messages.push(message);
        }
        active.save()?;
        let new_id = active.chat.id.clone();
        self.activate(active)?;
        Ok(ForkResult {
            new_chat_id: new_id,
            fork_message_content: fork_text,
            context_warnings: restored.warnings,
        })
    }

    /// `message_delete {index}`: removes the user message at `index` and the replies that
    /// answered it (the assistant and system messages up to the next user message), e.g. a
    /// failed exchange the user wants gone or wants to ask again. Context events in that
    /// span go too; outputs that no remaining assistant message produced are deleted.
    pub(crate) fn message_delete(&mut self, chat_id: &str, index: i64) -> Result<()> {
        let active = self.active_chat()?;
        if !chat_id.is_empty() && chat_id != active.chat.id {
            return Err(Error::Invalid("Chat is not active".into()));
        }
        let start =
            user_message_index(&active.chat, index, "message index out of range", "delete")?;
        let end = active.chat.messages[start + 1..]
            .iter()
            .position(|message| message.role == Role::User)
            .map_or(active.chat.messages.len(), |offset| start + 1 + offset);
        active.chat.messages.drain(start..end);
        active.drop_orphan_outputs()?;
        Ok(active.save()?)
    }
}

/// The index of a user message, or the first bb7's errors (`... out of range`, `can only
/// edit user messages`, `can only fork from user messages`).
fn user_message_index(chat: &Chat, index: i64, out_of_range: &str, verb: &str) -> Result<usize> {
    let index = usize::try_from(index)
        .ok()
        .filter(|index| *index < chat.messages.len())
        .ok_or_else(|| Error::Invalid(out_of_range.to_owned()))?;
    if chat.messages[index].role != Role::User {
        return Err(Error::Invalid(format!("can only {verb} user messages")));
    }
    Ok(index)
}
