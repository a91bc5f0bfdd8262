//! What a chat and the user's customizations look like to the client: `chat_get`,
//! `get_customization_info` and `prepare_instructions`.

use std::path::{Path, PathBuf};

use super::Session;
use crate::store::instructions;
use crate::wire::error::{Error, Result};
use crate::wire::replies::{ChatView, CustomizationInfo};

impl Session {
    /// `chat_get`: the active chat with its instruction files' state, and why it is not
    /// trusted when it is not.
    pub(crate) fn chat_get(&mut self) -> Result<ChatView<'_>> {
        let home = self.home.clone();
        let root = if self.project {
            self.root.clone()
        } else {
            None
        };
        let allowed = self.allowed_includes.clone();
        let active = self.active_chat()?;
        let chat = &active.chat;
        let project_root = if chat.global { None } else { root.as_deref() };
        let info = instructions::info(&home.global_instructions_path(), project_root, &allowed);
        let model = if chat.model.is_empty() {
            chat.effective_model().to_owned()
        } else {
            chat.model.clone()
        };
        Ok(ChatView {
            id: &chat.id,
            name: &chat.name,
            created: &chat.created,
            model,
            reasoning_effort: &chat.reasoning_effort,
            draft: &chat.draft,
            messages: &chat.messages,
            instructions_info: info,
            global: chat.global,
            untrusted: crate::store::trust::audit(&active.store, chat, active.root.as_deref()),
        })
    }

    /// `prepare_instructions`: creates the instruction file of `level` from its template
    /// when missing (never through a link) and returns its path.
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
            ("project", Some(root)) => ybs_fsguard::confined::Confined::new(root),
            _ => ybs_fsguard::confined::Confined::new(path.parent().unwrap_or(Path::new("/"))),
        };
        match fs.kind(&path) {
            Ok(None) => crate::store::atomic::write_in(&fs, &path, template.as_bytes())?,
            Ok(Some(ybs_fsguard::confined::Kind::File)) => {}
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

    /// `get_customization_info`: which instruction files and prompt override exist.
    pub(crate) fn customization_info(&self) -> CustomizationInfo {
        let global_chat = self
            .active
            .as_ref()
            .is_some_and(|active| active.chat.global);
        let root = if self.project && !global_chat {
            self.root.as_deref()
        } else {
            None
        };
        let info = instructions::info(
            &self.home.global_instructions_path(),
            root,
            &self.allowed_includes,
        );
        CustomizationInfo {
            system_override: self.home.system_prompt_path().is_file(),
            global_instructions: info.global_exists,
            project_instructions: info.project_exists && info.project_error.is_empty(),
            project_instructions_error: info.project_error,
            project_includes: info.project_includes,
        }
    }
}
