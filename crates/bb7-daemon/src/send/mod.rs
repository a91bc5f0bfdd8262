//! `send`: prepared on the session's thread ([`start`]), streamed by its own task ([`run`]).
//!
//! The task streams `chunk` and `thinking` lines as they arrive, then applies the reply's
//! tool calls with `ybs_tools::bb7_edit` (all or nothing) and commits them to `output/`
//! through [`Active::write_output`] (the project-root guard), recording an
//! `AssistantWriteFile` event per file on the assistant message, and answers `done` with
//! `output_files`, `usage` and the WYSIWYG counter fields `predicted`, `trimmed`, `visible`.
//! Failed edits answer `diff_error` instead (nothing written, text kept), or with
//! `auto_retry_partial_edits` first make one hidden repair request. A context overflow runs
//! the context-budget trim loop: the oldest history pairs are left out and the request sent
//! again. `cancel` stops the stream: the partial reply is saved, then the system message
//! `Response aborted by user.`, and the `send` is answered with the error
//! `Response aborted by user.` (the cancel itself with `ok`). Assistant messages carry
//! `usage` (`duration` in seconds, zero fields left out) and `reasoning_effort`. Provider errors are
//! answered with `error` (`<label>: <provider message>`); the user message is saved before
//! anything is sent, so it is never lost.

pub mod assemble;
pub mod calls;
pub mod prompt;
pub mod settings;
pub mod titles;
pub mod tokens;
pub mod tool_calls;

use std::sync::Arc;

use futures::StreamExt;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;
use ybs_context_budget::{
    Budget, Next, Outcome, PairInfo, Pairs, SendError, TokenCounter, TrimLoop, predict,
};
use ybs_core::{
    Accumulator, ChatRequest, LlmError, Message, Part, ReasoningEffort, Reply as LlmReply, Role,
    StreamEvent, ToolCall, Usage,
};
use ybs_providers::Provider;
use ybs_tools::bb7_edit::{BaseLookup, DiffError, DiffMode, FileWrite, apply_response, tool_specs};

use crate::protocol::Reply;
use crate::protocol::error::{Error, Result};
use crate::protocol::shared::Shared;
use crate::send::settings::Settings;
use crate::session;
use crate::store::active::Active;
use crate::store::global::{GlobalState, Home};
use crate::store::model::now;
use crate::store::{commit, usage_log};
use assemble::{FileBlock, Input, RetryContext};

/// The system message saved after a cancelled reply.
pub const ABORTED: &str = "Response aborted by user.";
/// The chunk sent before a hidden repair request.
pub const REATTEMPT: &str = "[Reattempting to apply file changes...]";
/// The context window assumed when the models list does not know the model.
pub const UNKNOWN_CONTEXT: usize = 1_000_000;

/// Everything the stream task needs, taken from the session.
pub struct Plan {
    request_id: Option<String>,
    active: Active,
    home: Home,
    settings: Settings,
    provider: Arc<dyn Provider>,
    base: ChatRequest,
    mode: Option<DiffMode>,
    files: Vec<FileBlock>,
    history: Vec<Message>,
    pairs: Pairs,
    latest: String,
    retry: Option<RetryContext>,
    trim: TrimLoop,
    first_exchange: bool,
    /// The context files' paths, for an automatic title.
    title_files: Vec<String>,
}

/// Reads a string argument.
fn text_arg(args: &Map<String, Value>, name: &str) -> Option<String> {
    args.get(name)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .filter(|text| !text.is_empty())
}

/// Starts a send on the session's thread: reserves the one stream slot (so `cancel` reaches
/// it from now on), then prepares and streams it. When the models list (for the context
/// window) is not cached yet it is fetched in the background first, so the protocol keeps
/// answering meanwhile; a `cancel` before the request reaches the network ends the send with
/// `Response aborted by user.` and nothing saved.
pub fn start(
    session: &mut session::Session,
    shared: &Shared,
    request_id: Option<String>,
    args: &Map<String, Value>,
) -> Result<()> {
    let cancel = shared.stream_token(request_id.as_deref());
    let checked = (|| {
        if cancel.is_cancelled() {
            return Err(Error::Invalid(ABORTED.into()));
        }
        session.active_chat()?;
        text_arg(args, "content").ok_or(Error::MissingField("content"))?;
        Settings::load(session.home())
    })();
    let settings = checked.inspect_err(|_| shared.clear_stream())?;
    if session.fresh_models().is_some() {
        return launch(session, shared, request_id, args, settings, cancel).inspect_err(|_| {
            shared.clear_stream();
        });
    }
    let args = args.clone();
    let task_shared = shared.clone();
    shared.runtime.spawn(async move {
        let fetched = tokio::select! {
            fetched = crate::send::calls::fetch_models(&settings) => Some(fetched),
            () = cancel.cancelled() => None,
        };
        task_shared.post(move |session, shared| {
            match fetched {
                Some(Ok(models)) => session.set_models(models),
                Some(Err(err)) => {
                    tracing::warn!(error = %err, "models list unavailable; no budget")
                }
                None => {}
            }
            if cancel.is_cancelled() {
                shared.clear_stream();
                shared.send(&Reply::error(ABORTED).for_request(request_id.as_deref()));
                return;
            }
            if let Err(err) = launch(session, shared, request_id.clone(), &args, settings, cancel) {
                shared.clear_stream();
                if err.is_fatal() {
                    crate::protocol::shared::fatal(&err);
                }
                shared.send(&Reply::error(err.to_string()).for_request(request_id.as_deref()));
            }
        });
    });
    Ok(())
}

/// Prepares the send (the stream slot is already reserved) and spawns its stream task.
fn launch(
    session: &mut session::Session,
    shared: &Shared,
    request_id: Option<String>,
    args: &Map<String, Value>,
    settings: Settings,
    cancel: CancellationToken,
) -> Result<()> {
    let home = session.home().clone();
    let project_root = session.project_root().map(std::path::Path::to_path_buf);
    let content = text_arg(args, "content").ok_or(Error::MissingField("content"))?;
    let context_window = context_window(session, args)?;
    let active = session.active_chat()?;
    crate::store::trust::require_trusted(active)?;
    let global = active.chat.global;
    let model = text_arg(args, "model").unwrap_or_else(|| active.chat.effective_model().to_owned());
    let effort = text_arg(args, "reasoning_effort")
        .or_else(|| Some(active.chat.reasoning_effort.clone()).filter(|e| !e.is_empty()));
    let mode = (!global).then_some(settings.diff_mode);
    let system = prompt::system_message(
        &home,
        if global {
            None
        } else {
            project_root.as_deref()
        },
        mode,
    )?;
    let files = assemble::collect_files(active)?;
    let retry = RetryContext::from_value(args.get("retry_context"));
    let history = active.chat.messages.clone();
    // Automatic titles: only for the chat's first user message (as the first bb7).
    let first_exchange = !history.iter().any(|message| message.role == Role::User);
    let title_files: Vec<String> = active
        .chat
        .context_files
        .iter()
        .map(|file| file.path.clone())
        .collect();

    // The budget: pairs of the history predicted against the model's window.
    let counter = tokens::counter();
    let pairs = Pairs::split(&history);
    let pair_tokens = pairs.tokens(counter, &history);
    let reserved = counter.count(&system)
        + files
            .iter()
            .map(|file| counter.count(&file.content))
            .sum::<usize>()
        + pairs.system_tokens(counter, &history);
    let budget = Budget::new(context_window, None).with_reserved_tokens(reserved);
    let prediction = predict(&pair_tokens, &budget);
    let infos: Vec<PairInfo> = pair_tokens
        .iter()
        .enumerate()
        .map(|(index, &count)| PairInfo::new(index.to_string(), count))
        .collect();
    let aut = counter.count(&content);
    let trim = TrimLoop::start(model.clone(), infos, prediction, aut, budget, None).map_err(
        |finished| match finished.result {
            Err(err) => Error::Invalid(err.to_string()),
            Ok(_) => Error::Invalid("the budget refused the send".into()),
        },
    )?;

    let mut base = ChatRequest::new(model.clone(), Vec::new()).with_system(system);
    if let Some(mode) = mode {
        base = base.with_tools(tool_specs(mode));
    }
    base.reasoning_effort = effort.as_deref().and_then(parse_effort);
    if settings.explicit_cache_key {
        base.prompt_cache_key = Some(format!("bb7:{}:{model}", active.chat.id));
    }
    let provider = settings.provider(&model)?;

    session::push_user_message(active, &content, &model);
    // As the first bb7: the chat remembers the model it was last sent with. The draft is the
    // client's: it is left as it is.
    active.chat.model = model.clone();
    active.save()?;
    if let Err(err) = GlobalState::record_model(&home, &model) {
        tracing::warn!(error = %err, "could not remember the model");
    }

    let plan = Plan {
        request_id,
        active: active.clone(),
        home,
        settings,
        provider,
        base,
        mode,
        files,
        history,
        pairs,
        latest: content,
        retry,
        trim,
        first_exchange,
        title_files,
    };
    let task_shared = shared.clone();
    shared.runtime.spawn(run(plan, task_shared, cancel));
    Ok(())
}

fn parse_effort(text: &str) -> Option<ReasoningEffort> {
    serde_json::from_value(Value::String(text.to_lowercase())).ok()
}

/// The model's context window from the cached models list.
fn context_window(session: &mut session::Session, args: &Map<String, Value>) -> Result<usize> {
    let model = match text_arg(args, "model") {
        Some(model) => model,
        None => session.active_chat()?.chat.effective_model().to_owned(),
    };
    Ok(session
        .models()
        .and_then(|models| models.iter().find(|info| info.id == model))
        .and_then(|info| info.context_length)
        .map(|length| usize::try_from(length).unwrap_or(usize::MAX))
        .unwrap_or(UNKNOWN_CONTEXT))
}

/// The chat's files as the edit algorithms see them: outputs, and snapshots of writable
/// whole files (read-only, external and section files are `None`).
pub struct Lookup<'a>(pub &'a Active);

impl BaseLookup for Lookup<'_> {
    fn output(&self, path: &str) -> Option<String> {
        self.0.output_content(path).ok()
    }

    fn context(&self, path: &str) -> Option<String> {
        let file = self.0.chat.find_file(path)?;
        if file.readonly || file.external || file.section().is_some() {
            return None;
        }
        self.0.read_snapshot(file).ok()
    }
}

/// What one streamed request gave.
struct Streamed {
    reply: LlmReply,
    error: Option<LlmError>,
    /// Whether any content arrived (then an error cannot be retried).
    delivered: bool,
}

async fn stream_once(
    provider: &dyn Provider,
    request: &ChatRequest,
    cancel: &CancellationToken,
    shared: &Shared,
    request_id: Option<&str>,
    visible: bool,
) -> Streamed {
    let mut stream = provider.stream(request, cancel.clone());
    let mut accumulator = Accumulator::new();
    let mut delivered = false;
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => {
                match &event {
                    StreamEvent::TextDelta { text } if !text.is_empty() => {
                        delivered = true;
                        if visible {
                            shared.send(&line("chunk", text, request_id));
                        }
                    }
                    StreamEvent::ThinkingDelta { text, .. } if !text.is_empty() => {
                        delivered = true;
                        if visible {
                            shared.send(&line("thinking", text, request_id));
                        }
                    }
                    StreamEvent::ToolCallStart { .. } | StreamEvent::ToolCallDelta { .. } => {
                        delivered = true;
                    }
                    _ => {}
                }
                accumulator.push(event);
            }
            Err(error) => {
                return Streamed {
                    reply: accumulator.finish(),
                    error: Some(error),
                    delivered,
                };
            }
        }
    }
    if cancel.is_cancelled() {
        return Streamed {
            reply: accumulator.finish(),
            error: Some(LlmError::new(ybs_core::ErrorKind::Cancelled, "cancelled")),
            delivered,
        };
    }
    Streamed {
        reply: accumulator.finish(),
        error: None,
        delivered,
    }
}

fn line(kind: &str, content: &str, request_id: Option<&str>) -> Reply {
    Reply::typed(kind)
        .with("content", content)
        .for_request(request_id)
}

/// The usage object of `done` and `diff_error`.
pub fn usage_json(usage: &Usage) -> Value {
    let usage = (*usage).with_total();
    json!({
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cached_tokens": usage.cached_tokens,
        "total_tokens": usage.total_tokens,
        "cost": usage.cost.unwrap_or(0.0),
    })
}

fn add_usage(a: &Usage, b: &Usage) -> Usage {
    *a + *b
}

/// The counter fields of the WYSIWYG budget.
#[derive(Debug, Clone, Copy)]
struct Counters {
    predicted: usize,
    trimmed: usize,
    visible: usize,
}

impl Counters {
    fn of(trim: &TrimLoop) -> Counters {
        Counters {
            predicted: trim.prediction().predicted_message_count(),
            trimmed: trim.trimmed_count(),
            visible: trim.prediction().visible_count,
        }
    }

    fn add_to(self, reply: Reply) -> Reply {
        reply
            .with("predicted", self.predicted)
            .with("trimmed", self.trimmed)
            .with("visible", self.visible)
    }
}

/// The stream task.
pub async fn run(plan: Plan, shared: Shared, cancel: CancellationToken) {
    let Plan {
        request_id,
        mut active,
        home,
        settings,
        provider,
        base,
        mode,
        files,
        history,
        pairs,
        latest,
        retry,
        mut trim,
        first_exchange,
        title_files,
    } = plan;
    let rid = request_id.as_deref();
    let model = base.model.clone();
    let active_id_global = (active.chat.id.clone(), active.chat.global);
    let stamp = Stamp {
        started: std::time::Instant::now(),
        effort: base.reasoning_effort.map(ReasoningEffort::as_str),
    };

    // Send, trimming the oldest pairs on overflow.
    let (streamed, counters, range) = loop {
        let attempt = trim.attempt();
        let sent: Vec<Message> = pairs
            .payload(&history, attempt.history.clone())
            .into_iter()
            .cloned()
            .collect();
        let text = assemble::user_message(&Input {
            files: &files,
            history: &sent,
            latest: &latest,
            retry: retry.as_ref(),
        });
        let request = ChatRequest {
            messages: vec![Message::user(text)],
            ..base.clone()
        };
        let streamed = stream_once(&*provider, &request, &cancel, &shared, rid, true).await;
        let counters = Counters::of(&trim);
        match &streamed.error {
            Some(error)
                if !streamed.delivered
                    && !cancel.is_cancelled()
                    && ybs_context_budget::trim::is_overflow(error) =>
            {
                match trim.report(Outcome::Failed(error.clone())) {
                    Next::Retry(next) => {
                        tracing::info!(attempt = attempt.number, "context overflow: trimming");
                        trim = next;
                        continue;
                    }
                    Next::Done(finished) => {
                        let message = match finished.result {
                            Err(SendError::Budget(err)) => format!("quota: {err}"),
                            Err(SendError::Provider(err)) => provider_message(&err),
                            Ok(_) => provider_message(error),
                        };
                        let counters = Counters {
                            trimmed: finished.telemetry.trimmed_count,
                            ..counters
                        };
                        finish_error(&shared, active, rid, &message, counters);
                        return;
                    }
                }
            }
            _ => break (streamed, counters, attempt.history),
        }
    };
    let _ = range;

    if cancel.is_cancelled()
        || matches!(&streamed.error, Some(error) if error.kind == ybs_core::ErrorKind::Cancelled)
    {
        finish_cancelled(
            &shared,
            active,
            &home,
            rid,
            &model,
            mode,
            streamed.reply,
            &stamp,
        );
        return;
    }
    if let Some(error) = &streamed.error {
        save_partial(&mut active, &streamed.reply, &model);
        finish_error(&shared, active, rid, &provider_message(error), counters);
        return;
    }

    let reply = streamed.reply;
    let mut usage = reply.usage;
    let calls = tool_calls(&reply.message);
    let Some(mode) = mode.filter(|_| !calls.is_empty()) else {
        finish_done(
            &shared,
            active,
            &home,
            rid,
            &model,
            &reply,
            usage,
            &stamp,
            counters,
            &[],
        );
        if first_exchange {
            spawn_title(&shared, &settings, &active_id_global, &latest, &title_files);
        }
        return;
    };
    let checked = match tool_calls::precheck(mode, &calls, &active) {
        Ok(checked) => checked,
        Err(message) => {
            save_partial(&mut active, &reply, &model);
            finish_error(&shared, active, rid, &message, counters);
            return;
        }
    };
    let in_context = |path: &str| active.chat.find_file(path).is_some();
    let first = tool_calls::apply(mode, &calls, &Lookup(&active), in_context);
    for chunk in &first.chunks {
        shared.send(&line("chunk", chunk, rid));
    }
    let mut outcome = with_read_only(first.outcome, &checked);
    let mut entries = tool_calls::entries(&calls);
    if let Err(diff) = &outcome {
        if settings.auto_retry_partial_edits && mode != DiffMode::Off {
            shared.send(&line("chunk", &format!("\n{REATTEMPT}\n"), rid));
            // The repair builds on what the first attempt got right: those writes are shown
            // to the model, and used as bases, as pending output.
            let repair_context = RetryContext {
                errors: diff.errors.clone(),
                tool_calls: entries.clone(),
            };
            let pending_files = tool_calls::with_pending(&files, &first.partial);
            let sent: Vec<Message> = pairs
                .payload(&history, trim.attempt().history)
                .into_iter()
                .cloned()
                .collect();
            let text = assemble::user_message(&Input {
                files: &pending_files,
                history: &sent,
                latest: &latest,
                retry: Some(&repair_context),
            });
            let request = ChatRequest {
                messages: vec![Message::user(text)],
                ..base.clone()
            };
            let repair = stream_once(&*provider, &request, &cancel, &shared, rid, false).await;
            usage = add_usage(&usage, &repair.reply.usage);
            if let Some(error) = &repair.error {
                save_partial(&mut active, &reply, &model);
                finish_error(&shared, active, rid, &provider_message(error), counters);
                return;
            }
            let repair_calls = tool_calls(&repair.reply.message);
            entries.extend(tool_calls::entries(&repair_calls));
            let lookup = tool_calls::WithPending {
                inner: &Lookup(&active),
                pending: first
                    .partial
                    .iter()
                    .map(|write| (write.path.clone(), write.content.clone()))
                    .collect(),
            };
            let repaired = match tool_calls::precheck(mode, &repair_calls, &active) {
                Ok(checked) => with_read_only(
                    tool_calls::apply(mode, &repair_calls, &lookup, |_| true).outcome,
                    &checked,
                ),
                Err(message) => Err(DiffError {
                    errors: vec![message],
                    tool_calls: Vec::new(),
                }),
            };
            outcome = match repaired {
                Ok(writes) => Ok(merge_writes(&first.partial, writes)),
                Err(again) => Err(DiffError {
                    errors: diff
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
        }
    }

    match outcome {
        Ok(writes) => {
            finish_done(
                &shared, active, &home, rid, &model, &reply, usage, &stamp, counters, &writes,
            );
            if first_exchange {
                spawn_title(&shared, &settings, &active_id_global, &latest, &title_files);
            }
        }
        Err(diff) => {
            let mut message = assistant_message(&reply.message, &model);
            stamp.annotate(&mut message, &usage);
            active.chat.messages.push(message);
            save(&active);
            usage_log::append(&home, active.root.as_deref(), &model, &usage);
            hand_back(&shared, active);
            let reply = Reply::typed("diff_error")
                .with("errors", &diff.errors)
                .with("tool_calls", entries)
                .with("usage", usage_json(&usage))
                .with("duration", stamp.seconds());
            shared.send(&counters.add_to(reply).for_request(rid));
        }
    }
}

/// Adds the read-only refusals found by [`tool_calls::precheck`] to an outcome.
fn with_read_only(
    outcome: std::result::Result<Vec<FileWrite>, DiffError>,
    checked: &tool_calls::Precheck,
) -> std::result::Result<Vec<FileWrite>, DiffError> {
    if checked.read_only.is_empty() {
        return outcome;
    }
    let mut errors = checked.read_only.clone();
    if let Err(diff) = outcome {
        errors.extend(diff.errors);
    }
    Err(DiffError {
        errors,
        tool_calls: Vec::new(),
    })
}

/// The first attempt's writes updated by the repair's.
fn merge_writes(first: &[FileWrite], repair: Vec<FileWrite>) -> Vec<FileWrite> {
    let mut writes: Vec<FileWrite> = first.to_vec();
    for write in repair {
        match writes.iter_mut().find(|known| known.path == write.path) {
            Some(known) => *known = write,
            None => writes.push(write),
        }
    }
    writes
}

/// Commits the writes, saves the assistant message and answers `done`.
#[allow(clippy::too_many_arguments)]
fn finish_done(
    shared: &Shared,
    mut active: Active,
    home: &Home,
    rid: Option<&str>,
    model: &str,
    reply: &LlmReply,
    usage: Usage,
    stamp: &Stamp,
    counters: Counters,
    writes: &[FileWrite],
) {
    let mut message = assistant_message(&reply.message, model);
    stamp.annotate(&mut message, &usage);
    let paths = match commit::commit(&mut active, writes, vec![message.clone()]) {
        Ok(paths) => paths,
        Err(err) => {
            // Nothing was written: the reply is kept as text and the failure is a diff_error,
            // never reported as written.
            if err.is_fatal() {
                crate::protocol::shared::fatal(&err);
            }
            active.chat.messages.push(message);
            save(&active);
            usage_log::append(home, active.root.as_deref(), model, &usage);
            hand_back(shared, active);
            let reply = Reply::typed("diff_error")
                .with("errors", vec![format!("output not written: {err}")])
                .with("tool_calls", Vec::<Value>::new())
                .with("usage", usage_json(&usage))
                .with("duration", stamp.seconds());
            shared.send(&counters.add_to(reply).for_request(rid));
            return;
        }
    };
    usage_log::append(home, active.root.as_deref(), model, &usage);
    hand_back(shared, active);
    let done = Reply::typed("done")
        .with("output_files", paths)
        .with("usage", usage_json(&usage))
        .with("duration", stamp.seconds());
    shared.send(&counters.add_to(done).for_request(rid));
}

/// Makes the automatic title of a chat's first exchange, when `title_model` is set.
fn spawn_title(
    shared: &Shared,
    settings: &Settings,
    chat: &(String, bool),
    latest: &str,
    files: &[String],
) {
    if let Some(title_model) = settings.title_model.clone() {
        titles::spawn_automatic(
            shared,
            settings,
            title_model,
            chat.0.clone(),
            chat.1,
            titles::prompt_text(latest, files),
        );
    }
}

/// What an assistant message records about its reply besides the text, as the first bb7
/// does: `usage` (zero fields left out, `duration` in seconds) and `reasoning_effort`.
struct Stamp {
    started: std::time::Instant,
    effort: Option<&'static str>,
}

impl Stamp {
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

fn provider_message(error: &LlmError) -> String {
    format!("{}: {}", error.kind.label(), error.message)
}

/// The tool calls of a reply, in index order.
fn tool_calls(message: &Message) -> Vec<ToolCall> {
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

fn save_partial(active: &mut Active, reply: &LlmReply, model: &str) {
    let message = assistant_message(&reply.message, model);
    if !message.parts.is_empty() {
        active.chat.messages.push(message);
    }
}

fn save(active: &Active) {
    if let Err(err) = active.save() {
        tracing::error!(error = %err, "could not save the chat after a reply");
    }
}

/// Gives the chat back to the session (and ends the one-stream-at-a-time window). Posted
/// before the final reply, so a request the client sends after it sees the new state.
fn hand_back(shared: &Shared, active: Active) {
    shared.post(move |session, _| session.restore_active(active));
    // Freed here, not in the posted job: a `send` read right after the final reply must
    // find the slot free (the chat is handed back before that `send` is handled).
    shared.clear_stream();
}

fn finish_error(
    shared: &Shared,
    active: Active,
    rid: Option<&str>,
    message: &str,
    counters: Counters,
) {
    let mut active = active;
    // The user sees why there is no reply, and the model sees it next time.
    active
        .chat
        .messages
        .push(Message::system(message).with_timestamp(now()));
    save(&active);
    hand_back(shared, active);
    shared.send(&counters.add_to(Reply::error(message)).for_request(rid));
}

/// Saves what a cancelled stream gave: its text and thinking, the files of its complete tool
/// calls when they all apply, then the abort message; the `send` is answered with the
/// error `Response aborted by user.`.
#[allow(clippy::too_many_arguments)]
fn finish_cancelled(
    shared: &Shared,
    mut active: Active,
    home: &Home,
    rid: Option<&str>,
    model: &str,
    mode: Option<DiffMode>,
    reply: LlmReply,
    stamp: &Stamp,
) {
    let calls: Vec<ToolCall> = tool_calls(&reply.message)
        .into_iter()
        .filter(|call| call.arguments_error.is_none() && !call.name.is_empty())
        .collect();
    let writes = match mode {
        Some(mode) if !calls.is_empty() => {
            apply_response(mode, &calls, &Lookup(&active)).unwrap_or_default()
        }
        _ => Vec::new(),
    };
    let mut message = assistant_message(&reply.message, model);
    stamp.annotate(&mut message, &reply.usage);
    let aborted = Message::system(ABORTED).with_timestamp(now());
    let mut messages = Vec::new();
    if !message.parts.is_empty() || !writes.is_empty() {
        messages.push(message.clone());
    }
    messages.push(aborted.clone());
    if let Err(err) = commit::commit(&mut active, &writes, messages) {
        if err.is_fatal() {
            crate::protocol::shared::fatal(&err);
        }
        tracing::error!(error = %err, "the files of a cancelled reply were not written");
        if !message.parts.is_empty() {
            active.chat.messages.push(message);
        }
        active.chat.messages.push(aborted);
        save(&active);
    }
    usage_log::append(home, active.root.as_deref(), model, &reply.usage);
    hand_back(shared, active);
    // The first bb7 and every handler of its client match this exact error.
    shared.send(&Reply::error(ABORTED).for_request(rid));
}
