//! Dispatch: each request to its handler, and the handler's result into the reply its
//! declaration names ([`crate::wire::requests`]). [`immediate`] answers what the reader
//! answers at once (`ping`, `version`, `cancel`); [`route`] runs the rest on the session's
//! thread: the model-calling requests go to [`crate::send`] (their replies may come later,
//! from a background task), everything else to [`Session::dispatch`] and the session's
//! handlers.

use crate::wire::error::{Error, Result};
use crate::wire::replies::{self, ReplyBody};
use crate::wire::reply::Reply;
use crate::wire::requests::Request;
use crate::send::shared::Shared;
use crate::send::{calls, prepare};
use crate::session::{Flow, Session, required};

/// What running a request on the session's thread gave.
#[derive(Debug)]
pub enum Routed {
    /// The reply, to send now.
    Reply(Reply),
    /// A background task replies when it is done.
    Later,
    /// `shutdown`: answer `ok`, then stop.
    Shutdown,
}

fn reply<B: ReplyBody + ?Sized>(body: &B) -> Reply {
    Reply::new(body)
}

/// Answers a request whose [`Concurrency`](crate::wire::requests::Concurrency) is
/// `Immediate`, without waiting behind queued work.
pub fn immediate(shared: &Shared, request: Request) -> Reply {
    match request {
        Request::Ping => Reply::ok(),
        Request::Version => version(),
        Request::Cancel { target_request_id } => {
            if shared.cancel(target_request_id.as_deref().unwrap_or_default()) {
                Reply::ok()
            } else {
                Reply::error(Error::NothingToCancel.to_string())
            }
        }
        other => Reply::error(Error::NotAvailable(other.action().to_owned()).to_string()),
    }
}

fn version() -> Reply {
    reply(&replies::Version {
        version: env!("CARGO_PKG_VERSION"),
    })
}

/// Runs one request on the session's thread.
pub fn route(
    session: &mut Session,
    shared: &Shared,
    request_id: Option<String>,
    request: Request,
) -> Result<Routed> {
    let kind = request.reply_kind();
    let routed = match request {
        Request::Send(params) => {
            prepare::start(session, shared, request_id, params)?;
            Routed::Later
        }
        Request::GenerateTitle {
            chat_id,
            content,
            global,
        } => {
            calls::generate_title(session, shared, chat_id, content, global)?;
            Routed::Reply(Reply::ok())
        }
        // Token counts (linear, but long for a big file or prompt) run off the session's
        // thread: what is counted is gathered here, the reply comes when it is counted.
        Request::EstimateTokens { input_text } => {
            let job = calls::estimate(session, input_text.as_deref().unwrap_or_default())?;
            shared.spawn_blocking_reply(request_id, move || Ok(reply(&job.count())));
            Routed::Later
        }
        Request::EstimateTextTokens { text, texts } => {
            shared.spawn_blocking_reply(request_id, move || {
                Ok(reply(&calls::estimate_text(text, texts)?))
            });
            Routed::Later
        }
        Request::GetFileStatuses => {
            let mut files = session.active_chat()?.file_statuses_uncounted()?;
            shared.spawn_blocking_reply(request_id, move || {
                crate::session::files::count_tokens(&mut files);
                Ok(reply(&replies::FileStatuses { files }))
            });
            Routed::Later
        }
        Request::GetModels => match calls::get_models(session, shared, request_id)? {
            Some(models) => Routed::Reply(reply(&models)),
            None => Routed::Later,
        },
        Request::GetBalance => {
            calls::get_balance(session, shared, request_id)?;
            Routed::Later
        }
        Request::ChatMove { id, to } if shared.streaming() => {
            session.chat_move_keeping_active(&id, &to)?;
            Routed::Reply(Reply::ok())
        }
        request => match session.dispatch(request)? {
            Some(reply) => Routed::Reply(reply),
            None => Routed::Shutdown,
        },
    };
    if let Routed::Reply(reply) = &routed {
        debug_assert_eq!(
            reply.kind(),
            kind,
            "a reply of another type than its request declares"
        );
    }
    Ok(routed)
}

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
    /// the fatal safety-guard error apart. `Ok(None)` means shut down. The model-calling
    /// requests are not served here ([`route`] serves them).
    pub fn dispatch(&mut self, request: Request) -> Result<Option<Reply>> {
        use Request as R;
        let answer = match request {
            R::Ping => Reply::ok(),
            R::Version => version(),
            R::Shutdown => {
                self.release_active();
                return Ok(None);
            }
            R::AllowIncludes { paths } => {
                self.allow_includes(paths);
                Reply::ok()
            }
            R::Bb7Init { project_root } => {
                self.bb7_init(&project_root)?;
                Reply::ok()
            }
            R::Init { project_root } => reply(&self.init(&project_root)?),
            R::ChatNew {
                name,
                model,
                global,
            } => reply(&replies::Created {
                id: self.chat_new(&name, model.as_deref(), global)?,
            }),
            R::ChatNewWithContext {
                source_chat_id,
                global,
            } => reply(&replies::Created {
                id: self
                    .chat_new_with_context(&required("source_chat_id", &source_chat_id)?, global)?,
            }),
            R::ChatList { global } => reply(&replies::ChatList {
                chats: self.chat_list(global)?,
            }),
            R::ChatSelect { id, global } => {
                self.chat_select(&required("id", &id)?, global)?;
                Reply::ok()
            }
            R::ChatGet => reply(&self.chat_get()?),
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
                let active = self.chat_active()?;
                reply(&replies::ChatActive {
                    id: active.map(|active| active.chat.id.clone()),
                    global: active.is_some_and(|active| active.chat.global),
                })
            }
            R::ChatForceUnlock { id, global } => {
                self.chat_force_unlock(&required("id", &id)?, global)?;
                Reply::ok()
            }
            R::SearchChats { query, global } => reply(&replies::SearchResults {
                results: self.search(&query, global)?,
            }),
            R::ChatEdit {
                chat_id,
                message_index,
                content,
            } => reply(&replies::Edited {
                context_warnings: self.chat_edit(&chat_id, message_index, &content)?,
            }),
            R::ForkChat {
                chat_id,
                fork_message_index,
                global,
            } => reply(&self.fork(&required("chat_id", &chat_id)?, fork_message_index, global)?),
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
            R::ContextList => Reply::context_list(&self.active_chat()?.chat.context_files),
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
                reply(&replies::FileContent { path, content })
            }
            R::GetOutputFile { path } => {
                let path = required("path", &path)?;
                let content = self.active_chat()?.output_content(&path)?;
                reply(&replies::FileContent { path, content })
            }
            R::GetDiffPaths { path } => {
                let path = required("path", &path)?;
                let (output, local) = self.active_chat()?.diff_paths(&path)?;
                reply(&replies::DiffPaths {
                    path,
                    output_path: output.display().to_string(),
                    local_path: local.display().to_string(),
                })
            }
            R::GetFileStatuses => reply(&replies::FileStatuses {
                files: self.active_chat()?.file_statuses()?,
            }),
            R::ApplyFile { path } => reply(&replies::Applied {
                content: self.active_chat()?.apply(&required("path", &path)?)?,
            }),
            R::ApplyFileAs { path, destination } => {
                let path = required("path", &path)?;
                let destination = required("destination", &destination)?;
                reply(&replies::Applied {
                    content: self.active_chat()?.apply_as(&path, &destination)?,
                })
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
                reply(&replies::DiffLocalDone {
                    outcome: outcome.as_str(),
                })
            }
            R::PrepareInstructions { level } => {
                let path = self.prepare_instructions(&required("level", &level)?)?;
                reply(&replies::InstructionsPath {
                    path: path.display().to_string(),
                })
            }
            R::GetCustomizationInfo => reply(&self.customization_info()),
            R::Send(_)
            | R::Cancel { .. }
            | R::GenerateTitle { .. }
            | R::EstimateTokens { .. }
            | R::EstimateTextTokens { .. }
            | R::GetModels
            | R::GetBalance => return Err(Error::NotAvailable(request.action().to_owned())),
        };
        Ok(Some(answer))
    }
}
