//! Loading the configuration and building the agent from it, and what the commands share
//! around a turn: the runtime, Ctrl-C, the renderer for messages outside a turn and the
//! wording of a failed turn.

use std::io::Write;

use tokio_util::sync::CancellationToken;
use ybs_context_budget::SendError;
use ybs_core::ErrorKind;

use super::exit::Failed;
use crate::cli::{Cli, GlobalOptions};
use crate::render::wrap::problem;
use crate::render::{RenderOptions, Renderer, use_color};
use ybs_agent::Notice;
use ybs_agent::config::{Config, LoadedConfig, OwnEdits, Trust, TrustStore};
use ybs_agent::confirm::ConfirmMode;
use ybs_agent::host::Host;
use ybs_agent::setup;
use ybs_agent::{Agent, AgentBuilder, AgentError, SetupReport};

/// Loads the configuration, printing its warnings and one per setting that was ignored
/// because the project is not trusted.
pub fn load(cli: &Cli, host: &Host, err: &mut dyn Write) -> Result<LoadedConfig, Failed> {
    let loaded = load_trusting(cli, host, &run_trust(cli, host), err)?;
    for warning in super::trust::warnings(&loaded.untrusted) {
        let _ = writeln!(
            err,
            "ybs: warning: {}",
            crate::render::inert_lines(&warning.to_string())
        );
    }
    Ok(loaded)
}

/// What this run trusts: what the user recorded, and everything with `--trust-project`.
pub fn run_trust(cli: &Cli, host: &Host) -> Trust {
    Trust {
        everything: cli.options.trust_project,
        store: TrustStore::open(host.data_home.as_deref()),
    }
}

/// Loads the configuration with `trust`, printing its warnings (not the ignored settings:
/// [`LoadedConfig::untrusted`] has them).
pub fn load_trusting(
    cli: &Cli,
    host: &Host,
    trust: &Trust,
    err: &mut dyn Write,
) -> Result<LoadedConfig, Failed> {
    let loaded =
        ybs_agent::config::load(&host.locations, &host.env, &cli.options.overrides(), trust)
            .map_err(|failure| Failed(failure.to_string()))?;
    for warning in &loaded.warnings {
        let _ = writeln!(
            err,
            "ybs: warning: {}",
            crate::render::inert_lines(&warning.to_string())
        );
    }
    for warning in &loaded.extensions.warnings {
        let _ = writeln!(err, "ybs: warning: {}", crate::render::inert_lines(warning));
    }
    if let Some(warning) = crate::render::highlight::set_theme(&loaded.config.ui.theme) {
        let _ = writeln!(
            err,
            "ybs: warning: {}",
            crate::render::inert_lines(&warning.to_string())
        );
    }
    Ok(loaded)
}

/// Builds the agent for the run `command` (`exec`, `ask`, `repl`) with the command line's
/// `options`, printing what building it had to say (instruction files cut, external tools or
/// MCP servers that failed to load, unusable rule files, a shell that cannot be sandboxed).
pub fn build_agent(
    (config, loaded): (&Config, &LoadedConfig),
    host: &Host,
    (command, confirm): (&str, ConfirmMode),
    options: &GlobalOptions,
    err: &mut dyn Write,
) -> Result<Agent, Failed> {
    build_agent_reporting((config, loaded), host, (command, confirm), options, err)
        .map(|(agent, _)| agent)
}

/// [`build_agent`], also returning the MCP servers that could not be used (for `/status`).
pub fn build_agent_reporting(
    (config, loaded): (&Config, &LoadedConfig),
    host: &Host,
    (command, confirm): (&str, ConfirmMode),
    options: &GlobalOptions,
    err: &mut dyn Write,
) -> Result<(Agent, Vec<ybs_agent::mcp::McpFailure>), Failed> {
    let own_edits = OwnEdits {
        locations: host.locations.clone(),
        env: host.env.clone(),
        flags: options.overrides(),
        data_home: host.data_home.clone(),
    };
    let (agent, report) = AgentBuilder::new(config, host.surroundings())
        .sources(&loaded.sources)
        .rules(loaded, &host.locations)
        .own_edits(own_edits)
        .extensions(&loaded.extensions)
        .confirm(confirm)
        .dry_run(options.dry_run)
        .session(&host.locations, host.data_home.clone(), command)
        .build()
        .map_err(|failure| Failed(failure.to_string()))?;
    warn_setup(&report, err);
    Ok((agent, report.mcp))
}

/// Prints what building an agent had to say, each as a warning.
pub fn warn_setup(report: &SetupReport, err: &mut dyn Write) {
    let warn = |err: &mut dyn Write, text: &str| {
        let _ = writeln!(err, "{}", problem("warning", text));
    };
    for warning in &report.instructions {
        warn(err, warning);
    }
    for error in &report.tools.errors {
        warn(err, &error.to_string());
    }
    warn_mcp(&report.mcp, err);
    for error in &report.rules {
        warn(err, &format!("permission rules not used: {error}"));
    }
    if let Some(error) = &report.shell {
        warn(err, &format!("run_shell cannot run commands here: {error}"));
    }
}

/// Says which MCP servers could not be used, and that ybs goes on without them.
pub fn warn_mcp(failures: &[ybs_agent::mcp::McpFailure], err: &mut dyn Write) {
    for failure in failures {
        let text = format!("{failure}; going on without its tools");
        let _ = writeln!(err, "{}", problem("warning", &text));
    }
}

/// A renderer for `config` writing to a terminal (its lines wrapped to its width) or not.
pub fn renderer(config: &Config, terminal: bool) -> Renderer {
    let options = RenderOptions::from_ui(&config.ui, use_color(config.ui.color, terminal));
    let width = crate::render::wrap::terminal_width().filter(|_| terminal);
    Renderer::new(options).with_width(width)
}

/// A runtime with one worker thread, so signal watchers run while the REPL waits for input.
pub fn runtime() -> Result<tokio::runtime::Runtime, Failed> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|err| Failed(format!("cannot start the async runtime: {err}")))
}

/// A token that Ctrl-C (SIGINT) cancels while `future` runs.
pub async fn cancellable<T>(future: impl AsyncFnOnce(CancellationToken) -> T) -> T {
    let token = CancellationToken::new();
    let watcher = token.clone();
    let listener = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            watcher.cancel();
        }
    });
    let result = future(token).await;
    listener.abort();
    result
}

/// A turn's failure in the user's words; an unreachable provider names the endpoint tried
/// and how to choose another, a model the provider does not have names the model, how to
/// choose another and the models the provider lists.
pub fn describe(error: &AgentError, config: &Config) -> String {
    let unreachable = matches!(
        error,
        AgentError::Send(SendError::Provider(llm))
            if matches!(llm.kind, ErrorKind::Network | ErrorKind::Timeout)
    );
    if let AgentError::Send(SendError::Provider(llm)) = error
        && llm.kind == ErrorKind::ModelNotFound
    {
        return super::model::not_found(llm, config);
    }
    if unreachable {
        return format!(
            "cannot reach the {} provider at {}: {error}. Start it, or configure another with \
             --provider/--endpoint (or llm.provider and llm.endpoint in ~/.config/ybs/config.json; \
             `ybs config` shows the effective values)",
            config.llm.provider,
            setup::endpoint(config)
        );
    }
    error.to_string()
}

/// Prints a notice through a fresh renderer (for messages outside a turn).
pub fn notice(config: &Config, kind: Notice, message: &str, out: &mut dyn Write) {
    let width = crate::render::wrap::terminal_width();
    for line in renderer(config, false)
        .with_width(width)
        .notice(kind, message)
    {
        let _ = writeln!(out, "{line}");
    }
}
