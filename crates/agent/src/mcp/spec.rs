//! Which MCP servers to connect to: from `mcp.servers` and from chat files' `mcp:` lines.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::names::sanitize;
use crate::config::McpServer;

/// How a chat file's servers wait for their start and their calls (the configuration's
/// defaults).
const CHAT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
const CHAT_TOOL_TIMEOUT: Duration = Duration::from_secs(120);

/// One server to connect to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerSpec {
    /// The name that prefixes its tools.
    pub name: String,
    /// How to reach it.
    pub transport: McpTransport,
    /// Only these of its tools (its own names); empty means all.
    pub only: Vec<String>,
    /// Whether its tools run without asking.
    pub trust: bool,
    /// How long starting and listing tools may take.
    pub startup_timeout: Duration,
    /// How long one call may take.
    pub tool_timeout: Duration,
}

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpTransport {
    /// A child process speaking MCP on its stdin and stdout.
    Stdio {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to its environment.
        env: BTreeMap<String, String>,
        /// Its working directory.
        cwd: PathBuf,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// The endpoint's URL.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
    },
}

/// Why an `mcp:` line names no usable server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// Nothing after `mcp:`.
    #[error("`mcp:` needs a URL or `stdio COMMAND`, e.g. `mcp: http://localhost:8765/mcp`")]
    Empty,
    /// `mcp: stdio` without a command.
    #[error("`mcp: stdio` needs a command, e.g. `mcp: stdio 'npx -y SERVER'`")]
    NoCommand,
    /// The command has unbalanced quotes.
    #[error("cannot split the command `{command}`: {reason}")]
    BadCommand {
        /// The command as written.
        command: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Neither a URL nor `stdio`.
    #[error("`{0}` is neither an http:// or https:// URL nor `stdio COMMAND`")]
    NotAServer(String),
}

/// The enabled servers of `mcp.servers`, stdio ones started in `cwd`.
pub fn from_config(servers: &BTreeMap<String, McpServer>, cwd: &Path) -> Vec<McpServerSpec> {
    (servers.iter())
        .filter(|(_, server)| server.enabled)
        .filter_map(|(name, server)| {
            let transport = match (&server.command, &server.url) {
                (Some(program), None) => McpTransport::Stdio {
                    program: program.clone(),
                    args: server.args.clone(),
                    env: server.env.clone(),
                    cwd: cwd.to_owned(),
                },
                (None, Some(url)) => McpTransport::Http {
                    url: url.clone(),
                    headers: server.headers.clone(),
                },
                // Validation refuses these before an agent is built.
                _ => return None,
            };
            Some(McpServerSpec {
                name: name.clone(),
                transport,
                only: server.tools.clone(),
                trust: server.trust,
                startup_timeout: Duration::from_secs(server.startup_timeout_seconds.max(1)),
                tool_timeout: Duration::from_secs(server.tool_timeout_seconds.max(1)),
            })
        })
        .collect()
}

/// The server of a chat file's `mcp: URL [TOOL...]` or `mcp: stdio COMMAND [TOOL...]` line
/// (its words as the chatfile crate split them). `${pwd}` in the command is `cwd`. The server
/// is named after the URL's host or the command's program (a launcher like `npx` is skipped
/// for the package it runs). Its tools are trusted: the file chose to run the server.
pub fn from_chat_line(words: &[String], cwd: &Path) -> Result<McpServerSpec, SpecError> {
    let (first, rest) = words.split_first().ok_or(SpecError::Empty)?;
    let (name, transport, only) = if first == "stdio" {
        let (command, only) = rest.split_first().ok_or(SpecError::NoCommand)?;
        let command = command.replace("${pwd}", &cwd.to_string_lossy());
        let mut parts = shell_words::split(&command)
            .map_err(|err| SpecError::BadCommand {
                command: command.clone(),
                reason: err.to_string(),
            })?
            .into_iter();
        let program = parts.next().ok_or(SpecError::NoCommand)?;
        let args: Vec<String> = parts.collect();
        let name = program_name(&program, &args);
        let transport = McpTransport::Stdio {
            program,
            args,
            env: BTreeMap::new(),
            cwd: cwd.to_owned(),
        };
        (name, transport, only)
    } else if first.starts_with("http://") || first.starts_with("https://") {
        let transport = McpTransport::Http {
            url: first.clone(),
            headers: BTreeMap::new(),
        };
        (host_name(first), transport, rest)
    } else {
        return Err(SpecError::NotAServer(first.clone()));
    };
    Ok(McpServerSpec {
        name,
        transport,
        only: only.to_vec(),
        trust: true,
        startup_timeout: CHAT_STARTUP_TIMEOUT,
        tool_timeout: CHAT_TOOL_TIMEOUT,
    })
}

/// Programs that run another one named by their first non-option argument.
const LAUNCHERS: [&str; 9] = [
    "npx", "bunx", "uvx", "pnpx", "node", "python", "python3", "deno", "docker",
];

fn program_name(program: &str, args: &[String]) -> String {
    let base = last_segment(program);
    let named = if LAUNCHERS.contains(&base) {
        (args.iter())
            .find(|arg| !arg.starts_with('-') && !matches!(arg.as_str(), "run" | "exec"))
            .map(|arg| last_segment(arg))
            .unwrap_or(base)
    } else {
        base
    };
    let stem = named
        .split('@')
        .find(|part| !part.is_empty())
        .unwrap_or(named);
    let stem = stem
        .strip_suffix(".py")
        .or(stem.strip_suffix(".js"))
        .unwrap_or(stem);
    sanitize(stem)
}

fn host_name(url: &str) -> String {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = after_scheme
        .split(['/', '?', '#'])
        .next()
        .unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or(authority);
    sanitize(host)
}

fn last_segment(path: &str) -> &str {
    path.rsplit('/')
        .find(|part| !part.is_empty())
        .unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        shell_words::split(line).unwrap()
    }

    #[test]
    fn a_stdio_line_splits_its_command_and_keeps_its_tool_list() {
        let spec = from_chat_line(
            &words("stdio 'npx -y @modelcontextprotocol/server-filesystem ${pwd}' read_file"),
            Path::new("/p"),
        )
        .unwrap();
        assert_eq!(spec.name, "server-filesystem");
        assert_eq!(spec.only, ["read_file"]);
        assert!(spec.trust);
        assert_eq!(
            spec.transport,
            McpTransport::Stdio {
                program: "npx".into(),
                args: vec![
                    "-y".into(),
                    "@modelcontextprotocol/server-filesystem".into(),
                    "/p".into()
                ],
                env: BTreeMap::new(),
                cwd: "/p".into(),
            }
        );
    }

    #[test]
    fn a_plain_program_is_named_after_its_file() {
        let spec =
            from_chat_line(&words("stdio '/opt/bin/fake-mcp --name a'"), Path::new("/")).unwrap();
        assert_eq!(spec.name, "fake-mcp");
        assert!(spec.only.is_empty());
    }

    #[test]
    fn a_url_line_is_named_after_its_host() {
        let spec =
            from_chat_line(&words("http://127.0.0.1:8765/mcp echo add"), Path::new("/")).unwrap();
        assert_eq!(spec.name, "127_0_0_1_8765");
        assert_eq!(spec.only, ["echo", "add"]);
    }

    #[test]
    fn bad_lines_say_what_is_wrong() {
        let cases = [
            (
                "",
                "`mcp:` needs a URL or `stdio COMMAND`, e.g. `mcp: http://localhost:8765/mcp`",
            ),
            (
                "stdio",
                "`mcp: stdio` needs a command, e.g. `mcp: stdio 'npx -y SERVER'`",
            ),
            (
                "ftp://x",
                "`ftp://x` is neither an http:// or https:// URL nor `stdio COMMAND`",
            ),
            (
                "stdio 'a \"b'",
                "cannot split the command `a \"b`: missing closing quote",
            ),
        ];
        for (line, message) in cases {
            let error = from_chat_line(&words(line), Path::new("/")).unwrap_err();
            assert_eq!(error.to_string(), message, "{line}");
        }
    }

    #[test]
    fn config_servers_keep_their_settings_and_skip_disabled_ones() {
        let mut servers = BTreeMap::new();
        servers.insert(
            "web".to_owned(),
            McpServer {
                url: Some("http://h/mcp".into()),
                tools: vec!["fetch".into()],
                trust: true,
                tool_timeout_seconds: 5,
                ..McpServer::default()
            },
        );
        servers.insert(
            "off".to_owned(),
            McpServer {
                command: Some("x".into()),
                enabled: false,
                ..McpServer::default()
            },
        );
        let specs = from_config(&servers, Path::new("/p"));
        assert_eq!(specs.len(), 1);
        assert_eq!(specs[0].name, "web");
        assert_eq!(specs[0].only, ["fetch"]);
        assert!(specs[0].trust);
        assert_eq!(specs[0].tool_timeout, Duration::from_secs(5));
        assert_eq!(specs[0].startup_timeout, Duration::from_secs(30));
    }
}
