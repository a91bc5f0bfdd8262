//! Loading the configuration and building the agent from it, and what the commands share
//! around a turn: the runtime, Ctrl-C, the renderer for messages outside a turn and the
//! wording of a failed turn.

use std::io::Write;

use tokio_util::sync::CancellationToken;
use ybs_context_budget::SendError;
use ybs_core::ErrorKind;

use super::exit::Failed;
use super::host::Host;
use crate::agent::confirm::ConfirmMode;
use crate::agent::setup::{self, Surroundings};
use crate::agent::{Agent, AgentError};
use crate::cli::Cli;
use crate::config::{Config, LoadedConfig, Trust, TrustStore};
use crate::agent::Notice;
use crate::render::{RenderOptions, Renderer, use_color};

/// Loads the configuration, printing its warnings and one per setting that was ignored
/// because the project is not trusted.
pub fn load(cli: &Cli, host: &Host, err: &mut dyn Write) -> Result<LoadedConfig, Failed> {
    let loaded = load_trusting(cli, host, &run_trust(cli, host), err)?;
    for warning in super::trust::warnings(&loaded.untrusted) {
        let _ = writeln!(err, "ybs: warning: {warning}");
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
    let loaded = crate::config::load(&host.locations, &host.env, &cli.options.overrides(), trust)
        .map_err(|failure| Failed(failure.to_string()))?;
    for warning in &loaded.warnings {
        let _ = writeln!(
            err,
            "ybs: warning: {}",
            crate::render::inert_lines(&warning.to_string())
        );
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

/// The project directory, home and variables an agent is built with.
pub fn surroundings(host: &Host) -> Surroundings {
    Surroundings {
        cwd: host.locations.cwd.clone(),
        home: host.locations.home.clone(),
        env: host.env.clone(),
    }
}

/// Builds the agent for the run `command` (`exec`, `ask`, `repl`), printing external tools
/// that failed to load.
pub fn build_agent(
    (config, loaded): (&Config, &LoadedConfig),
    host: &Host,
    (command, confirm): (&str, ConfirmMode),
    dry_run: bool,
    err: &mut dyn Write,
) -> Result<Agent, Failed> {
    let (mut agent, report) = setup::agent(
        (config, &loaded.sources),
        &surroundings(host),
        confirm,
        dry_run,
    )
    .map_err(|failure| Failed(failure.to_string()))?;
    crate::agent::prepare::session(
        &mut agent,
        config,
        &host.locations,
        host.data_home.as_deref(),
        command,
        err,
    );
    for error in &report.tools.errors {
        let _ = writeln!(
            err,
            "ybs: warning: {}",
            crate::render::inert_lines(&error.to_string())
        );
    }
    warn_mcp(&report.mcp, err);
    // The project's rules are a layer of their own: left out while the project's file has
    // settings waiting for trust (its allow rules are among them).
    let project_trusted = !(loaded.files.iter())
        .filter(|status| status.file.role == crate::config::FileRole::Project)
        .any(|status| (loaded.untrusted.iter()).any(|file| file.path == status.file.path));
    let (layers, errors) =
        crate::agent::permissions::store::load_layers(&loaded.files, project_trusted);
    for error in errors {
        let _ = writeln!(err, "ybs: warning: permission rules not used: {error}");
    }
    agent.permissions = crate::agent::permissions::Permissions::new(layers);
    agent.approval = config.safety.approval;
    agent.network = config.safety.network;
    agent.rule_files = crate::agent::permissions::RuleFiles {
        project: Some(host.locations.cwd.join(".ybs.json")),
        user: host.locations.user_file(),
    };
    // Say now, not at the model's first command, when commands cannot run sandboxed.
    if agent.registry.is_enabled("run_shell") && !dry_run {
        let context = &agent.tool_context;
        if let Err(error) = ybs_tools::shell::probe(&context.shell, &context.sandbox) {
            let _ = writeln!(
                err,
                "ybs: warning: run_shell cannot run commands here: {error}"
            );
        }
    }
    Ok(agent)
}

/// Says which MCP servers could not be used, and that ybs goes on without them.
pub fn warn_mcp(failures: &[crate::mcp::McpFailure], err: &mut dyn Write) {
    for failure in failures {
        let _ = writeln!(err, "ybs: warning: {failure}; going on without its tools");
    }
}

/// A renderer for `config` writing to a terminal or not.
pub fn renderer(config: &Config, terminal: bool) -> Renderer {
    Renderer::new(RenderOptions::from_ui(
        &config.ui,
        use_color(config.ui.color, terminal),
    ))
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
/// and how to choose another.
pub fn describe(error: &AgentError, config: &Config) -> String {
    let unreachable = matches!(
        error,
        AgentError::Send(SendError::Provider(llm))
            if matches!(llm.kind, ErrorKind::Network | ErrorKind::Timeout)
    );
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
    for line in renderer(config, false).notice(kind, message) {
        let _ = writeln!(out, "{line}");
    }
}
