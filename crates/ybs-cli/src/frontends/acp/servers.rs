//! The MCP servers an editor passes with `session/new` and `session/load`, as ybs connects
//! them: started in the project directory (stdio) or reached over streamable HTTP, with the
//! startup and call timeouts of the configuration's defaults. Their tools ask before each
//! call: the editor's list is not the user's ybs configuration.

use std::path::Path;
use std::time::Duration;

use agent_client_protocol::v1::schema::McpServer;

use ybs_agent::mcp::{McpServerSpec, McpTransport};

/// How long a server may take to start and list its tools.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one call may take.
const TOOL_TIMEOUT: Duration = Duration::from_secs(120);

/// The servers ybs can connect; the others (SSE, which ybs does not advertise) are named in
/// the second list.
pub fn specs(servers: &[McpServer], cwd: &Path) -> (Vec<McpServerSpec>, Vec<String>) {
    let mut specs = Vec::new();
    let mut skipped = Vec::new();
    for server in servers {
        let (name, transport) = match server {
            McpServer::Stdio(stdio) => (
                stdio.name.clone(),
                McpTransport::Stdio {
                    program: stdio.command.display().to_string(),
                    args: stdio.args.clone(),
                    env: (stdio.env.iter())
                        .map(|var| (var.name.clone(), var.value.clone()))
                        .collect(),
                    cwd: cwd.to_owned(),
                },
            ),
            McpServer::Http(http) => (
                http.name.clone(),
                McpTransport::Http {
                    url: http.url.clone(),
                    headers: (http.headers.iter())
                        .map(|header| (header.name.clone(), header.value.clone()))
                        .collect(),
                },
            ),
            McpServer::Sse(sse) => {
                skipped.push(sse.name.clone());
                continue;
            }
            _ => {
                skipped.push("(a server of a transport ybs does not know)".to_owned());
                continue;
            }
        };
        specs.push(McpServerSpec {
            name,
            transport,
            only: Vec::new(),
            trust: false,
            startup_timeout: STARTUP_TIMEOUT,
            tool_timeout: TOOL_TIMEOUT,
        });
    }
    (specs, skipped)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use agent_client_protocol::v1::schema::{
        EnvVariable, HttpHeader, McpServerHttp, McpServerSse, McpServerStdio,
    };

    use super::*;

    #[test]
    fn stdio_and_http_servers_are_connected_untrusted_and_sse_is_named() {
        let servers = vec![
            McpServer::Stdio(
                McpServerStdio::new("files", "/bin/fake-mcp")
                    .args(vec!["--name".into(), "files".into()])
                    .env(vec![EnvVariable::new("A", "1")]),
            ),
            McpServer::Http(
                McpServerHttp::new("web", "http://127.0.0.1:1/mcp")
                    .headers(vec![HttpHeader::new("Authorization", "Bearer t")]),
            ),
            McpServer::Sse(McpServerSse::new("old", "http://127.0.0.1:2/sse")),
        ];
        let (specs, skipped) = specs(&servers, Path::new("/p"));
        assert_eq!(skipped, ["old"]);
        assert_eq!(specs.len(), 2);
        assert!(specs.iter().all(|spec| !spec.trust));
        match &specs[0].transport {
            McpTransport::Stdio {
                program,
                args,
                env,
                cwd,
            } => {
                assert_eq!(program, "/bin/fake-mcp");
                assert_eq!(args, &["--name", "files"]);
                assert_eq!(env.get("A").map(String::as_str), Some("1"));
                assert_eq!(cwd, Path::new("/p"));
            }
            other => panic!("{other:?}"),
        }
        match &specs[1].transport {
            McpTransport::Http { url, headers } => {
                assert_eq!(url, "http://127.0.0.1:1/mcp");
                assert_eq!(
                    headers.get("Authorization").map(String::as_str),
                    Some("Bearer t")
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
