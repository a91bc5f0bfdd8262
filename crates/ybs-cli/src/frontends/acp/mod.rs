//! `ybs acp`: ybs as an Agent Client Protocol agent on stdin/stdout, for editors (Zed,
//! JetBrains IDEs, Neovim's codecompanion.nvim and avante.nvim). The protocol is the
//! `agent-client-protocol` crate's (v1); this module maps it onto the same agent, sandbox,
//! sessions and undo journal as the terminal: `session/new` builds the agent for the
//! client's `cwd` with its MCP servers, `session/prompt` runs a turn that streams
//! `session/update`s ([`ui`]), approvals go to `session/request_permission`, and
//! `session/load` reopens a saved session. Only protocol goes to stdout: the process's
//! stdout is pointed at stderr before anything runs, and the protocol writes to a copy of
//! the original.

mod calls;
mod content;
mod fs;
mod modes;
mod plan;
mod servers;
mod sessions;
mod ui;

use std::io::Write;
use std::sync::Arc;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, Implementation, InitializeRequest, InitializeResponse,
    LoadSessionRequest, LoadSessionResponse, McpCapabilities, NewSessionRequest,
    NewSessionResponse, PromptCapabilities, PromptRequest, PromptResponse, SetSessionModeRequest,
    SetSessionModeResponse,
};
use agent_client_protocol::{Agent, ByteStreams, on_receive_notification, on_receive_request};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use crate::cli::Cli;
use crate::startup::exit::Failed;
use crate::startup::headless;
use sessions::{Sessions, invalid};
use ybs_agent::host::Host;

/// Serves ACP on stdin/stdout until the client closes stdin.
pub fn run(cli: &Cli, host: &Host, err: &mut dyn Write) -> Result<u8, Failed> {
    let protocol = headless::protocol_stdout()
        .map_err(|error| Failed(format!("cannot set up stdout for the protocol: {error}")))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|error| Failed(format!("cannot start the async runtime: {error}")))?;
    let sessions = Sessions::new(cli.clone(), host.clone());
    match runtime.block_on(serve(sessions, protocol)) {
        Ok(()) => Ok(0),
        Err(error) => {
            let _ = writeln!(err, "ybs acp: the connection failed: {error}");
            Ok(1)
        }
    }
}

async fn serve(
    sessions: Arc<Sessions>,
    protocol: std::fs::File,
) -> Result<(), agent_client_protocol::Error> {
    let transport = ByteStreams::new(
        tokio::fs::File::from_std(protocol).compat_write(),
        tokio::io::stdin().compat(),
    );
    let (on_init, on_new, on_load, on_prompt, on_cancel, on_mode) = (
        Arc::clone(&sessions),
        Arc::clone(&sessions),
        Arc::clone(&sessions),
        Arc::clone(&sessions),
        Arc::clone(&sessions),
        Arc::clone(&sessions),
    );
    Agent
        .v1()
        .name("ybs")
        .on_receive_request(
            async move |request: InitializeRequest, responder: Responder<InitializeResponse>, _| {
                on_init.set_client(request.client_capabilities);
                responder.respond(initialize_response())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest, responder: Responder<NewSessionResponse>, _| {
                match on_new.open(&request.cwd, None, &request.mcp_servers).await {
                    Ok((opened, _)) => responder.respond(
                        NewSessionResponse::new(opened.id).modes(modes::state(opened.mode)),
                    ),
                    Err(error) => responder.respond_with_error(error),
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest,
                        responder: Responder<LoadSessionResponse>,
                        connection| {
                let id = request.session_id.to_string();
                let opened = on_load
                    .open(&request.cwd, Some(&id), &request.mcp_servers)
                    .await;
                match opened {
                    Ok((opened, conversation)) => {
                        sessions::replay(
                            &connection,
                            &request.session_id,
                            &conversation,
                            &opened.cwd,
                            &opened.tools,
                        )?;
                        responder
                            .respond(LoadSessionResponse::new().modes(modes::state(opened.mode)))
                    }
                    Err(error) => responder.respond_with_error(error),
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest,
                        responder: Responder<PromptResponse>,
                        connection| {
                let message = match content::prompt_message(&request.prompt) {
                    Ok(message) => message,
                    Err(message) => return responder.respond_with_error(invalid(message)),
                };
                let (answer, answered) = futures::channel::oneshot::channel();
                let queued = on_prompt.prompt(
                    &request.session_id,
                    message,
                    connection.clone(),
                    move |result| {
                        let _ = answer.send(result);
                    },
                );
                if let Err(error) = queued {
                    return responder.respond_with_error(error);
                }
                // The turn runs on the session's thread; the answer is sent from a task so
                // that the connection goes on reading (a cancel, a permission's answer).
                connection.spawn(async move {
                    match answered.await {
                        Ok(Ok(response)) => responder.respond(response),
                        Ok(Err(error)) => responder.respond_with_error(error),
                        Err(_) => responder.respond_with_error(invalid("the session has ended")),
                    }
                })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionModeRequest,
                        responder: Responder<SetSessionModeResponse>,
                        _| {
                match on_mode.set_mode(&request.session_id, &request.mode_id.0) {
                    Ok(()) => responder.respond(SetSessionModeResponse::new()),
                    Err(error) => responder.respond_with_error(error),
                }
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _| {
                on_cancel.cancel(&notification.session_id);
                Ok(())
            },
            on_receive_notification!(),
        )
        .connect_to(transport)
        .await
}

/// What ybs can do: load saved sessions, take images and embedded files, connect MCP servers
/// over stdio and HTTP.
fn initialize_response() -> InitializeResponse {
    InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(
            AgentCapabilities::new()
                .load_session(true)
                .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
                .mcp_capabilities(McpCapabilities::new().http(true)),
        )
        .agent_info(Implementation::new("ybs", env!("CARGO_PKG_VERSION")).title("ybs"))
}
