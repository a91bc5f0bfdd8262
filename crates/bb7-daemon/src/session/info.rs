//! What a chat and the user's customizations look like to the client: `chat_get`,
//! `get_customization_info` and `prepare_instructions`.

use std::path::{Path, PathBuf};

use super::Session;
use crate::protocol::Reply;
use crate::protocol::error::{Error, Result};
use crate::store::instructions;

impl Session {
    pub(crate) fn chat_get(&mut self) -> Result<Reply> {
        let home = self.home.clone();
        let root = if self.project {
            self.root.clone()
        } else {
            None
        };
        let active = self.active_chat()?;
        let chat = &active.chat;
        let project_root = if chat.global { None } else { root.as_deref() };
        let info = instructions::info(&home.global_instructions_path(), project_root);
        let model = if chat.model.is_empty() {
            chat.effective_model().to_owned()
        } else {
            chat.model.clone()
        };
        let mut reply = Reply::typed("chat")
            .with("id", &chat.id)
            .with("name", &chat.name)
            .with("created", &chat.created)
            .with("model", model)
            .with("reasoning_effort", &chat.reasoning_effort)
            .with("draft", &chat.draft)
            .with("messages", &chat.messages)
            .with("instructions_info", info);
        if chat.global {
            reply = reply.with("global", true);
        }
        if let Some(why) = crate::store::trust::audit(&active.store, chat, active.root.as_deref()) {
            reply = reply.with("untrusted", why);
        }
        Ok(reply)
    }

    pub(crate) fn prepare_instructions(&self, level: &str) -> Result<PathBuf> {
        let (path, template) = match level {
            "project" => {
                self.require_init()?;
                let Some(root) = self.root.as_ref() else {
                    return Err(Error::Invalid("no project root set".into()));
                };
                self.project_store()?;
                (
                    instructions::project_file(root),
                    instructions::PROJECT_TEMPLATE.to_owned(),
                )
            }
            "global" => (
                self.home.global_instructions_path(),
                instructions::GLOBAL_TEMPLATE.to_owned(),
            ),
            // The override replaces the built-in prompt: start from all of it, to edit.
            "system" => (
                self.home.system_prompt_path(),
                format!(
                    "{}{}",
                    instructions::SYSTEM_TEMPLATE,
                    crate::send::prompt::BUILTIN
                ),
            ),
            _ => {
                return Err(Error::Invalid(
                    "invalid level: must be project, global, or system".into(),
                ));
            }
        };
        // The project file lives in `.bb7/`: neither it nor `.bb7` may be a link.
        let fs = match (level, self.root.as_deref()) {
            ("project", Some(root)) => crate::store::confined::Confined::new(root),
            _ => crate::store::confined::Confined::new(path.parent().unwrap_or(Path::new("/"))),
        };
        match fs.kind(&path) {
            Ok(None) => crate::store::atomic::write_in(&fs, &path, template.as_bytes())?,
            Ok(Some(crate::store::confined::Kind::File)) => {}
            Ok(Some(_)) => {
                return Err(Error::Instructions(format!(
                    "{} is not a regular file; bb7 does not follow links or read special files there",
                    path.display()
                )));
            }
            Err(err) => return Err(Error::io("inspect", &path)(err)),
        }
        Ok(path)
    }

    pub(crate) fn customization_info(&self) -> Reply {
        let global_chat = self
            .active
            .as_ref()
            .is_some_and(|active| active.chat.global);
        let root = if self.project && !global_chat {
            self.root.as_deref()
        } else {
            None
        };
        let info = instructions::info(&self.home.global_instructions_path(), root);
        Reply::typed("customization_info")
            .with("system_override", self.home.system_prompt_path().is_file())
            .with("global_instructions", info.global_exists)
            .with(
                "project_instructions",
                info.project_exists && info.project_error.is_empty(),
            )
            .with("project_instructions_error", info.project_error)
    }
}
