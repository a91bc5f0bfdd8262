//! How a send ends (`Finish`) and what is kept of it (`Finish::record`): the assistant
//! message (text and thinking, stamped with `usage` and `reasoning_effort`), the reply's files
//! committed to `output/` with their `AssistantWriteFile` events (all or nothing, through
//! [`commit`]), a system message for an error or a cancel, a row in `usage.csv`; then the
//! chat goes back to the session and the final reply (`done`, `diff_error` or `error`) is
//! returned.

use serde_json::{Map, Value, json};
use ybs_context_budget::TrimLoop;
use ybs_core::{Message, Part, ReasoningEffort, Reply as LlmReply, Role, ToolCall, Usage};
use ybs_edit::FileWrite;

use crate::send::shared::{Shared, fatal};
use crate::store::active::Active;
use crate::store::global::{GlobalState, Home};
use crate::store::model::now;
use crate::store::{commit, usage_log};
use crate::wire::replies::{self, Counters, ErrorReply, UsageFigures};
use crate::wire::reply::Reply;

/// The system message saved after a cancelled reply, and the error that answers its `send`.
pub const ABORTED: &str = "Response aborted by user.";

/// How a send ends.
pub(super) enum Finish {
    /// The reply and the files it writes (none when it made no tool calls): committed, and
    /// answered with `done`.
    Done {
        reply: LlmReply,
        usage: Usage,
        writes: Vec<FileWrite>,
        counters: Counters,
    },
    /// Edits that failed: the text is kept, nothing is written, `diff_error` answers.
    DiffError {
        reply: LlmReply,
        usage: Usage,
        errors: Vec<String>,
        tool_calls: Vec<Value>,
        counters: Counters,
    },
    /// The send failed: what streamed (if anything) is kept, then a system message with
    /// `message`, which is also the `error` that answers.
    Failed {
        partial: Option<LlmReply>,
        message: String,
        counters: Counters,
    },
    /// The user cancelled: what streamed is kept (no file is written), then the abort
    /// message; the `send` is answered with the error [`ABORTED`].
    Cancelled { reply: LlmReply },
}

/// What [`Finish::record`] needs besides the chat.
pub(super) struct Recorder<'a> {
    pub(super) shared: &'a Shared,
    pub(super) home: &'a Home,
    pub(super) model: &'a str,
    pub(super) stamp: &'a Stamp,
}

impl Finish {
    /// Records the send in `active` (and `usage.csv`), hands the chat back to the session
    /// and returns the final reply (without its request id).
    pub(super) fn record(self, mut active: Active, with: &Recorder<'_>) -> Reply {
        // A reply came back: the provider accepted the model, which becomes `last_model` for
        // new chats (never a model name a restored chat merely carries).
        if matches!(self, Finish::Done { .. } | Finish::DiffError { .. }) {
            if let Err(err) = GlobalState::record_model(with.home, with.model) {
                tracing::warn!(error = %err, "could not remember the model");
            }
        }
        match self {
            Finish::Done {
                reply,
                usage,
                writes,
                counters,
            } => {
                let mut message = assistant_message(&reply.message, with.model);
                with.stamp.annotate(&mut message, &usage);
                match commit::commit(&mut active, &writes, vec![message.clone()]) {
                    Ok(paths) => {
                        with.log_usage(&active, &usage);
                        hand_back(with.shared, active);
                        Reply::new(&replies::Done {
                            output_files: paths,
                            usage: UsageFigures::from(&usage),
                            duration: with.stamp.seconds(),
                            counters,
                        })
                    }
                    Err(err) => {
                        // Nothing was written: the reply is kept as text and the failure is a
                        // diff_error, never reported as written.
                        if err.is_fatal() {
                            fatal(&err.into());
                        }
                        with.keep_text(active, message, &usage);
                        let errors = vec![format!("output not written: {err}")];
                        with.diff_error(errors, Vec::new(), &usage, counters)
                    }
                }
            }
            Finish::DiffError {
                reply,
                usage,
                errors,
                tool_calls,
                counters,
            } => {
                let mut message = assistant_message(&reply.message, with.model);
                with.stamp.annotate(&mut message, &usage);
                with.keep_text(active, message, &usage);
                with.diff_error(errors, tool_calls, &usage, counters)
            }
            Finish::Failed {
                partial,
                message,
                counters,
            } => {
                if let Some(reply) = &partial {
                    let kept = assistant_message(&reply.message, with.model);
                    if !kept.parts.is_empty() {
                        active.chat.messages.push(kept);
                    }
                }
                // The user sees why there is no reply, and the model sees it next time.
                active
                    .chat
                    .messages
                    .push(Message::system(&message).with_timestamp(now()));
                save(&active);
                hand_back(with.shared, active);
                Reply::new(&ErrorReply {
                    message,
                    counters: Some(counters),
                })
            }
            Finish::Cancelled { reply } => {
                keep_cancelled(&mut active, &reply, with);
                with.log_usage(&active, &reply.usage);
                hand_back(with.shared, active);
                // The first bb7 and every handler of its client match this exact error.
                Reply::error(ABORTED)
            }
        }
    }
}

impl Recorder<'_> {
    /// Keeps the reply as text only (no file written), logs its usage and hands the chat
    /// back.
    fn keep_text(&self, mut active: Active, message: Message, usage: &Usage) {
        active.chat.messages.push(message);
        save(&active);
        self.log_usage(&active, usage);
        hand_back(self.shared, active);
    }

    /// Appends the send's row to `usage.csv`.
    fn log_usage(&self, active: &Active, usage: &Usage) {
        usage_log::append(self.home, active.root.as_deref(), self.model, usage);
    }

    /// The `diff_error` reply.
    fn diff_error(
        &self,
        errors: Vec<String>,
        tool_calls: Vec<Value>,
        usage: &Usage,
        counters: Counters,
    ) -> Reply {
        Reply::new(&replies::DiffError {
            errors,
            tool_calls,
            usage: UsageFigures::from(usage),
            duration: self.stamp.seconds(),
            counters,
        })
    }
}

/// Keeps what a cancelled stream gave: its text and thinking, then the abort message. As in
/// the first bb7, no tool call of a cancelled reply is applied (it only ever handles them once
/// a reply is complete), so a cancel writes no file.
fn keep_cancelled(active: &mut Active, reply: &LlmReply, with: &Recorder<'_>) {
    let mut message = assistant_message(&reply.message, with.model);
    with.stamp.annotate(&mut message, &reply.usage);
    if !message.parts.is_empty() {
        active.chat.messages.push(message);
    }
    active
        .chat
        .messages
        .push(Message::system(ABORTED).with_timestamp(now()));
    save(active);
}

/// The counters of the trim loop's current attempt.
pub(super) fn counters_of(trim: &TrimLoop) -> Counters {
    Counters {
        predicted: trim.prediction().predicted_message_count(),
        trimmed: trim.trimmed_count(),
        visible: trim.prediction().visible_count,
    }
}

/// What an assistant message records about its reply besides the text, as the first bb7
/// does: `usage` (zero fields left out, `duration` in seconds) and `reasoning_effort`.
pub(super) struct Stamp {
    started: std::time::Instant,
    effort: Option<&'static str>,
}

impl Stamp {
    /// Starts the clock of a request sent with `effort`.
    pub(super) fn start(effort: Option<ReasoningEffort>) -> Stamp {
        Stamp {
            started: std::time::Instant::now(),
            effort: effort.map(ReasoningEffort::as_str),
        }
    }

    /// Seconds since the request started (`duration` of `done` and `diff_error`).
    fn seconds(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    fn annotate(&self, message: &mut Message, usage: &Usage) {
        let usage = (*usage).with_total();
        let mut fields = Map::new();
        for (key, value) in [
            ("prompt_tokens", usage.prompt_tokens),
            ("completion_tokens", usage.completion_tokens),
            ("cached_tokens", usage.cached_tokens),
            ("total_tokens", usage.total_tokens),
        ] {
            if value > 0 {
                fields.insert(key.into(), json!(value));
            }
        }
        if let Some(cost) = usage.cost.filter(|cost| *cost > 0.0) {
            fields.insert("cost".into(), json!(cost));
        }
        let duration = self.started.elapsed().as_secs_f64();
        if duration > 0.0 {
            fields.insert("duration".into(), json!(duration));
        }
        if !fields.is_empty() {
            message.extra.insert("usage".into(), Value::Object(fields));
        }
        if let Some(effort) = self.effort {
            message
                .extra
                .insert("reasoning_effort".into(), json!(effort));
        }
    }
}

/// The tool calls of a reply, in index order.
pub(super) fn tool_calls_of(message: &Message) -> Vec<ToolCall> {
    message.tool_calls().cloned().collect()
}

/// The assistant message to save: text and thinking (tool calls are not kept).
fn assistant_message(reply: &Message, model: &str) -> Message {
    let parts = reply
        .parts
        .iter()
        .filter(|part| matches!(part, Part::Text { .. } | Part::Thinking(_)))
        .cloned()
        .collect();
    Message::new(Role::Assistant, parts)
        .with_model(model)
        .with_timestamp(now())
}

fn save(active: &Active) {
    if let Err(err) = active.save() {
        tracing::error!(error = %err, "could not save the chat after a reply");
    }
}

/// Gives the chat back to the session and only then ends the one-stream-at-a-time window,
/// both on the session's thread: a request queued before the chat is back is still judged
/// beside the stream, so none works on the old copy. The final reply is posted after this
/// job (see `run`), so a `send` read after it finds the slot free.
fn hand_back(shared: &Shared, active: Active) {
    shared.post(move |session, shared| {
        session.restore_active(active);
        shared.clear_stream();
    });
}
