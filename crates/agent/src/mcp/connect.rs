//! Starting or reaching one server, the MCP handshake, and listing its tools.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use http::{HeaderName, HeaderValue};
use rmcp::model::{Prompt, Resource, Tool};
use rmcp::service::{RoleClient, RunningService, ServiceExt};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::ChildStderr;

use super::client::{Changed, Client};
use super::spec::{McpServerSpec, McpTransport};

/// A server that could not be used, by name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("MCP server `{server}` is not available: {message}")]
pub struct McpFailure {
    /// The server's name.
    pub server: String,
    /// What went wrong, and for a child process what it last wrote to stderr.
    pub message: String,
}

/// A live connection.
pub(super) type Service = RunningService<RoleClient, Client>;

/// How many of a server's last stderr lines a failure quotes.
const STDERR_LINES: usize = 5;

/// A server that answered, with the tools it offers (after `only`), its resources and its
/// prompts.
pub(super) struct Connected {
    pub spec: McpServerSpec,
    pub service: Arc<Service>,
    pub tools: Vec<Tool>,
    /// `None` when the server offers no resources.
    pub resources: Option<Vec<Resource>>,
    pub prompts: Vec<Prompt>,
    pub changed: Arc<Changed>,
}

/// Connects to `spec`'s server within its startup timeout.
pub(super) async fn connect(spec: McpServerSpec) -> Result<Connected, McpFailure> {
    let stderr = StderrTail::default();
    let started = tokio::time::timeout(spec.startup_timeout, start(&spec, &stderr)).await;
    if !matches!(started, Ok(Ok(_))) {
        stderr.settle().await;
    }
    let failure = |message: String| McpFailure {
        server: spec.name.clone(),
        message: stderr.append_to(message),
    };
    let (service, mut tools, changed) = match started {
        Ok(Ok(started)) => started,
        Ok(Err(error)) => return Err(failure(error.to_string())),
        Err(_) => {
            return Err(failure(format!(
                "no answer within {} s (mcp.servers.{}.startup_timeout_seconds)",
                spec.startup_timeout.as_secs(),
                spec.name
            )));
        }
    };
    let (resources, prompts) = other_lists(&service).await;
    if !spec.only.is_empty() {
        let missing: Vec<&str> = (spec.only.iter())
            .filter(|name| !tools.iter().any(|tool| tool.name == name.as_str()))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            let offered: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
            return Err(failure(format!(
                "it has no tool {}; it offers: {}",
                missing.join(", "),
                offered.join(", ")
            )));
        }
    }
    keep_only(&spec.only, &mut tools);
    Ok(Connected {
        spec,
        service: Arc::new(service),
        tools,
        resources,
        prompts,
        changed,
    })
}

/// `tools` without those `only` leaves out (none when it is empty).
pub(super) fn keep_only(only: &[String], tools: &mut Vec<Tool>) {
    if !only.is_empty() {
        tools.retain(|tool| only.iter().any(|name| tool.name == name.as_str()));
    }
}

/// The server's resources and prompts, when it says it has them. A server whose lists fail
/// keeps its tools: the lists are extras.
pub(super) async fn other_lists(service: &Service) -> (Option<Vec<Resource>>, Vec<Prompt>) {
    let capabilities = service.peer_info().map(|info| info.capabilities.clone());
    let has_resources = capabilities.as_ref().is_some_and(|c| c.resources.is_some());
    let has_prompts = capabilities.as_ref().is_some_and(|c| c.prompts.is_some());
    let resources = if has_resources {
        Some(service.list_all_resources().await.unwrap_or_default())
    } else {
        None
    };
    let prompts = if has_prompts {
        service.list_all_prompts().await.unwrap_or_default()
    } else {
        Vec::new()
    };
    (resources, prompts)
}

/// Why a server could not be started or asked for its tools.
#[derive(Debug, thiserror::Error)]
enum StartError {
    /// A variable an environment value names is not set.
    #[error("env.{name} uses ${{{var}}}, which is not set")]
    UnsetEnvVar { name: String, var: String },
    /// The program did not start.
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    /// The server started as a child process did not complete the MCP handshake.
    #[error("the MCP handshake failed: {source}")]
    Handshake {
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A server reached over HTTP did not answer the handshake (`reason` in words: the
    /// connection refused, the status it answered).
    #[error("{url}: {reason}{}", auth_hint(.reason))]
    Unreachable { url: String, reason: String },
    /// The server wants a token ybs does not have (or one it refused).
    #[error("needs login: run `ybs mcp login {0}`")]
    NeedsLogin(String),
    /// The server did not list its tools.
    #[error("cannot list its tools: {0}")]
    ListTools(String),
    /// A configured header name is not valid HTTP.
    #[error("`{0}` is not a valid HTTP header name")]
    HeaderName(String),
    /// A variable a header value names is not set.
    #[error("header `{name}` uses ${{{var}}}, which is not set")]
    UnsetHeaderVar { name: String, var: String },
    /// A header's value (not quoted: it is usually a secret) is not valid HTTP.
    #[error("the value of header `{0}` is not valid in HTTP")]
    HeaderValue(String),
}

/// Reaches the server at `url`, with the token a login stored for exactly this URL unless
/// the configuration sends its own `Authorization` (that token is refreshed as it expires or
/// is refused, for the whole session). A server that refuses ybs without one, or whose token
/// cannot be refreshed, needs a login.
async fn http_service(
    name: &str,
    url: &str,
    headers: &BTreeMap<String, String>,
    client: Client,
) -> Result<Service, StartError> {
    let own_authorization = headers
        .keys()
        .any(|key| key.eq_ignore_ascii_case("authorization"));
    let store = (!own_authorization)
        .then(super::oauth::TokenStore::of_process)
        .flatten();
    let config =
        StreamableHttpClientTransportConfig::with_uri(url).custom_headers(header_map(headers)?);
    let token = match &store {
        Some(store) => store.load(url).map(|token| (store.clone(), token)),
        None => None,
    };
    let answer = match token {
        Some((store, token)) => {
            let http = super::oauth::TokenClient::new(store, token);
            (client.serve(StreamableHttpClientTransport::with_client(http, config))).await
        }
        None => (client.serve(StreamableHttpClientTransport::from_config(config))).await,
    };
    answer.map_err(|error| {
        let reason = super::http_failure::describe(&error);
        if reason.starts_with("401") && !own_authorization {
            StartError::NeedsLogin(name.to_owned())
        } else {
            StartError::Unreachable {
                url: url.to_owned(),
                reason,
            }
        }
    })
}

/// What to check when a server refused the credentials it was given (or none).
fn auth_hint(reason: &str) -> &'static str {
    if reason.starts_with("401") || reason.starts_with("403") {
        " (check the token in the server's `headers`)"
    } else {
        ""
    }
}

async fn start(
    spec: &McpServerSpec,
    stderr: &StderrTail,
) -> Result<(Service, Vec<Tool>, Arc<Changed>), StartError> {
    let client = Client::default();
    let changed = client.changed.clone();
    let service = match &spec.transport {
        McpTransport::Stdio {
            program,
            args,
            env,
            cwd,
        } => {
            let mut command = tokio::process::Command::new(program);
            command.args(args).current_dir(cwd);
            for (name, value) in env {
                let value = expand_vars(value, &|var| std::env::var(var).ok()).map_err(|var| {
                    StartError::UnsetEnvVar {
                        name: name.clone(),
                        var,
                    }
                })?;
                command.env(name, value);
            }
            let (transport, child_stderr) = TokioChildProcess::builder(command)
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|source| StartError::Spawn {
                    program: program.clone(),
                    source,
                })?;
            if let Some(child_stderr) = child_stderr {
                stderr.follow(child_stderr);
            }
            client
                .serve(transport)
                .await
                .map_err(|err| StartError::Handshake {
                    source: Box::new(err),
                })?
        }
        McpTransport::Http { url, headers } => {
            http_service(&spec.name, url, headers, client).await?
        }
    };
    let tools = (service.list_all_tools().await)
        .map_err(|error| StartError::ListTools(super::http_failure::describe(&error)))?;
    Ok((service, tools, changed))
}

fn header_map(
    headers: &BTreeMap<String, String>,
) -> Result<HashMap<HeaderName, HeaderValue>, StartError> {
    (headers.iter())
        .map(|(name, value)| {
            let header = HeaderName::try_from(name.as_str())
                .map_err(|_| StartError::HeaderName(name.clone()))?;
            let value = expand_vars(value, &|var| std::env::var(var).ok()).map_err(|var| {
                StartError::UnsetHeaderVar {
                    name: name.clone(),
                    var,
                }
            })?;
            let value =
                HeaderValue::try_from(value).map_err(|_| StartError::HeaderValue(name.clone()))?;
            Ok((header, value))
        })
        .collect()
}

/// `text` with each `${NAME}` replaced by the variable's value, so secrets can stay out of
/// configuration files; the name of the first unset variable is the error.
fn expand_vars(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let Some(length) = rest[start + 2..].find('}') else {
            break;
        };
        let name = &rest[start + 2..start + 2 + length];
        out.push_str(&rest[..start]);
        out.push_str(&lookup(name).ok_or_else(|| name.to_owned())?);
        rest = &rest[start + 3 + length..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The last lines a child wrote to stderr, kept while the server runs so its output never
/// fills the pipe and a failure can quote it.
#[derive(Default)]
struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    reader: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// How long a failed server's stderr may take to reach its end.
const STDERR_SETTLE: std::time::Duration = std::time::Duration::from_millis(500);

impl StderrTail {
    fn follow(&self, stderr: ChildStderr) {
        let lines = self.lines.clone();
        let reader = tokio::spawn(async move {
            let mut reader = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                if let Ok(mut lines) = lines.lock() {
                    if lines.len() == STDERR_LINES {
                        lines.pop_front();
                    }
                    lines.push_back(line);
                }
            }
        });
        if let Ok(mut slot) = self.reader.lock() {
            *slot = Some(reader);
        }
    }

    /// Waits a moment for a failed child's last words.
    async fn settle(&self) {
        let reader = self.reader.lock().ok().and_then(|mut slot| slot.take());
        if let Some(reader) = reader {
            let _ = tokio::time::timeout(STDERR_SETTLE, reader).await;
        }
    }

    fn append_to(&self, message: String) -> String {
        let lines: Vec<String> = match self.lines.lock() {
            Ok(lines) => lines.iter().cloned().collect(),
            Err(_) => Vec::new(),
        };
        if lines.is_empty() {
            message
        } else {
            format!("{message}; its stderr ended with: {}", lines.join(" | "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(name: &str) -> Option<String> {
        (name == "TOKEN").then(|| "s3cret".to_owned())
    }

    #[test]
    fn variables_are_replaced_and_an_unset_one_is_named() {
        assert_eq!(
            expand_vars("Bearer ${TOKEN}", &lookup),
            Ok("Bearer s3cret".to_owned())
        );
        assert_eq!(
            expand_vars("${TOKEN}${TOKEN}", &lookup),
            Ok("s3crets3cret".to_owned())
        );
        assert_eq!(
            expand_vars("plain $TOKEN {x}", &lookup),
            Ok("plain $TOKEN {x}".to_owned())
        );
        assert_eq!(
            expand_vars("unclosed ${TOKEN", &lookup),
            Ok("unclosed ${TOKEN".to_owned())
        );
        assert_eq!(
            expand_vars("${MISSING}", &lookup),
            Err("MISSING".to_owned())
        );
    }
}
