//! A small deterministic MCP server (rmcp's server side) for testing MCP clients, over stdio
//! or streamable HTTP.
//!
//! Tools: `echo {text}` → `echo: <text>`; `add {a, b}` → the sum; `fail {}` → an error result
//! (`isError: true`) with `this tool always fails`; `whoami {}` → the configured name. When a
//! record file is configured, every tool call is appended to it as one JSON line
//! `{"arguments":{..},"tool":NAME}`, flushed before the tool runs.
//!
//! With extras on ([`McpConfig::with_extras`]) it also offers resources ([`README_URI`], and
//! [`ESCAPE_URI`] whose text carries terminal escape sequences), the prompt `review` (arguments
//! `file`, required, and `focus`), and the tool `grow`, after whose call the server offers the
//! tool `shout {text}` too and sends `notifications/tools/list_changed`.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, Prompt, PromptArgument, PromptMessage,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, Role, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, schemars, tool, tool_router};
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

/// The name a server reports when none is configured.
pub const DEFAULT_NAME: &str = "fake-mcp";

/// The text of the `fail` tool's error result.
pub const FAIL_MESSAGE: &str = "this tool always fails";

/// The URI of the extras' plain resource.
pub const README_URI: &str = "fake://readme";

/// The text of [`README_URI`].
pub const README_TEXT: &str = "The fake server's readme: the answer is 42.";

/// The URI of the extras' resource whose text has terminal escape sequences.
pub const ESCAPE_URI: &str = "fake://escape";

/// The text of [`ESCAPE_URI`]: it would retitle the terminal and colour the rest red.
pub const ESCAPE_TEXT: &str = "before\u{1b}]0;pwned\u{7}\u{1b}[31mRED after";

/// What can go wrong starting or running the fake MCP server.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The record file could not be opened for appending.
    #[error("cannot open the MCP record file {path}: {source} (check that its directory exists)")]
    Record {
        /// The record file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The HTTP listening socket could not be set up.
    #[error("cannot listen on {addr}: {source} (pick another port, or 0 for any)")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
    /// The MCP session over stdio failed (e.g. the client did not initialize).
    #[error("the MCP stdio session failed: {0}")]
    Session(String),
}

/// How a fake MCP server introduces itself and where it records tool calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpConfig {
    /// The server name, reported in `serverInfo.name` and by the `whoami` tool.
    pub name: String,
    /// A file every tool call is appended to as a JSON line (created if missing).
    pub record: Option<PathBuf>,
    /// Over HTTP, the bearer token every request must carry; others get `401 Unauthorized`.
    pub token: Option<String>,
    /// Whether it offers resources, a prompt and the `grow` tool.
    pub extras: bool,
}

impl Default for McpConfig {
    fn default() -> Self {
        Self {
            name: DEFAULT_NAME.to_owned(),
            record: None,
            token: None,
            extras: false,
        }
    }
}

impl McpConfig {
    /// A server called `name` that records nothing.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            record: None,
            token: None,
            extras: false,
        }
    }

    /// Over HTTP, answers `401 Unauthorized` to a request without `Authorization: Bearer
    /// TOKEN`.
    pub fn with_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Also offers resources, the prompt `review` and the tool `grow`.
    pub fn with_extras(mut self) -> Self {
        self.extras = true;
        self
    }

    /// Records every tool call to `path`.
    pub fn with_record(mut self, path: impl Into<PathBuf>) -> Self {
        self.record = Some(path.into());
        self
    }
}

/// Appends one JSON line per tool call, flushed at once, so a test sees it while the server runs.
#[derive(Debug)]
struct Recorder {
    path: PathBuf,
    file: Mutex<File>,
}

impl Recorder {
    fn open(path: &Path) -> Result<Self, McpError> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|source| McpError::Record {
                path: path.to_owned(),
                source,
            })?;
        Ok(Self {
            path: path.to_owned(),
            file: Mutex::new(file),
        })
    }

    fn append(&self, tool: &str, arguments: serde_json::Value) -> Result<(), ErrorData> {
        let mut line =
            crate::wire::json_text(&serde_json::json!({ "tool": tool, "arguments": arguments }));
        line.push('\n');
        let mut file = self
            .file
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        file.write_all(line.as_bytes())
            .and_then(|()| file.flush())
            .map_err(|e| {
                ErrorData::internal_error(
                    format!(
                        "cannot append to the record file {}: {e}",
                        self.path.display()
                    ),
                    None,
                )
            })
    }
}

/// The fake MCP server: four deterministic tools, optional call recording.
#[derive(Debug, Clone)]
pub struct FakeMcp {
    name: String,
    recorder: Option<Arc<Recorder>>,
    tool_router: ToolRouter<Self>,
    extras: bool,
    /// Whether `grow` was called: `shout` is offered from then on.
    grown: Arc<AtomicBool>,
}

/// Arguments of `echo`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct EchoArgs {
    /// The text to echo back.
    pub text: String,
}

/// Arguments of `add`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct AddArgs {
    /// The first addend.
    pub a: i64,
    /// The second addend.
    pub b: i64,
}

impl FakeMcp {
    /// A server with this configuration; opens (creates) the record file if one is set.
    pub fn new(config: &McpConfig) -> Result<Self, McpError> {
        let recorder = match &config.record {
            Some(path) => Some(Arc::new(Recorder::open(path)?)),
            None => None,
        };
        Ok(Self {
            name: config.name.clone(),
            recorder,
            tool_router: Self::tool_router(),
            extras: config.extras,
            grown: Arc::default(),
        })
    }

    /// The configured name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

#[tool_router]
impl FakeMcp {
    #[tool(description = "Echo the text back, prefixed with `echo: `.")]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        format!("echo: {text}")
    }

    #[tool(description = "Add two integers and return the sum.")]
    fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> Result<String, String> {
        a.checked_add(b)
            .map(|sum| sum.to_string())
            .ok_or_else(|| format!("{a} + {b} overflows a 64-bit integer"))
    }

    #[tool(description = "Always fail with an error result (for testing tool errors).")]
    fn fail(&self) -> Result<String, String> {
        Err(FAIL_MESSAGE.to_owned())
    }

    #[tool(description = "Return this server's name.")]
    fn whoami(&self) -> String {
        self.name.clone()
    }
}

/// A tool of the extras, with a schema of string properties.
fn extra_tool(name: &'static str, description: &'static str, properties: &[&str]) -> Tool {
    let mut schema = serde_json::Map::new();
    schema.insert("type".into(), "object".into());
    let props: serde_json::Map<String, serde_json::Value> = (properties.iter())
        .map(|name| ((*name).to_owned(), serde_json::json!({"type": "string"})))
        .collect();
    schema.insert("properties".into(), props.into());
    Tool::new(name, description, Arc::new(schema))
}

impl FakeMcp {
    fn extra_tools(&self) -> Vec<Tool> {
        let mut tools = vec![extra_tool(
            "grow",
            "Offer the tool `shout` from now on (and say the tool list changed).",
            &[],
        )];
        if self.grown.load(Ordering::SeqCst) {
            tools.push(extra_tool("shout", "Say the text in capitals.", &["text"]));
        }
        tools
    }

    /// The extras' own tools; `None` for a tool of the router.
    async fn call_extra(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Option<CallToolResult> {
        match request.name.as_ref() {
            "grow" if self.extras => {
                self.grown.store(true, Ordering::SeqCst);
                let _ = context.peer.notify_tool_list_changed().await;
                Some(CallToolResult::success(vec![ContentBlock::text("grown")]))
            }
            "shout" if self.extras && self.grown.load(Ordering::SeqCst) => {
                let text = (request.arguments.as_ref())
                    .and_then(|args| args.get("text"))
                    .and_then(|text| text.as_str())
                    .unwrap_or_default()
                    .to_uppercase();
                Some(CallToolResult::success(vec![ContentBlock::text(text)]))
            }
            _ => None,
        }
    }
}

// `list_tools` and `call_tool` are written out so that every call is recorded before it
// runs and the extras' tools join the router's.
impl ServerHandler for FakeMcp {
    fn get_info(&self) -> ServerConfig {
        let capabilities = if self.extras {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .enable_prompts()
                .build()
        } else {
            ServerCapabilities::builder().enable_tools().build()
        };
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(&self.name, env!("CARGO_PKG_VERSION")))
            .with_instructions("A fake MCP server for tests: echo, add, fail, whoami.")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = self.tool_router.list_all();
        if self.extras {
            tools.extend(self.extra_tools());
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        if let Some(tool) = self.tool_router.get(name) {
            return Some(tool.clone());
        }
        if !self.extras {
            return None;
        }
        self.extra_tools()
            .into_iter()
            .find(|tool| tool.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(recorder) = &self.recorder {
            let arguments = request.arguments.clone().unwrap_or_default();
            recorder.append(&request.name, serde_json::Value::Object(arguments))?;
        }
        if let Some(result) = self.call_extra(&request, &context).await {
            return Ok(result.into());
        }
        let call = ToolCallContext::new(self, request, context);
        self.tool_router.call(call).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resources = if self.extras {
            vec![
                Resource::new(README_URI, "readme")
                    .with_description("What the fake server is")
                    .with_mime_type("text/plain"),
                Resource::new(ESCAPE_URI, "escape")
                    .with_description("Text with terminal escape sequences")
                    .with_mime_type("text/plain"),
            ]
        } else {
            Vec::new()
        };
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let text = match request.uri.as_str() {
            README_URI if self.extras => README_TEXT,
            ESCAPE_URI if self.extras => ESCAPE_TEXT,
            other => {
                return Err(ErrorData::resource_not_found(
                    format!("no resource {other}"),
                    None,
                ));
            }
        };
        Ok(ReadResourceResponse::Complete(ReadResourceResult::new(
            vec![ResourceContents::text(text, request.uri)],
        )))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let prompts = if self.extras {
            let mut file = PromptArgument::new("file");
            file.required = Some(true);
            file.description = Some("The file to review".into());
            let mut focus = PromptArgument::new("focus");
            focus.description = Some("What to look at".into());
            vec![Prompt::new(
                "review",
                Some("Ask for a review of a file"),
                Some(vec![file, focus]),
            )]
        } else {
            Vec::new()
        };
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if !self.extras || request.name != "review" {
            return Err(ErrorData::invalid_params(
                format!("no prompt {}", request.name),
                None,
            ));
        }
        let argument = |name: &str| {
            (request.arguments.as_ref())
                .and_then(|args| args.get(name))
                .and_then(|value| value.as_str())
                .map(str::to_owned)
        };
        let Some(file) = argument("file") else {
            return Err(ErrorData::invalid_params(
                "the prompt review needs the argument `file`",
                None,
            ));
        };
        let focus = argument("focus").unwrap_or_else(|| "everything".to_owned());
        Ok(GetPromptResponse::Complete(GetPromptResult::new(vec![
            PromptMessage::new_text(
                Role::User,
                format!("Please review {file}, focusing on {focus}."),
            ),
        ])))
    }
}

/// Serves one MCP session on stdin/stdout until the client closes stdin.
pub async fn serve_stdio(config: McpConfig) -> Result<(), McpError> {
    let server = FakeMcp::new(&config)?;
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| McpError::Session(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| McpError::Session(e.to_string()))?;
    Ok(())
}

/// A running streamable-HTTP fake MCP server; stops when shut down or dropped.
#[derive(Debug)]
pub struct McpHttpServer {
    addr: SocketAddr,
    cancel: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl McpHttpServer {
    /// The bound address (the real port when 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The MCP endpoint, `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Stops accepting requests, ends all sessions and waits for the server task.
    pub async fn shutdown(mut self) {
        self.cancel.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for McpHttpServer {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// Serves MCP over streamable HTTP at `/mcp` on `addr` (e.g. `127.0.0.1:0`), each client
/// session getting its own [`FakeMcp`] sharing the record file. Must run inside a Tokio runtime.
pub async fn serve_http(config: McpConfig, addr: SocketAddr) -> Result<McpHttpServer, McpError> {
    let cancel = CancellationToken::new();
    let Http {
        listener,
        bound,
        service,
    } = Http::bind(&config, addr, &cancel).await?;
    let mut router = axum::Router::new().nest_service("/mcp", service);
    if let Some(token) = &config.token {
        let expected = format!("Bearer {token}");
        router = router.layer(axum::middleware::from_fn(
            move |request: axum::extract::Request, next: axum::middleware::Next| {
                let authorized = (request.headers().get(axum::http::header::AUTHORIZATION))
                    .is_some_and(|value| value.as_bytes() == expected.as_bytes());
                async move {
                    if authorized {
                        next.run(request).await
                    } else {
                        axum::response::IntoResponse::into_response(
                            axum::http::StatusCode::UNAUTHORIZED,
                        )
                    }
                }
            },
        ));
    }
    let task = serve_until(listener, router, &cancel);
    Ok(McpHttpServer {
        addr: bound,
        cancel,
        task: Some(task),
    })
}

/// The fake MCP server of a config as a streamable HTTP service (a [`FakeMcp`] per client
/// session), with the listener it will be served on.
pub(crate) struct Http {
    pub listener: tokio::net::TcpListener,
    /// The address bound (the port chosen when `addr` asked for any).
    pub bound: SocketAddr,
    pub service: StreamableHttpService<FakeMcp, LocalSessionManager>,
}

impl Http {
    /// Binds `addr`; the sessions end when `cancel` is cancelled.
    pub(crate) async fn bind(
        config: &McpConfig,
        addr: SocketAddr,
        cancel: &CancellationToken,
    ) -> Result<Http, McpError> {
        let server = FakeMcp::new(config)?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| McpError::Bind { addr, source })?;
        let bound = listener
            .local_addr()
            .map_err(|source| McpError::Bind { addr, source })?;
        let service = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::default(),
            StreamableHttpServerConfig::default()
                .with_sse_keep_alive(None)
                .with_cancellation_token(cancel.child_token()),
        );
        Ok(Http {
            listener,
            bound,
            service,
        })
    }
}

/// Serves `router` on `listener` until `cancel` is cancelled.
pub(crate) fn serve_until(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    cancel: &CancellationToken,
) -> tokio::task::JoinHandle<()> {
    let stop = cancel.clone();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router)
            .with_graceful_shutdown(stop.cancelled_owned())
            .await;
    })
}
