//! The stream task of a send ([`run`]), in steps that return what they found:
//! `send_with_trim` streams the request, leaving out the oldest history pairs and sending
//! again while the provider says the context overflows; the reply's tool calls are checked
//! and applied (all or nothing, `ybs_edit`); with `auto_retry_partial_edits`
//! failed edits get one hidden repair request (`repair_once`). What came of it is a
//! `Finish`, which `Finish::record` saves and turns into the final reply.

use std::ops::Range;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use ybs_context_budget::{Next, Outcome, Pairs, SendError, TrimLoop};
use ybs_core::{ChatRequest, LlmError, Message};
use ybs_edit::{DiffError, DiffMode, FileWrite};
use ybs_providers::Provider;

use crate::send::assemble::{self, FileBlock, Input};
use crate::send::record::{Finish, Recorder, Stamp, counters_of, tool_calls_of};
use crate::send::settings::Settings;
use crate::send::shared::Shared;
use crate::send::stream::{Streamed, chunk, stream_once};
use crate::send::titles;
use crate::send::tool_calls::{self, Applied, Lookup, WithPending, merge_writes, with_read_only};
use crate::store::active::Active;
use crate::store::global::Home;
use crate::wire::error::provider_message;
use crate::wire::params::RetryContext;
use crate::wire::replies::Counters;

/// The chunk sent before a hidden repair request.
pub const REATTEMPT: &str = "[Reattempting to apply file changes...]";

/// Everything the stream task needs, taken from the session.
pub struct Plan {
    /// The `send` request's id.
    pub(super) request_id: Option<String>,
    /// A copy of the active chat, the user message saved; handed back when the task ends.
    pub(super) active: Active,
    /// The per-user files (`usage.csv`).
    pub(super) home: Home,
    /// The config as checked.
    pub(super) settings: Settings,
    /// The provider for the model.
    pub(super) provider: Arc<dyn Provider>,
    /// The request without its user message: model, system message, tools, effort, cache key.
    pub(super) base: ChatRequest,
    /// The edit mode (`None` for global chats: no file tools).
    pub(super) mode: Option<DiffMode>,
    /// The files of the request.
    pub(super) files: Vec<FileBlock>,
    /// The history before the new user message.
    pub(super) history: Vec<Message>,
    /// The history's pairs, for the trim loop.
    pub(super) pairs: Pairs,
    /// The new user message.
    pub(super) latest: String,
    /// The failed edits the client asks to repair, if any.
    pub(super) retry: Option<RetryContext>,
    /// The WYSIWYG trim loop, at its first attempt.
    pub(super) trim: TrimLoop,
    /// Whether this is the chat's first user message (then a title is made).
    pub(super) first_exchange: bool,
    /// The context files' paths, for an automatic title.
    pub(super) title_files: Vec<String>,
}

/// The stream task: converses with the model, records the outcome, hands the chat back to
/// the session and answers the `send`; the chat's first exchange then gets its title.
pub async fn run(plan: Plan, shared: Shared, cancel: CancellationToken) {
    let stamp = Stamp::start(plan.base.reasoning_effort);
    let finish = converse(&plan, &shared, &cancel).await;
    let title = plan.first_exchange && matches!(finish, Finish::Done { .. });
    let Plan {
        request_id,
        active,
        home,
        settings,
        base,
        latest,
        title_files,
        ..
    } = plan;
    // The name the chat had when the send began: an automatic title replaces only that.
    let chat = (
        active.chat.id.clone(),
        active.chat.global,
        active.chat.name.clone(),
    );
    let recorder = Recorder {
        shared: &shared,
        home: &home,
        model: &base.model,
        stamp: &stamp,
    };
    let reply = finish.record(active, &recorder);
    // Answered on the session's thread, after the chat is back and the slot free.
    shared.post(move |_, shared| shared.send(&reply.for_request(request_id.as_deref())));
    if title {
        spawn_title(&shared, &settings, chat, &latest, &title_files);
    }
}

/// Sends the request, applies the reply's tool calls (repairing them once when the config
/// asks for it) and says how the send ends.
async fn converse(plan: &Plan, shared: &Shared, cancel: &CancellationToken) -> Finish {
    let rid = plan.request_id.as_deref();
    let Sent {
        streamed,
        counters,
        range,
    } = match send_with_trim(plan, shared, cancel).await {
        Ok(sent) => sent,
        Err(finish) => return finish,
    };
    if cancel.is_cancelled()
        || matches!(&streamed.error, Some(error) if error.kind == ybs_core::ErrorKind::Cancelled)
    {
        return Finish::Cancelled {
            reply: streamed.reply,
        };
    }
    if let Some(error) = &streamed.error {
        return Finish::Failed {
            message: provider_message(error),
            partial: Some(streamed.reply),
            counters,
        };
    }

    let reply = streamed.reply;
    let calls = tool_calls_of(&reply.message);
    let Some(mode) = plan.mode.filter(|_| !calls.is_empty()) else {
        return Finish::Done {
            usage: reply.usage,
            reply,
            writes: Vec::new(),
            counters,
        };
    };
    let in_context = |path: &str| plan.active.chat.find_file(path).is_some();
    let checked = match tool_calls::precheck(mode, &calls, &plan.active) {
        Ok(checked) => checked,
        Err(ending) => {
            // As the first bb7: the calls before the bad one are announced, nothing is
            // written, and the reply ends with the error (saved as a system message).
            let before = &calls[..ending.at.min(calls.len())];
            let announced =
                tool_calls::apply(mode, before, &Lookup(&plan.active), in_context, cancel);
            for text in &announced.chunks {
                shared.send(&chunk(text, rid));
            }
            // A write after a successful edit, earlier in the reply, ends it first.
            let ending = announced.ending.unwrap_or(ending);
            return Finish::Failed {
                partial: Some(reply),
                message: ending.message,
                counters,
            };
        }
    };
    tracing::info!(calls = calls.len(), "processing the reply's tool calls");
    let Applied {
        outcome,
        partial,
        chunks,
        ending,
    } = tool_calls::apply(mode, &calls, &Lookup(&plan.active), in_context, cancel);
    // `cancel` after the stream ended stops the processing of its tool calls too: its text
    // is kept, its tool calls (not all processed) are not applied again.
    if cancel.is_cancelled() {
        let mut reply = reply;
        reply
            .message
            .parts
            .retain(|part| !matches!(part, ybs_core::Part::ToolCall(_)));
        return Finish::Cancelled { reply };
    }
    for text in &chunks {
        shared.send(&chunk(text, rid));
    }
    if let Some(ending) = ending {
        return Finish::Failed {
            partial: Some(reply),
            message: ending.message,
            counters,
        };
    }
    let mut usage = reply.usage;
    let mut outcome = with_read_only(outcome, &checked);
    let mut entries = tool_calls::entries(&calls);
    if let Err(diff) = &outcome {
        if plan.settings.auto_retry_partial_edits && mode != DiffMode::Off {
            let failure = Failure {
                diff,
                partial: &partial,
                entries: &entries,
                range,
            };
            match repair_once(plan, shared, cancel, mode, failure).await {
                Ok(repaired) => {
                    usage += repaired.usage;
                    entries.extend(repaired.entries);
                    outcome = repaired.outcome;
                }
                // A cancel during the repair is a cancel like any other: the first bb7's
                // client matches its exact text.
                Err(_) if cancel.is_cancelled() => return Finish::Cancelled { reply },
                Err(error) if error.kind == ybs_core::ErrorKind::Cancelled => {
                    return Finish::Cancelled { reply };
                }
                Err(error) => {
                    return Finish::Failed {
                        partial: Some(reply),
                        message: provider_message(&error),
                        counters,
                    };
                }
            }
        }
    }
    match outcome {
        Ok(writes) => Finish::Done {
            reply,
            usage,
            writes,
            counters,
        },
        Err(diff) => Finish::DiffError {
            reply,
            usage,
            errors: diff.errors,
            tool_calls: entries,
            counters,
        },
    }
}

/// A request that went through: what streamed, the budget's counters and the history pairs
/// it carried.
struct Sent {
    streamed: Streamed,
    counters: Counters,
    range: Range<usize>,
}

/// Streams the request, trimming the oldest history pairs and sending again while the
/// provider reports a context overflow before anything arrived. `Err` when the loop gives up.
async fn send_with_trim(
    plan: &Plan,
    shared: &Shared,
    cancel: &CancellationToken,
) -> Result<Sent, Finish> {
    let rid = plan.request_id.as_deref();
    let mut trim = plan.trim.clone();
    loop {
        let attempt = trim.attempt();
        let request = plan.request(&plan.files, attempt.history.clone(), plan.retry.as_ref());
        let streamed = stream_once(&*plan.provider, &request, cancel, shared, rid, true).await;
        let counters = counters_of(&trim);
        let overflow = match &streamed.error {
            Some(error)
                if !streamed.delivered
                    && !cancel.is_cancelled()
                    && ybs_context_budget::trim::is_overflow(error) =>
            {
                error.clone()
            }
            _ => {
                return Ok(Sent {
                    streamed,
                    counters,
                    range: attempt.history,
                });
            }
        };
        match trim.report(Outcome::Failed(overflow.clone())) {
            Next::Retry(next) => {
                tracing::info!(attempt = attempt.number, "context overflow: trimming");
                trim = next;
            }
            Next::Done(finished) => {
                let message = match finished.result {
                    Err(SendError::Budget(err)) => format!("quota: {err}"),
                    Err(SendError::Provider(err)) => provider_message(&err),
                    Ok(_) => provider_message(&overflow),
                };
                return Err(Finish::Failed {
                    partial: None,
                    message,
                    counters: Counters {
                        trimmed: finished.telemetry.trimmed_count,
                        ..counters
                    },
                });
            }
        }
    }
}

/// The first attempt's failed edits, for [`repair_once`].
struct Failure<'a> {
    diff: &'a DiffError,
    /// The writes of the calls that applied.
    partial: &'a [FileWrite],
    /// The first attempt's `tool_calls` entries.
    entries: &'a [serde_json::Value],
    /// The history pairs the first attempt carried.
    range: Range<usize>,
}

/// What the repair request gave.
struct Repaired {
    /// The writes of both attempts, or the errors of both.
    outcome: Result<Vec<FileWrite>, DiffError>,
    usage: ybs_core::Usage,
    /// The repair's `tool_calls` entries.
    entries: Vec<serde_json::Value>,
}

/// The hidden repair: the same request again with the errors and the first attempt's calls
/// as retry context, and the writes that attempt got right shown (and used as bases) as
/// pending output. `Err` when the repair's stream fails.
async fn repair_once(
    plan: &Plan,
    shared: &Shared,
    cancel: &CancellationToken,
    mode: DiffMode,
    failure: Failure<'_>,
) -> Result<Repaired, LlmError> {
    let rid = plan.request_id.as_deref();
    shared.send(&chunk(&format!("\n{REATTEMPT}\n"), rid));
    let repair_context = RetryContext {
        errors: failure.diff.errors.clone(),
        tool_calls: failure.entries.to_vec(),
    };
    let pending_files = tool_calls::with_pending(&plan.files, failure.partial);
    let mut request = plan.request(&pending_files, failure.range, Some(&repair_context));
    // As the first bb7: the repair asks for no reasoning, whatever the send asked for.
    request.reasoning_effort = None;
    let repair = stream_once(&*plan.provider, &request, cancel, shared, rid, false).await;
    if let Some(error) = repair.error {
        return Err(error);
    }
    let repair_calls = tool_calls_of(&repair.reply.message);
    let lookup = WithPending {
        inner: &Lookup(&plan.active),
        pending: failure
            .partial
            .iter()
            .map(|write| (write.path.clone(), write.content.clone()))
            .collect(),
    };
    let repaired = match tool_calls::precheck(mode, &repair_calls, &plan.active) {
        Ok(checked) => {
            let applied = tool_calls::apply(mode, &repair_calls, &lookup, |_| true, cancel);
            match applied.ending {
                Some(ending) => Err(DiffError {
                    errors: vec![ending.message],
                    tool_calls: Vec::new(),
                }),
                None => with_read_only(applied.outcome, &checked),
            }
        }
        Err(ending) => Err(DiffError {
            errors: vec![ending.message],
            tool_calls: Vec::new(),
        }),
    };
    let outcome = match repaired {
        Ok(writes) => Ok(merge_writes(failure.partial, writes)),
        Err(again) => Err(DiffError {
            errors: failure
                .diff
                .errors
                .iter()
                .cloned()
                .chain(
                    again
                        .errors
                        .iter()
                        .map(|error| format!("retry attempt: {error}")),
                )
                .collect(),
            tool_calls: Vec::new(),
        }),
    };
    Ok(Repaired {
        outcome,
        usage: repair.reply.usage,
        entries: tool_calls::entries(&repair_calls),
    })
}

impl Plan {
    /// The request with the history pairs `range`, `files` and `retry` in its user message.
    fn request(
        &self,
        files: &[FileBlock],
        range: Range<usize>,
        retry: Option<&RetryContext>,
    ) -> ChatRequest {
        let sent: Vec<Message> = self
            .pairs
            .payload(&self.history, range)
            .into_iter()
            .cloned()
            .collect();
        let text = assemble::user_message(&Input {
            files,
            history: &sent,
            latest: &self.latest,
            retry,
        });
        ChatRequest {
            messages: vec![Message::user(text)],
            ..self.base.clone()
        }
    }
}

/// Makes the automatic title of a chat's first exchange, when `title_model` is set.
fn spawn_title(
    shared: &Shared,
    settings: &Settings,
    (chat_id, global, name): (String, bool, String),
    latest: &str,
    files: &[String],
) {
    if let Some(title_model) = settings.title_model.clone() {
        titles::spawn_automatic(
            shared,
            settings,
            title_model,
            (chat_id, global, name),
            titles::prompt_text(latest, files),
        );
    }
}
