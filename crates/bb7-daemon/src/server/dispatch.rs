//! Dispatch: each request to its handler, and the handler's result into the reply its
//! declaration names ([`crate::wire::requests`]): each handler runs through [`answer`], so it
//! can only return its request's declared reply body. `chat_get` and `context_list` answer
//! with views borrowed from the session (no copy of a chat), made into their lines directly. [`immediate`] answers what the reader
//! answers at once (`ping`, `version`, `cancel`); [`route`] runs the rest on the session's
//! thread: the model-calling requests go to [`crate::send`] (their replies may come later,
//! from a background task), everything else to [`Session::dispatch`] and the session's
//! handlers.

use crate::send::shared::{Job, Shared};
use crate::send::{calls, prepare};
use crate::session::{Flow, Session, required};
use crate::wire::error::{Error, Result};
use crate::wire::replies;
use crate::wire::reply::Reply;
use crate::wire::requests::fields as F;
use crate::wire::requests::{Request, answer, answer_chat_get, answer_context_list};

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

/// Answers a request whose [`Concurrency`](crate::wire::requests::Concurrency) is
/// `Immediate`, without waiting behind queued work.
pub fn immediate(shared: &Shared, request: Request) -> Reply {
    let answered = match request {
        Request::Ping(ping) => answer(ping, |_| ack()),
        Request::Version(version) => answer(version, |_| Ok(self::version())),
        Request::Cancel(cancel) => answer(cancel, |F::Cancel { target_request_id }| {
            if shared.cancel(target_request_id.as_deref().unwrap_or_default()) {
                ack()
            } else {
                Err(Error::NothingToCancel)
            }
        }),
        other => Err(Error::NotAvailable(other.action().to_owned())),
    };
    answered.unwrap_or_else(|err| Reply::error(err.to_string()))
}

/// The body of `ok` with nothing else.
fn ack() -> Result<replies::Ack> {
    Ok(replies::Ack {})
}

fn version() -> replies::Version {
    replies::Version {
        version: env!("CARGO_PKG_VERSION"),
    }
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
        Request::GenerateTitle(title) => Routed::Reply(answer(
            title,
            |F::GenerateTitle {
                 chat_id,
                 content,
                 global,
             }| {
                calls::generate_title(session, shared, chat_id, content, global)?;
                ack()
            },
        )?),
        // Token counts (linear, but long for a big file or prompt) run off the session's
        // thread: what is counted is gathered here, the reply comes when it is counted.
        Request::EstimateTokens(estimate) => {
            let input = estimate.input_text.as_deref().unwrap_or_default();
            let job = calls::estimate(session, input)?;
            shared.spawn_blocking_reply(request_id, move || answer(estimate, |_| Ok(job.count())));
            Routed::Later
        }
        Request::EstimateTextTokens(estimate) => {
            shared.spawn_blocking_reply(request_id, move || {
                answer(estimate, |F::EstimateTextTokens { text, texts }| {
                    calls::estimate_text(text, texts)
                })
            });
            Routed::Later
        }
        Request::GetFileStatuses(statuses) => {
            let mut files = session.active_chat()?.file_statuses_uncounted()?;
            // The same request pipelined: those queued right behind this one read the same
            // state, so they get this reply instead of a copy of every output each.
            let mut request_ids = vec![request_id];
            let same = |job: &Job| matches!(job, Job::Request(_, Request::GetFileStatuses(_)));
            for job in shared.jobs.take_front_while(same) {
                if let Job::Request(id, _) = job {
                    request_ids.push(id);
                }
            }
            shared.spawn_blocking_replies(request_ids, move || {
                answer(statuses, |_| {
                    crate::session::files::count_tokens(&mut files);
                    Ok(replies::FileStatuses { files })
                })
            });
            Routed::Later
        }
        Request::GetModels(models) => match calls::get_models(session, shared, request_id)? {
            Some(list) => Routed::Reply(answer(models, |_| Ok(list))?),
            None => Routed::Later,
        },
        Request::GetBalance(_) => {
            calls::get_balance(session, shared, request_id)?;
            Routed::Later
        }
        Request::ChatMove(chat_move) if shared.streaming() => {
            Routed::Reply(answer(chat_move, |F::ChatMove { id, to }| {
                session.chat_move_keeping_active(&id, &to)?;
                ack()
            })?)
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
        let reply = match request {
            R::Ping(ping) => answer(ping, |_| ack())?,
            R::Version(version) => answer(version, |_| Ok(self::version()))?,
            R::Shutdown(_) => {
                self.release_active();
                return Ok(None);
            }
            R::AllowIncludes(allow) => answer(allow, |F::AllowIncludes { paths }| {
                self.allow_includes(paths);
                ack()
            })?,
            R::Bb7Init(init) => answer(init, |F::Bb7Init { project_root }| {
                self.bb7_init(&project_root)?;
                ack()
            })?,
            R::Init(init) => answer(init, |F::Init { project_root }| self.init(&project_root))?,
            R::ChatNew(new) => answer(
                new,
                |F::ChatNew {
                     name,
                     model,
                     global,
                 }| {
                    Ok(replies::Created {
                        id: self.chat_new(&name, model.as_deref(), global)?,
                    })
                },
            )?,
            R::ChatNewWithContext(new) => answer(
                new,
                |F::ChatNewWithContext {
                     source_chat_id,
                     global,
                 }| {
                    let source = required("source_chat_id", &source_chat_id)?;
                    Ok(replies::Created {
                        id: self.chat_new_with_context(&source, global)?,
                    })
                },
            )?,
            R::ChatList(list) => answer(list, |F::ChatList { global }| {
                Ok(replies::ChatList {
                    chats: self.chat_list(global)?,
                })
            })?,
            R::ChatSelect(select) => answer(select, |F::ChatSelect { id, global }| {
                self.chat_select(&required("id", &id)?, global)?;
                ack()
            })?,
            // A view borrowed from the session: made into its line here, not through `answer`.
            R::ChatGet(get) => answer_chat_get(get, &self.chat_get()?),
            R::ChatDelete(delete) => answer(delete, |F::ChatDelete { id, global }| {
                self.chat_delete(&required("id", &id)?, global)?;
                ack()
            })?,
            R::ChatRename(rename) => answer(rename, |F::ChatRename { id, name, global }| {
                self.chat_rename(&required("id", &id)?, &required("name", &name)?, global)?;
                ack()
            })?,
            R::ChatMove(chat_move) => answer(chat_move, |F::ChatMove { id, to }| {
                self.chat_move(&required("id", &id)?, &to)?;
                ack()
            })?,
            R::ChatActive(active) => answer(active, |_| {
                let active = self.chat_active()?;
                Ok(replies::ChatActive {
                    id: active.map(|active| active.chat.id.clone()),
                    global: active.is_some_and(|active| active.chat.global),
                })
            })?,
            R::ChatForceUnlock(unlock) => answer(unlock, |F::ChatForceUnlock { id, global }| {
                self.chat_force_unlock(&required("id", &id)?, global)?;
                ack()
            })?,
            R::SearchChats(search) => answer(search, |F::SearchChats { query, global }| {
                Ok(replies::SearchResults {
                    results: self.search(&query, global)?,
                })
            })?,
            R::ChatEdit(edit) => answer(
                edit,
                |F::ChatEdit {
                     chat_id,
                     message_index,
                     content,
                 }| {
                    Ok(replies::Edited {
                        context_warnings: self.chat_edit(&chat_id, message_index, &content)?,
                    })
                },
            )?,
            R::ForkChat(fork) => answer(
                fork,
                |F::ForkChat {
                     chat_id,
                     fork_message_index,
                     global,
                 }| {
                    self.fork(&required("chat_id", &chat_id)?, fork_message_index, global)
                },
            )?,
            R::MessageDelete(delete) => answer(delete, |F::MessageDelete { chat_id, index }| {
                self.message_delete(&chat_id, index)?;
                ack()
            })?,
            R::SaveDraft(save) => answer(save, |F::SaveDraft { draft }| {
                self.save_draft(draft)?;
                ack()
            })?,
            R::SaveChatSettings(save) => answer(
                save,
                |F::SaveChatSettings {
                     model,
                     reasoning_effort,
                 }| {
                    self.save_chat_settings(model, reasoning_effort)?;
                    ack()
                },
            )?,
            R::AddSystemMessage(add) => answer(add, |F::AddSystemMessage { content, message }| {
                self.add_system_message(content, message)?;
                ack()
            })?,
            R::ContextAdd(add) => answer(
                add,
                |F::ContextAdd {
                     path,
                     content,
                     readonly,
                 }| {
                    self.active_chat()?
                        .add_file(&required("path", &path)?, &content, readonly)?;
                    ack()
                },
            )?,
            R::ContextAddSection(add) => answer(
                add,
                |F::ContextAddSection {
                     path,
                     content,
                     start_line,
                     end_line,
                 }| {
                    self.active_chat()?.add_section(
                        &required("path", &path)?,
                        &content,
                        start_line,
                        end_line,
                    )?;
                    ack()
                },
            )?,
            R::ContextUpdate(update) => answer(update, |F::ContextUpdate { path, content }| {
                self.active_chat()?
                    .update_file(&required("path", &path)?, &content)?;
                ack()
            })?,
            R::ContextRemove(remove) => answer(remove, |F::ContextRemove { path }| {
                self.active_chat()?.remove_file(&required("path", &path)?)?;
                ack()
            })?,
            R::ContextRemoveSection(remove) => answer(
                remove,
                |F::ContextRemoveSection {
                     path,
                     start_line,
                     end_line,
                 }| {
                    self.active_chat()?.remove_section(
                        &required("path", &path)?,
                        start_line,
                        end_line,
                    )?;
                    ack()
                },
            )?,
            // The files written straight to text from the chat (no copy): not through `answer`.
            R::ContextList(list) => {
                answer_context_list(list, &self.active_chat()?.chat.context_files)
            }
            R::ContextSetReadonly(set) => {
                answer(set, |F::ContextSetReadonly { path, readonly }| {
                    self.active_chat()?
                        .set_readonly(&required("path", &path)?, readonly)?;
                    ack()
                })?
            }
            R::SyncContext(sync) => answer(sync, |F::SyncContext { path }| {
                let path = required("path", path.as_deref().unwrap_or_default())?;
                self.active_chat()?.sync_one(&path)?;
                ack()
            })?,
            R::GetContextFile(get) => answer(get, |F::GetContextFile { path }| {
                let path = required("path", &path)?;
                let content = self.active_chat()?.context_content(&path)?;
                Ok(replies::FileContent { path, content })
            })?,
            R::GetOutputFile(get) => answer(get, |F::GetOutputFile { path }| {
                let path = required("path", &path)?;
                let content = self.active_chat()?.output_content(&path)?;
                Ok(replies::FileContent { path, content })
            })?,
            R::GetDiffPaths(get) => answer(get, |F::GetDiffPaths { path }| {
                let path = required("path", &path)?;
                let (output, local) = self.active_chat()?.diff_paths(&path)?;
                Ok(replies::DiffPaths {
                    path,
                    output_path: output.display().to_string(),
                    local_path: local.display().to_string(),
                })
            })?,
            R::GetFileStatuses(get) => answer(get, |_| {
                Ok(replies::FileStatuses {
                    files: self.active_chat()?.file_statuses()?,
                })
            })?,
            R::ApplyFile(apply) => answer(apply, |F::ApplyFile { path }| {
                Ok(replies::Applied {
                    content: self.active_chat()?.apply(&required("path", &path)?)?,
                })
            })?,
            R::ApplyFileAs(apply) => answer(apply, |F::ApplyFileAs { path, destination }| {
                let path = required("path", &path)?;
                let destination = required("destination", &destination)?;
                Ok(replies::Applied {
                    content: self.active_chat()?.apply_as(&path, &destination)?,
                })
            })?,
            R::OutputDelete(delete) => answer(delete, |F::OutputDelete { path }| {
                self.active_chat()?
                    .reject_output(&required("path", &path)?)?;
                ack()
            })?,
            R::DiffLocalDone(done) => answer(done, |F::DiffLocalDone { path }| {
                let outcome = self
                    .active_chat()?
                    .diff_local_done(&required("path", &path)?)?;
                Ok(replies::DiffLocalDone {
                    outcome: outcome.as_str(),
                })
            })?,
            R::PrepareInstructions(prepare) => {
                answer(prepare, |F::PrepareInstructions { level }| {
                    let path = self.prepare_instructions(&required("level", &level)?)?;
                    Ok(replies::InstructionsPath {
                        path: path.display().to_string(),
                    })
                })?
            }
            R::GetCustomizationInfo(info) => answer(info, |_| Ok(self.customization_info()))?,
            R::Send(_)
            | R::Cancel(_)
            | R::GenerateTitle(_)
            | R::EstimateTokens(_)
            | R::EstimateTextTokens(_)
            | R::GetModels(_)
            | R::GetBalance(_) => return Err(Error::NotAvailable(request.action().to_owned())),
        };
        Ok(Some(reply))
    }
}
