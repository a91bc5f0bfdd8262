//! The commands that run the agent or its tools: `exec`, `ask`, `tools`, `tool`, and what
//! they share (loading, the Ctrl-C token, sessions, auto-commit, error wording).

use std::io::{self, BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;
use ybs_chatfile::{ChatMessage, Expander, append, from_core};
use ybs_context_budget::SendError;
use ybs_core::{ErrorKind, Role};

use crate::agent::confirm::{Answer, ConfirmMode, Settle, prompt};
use crate::agent::setup::{self, Surroundings};
use crate::agent::{Agent, AgentError, LineUi, Stop, TurnReport};
use crate::cli::Cli;
use crate::config::{Config, LoadedConfig};
use crate::frontends::ask::tool_lines;
use crate::project::git::{CommitOutcome, Git, summary_line};
use crate::render::{Notice, RenderOptions, Renderer, use_color};
use crate::run::Host;
use crate::session;

/// A failure already worded for the user; the exit code is 1.
pub struct Failed(pub String);

/// Loads the configuration, printing its warnings.
pub fn load(cli: &Cli, host: &Host, err: &mut dyn Write) -> Result<LoadedConfig, Failed> {
    let loaded = crate::config::load(&host.locations, &host.env, &cli.options.overrides())
        .map_err(|failure| Failed(failure.to_string()))?;
    for warning in &loaded.warnings {
        let _ = writeln!(err, "ybs: warning: {warning}");
    }
    if let Some(warning) = crate::render::highlight::set_theme(&loaded.config.ui.theme) {
        let _ = writeln!(err, "ybs: warning: {warning}");
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
    config: &Config,
    host: &Host,
    (command, confirm): (&str, ConfirmMode),
    dry_run: bool,
    err: &mut dyn Write,
) -> Result<Agent, Failed> {
    let (mut agent, report) = setup::agent(config, &surroundings(host), confirm, dry_run)
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
        let _ = writeln!(err, "ybs: warning: {error}");
    }
    warn_mcp(&report.mcp, err);
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

/// After a turn: say what it changed, save the session and auto-commit.
pub fn after_turn(
    agent: &mut Agent,
    report: &TurnReport,
    request: &str,
    config: &Config,
    session_file: Option<&Path>,
    baseline: Option<&crate::project::git::Baseline>,
    log: &mut dyn Write,
) {
    if let Some(turn) = agent.journal.last() {
        let painter = crate::render::style::Painter {
            color: use_color(config.ui.color, io::stderr().is_terminal()),
        };
        for line in
            crate::session::undo::view::summary(turn, &agent.tool_context.working_dir, painter)
        {
            let _ = writeln!(log, "{line}");
        }
    }
    if let Some(path) = session_file {
        // What the session was before this save is what undoing the turn puts back.
        let before = crate::session::undo::FileRecord::now(path);
        if !agent
            .journal
            .session_is_ours(path, before.before.as_deref())
        {
            let warning = session_changed_elsewhere(agent, path);
            let _ = writeln!(log, "ybs: warning: {warning}");
        }
        match session::save(path, &agent.conversation) {
            Ok(()) => agent.journal.saved_session(before),
            Err(error) => {
                let _ = writeln!(log, "ybs: warning: {error}");
            }
        }
        if let Some(error) = agent.journal.disk_error.take() {
            let _ = writeln!(log, "ybs: warning: {error}");
        }
    }
    let Some(baseline) = baseline else { return };
    if report.changed.is_empty() {
        return;
    }
    let prefix = &config.git.commit_message_prefix;
    match Git::default().commit_turn(baseline, &report.changed, prefix, &summary_line(request)) {
        Ok(CommitOutcome::Committed { id, files }) => {
            let short: String = id.chars().take(8).collect();
            let _ = writeln!(log, "ybs: committed {} file(s) as {short}", files.len());
            agent.journal.set_commit(id, baseline.root.clone());
            if let Some(error) = agent.journal.disk_error.take() {
                let _ = writeln!(log, "ybs: warning: {error}");
            }
        }
        Ok(CommitOutcome::Skipped(crate::project::git::Skip::StagedBefore)) => {
            let _ = writeln!(
                log,
                "ybs: not committed: the index had staged changes before the turn"
            );
        }
        Ok(CommitOutcome::Skipped(crate::project::git::Skip::NothingChanged)) => {}
        Err(error) => {
            let _ = writeln!(log, "ybs: warning: {error}");
        }
    }
}

/// The session file changed since this run last saved it (`ybs undo` from another terminal,
/// an editor): keeps that version in a copy before a save replaces it; returns the warning.
pub fn session_changed_elsewhere(agent: &Agent, path: &Path) -> String {
    let kept = agent.journal.kept_dir();
    let copy = match crate::session::undo::revert::keep_copy(kept.as_deref(), path) {
        Ok(Some(copy)) => format!("that version is kept in {}", copy.display()),
        Ok(None) => "it was removed".to_owned(),
        Err(error) => format!("no copy of it could be kept: {error}"),
    };
    format!(
        "the session {} changed since this session saved it (`ybs undo` or an edit \
         elsewhere?); it is saved again from this session's conversation, which still holds \
         any turn undone there; {copy}",
        path.display()
    )
}

/// The work tree state before a turn, when `git.auto_commit` is on.
pub fn git_baseline(
    config: &Config,
    cwd: &Path,
    log: &mut dyn Write,
) -> Option<crate::project::git::Baseline> {
    if !config.git.auto_commit {
        return None;
    }
    match Git::default().baseline(cwd) {
        Ok(baseline) => baseline,
        Err(error) => {
            let _ = writeln!(log, "ybs: warning: {error}");
            None
        }
    }
}

/// The session file to write: the resumed one, or a new one for this directory.
pub fn session_file(host: &Host, resume: Option<&Path>) -> Option<PathBuf> {
    if let Some(path) = resume {
        return Some(path.to_owned());
    }
    let data = host.data_home.as_ref()?;
    let dir = session::sessions_dir(data, &host.locations.cwd);
    Some(session::new_session_path(&dir))
}

/// Which session `--resume [FILE]` names, loaded into `agent`.
pub fn resume(cli: &Cli, host: &Host, agent: &mut Agent) -> Result<Option<PathBuf>, Failed> {
    let Some(choice) = &cli.resume else {
        return Ok(None);
    };
    let cwd = &host.locations.cwd;
    let path = match choice {
        Some(path) => cwd.join(path),
        None => {
            let data = (host.data_home.as_ref()).ok_or_else(|| {
                Failed("--resume needs HOME or XDG_DATA_HOME to find sessions".into())
            })?;
            session::newest(&session::sessions_dir(data, cwd), cwd)
                .map_err(|err| Failed(err.to_string()))?
        }
    };
    agent.conversation = session::load(&path, cwd).map_err(|err| Failed(err.to_string()))?;
    Ok(Some(path))
}

/// `ybs exec`: one task, non-interactively.
pub fn exec(
    cli: &Cli,
    host: &Host,
    args: &crate::frontends::exec::json::ExecArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, Failed> {
    let task = match crate::frontends::exec::json::read_task(args.prompt, &mut io::stdin()) {
        Ok(task) => task,
        Err(message) => {
            let _ = writeln!(err, "ybs: error: {message}");
            return Ok(crate::frontends::exec::json::USAGE_ERROR);
        }
    };
    let mut loaded = load(cli, host, err)?;
    match crate::first_run::check(&mut loaded, host, err) {
        Ok(Some(note)) => {
            let _ = writeln!(err, "ybs: using {note}");
        }
        Ok(None) => {}
        Err(code) => return Ok(code),
    }
    let config = &loaded.config;
    let cwd = &host.locations.cwd;
    let images = (cli.options.images.iter())
        .map(|path| crate::images::image_part(path, cwd))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failed)?;
    let had_images = !images.is_empty();
    let mode = if args.yes {
        ConfirmMode::AssumeYes
    } else {
        ConfirmMode::Deny
    };
    let mut agent = build_agent(config, host, ("exec", mode), cli.options.dry_run, err)?;
    let resumed = resume(cli, host, &mut agent)?;
    let session_file = session_file(host, resumed.as_deref());
    let baseline = git_baseline(config, &host.locations.cwd, err);
    let terminal = io::stdout().is_terminal();
    let mut no_input = io::empty();
    let result = {
        let mut ui =
            LineUi::new(renderer(config, terminal), out, err, &mut no_input).with_spinner(terminal);
        let runtime = runtime()?;
        let message = crate::images::message(&task, images);
        runtime.block_on(cancellable(async |token| {
            agent.turn_message(message, &mut ui, &token).await
        }))
    };
    let report = result.map_err(|error| {
        let text = describe(&error, config);
        Failed(crate::images::explain(text, had_images, &config.llm.model))
    })?;
    after_turn(
        &mut agent,
        &report,
        &task,
        config,
        session_file.as_deref(),
        baseline.as_ref(),
        err,
    );
    if let Some(path) = args.last_message {
        crate::frontends::exec::json::write_last_message(
            &host.locations.cwd.join(path),
            &report.reply,
        )
        .map_err(Failed)?;
    }
    Ok(crate::frontends::exec::json::exit_code(report.stop))
}

/// `ybs ask --chat FILE [QUESTION]`.
pub fn ask(
    cli: &Cli,
    host: &Host,
    chat: &Path,
    question: Option<&str>,
    yes: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, Failed> {
    let loaded = load(cli, host, err)?;
    let mut config = loaded.config.clone();
    let cwd = &host.locations.cwd;
    let path = cwd.join(chat);
    // The chat file is one of the files the turn writes: `ybs undo` puts it back too.
    let chat_before = crate::session::undo::FileRecord::now(&path);
    if let Some(question) = question {
        append(&path, &[ChatMessage::new("user", question)]).map_err(|e| Failed(e.to_string()))?;
    }
    let mut expansion = Expander::new(cwd)
        .expand_file(&path)
        .map_err(|e| Failed(e.to_string()))?;
    let options = expansion.options.effective();
    if let Some(model) = options.get("model") {
        config.llm.model = model.clone();
    }
    // Scout's `backend` and named `endpoint`s map to ybs providers where the names match;
    // an `endpoint` that is a URL is the endpoint itself.
    for key in ["backend", "endpoint"] {
        let Some(value) = options.get(key) else {
            continue;
        };
        if value.starts_with("http://") || value.starts_with("https://") {
            config.llm.endpoint = Some(value.clone());
        } else if value.parse::<ybs_providers::ProviderKind>().is_ok() {
            config.llm.provider = value.clone();
        } else {
            let _ = writeln!(
                err,
                "ybs: warning: {key} `{value}` of {} is not a ybs provider or URL; using {} \
                 from the configuration",
                chat.display(),
                config.llm.provider
            );
        }
    }
    let format = match options.get("format") {
        Some(format) => Some(response_format(format).map_err(Failed)?),
        None => None,
    };
    let mode = if yes {
        ConfirmMode::AssumeYes
    } else {
        ConfirmMode::Deny
    };
    tool_lines::keep_named_servers(&expansion, &mut config);
    let mut agent = build_agent(&config, host, ("ask", mode), cli.options.dry_run, err)?;
    agent.journal.before_next_turn(chat_before);
    let failures = tool_lines::offer_tools(&expansion, &mut agent, cwd).map_err(Failed)?;
    warn_mcp(&failures, err);
    tool_lines::run_tasks(&mut expansion, &mut agent).map_err(Failed)?;
    agent.settings.response_format = format;
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let settings = &mut agent.settings;
    for warning in crate::frontends::ask::options::apply(&expansion.options, chat, &text, settings)
    {
        let _ = writeln!(err, "ybs: warning: {warning}");
    }
    agent.conversation = expansion
        .to_core_messages()
        .map_err(|e| Failed(e.to_string()))?;
    crate::agent::prepare::chat(&mut agent);
    let start = (agent.conversation.iter())
        .rposition(|message| message.role == Role::User)
        .unwrap_or(0);
    let terminal = io::stdout().is_terminal();
    let mut no_input = io::empty();
    let result = {
        let mut ui = LineUi::new(renderer(&config, terminal), out, err, &mut no_input);
        let runtime = runtime()?;
        runtime.block_on(cancellable(async |token| {
            agent.run_from(start, &mut ui, &token).await
        }))
    };
    let report = result.map_err(|error| Failed(describe(&error, &config)))?;
    let added = agent
        .conversation
        .get(report.start + 1..)
        .unwrap_or_default();
    let appended = append(&path, &from_core(added)).map_err(|e| Failed(e.to_string()));
    agent.journal.refresh_last();
    if let Some(error) = agent.journal.disk_error.take() {
        let _ = writeln!(err, "ybs: warning: {error}");
    }
    appended?;
    Ok(if report.stop == Stop::Finished { 0 } else { 1 })
}

/// A chat file's `format:` option: `json`, `:json` or `json_object` for any JSON object, or
/// a JSON Schema object.
fn response_format(format: &str) -> Result<ybs_core::ResponseFormat, String> {
    let format = format.trim();
    match format {
        "json" | ":json" | "json_object" => Ok(ybs_core::ResponseFormat::Json),
        "text" | ":text" => Ok(ybs_core::ResponseFormat::Text),
        _ => match serde_json::from_str::<serde_json::Value>(format) {
            Ok(schema) if schema.is_object() => Ok(ybs_core::ResponseFormat::JsonSchema {
                name: "response".into(),
                schema,
                strict: false,
            }),
            _ => Err(format!(
                "format `{format}` is not json, json_object, text or a JSON Schema object"
            )),
        },
    }
}

/// `ybs tools`: name, source and the first line of the description of each enabled tool.
pub fn tools(
    cli: &Cli,
    host: &Host,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, Failed> {
    let loaded = load(cli, host, err)?;
    let config = &loaded.config;
    let (mut registry, report) = setup::registry(config, host.locations.home.as_deref());
    for error in &report.errors {
        let _ = writeln!(err, "ybs: warning: {error}");
    }
    let mut policy = ybs_tools::ConfirmationPolicy::default();
    let cwd = &host.locations.cwd;
    warn_mcp(
        &setup::add_config_mcp_tools(config, cwd, &mut registry, &mut policy),
        err,
    );
    let specs = registry.specs();
    let width = specs.iter().map(|spec| spec.name.len()).max().unwrap_or(0);
    for spec in specs {
        let source = setup::tool_source(&registry, &spec.name);
        let description = spec.description.lines().next().unwrap_or_default();
        let _ = writeln!(out, "{:width$}  {source:8}  {description}", spec.name);
    }
    Ok(0)
}

/// `ybs tool NAME 'JSON'`: one call through the sandbox and the confirmation policy.
pub fn tool(
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
        let _ = writeln!(err, "ybs: warning: {error}");
    }
    let context =
        setup::tool_context(config, &surroundings(host)).map_err(|e| Failed(e.to_string()))?;
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
    if let ybs_tools::Confirmation::Required { reason } = policy.check(name, &arguments, &context) {
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

/// Prints a notice through a fresh renderer (for messages outside a turn).
pub fn notice(config: &Config, kind: Notice, message: &str, out: &mut dyn Write) {
    for line in renderer(config, false).notice(kind, message) {
        let _ = writeln!(out, "{line}");
    }
}
