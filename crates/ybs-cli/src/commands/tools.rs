//! `ybs tools` lists the tools a session would offer; `ybs tool NAME 'JSON'` runs one of them
//! without the model, through the sandbox and the confirmation policy.

use std::io::{self, BufRead, IsTerminal, Write};

use crate::cli::Cli;
use crate::startup::exit::Failed;
use crate::startup::load::{load, warn_mcp};
use ybs_agent::confirm::{Answer, ConfirmMode, Settle, prompt};
use ybs_agent::host::Host;
use ybs_agent::setup;

/// `ybs tools`: name, source and the first line of the description of each enabled tool.
/// MCP servers are started only with `connect` (`--connect`): listing starts nothing.
pub fn list(
    cli: &Cli,
    host: &Host,
    connect: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, Failed> {
    let loaded = load(cli, host, err)?;
    let config = &loaded.config;
    let (mut registry, report) = setup::registry(config, host.locations.home.as_deref());
    for error in &report.errors {
        let _ = writeln!(
            err,
            "ybs: warning: {}",
            crate::render::inert_lines(&error.to_string())
        );
    }
    let mut rows: Vec<(String, &str, String)> = Vec::new();
    if connect {
        let mut policy = ybs_tools::ConfirmationPolicy::default();
        let cwd = &host.locations.cwd;
        warn_mcp(
            &setup::add_config_mcp_tools(config, cwd, &mut registry, &mut policy),
            err,
        );
    } else {
        for (name, _) in (config.mcp.servers.iter()).filter(|(_, server)| server.enabled) {
            rows.push((
                format!("{}*", ybs_agent::mcp::tool_prefix(name)),
                "mcp",
                format!("the tools of MCP server `{name}` (not started; `ybs tools --connect` lists them)"),
            ));
        }
    }
    let mut listed: Vec<(String, &str, String)> = (registry.specs().into_iter())
        .map(|spec| {
            let source = setup::tool_source(&registry, &spec.name);
            let description = spec
                .description
                .lines()
                .next()
                .unwrap_or_default()
                .to_owned();
            (spec.name.clone(), source, description)
        })
        .collect();
    listed.extend(rows);
    let width = listed
        .iter()
        .map(|(name, ..)| name.len())
        .max()
        .unwrap_or(0);
    for (name, source, description) in listed {
        let _ = writeln!(out, "{name:width$}  {source:8}  {description}");
    }
    Ok(0)
}

/// `ybs tool NAME 'JSON'`: one call through the sandbox and the confirmation policy.
pub fn call(
    cli: &Cli,
    host: &Host,
    name: &str,
    json: &str,
    yes: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, Failed> {
    let loaded = load(cli, host, err)?;
    let arguments: serde_json::Value = serde_json::from_str(json)
        .map_err(|e| Failed(format!("the arguments of {name} are not valid JSON: {e}")))?;
    let config = &loaded.config;
    let (mut registry, report) = setup::registry(config, host.locations.home.as_deref());
    for error in &report.errors {
        let _ = writeln!(
            err,
            "ybs: warning: {}",
            crate::render::inert_lines(&error.to_string())
        );
    }
    let context =
        setup::tool_context(config, &host.surroundings()).map_err(|e| Failed(e.to_string()))?;
    let mut policy =
        ybs_tools::ConfirmationPolicy::new(config.safety.require_confirmation.iter().cloned());
    // MCP servers are started only for a tool that is not a built-in or external one.
    if registry.source(name).is_none() {
        let cwd = &host.locations.cwd;
        warn_mcp(
            &setup::add_config_mcp_tools(config, cwd, &mut registry, &mut policy),
            err,
        );
    }
    let declaration = registry.declaration(name);
    if let ybs_tools::Confirmation::Required { reason } =
        policy.check(name, &declaration, &arguments, &context)
    {
        let stdin = io::stdin();
        let mode = if yes {
            ConfirmMode::AssumeYes
        } else if stdin.is_terminal() {
            ConfirmMode::Ask
        } else {
            ConfirmMode::Deny
        };
        match mode.settle(name, true) {
            Settle::Run => {}
            Settle::Deny(message) => return Err(Failed(message)),
            Settle::Ask => {
                let _ = write!(err, "{}", prompt(&reason));
                let _ = err.flush();
                let mut line = String::new();
                let _ = stdin.lock().read_line(&mut line);
                if Answer::parse(&line) == Answer::No {
                    return Err(Failed(format!("{name} was not run: denied")));
                }
            }
        }
    }
    if cli.options.dry_run {
        let _ = writeln!(err, "ybs: dry run: {name} was not executed");
        return Ok(0);
    }
    match registry.invoke(name, &arguments, &context) {
        Ok(value) => {
            let text = serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string());
            let _ = writeln!(out, "{text}");
            Ok(0)
        }
        Err(error) => {
            let _ = writeln!(out, "{}", error.to_json());
            Err(Failed(error.to_string()))
        }
    }
}
