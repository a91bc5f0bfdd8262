//! Dispatch: each request the session handles, turned into a call of its handler and the
//! handler's result into the reply. The model-calling requests are routed by the server
//! loop ([`crate::protocol::server`]) to [`crate::send`].

use crate::protocol::error::{Error, Result};
use crate::protocol::{Reply, Request};
use crate::session::{Flow, Session, required};

impl Session {
    /// Handles one request; the reply has no request id yet.
    pub fn handle(&mut self, request: Request) -> (Reply, Flow) {
        let action = request.action();
        match self.dispatch(request) {
            Ok(Some(reply)) => (reply, Flow::Continue),
            Ok(None) => (Reply::ok(), Flow::Exit),
            Err(err) => {
                if !err.is_fatal() {
                    tracing::info!(action, error = %err, "request failed");
                }
                (Reply::error(err.to_string()), Flow::Continue)
            }
        }
    }

    /// Like [`handle`](Session::handle) but returns the error itself, so the caller can tell
    /// the fatal safety-guard error apart. `Ok(None)` means shut down.
    pub fn dispatch(&mut self, request: Request) -> Result<Option<Reply>> {
        use Request as R;
        let reply = match request {
            R::Ping => Reply::ok(),
            R::Version => Reply::typed("version").with("version", env!("CARGO_PKG_VERSION")),
            R::Shutdown => {
                self.release_active();
                return Ok(None);
            }
            R::Bb7Init { project_root } => self.bb7_init(&project_root)?,
            R::Init { project_root } => self.init(&project_root)?,
            R::ChatNew {
                name,
                model,
                global,
            } => {
                let id = self.chat_new(&name, model.as_deref(), global)?;
                Reply::ok().with("id", id)
            }
            R::ChatNewWithContext {
                source_chat_id,
                global,
            } => {
                let id = self
                    .chat_new_with_context(&required("source_chat_id", &source_chat_id)?, global)?;
                Reply::ok().with("id", id)
            }
            R::ChatList { global } => {
                Reply::typed("chat_list").with("chats", self.chat_list(global)?)
            }
            R::ChatSelect { id, global } => {
                self.chat_select(&required("id", &id)?, global)?;
                Reply::ok()
            }
            R::ChatGet => self.chat_get()?,
            R::ChatDelete { id, global } => {
                self.chat_delete(&required("id", &id)?, global)?;
                Reply::ok()
            }
            R::ChatRename { id, name, global } => {
                self.chat_rename(&required("id", &id)?, &required("name", &name)?, global)?;
                Reply::ok()
            }
            R::ChatMove { id, to } => {
                self.chat_move(&required("id", &id)?, &to)?;
                Reply::ok()
            }
            R::ChatActive => {
                let mut reply = Reply::typed("chat_active");
                if let Some(active) = self.chat_active()? {
                    reply = reply.with("id", &active.chat.id);
                    if active.chat.global {
                        reply = reply.with("global", true);
                    }
                }
                reply
            }
            R::ChatForceUnlock { id, global } => {
                self.chat_force_unlock(&required("id", &id)?, global)?;
                Reply::ok()
            }
            R::SearchChats { query, global } => {
                let results = self.search(&query, global)?;
                Reply::typed("search_results").with("results", results)
            }
            R::ChatEdit {
                chat_id,
                message_index,
                content,
            } => {
                let warnings = self.chat_edit(&chat_id, message_index, &content)?;
                Reply::ok().with("context_warnings", warnings)
            }
            R::ForkChat {
                chat_id,
                fork_message_index,
                global,
            } => self.fork(&required("chat_id", &chat_id)?, fork_message_index, global)?,
            R::MessageDelete { chat_id, index } => {
                self.message_delete(&chat_id, index)?;
                Reply::ok()
            }
            R::SaveDraft { draft } => {
                self.save_draft(draft)?;
                Reply::ok()
            }
            R::SaveChatSettings {
                model,
                reasoning_effort,
            } => {
                self.save_chat_settings(model, reasoning_effort)?;
                Reply::ok()
            }
            R::AddSystemMessage { content, message } => {
                self.add_system_message(content, message)?;
                Reply::ok()
            }
            R::ContextAdd {
                path,
                content,
                readonly,
            } => {
                self.active_chat()?
                    .add_file(&required("path", &path)?, &content, readonly)?;
                Reply::ok()
            }
            R::ContextAddSection {
                path,
                content,
                start_line,
                end_line,
            } => {
                self.active_chat()?.add_section(
                    &required("path", &path)?,
                    &content,
                    start_line,
                    end_line,
                )?;
                Reply::ok()
            }
            R::ContextUpdate { path, content } => {
                self.active_chat()?
                    .update_file(&required("path", &path)?, &content)?;
                Reply::ok()
            }
            R::ContextRemove { path } => {
                self.active_chat()?.remove_file(&required("path", &path)?)?;
                Reply::ok()
            }
            R::ContextRemoveSection {
                path,
                start_line,
                end_line,
            } => {
                self.active_chat()?.remove_section(
                    &required("path", &path)?,
                    start_line,
                    end_line,
                )?;
                Reply::ok()
            }
            R::ContextList => {
                let active = self.active_chat()?;
                Reply::typed("context_list").with("files", &active.chat.context_files)
            }
            R::ContextSetReadonly { path, readonly } => {
                self.active_chat()?
                    .set_readonly(&required("path", &path)?, readonly)?;
                Reply::ok()
            }
            R::SyncContext { path } => {
                let path = required("path", path.as_deref().unwrap_or_default())?;
                self.active_chat()?.sync_one(&path)?;
                Reply::ok()
            }
            R::GetContextFile { path } => {
                let path = required("path", &path)?;
                let content = self.active_chat()?.context_content(&path)?;
                Reply::typed("file_content")
                    .with("path", path)
                    .with("content", content)
            }
            R::GetOutputFile { path } => {
                let path = required("path", &path)?;
                let content = self.active_chat()?.output_content(&path)?;
                Reply::typed("file_content")
                    .with("path", path)
                    .with("content", content)
            }
            R::GetDiffPaths { path } => {
                let path = required("path", &path)?;
                let (output, local) = self.active_chat()?.diff_paths(&path)?;
                Reply::typed("diff_paths")
                    .with("path", path)
                    .with("output_path", output.display().to_string())
                    .with("local_path", local.display().to_string())
            }
            R::GetFileStatuses => {
                let files = self.active_chat()?.file_statuses()?;
                Reply::typed("file_statuses").with("files", files)
            }
            R::ApplyFile { path } => {
                let content = self.active_chat()?.apply(&required("path", &path)?)?;
                Reply::ok().with("content", content)
            }
            R::ApplyFileAs { path, destination } => {
                let path = required("path", &path)?;
                let destination = required("destination", &destination)?;
                let content = self.active_chat()?.apply_as(&path, &destination)?;
                Reply::ok().with("content", content)
            }
            R::OutputDelete { path } => {
                self.active_chat()?
                    .reject_output(&required("path", &path)?)?;
                Reply::ok()
            }
            R::DiffLocalDone { path } => {
                let outcome = self
                    .active_chat()?
                    .diff_local_done(&required("path", &path)?)?;
                Reply::ok().with("outcome", outcome.as_str())
            }
            R::PrepareInstructions { level } => {
                let path = self.prepare_instructions(&required("level", &level)?)?;
                Reply::typed("instructions_path").with("path", path.display().to_string())
            }
            R::GetCustomizationInfo => self.customization_info(),
            R::Send { .. }
            | R::Cancel { .. }
            | R::GenerateTitle { .. }
            | R::EstimateTokens { .. }
            | R::EstimateTextTokens { .. }
            | R::GetModels { .. }
            | R::GetBalance { .. } => return Err(Error::NotAvailable(request.action().to_owned())),
        };
        Ok(Some(reply))
    }
}
