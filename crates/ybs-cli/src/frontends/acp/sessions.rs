//! The sessions of one ACP connection: opening (`session/new`, `session/load`), prompting,
//! cancelling and switching modes. Each session runs on its own [`Worker`] thread; the
//! connection side only queues work and keeps each turn's cancellation token and the plan
//! proposed in plan mode.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, McpServer, PlanEntryStatus, PromptResponse, SessionId, SessionNotification,
    StopReason,
};
use agent_client_protocol::{Client, Error, ErrorCode};
use tokio_util::sync::CancellationToken;
use ybs_core::Message;

use super::modes::Mode;
use super::ui::AcpUi;
use super::{content, fs, modes, plan, servers};
use crate::cli::Cli;
use crate::startup::headless::{self, Headless, OpenOptions, Worker};
use ybs_agent::Stop;
use ybs_agent::confirm::ConfirmMode;
use ybs_agent::host::Host;

/// A session being served.
struct Live {
    worker: Worker,
    /// The running (or last) turn's token.
    cancel: CancellationToken,
    /// The plan the model proposed in plan mode, handed back with the first prompt after
    /// plan mode is left.
    plan: Arc<Mutex<Option<String>>>,
}

/// Everything the connection's handlers share.
pub struct Sessions {
    cli: Cli,
    host: Host,
    client: Mutex<ClientCapabilities>,
    live: Mutex<HashMap<String, Live>>,
    /// Numbers the sessions that cannot be saved (no data directory).
    unsaved: Mutex<u64>,
}

/// What opening a session gave.
pub struct Opened {
    /// The session id.
    pub id: String,
    /// The project directory.
    pub cwd: PathBuf,
    /// The mode it starts in (the configured approval mode, or plan mode with `--plan`).
    pub mode: Mode,
    /// Its agent's tools, whose declarations say how their calls are shown.
    pub tools: ybs_tools::ToolRegistry,
}

/// A failure answered to the client: invalid parameters or an internal error.
pub fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::INVALID_PARAMS, message.into())
}

fn internal(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::INTERNAL_ERROR, message.into())
}

impl Sessions {
    /// No sessions yet; they are built with `cli`'s options in `host`'s surroundings.
    pub fn new(cli: Cli, host: Host) -> Arc<Sessions> {
        Arc::new(Sessions {
            cli: headless::cli_at(cli, &host),
            host,
            client: Mutex::new(ClientCapabilities::default()),
            live: Mutex::new(HashMap::new()),
            unsaved: Mutex::new(0),
        })
    }

    /// Keeps what the client said it can do (`initialize`).
    pub fn set_client(&self, capabilities: ClientCapabilities) {
        *lock(&self.client) = capabilities;
    }

    fn files(&self) -> agent_client_protocol::v1::schema::FileSystemCapabilities {
        lock(&self.client).fs.clone()
    }

    fn notices(&self) -> bool {
        (lock(&self.client).session.as_ref()).is_some_and(|session| session.notices.is_some())
    }

    /// Opens a session in `cwd` (a saved one when `resume` names it) with the client's MCP
    /// servers; the editor is asked for every approval.
    pub async fn open(
        self: &Arc<Self>,
        cwd: &std::path::Path,
        resume: Option<&str>,
        mcp: &[McpServer],
    ) -> Result<(Opened, Vec<Message>), Error> {
        let host =
            headless::host_at(&self.host, cwd).map_err(|error| invalid(error.to_string()))?;
        let resume = match resume {
            Some(id) => Some(
                headless::saved_session(&host, id).map_err(|error| invalid(error.to_string()))?,
            ),
            None => None,
        };
        let (mcp, skipped) = servers::specs(mcp, &host.locations.cwd);
        for name in skipped {
            let _ = writeln!(
                headless::log(),
                "ybs: warning: MCP server `{name}` uses SSE, which ybs does not speak; going on \
                 without it"
            );
        }
        let project = host.locations.cwd.clone();
        let plan_mode = self.cli.options.plan;
        let options = OpenOptions {
            cli: self.cli.clone(),
            host,
            confirm: ConfirmMode::Ask,
            resume,
            mcp,
            command: "acp",
        };
        let (conversation_tx, conversation_rx) = futures::channel::oneshot::channel();
        let (worker, id) = Worker::start(move || {
            let mut session = headless::open(options, &mut headless::log())?;
            session.agent.plan_mode = plan_mode;
            let mode = modes::current(session.agent.approval, plan_mode);
            let _ = conversation_tx.send((
                session.agent.conversation.clone(),
                mode,
                session.agent.registry.clone(),
            ));
            Ok::<_, String>(session)
        })
        .await
        .map_err(|error| internal(error.to_string()))?;
        let (conversation, mode, tools) = (conversation_rx.await).unwrap_or_else(|_| {
            (
                Vec::new(),
                Mode::Act(ybs_agent::config::Approval::Ask),
                ybs_tools::ToolRegistry::new(),
            )
        });
        let id = match id {
            Some(id) => id,
            None => {
                let mut count = lock(&self.unsaved);
                *count += 1;
                format!("unsaved-{}-{count}", std::process::id())
            }
        };
        let live = Live {
            worker,
            cancel: CancellationToken::new(),
            plan: Arc::default(),
        };
        lock(&self.live).insert(id.clone(), live);
        let opened = Opened {
            id,
            cwd: project,
            mode,
            tools,
        };
        Ok((opened, conversation))
    }

    /// Runs a prompt on session `id`; the answer goes to `respond` when the turn ends.
    pub fn prompt(
        &self,
        id: &SessionId,
        message: Message,
        connection: ConnectionTo<Client>,
        respond: impl FnOnce(Result<PromptResponse, Error>) + Send + 'static,
    ) -> Result<(), Error> {
        let token = CancellationToken::new();
        let (worker, proposed) = {
            let mut live = lock(&self.live);
            let session = (live.get_mut(&*id.0))
                .ok_or_else(|| invalid(format!("no session `{id}` on this connection")))?;
            session.cancel = token.clone();
            (session.worker.clone(), Arc::clone(&session.plan))
        };
        let (notices, files) = (self.notices(), self.files());
        let session_id = id.clone();
        worker
            .send(Box::new(move |session: &mut Headless| {
                session.agent.tool_context.editor = fs::editor(
                    connection.clone(),
                    session_id.clone(),
                    &files,
                    headless::log(),
                );
                let mut ui = AcpUi::new(
                    connection,
                    session_id,
                    session.cwd().to_owned(),
                    session.agent.registry.clone(),
                    notices,
                    headless::log(),
                );
                let planning = session.agent.plan_mode;
                // The first prompt after plan mode carries the plan out.
                let carried = if planning {
                    None
                } else {
                    lock(&proposed).take()
                };
                let (message, steps) = match &carried {
                    Some(text) => (plan::carry_out(text, message), plan::entries(text)),
                    None => (message, Vec::new()),
                };
                if !steps.is_empty() {
                    ui.update(plan::update(&steps, PlanEntryStatus::InProgress));
                }
                let result =
                    headless::turn(session, message, &mut ui, &token, &mut headless::log());
                match result {
                    Ok(report) => {
                        if report.stop == Stop::Finished {
                            if planning {
                                let steps = plan::entries(&report.reply);
                                if !steps.is_empty() {
                                    ui.update(plan::update(&steps, PlanEntryStatus::Pending));
                                }
                                *lock(&proposed) =
                                    Some(report.reply.clone()).filter(|r| !r.trim().is_empty());
                            } else if !steps.is_empty() {
                                ui.update(plan::update(&steps, PlanEntryStatus::Completed));
                            }
                        }
                        respond(Ok(PromptResponse::new(stop_reason(report.stop))));
                    }
                    Err(message) => {
                        // The turn did not happen: the plan is still to be carried out.
                        if let Some(text) = carried {
                            *lock(&proposed) = Some(text);
                        }
                        respond(Err(internal(message)));
                    }
                }
            }))
            .map_err(|error| internal(error.to_string()))
    }

    /// Cancels the running turn of session `id`, if any.
    pub fn cancel(&self, id: &SessionId) {
        if let Some(session) = lock(&self.live).get(&*id.0) {
            session.cancel.cancel();
        }
    }

    /// Sets session `id`'s mode, from its next call on: an approval mode, or plan mode
    /// (entering it forgets a plan proposed before).
    pub fn set_mode(&self, id: &SessionId, mode: &str) -> Result<(), Error> {
        let mode =
            modes::parse(mode).ok_or_else(|| invalid(format!("ybs has no mode `{mode}`")))?;
        let (worker, proposed) = (lock(&self.live).get(&*id.0))
            .map(|session| (session.worker.clone(), Arc::clone(&session.plan)))
            .ok_or_else(|| invalid(format!("no session `{id}` on this connection")))?;
        worker
            .send(Box::new(move |session: &mut Headless| match mode {
                Mode::Plan => {
                    if !session.agent.plan_mode {
                        *lock(&proposed) = None;
                    }
                    session.agent.plan_mode = true;
                }
                Mode::Act(approval) => {
                    session.agent.plan_mode = false;
                    session.agent.approval = approval;
                }
            }))
            .map_err(|error| internal(error.to_string()))
    }
}

/// Sends `conversation` as the updates that show it again.
pub fn replay(
    connection: &ConnectionTo<Client>,
    id: &SessionId,
    conversation: &[Message],
    cwd: &std::path::Path,
    tools: &ybs_tools::ToolRegistry,
) -> Result<(), Error> {
    for update in content::replay(conversation, cwd, tools) {
        connection.send_notification(SessionNotification::new(id.clone(), update))?;
    }
    Ok(())
}

/// Why the turn ended, in ACP's words.
fn stop_reason(stop: Stop) -> StopReason {
    match stop {
        Stop::Finished | Stop::Stuck => StopReason::EndTurn,
        Stop::MaxIterations => StopReason::MaxTurnRequests,
        Stop::Cancelled => StopReason::Cancelled,
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
