//! `/status`: what this session runs with, on one screen: the model and where it is served,
//! how full its window is, the approval and network modes, the sandbox with the reason of
//! each layer that does not apply, the trust of the project's settings, the MCP servers,
//! the background jobs and the language servers. Each line is read from the part that owns
//! the fact (the agent, the loaded configuration, the sandbox probe made at start, the tool
//! registry).

use ybs_agent::Agent;
use ybs_agent::config::{Config, LoadedConfig};
use ybs_agent::mcp::McpFailure;
use ybs_tools::shell::status::SandboxStatus;

use crate::render::{inert, wrap};

/// What `/status` reads besides the agent and the configuration.
pub struct Sources<'a> {
    /// The configuration as loaded (files and what waits for trust).
    pub loaded: &'a LoadedConfig,
    /// The sandbox probed at start; `None` when `run_shell` is off.
    pub sandbox: Option<&'a SandboxStatus>,
    /// The MCP servers that could not be used at start, and why.
    pub mcp_failures: &'a [McpFailure],
}

/// The width of the labels, so the values make a column.
const LABEL: usize = 10;

/// The `/status` text, wrapped to `width` with continued lines under the values.
pub fn text(agent: &Agent, config: &Config, sources: &Sources<'_>, width: Option<usize>) -> String {
    let mut rows = vec![
        (
            "model",
            format!(
                "{} {} at {}",
                config.llm.provider,
                config.llm.model,
                ybs_agent::setup::endpoint(config)
            ),
        ),
        ("window", window(agent)),
        ("approval", approval(agent)),
        ("network", network(agent, sources.sandbox)),
        ("sandbox", sandbox(sources.sandbox, config)),
        ("trust", trust(sources.loaded)),
    ];
    rows.extend(mcp(agent, config, sources.mcp_failures));
    rows.push(("jobs", super::jobs::status_row(&agent.tool_context.jobs)));
    rows.push(("LSP", language_servers(agent)));
    let lines: Vec<String> = (rows.into_iter())
        .map(|(label, value)| {
            // Model names, endpoints, paths and servers' errors come from outside.
            let row = format!("{:<LABEL$}{}", format!("{label}:"), inert(&value));
            wrap::hanging(&row, width, LABEL)
        })
        .collect();
    lines.join("\n")
}

/// The language servers running and those that could not be used.
fn language_servers(agent: &Agent) -> String {
    let Some(lsp) = &agent.lsp else {
        return "off (lsp.enabled: false)".to_owned();
    };
    let mut parts: Vec<String> = (lsp.running().into_iter())
        .map(|name| format!("{name} running"))
        .collect();
    parts.extend((lsp.failed().iter()).map(|(name, why)| format!("{name} not usable: {why}")));
    if parts.is_empty() {
        "none started yet (one starts when the agent changes a file it checks)".to_owned()
    } else {
        parts.join("; ")
    }
}

fn window(agent: &Agent) -> String {
    let limits = agent.limits.short();
    match agent.context_fill() {
        Some((used, window)) => format!(
            "{} ({} tokens in the last request); {limits}",
            crate::render::context_fill(used, window),
            crate::render::thousands(used)
        ),
        None => format!("nothing sent yet; {limits}"),
    }
}

fn approval(agent: &Agent) -> String {
    let plan = if agent.plan_mode {
        "; plan mode on (the model only reads)"
    } else {
        ""
    };
    format!("{}{plan}", agent.approval.name())
}

/// The network mode and, when commands run sandboxed, whether they reach each other's
/// servers.
fn network(agent: &Agent, sandbox: Option<&SandboxStatus>) -> String {
    let mode = agent.network.name();
    match sandbox {
        Some(SandboxStatus::Layers(_)) => {
            format!("{mode}; {}", ybs_tools::shell::status::local_servers())
        }
        _ => mode.to_owned(),
    }
}

fn sandbox(status: Option<&SandboxStatus>, config: &Config) -> String {
    match status {
        Some(status) => {
            let line = status.banner();
            line.strip_prefix("sandbox: ").unwrap_or(&line).to_owned()
        }
        None if config.safety.sandbox_enabled => "on (run_shell is not enabled)".to_owned(),
        None => "off".to_owned(),
    }
}

fn trust(loaded: &LoadedConfig) -> String {
    if let Some(file) = loaded.untrusted.first() {
        let waiting = loaded
            .untrusted
            .iter()
            .map(|f| f.settings.len())
            .sum::<usize>();
        return format!(
            "{} of {} not applied until you run `ybs trust`",
            ybs_tools::summary::counted(waiting as u64, "setting", "settings"),
            file.path.display()
        );
    }
    let project = (loaded.files.iter())
        .filter(|status| status.loaded && status.file.role == ybs_agent::config::FileRole::Project)
        .map(|status| status.file.path.display().to_string())
        .collect::<Vec<_>>();
    if project.is_empty() {
        "no project settings file".to_owned()
    } else {
        format!(
            "{} applies (trusted, or nothing in it needs trust)",
            project.join(", ")
        )
    }
}

fn mcp(agent: &Agent, config: &Config, failures: &[McpFailure]) -> Vec<(&'static str, String)> {
    if config.mcp.servers.is_empty() {
        return vec![("MCP", "no servers configured".to_owned())];
    }
    (config.mcp.servers.iter())
        .map(|(server, settings)| {
            let failure = failures.iter().find(|failure| failure.server == *server);
            let state = match failure {
                _ if !settings.enabled => "disabled (enabled: false)".to_owned(),
                Some(failure) => format!("not connected: {}", failure.message),
                None => {
                    let prefix = ybs_agent::mcp::tool_prefix(server);
                    let tools = (agent.registry.names().iter())
                        .filter(|name| name.starts_with(&prefix))
                        .count();
                    format!(
                        "connected, {}",
                        ybs_tools::summary::counted(tools as u64, "tool", "tools")
                    )
                }
            };
            ("MCP", format!("{server}: {state}"))
        })
        .collect()
}
