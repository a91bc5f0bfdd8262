//! `ybs mcp-server`: ybs as an MCP server (rmcp), so that another agent can hand it a task.
//! Over stdio, or streamable HTTP on 127.0.0.1 where every request must carry the bearer
//! token. Two tools ([`tools`]): `run_task` builds the agent for a project exactly as the
//! terminal does and runs one turn, `continue_session` runs another in the same session;
//! each returns the final reply, the files changed and the session id, and reports progress
//! (tool calls, results, warnings) when the caller sent a progress token. Nobody can answer
//! an approval here: calls that need one are refused, and the result names them and the
//! `approval` argument (`auto`, `auto-edit`) that allows them; the sandbox, protected paths
//! and deny rules apply either way.

mod http;
mod progress;
mod tools;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use ybs_core::Message;

use crate::cli::Cli;
use crate::startup::exit::Failed;
use crate::startup::headless::{self, Headless, OpenOptions, Worker};
use ybs_agent::TurnReport;
use ybs_agent::config::Approval;
use ybs_agent::confirm::ConfirmMode;
use ybs_agent::host::Host;

pub use http::Http;

/// Serves MCP until the client goes away: on stdio, or over HTTP on 127.0.0.1 when `http` is
/// set.
pub fn run(
    cli: &Cli,
    host: &Host,
    http: Option<Http>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, Failed> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|error| Failed(format!("cannot start the async runtime: {error}")))?;
    let server = YbsServer {
        cli: headless::cli_at(cli.clone(), host),
        host: host.clone(),
        sessions: Arc::default(),
    };
    let result = match http {
        Some(options) => runtime.block_on(http::serve(server, &options, host, out, err)),
        None => runtime.block_on(serve_stdio(server)),
    };
    result.map(|()| 0).map_err(Failed)
}

async fn serve_stdio(server: YbsServer) -> Result<(), String> {
    let protocol = crate::startup::headless::protocol_stdout()
        .map_err(|error| format!("cannot set up stdout for the protocol: {error}"))?;
    let transport = (tokio::io::stdin(), tokio::fs::File::from_std(protocol));
    let running = (server.serve(transport).await)
        .map_err(|error| format!("the MCP session failed: {error}"))?;
    (running.waiting().await)
        .map(|_| ())
        .map_err(|error| format!("the MCP session failed: {error}"))
}

/// The server: the surroundings sessions are built in, and the sessions started so far.
#[derive(Clone)]
pub struct YbsServer {
    cli: Cli,
    host: Host,
    sessions: Arc<Mutex<HashMap<String, Worker>>>,
}

/// What a task gave, as the tool returns it.
struct Outcome {
    report: TurnReport,
    session_id: String,
    cwd: PathBuf,
    /// The calls refused for want of an approval.
    refused: Vec<String>,
}

impl YbsServer {
    /// Opens a session in `cwd` (continuing the saved `resume`); approvals are "asked" of
    /// [`progress::Progress`], which refuses them.
    async fn open(
        &self,
        cwd: Option<&Path>,
        resume: Option<&str>,
    ) -> Result<(Worker, String), String> {
        let cwd = cwd.unwrap_or(&self.host.locations.cwd);
        let host = headless::host_at(&self.host, cwd).map_err(|error| error.to_string())?;
        let resume = match resume {
            Some(id) => {
                Some(headless::saved_session(&host, id).map_err(|error| error.to_string())?)
            }
            None => None,
        };
        let options = OpenOptions {
            cli: self.cli.clone(),
            host,
            confirm: ConfirmMode::Ask,
            resume,
            mcp: Vec::new(),
            command: "mcp-server",
        };
        let (worker, id) = Worker::start(move || headless::open(options, &mut headless::log()))
            .await
            .map_err(|error| error.to_string())?;
        let id = id.ok_or(
            "ybs keeps sessions under $XDG_DATA_HOME or ~/.local/share; neither is available",
        )?;
        Ok((worker, id))
    }

    /// Runs `prompt` as a turn of the session on `worker` in the approval mode `approval`
    /// (`None`: the configured one), reporting to `context`'s peer.
    async fn task(
        &self,
        worker: &Worker,
        session_id: String,
        approval: Option<Approval>,
        prompt: String,
        context: &RequestContext<RoleServer>,
    ) -> Result<Outcome, String> {
        let (done, finished) = futures::channel::oneshot::channel();
        let refused = Arc::new(Mutex::new(Vec::new()));
        let (progress, forwarder) = progress::Progress::start(context, Arc::clone(&refused));
        let cancel: CancellationToken = context.ct.clone();
        worker
            .send(Box::new(move |session: &mut Headless| {
                session.agent.approval = approval.unwrap_or(session.config.safety.approval);
                let mut ui = progress;
                let mut log = headless::log();
                let result =
                    headless::turn(session, Message::user(&prompt), &mut ui, &cancel, &mut log);
                let cwd = session.cwd().to_owned();
                let _ = done.send(result.map(|report| (report, cwd)));
            }))
            .map_err(|error| error.to_string())?;
        let finished = finished.await;
        if let Some(forwarder) = forwarder {
            let _ = forwarder.await;
        }
        let (report, cwd) =
            finished.map_err(|_| "the session stopped during the task".to_owned())??;
        let refused = std::mem::take(&mut *lock(&refused));
        Ok(Outcome {
            report,
            session_id,
            cwd,
            refused,
        })
    }

    async fn call(
        &self,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<Outcome, String> {
        let arguments = serde_json::Value::Object(request.arguments.unwrap_or_default());
        match &*request.name {
            tools::RUN_TASK => {
                let args: tools::RunTask = serde_json::from_value(arguments)
                    .map_err(|error| format!("{}: {error}", tools::RUN_TASK))?;
                let mode = tools::approval(args.approval.as_deref())?;
                let (worker, id) = self.open(args.cwd.as_deref(), None).await?;
                lock(&self.sessions).insert(id.clone(), worker.clone());
                self.task(&worker, id, mode, args.prompt, context).await
            }
            tools::CONTINUE_SESSION => {
                let args: tools::ContinueSession = serde_json::from_value(arguments)
                    .map_err(|error| format!("{}: {error}", tools::CONTINUE_SESSION))?;
                let mode = tools::approval(args.approval.as_deref())?;
                let live = lock(&self.sessions).get(&args.session_id).cloned();
                let worker = match live {
                    Some(worker) => worker,
                    None => {
                        let cwd = args.cwd.as_deref();
                        let (worker, _) = self.open(cwd, Some(&args.session_id)).await?;
                        lock(&self.sessions).insert(args.session_id.clone(), worker.clone());
                        worker
                    }
                };
                self.task(&worker, args.session_id, mode, args.prompt, context)
                    .await
            }
            other => Err(format!(
                "ybs has no tool `{other}`; it has {} and {}",
                tools::RUN_TASK,
                tools::CONTINUE_SESSION
            )),
        }
    }
}

impl ServerHandler for YbsServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("ybs", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "ybs is a coding agent. run_task gives it a task in a project directory; it \
                 works in its sandbox and returns its reply, the files it changed and a \
                 session_id for continue_session. Edits and commands that need approval are \
                 refused unless approval is `auto` (or `auto-edit` for edits).",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let result = match self.call(request, &context).await {
            Ok(outcome) => result_of(&outcome),
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        };
        Ok(result.into())
    }
}

/// The reply as text, and `{reply, files_changed, session_id, stop}` as structured content.
fn result_of(outcome: &Outcome) -> CallToolResult {
    let report = &outcome.report;
    let changed: Vec<String> = (report.changed.iter())
        .map(|path| match path.strip_prefix(&outcome.cwd) {
            Ok(relative) => relative.display().to_string(),
            Err(_) => path.display().to_string(),
        })
        .collect();
    let stop = match report.stop {
        ybs_agent::Stop::Finished => "finished",
        ybs_agent::Stop::MaxIterations => "max_iterations",
        ybs_agent::Stop::Stuck => "stuck",
        ybs_agent::Stop::Cancelled => "cancelled",
    };
    let structured = json!({
        "reply": report.reply,
        "files_changed": changed,
        "session_id": outcome.session_id,
        "stop": stop,
        "refused": outcome.refused,
    });
    let mut result = CallToolResult::structured(structured);
    let mut text = report.reply.clone();
    if !outcome.refused.is_empty() {
        let calls = outcome.refused.join(", ");
        text.push_str(&format!("\n\n[{}]", tools::refusal(&calls)));
    }
    result.content = vec![ContentBlock::text(text)];
    result
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
