//! Preparing a send on the session's thread ([`start`]): the checks (an active, trusted chat,
//! `content`, the config), the models list for the context window (fetched in the
//! background when it is not cached, so the protocol keeps answering) and the budget's token
//! counts (made in the background first, so a huge file never holds the session), the
//! system message, the files, the WYSIWYG budget's first prediction, and the user message
//! saved before anything is sent, so it is never lost. The stream task ([`run`]) then gets a
//! [`Plan`].

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use ybs_context_budget::{Budget, PairInfo, Pairs, TokenCounter, TrimLoop, predict};
use ybs_core::{ChatRequest, ReasoningEffort, Role};
use ybs_edit::tool_specs;

use crate::send::assemble;
use crate::send::record::ABORTED;
use crate::send::run::{Plan, run};
use crate::send::settings::Settings;
use crate::send::shared::{Shared, fatal};
use crate::send::{calls, prompt, tokens};
use crate::session::{self, Session};
use crate::wire::error::{Error, Result};
use crate::wire::params::SendParams;
use crate::wire::reply::Reply;

/// The context window assumed when the models list does not know the model.
pub const UNKNOWN_CONTEXT: usize = 1_000_000;

/// Starts a send on the session's thread: reserves the one stream slot (so `cancel` reaches
/// it from now on), then prepares and streams it. When the models list (for the context
/// window) is not cached yet it is fetched in the background first, so the protocol keeps
/// answering meanwhile; a `cancel` before the request reaches the network ends the send with
/// `Response aborted by user.` and nothing saved.
pub fn start(
    session: &mut Session,
    shared: &Shared,
    request_id: Option<String>,
    params: SendParams,
) -> Result<()> {
    let cancel = shared.stream_token(request_id.as_deref());
    let checked = (|| {
        if cancel.is_cancelled() {
            return Err(Error::Invalid(ABORTED.into()));
        }
        session.active_chat()?;
        params
            .content
            .as_ref()
            .ok_or(Error::MissingField("content"))?;
        Settings::load(session.home())
    })();
    let settings = checked.inspect_err(|_| shared.clear_stream())?;
    let fetch = session.fresh_models().is_none();
    let warm = Warm::gather(
        session,
        &settings,
        params.content.as_deref().unwrap_or_default(),
    );
    let task_shared = shared.clone();
    shared.runtime.spawn(async move {
        let fetched = if fetch {
            tokio::select! {
                fetched = calls::fetch_models(&settings) => Some(fetched),
                () = cancel.cancelled() => None,
            }
        } else {
            None
        };
        if let Some(warm) = warm {
            tokio::select! {
                _ = tokio::task::spawn_blocking(move || warm.count()) => {}
                () = cancel.cancelled() => {}
            }
        }
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
            if let Err(err) = launch(
                session,
                shared,
                request_id.clone(),
                params,
                settings,
                cancel,
            ) {
                shared.clear_stream();
                if err.is_fatal() {
                    fatal(&err);
                }
                shared.send(&Reply::error(err.to_string()).for_request(request_id.as_deref()));
            }
        });
    });
    Ok(())
}

/// The texts a send's budget counts, gathered on the session's thread and counted on a
/// blocking thread before [`launch`]: the counter remembers each count (by content hash), so
/// `launch` only hashes them and a huge context file or prompt never holds the session's
/// thread for the length of its count.
struct Warm {
    texts: Vec<String>,
    history: Vec<ybs_core::Message>,
}

impl Warm {
    /// What [`launch`] will count; `None` when it will fail before counting anyway.
    fn gather(session: &mut Session, settings: &Settings, content: &str) -> Option<Warm> {
        let home = session.home().clone();
        let root = session.project_root().map(std::path::Path::to_path_buf);
        let allowed = session.allowed_includes().to_vec();
        let active = session.active_chat().ok()?;
        let global = active.chat.global;
        let mode = (!global).then_some(settings.diff_mode);
        let root = if global { None } else { root.as_deref() };
        let system = prompt::system_message(&home, root, &allowed, mode).ok()?;
        let mut texts = vec![system, content.to_owned()];
        texts.extend(
            assemble::collect_files(active)
                .ok()?
                .into_iter()
                .map(|file| file.content),
        );
        Some(Warm {
            texts,
            history: active.chat.messages.clone(),
        })
    }

    /// Counts everything once, as [`launch`] does.
    fn count(self) {
        let counter = tokens::counter();
        for text in &self.texts {
            counter.count(text);
        }
        let pairs = Pairs::split(&self.history);
        pairs.tokens(counter, &self.history);
        pairs.system_tokens(counter, &self.history);
    }
}

/// Prepares the send (the stream slot is already reserved) and spawns its stream task.
fn launch(
    session: &mut Session,
    shared: &Shared,
    request_id: Option<String>,
    params: SendParams,
    settings: Settings,
    cancel: CancellationToken,
) -> Result<()> {
    let home = session.home().clone();
    let project_root = session.project_root().map(std::path::Path::to_path_buf);
    let allowed = session.allowed_includes().to_vec();
    let SendParams {
        content,
        model,
        reasoning_effort,
        retry_context: retry,
    } = params;
    let content = content.ok_or(Error::MissingField("content"))?;
    let context_window = context_window(session, model.as_deref())?;
    let active = session.active_chat()?;
    crate::store::trust::require_trusted(active)?;
    let global = active.chat.global;
    let model = model.unwrap_or_else(|| active.chat.effective_model().to_owned());
    // As the first bb7: only the send's own `reasoning_effort` asks for reasoning (both
    // clients send it whenever the chat's setting is not `none`).
    let effort = reasoning_effort.filter(|effort| !effort.is_empty());
    let mode = (!global).then_some(settings.diff_mode);
    let system = prompt::system_message(
        &home,
        if global {
            None
        } else {
            project_root.as_deref()
        },
        &allowed,
        mode,
    )?;
    let files = assemble::collect_files(active)?;
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
    let known_window = (context_window != UNKNOWN_CONTEXT).then_some(context_window);
    let provider = settings.provider_with_window(&model, known_window)?;

    let before = (active.chat.messages.len(), active.chat.model.clone());
    session::push_user_message(active, &content, &model);
    // As the first bb7: the chat remembers the model it was last sent with. The draft is the
    // client's: it is left as it is.
    active.chat.model = model.clone();
    if let Err(err) = active.save() {
        // Not saved (a full disk): the chat stays as it was, in memory too, so no later
        // write saves this message and a resend does not duplicate it.
        active.chat.messages.truncate(before.0);
        active.chat.model = before.1;
        return Err(err.into());
    }
    // `last_model` is recorded once the provider accepted the model (see `record`).

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
fn context_window(session: &mut Session, model: Option<&str>) -> Result<usize> {
    let model = match model.map(str::to_owned) {
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
