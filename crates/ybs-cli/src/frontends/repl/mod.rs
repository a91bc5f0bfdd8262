//! The interactive session: rustyline prompt with persistent history and `\`-continued
//! multi-line input, one agent turn per message, Ctrl-C cancelling the turn (the partial reply
//! is kept), Ctrl-D exiting, slash commands executed. Its parts: the line editor
//! ([`line_editor`]) with its configured keys and vi mode ([`keys`]), reading a message
//! (`read`), the clipboard ([`paste`]), keys typed while a turn runs ([`typeahead`]), the
//! slash commands (read in [`mod@slash`], run in `commands`; `/undo`
//! and `/diff` in [`undo`]), prompt
//! files as commands ([`prompt_files`]), `@path` attachments ([`attach`]), `!command`
//! ([`shell`]), `/last` ([`last`]), `/resume` and `/fork` ([`sessions`]), `/model` and
//! `/provider` ([`switch`]), `/status` ([`status`]), `/jobs` and the jobs stopped at exit
//! (`jobs`), `/review` (`review`), `/init` and the
//! question about a project's settings that wait for trust ([`trust`]).

pub mod attach;
mod commands;
mod jobs;
pub mod keys;
pub mod last;
pub mod line_editor;
pub mod mcp_prompts;
pub mod paste;
pub mod prompt_files;
mod read;
mod review;
pub mod sessions;
pub mod shell;
pub mod slash;
pub mod status;
pub mod switch;
pub mod trust;
pub mod typeahead;
pub mod undo;

use std::io::{self, IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::signal::unix::{SignalKind, signal};
use ybs_tools::shell::status::SandboxStatus;

use crate::cli::Cli;
use crate::render::{LineUi, wrap};
use crate::startup::exit::Failed;
use crate::startup::{images, load, turn};
use commands::{Context, slash};
use slash::{Input, SlashCommand, parse_input};
use typeahead::TypeAhead;
use ybs_agent::Agent;
use ybs_agent::Notice;
use ybs_agent::config::{Config, EditingMode};
use ybs_agent::confirm::ConfirmMode;
use ybs_agent::host::Host;
use ybs_agent::permissions::Layer;

/// What `/init` sends: have the model write the project's AGENTS.md.
const INIT: &str = include_str!("init.md");

/// Runs the REPL until Ctrl-D.
pub fn run(cli: &Cli, host: &Host, out: &mut dyn Write, err: &mut dyn Write) -> Result<u8, Failed> {
    let mut loaded = trust::load_asking(cli, host, out, err)?;
    let picked = match crate::startup::first_run::check(&mut loaded, host, true, err) {
        Ok(note) => note,
        Err(code) => return Ok(code),
    };
    let mut config = loaded.config.clone();
    let (mut agent, mcp_failures) = load::build_agent_reporting(
        (&config, &loaded),
        host,
        ("repl", ConfirmMode::Ask),
        &cli.options,
        err,
    )?;
    let resumed = turn::resume(cli, host, &mut agent)?;
    let mut session_file = host.session_file(resumed.as_deref());
    let prompts = crate::frontends::repl::prompt_files::load(
        &crate::frontends::repl::prompt_files::directories(&host.locations),
    );
    let words = line_editor::Words {
        commands: (slash::names().map(str::to_owned))
            .chain(prompts.by_name.keys().cloned())
            .chain(mcp_prompts::names(&agent.mcp))
            .collect(),
        mentions: attach::resource_mentions(&agent.mcp),
    };
    let (mut editor, edit_slot) = line_editor::new(&host.locations.cwd, words, &config.ui)
        .map_err(|e| Failed(format!("cannot start line editing: {e}")))?;
    for warning in &prompts.warnings {
        let _ = writeln!(err, "{}", wrap::problem("warning", warning));
    }
    let cwd = &host.locations.cwd;
    let mut images = (cli.options.images.iter())
        .map(|path| images::image_part(path, cwd))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failed)?;
    let history = host
        .data_home
        .as_ref()
        .map(|data| data.join("ybs").join("history"));
    if let Some(history) = &history {
        let _ = editor.load_history(history);
    }
    let runtime = load::runtime()?;
    let hangup = watch_hangup(&runtime, err);
    let terminal = io::stdout().is_terminal();
    let shell_sandbox =
        (agent.registry.is_enabled("run_shell") && !cli.options.dry_run).then(|| {
            let context = &agent.tool_context;
            ybs_tools::shell::status::status(&context.shell, &context.sandbox)
        });
    let sandbox_word = match &shell_sandbox {
        Some(status) if status.fully_on() => "sandbox on",
        Some(SandboxStatus::Off) => "sandbox OFF",
        Some(SandboxStatus::Unavailable(_)) => "sandbox unavailable",
        Some(_) => "sandbox partial",
        None if config.safety.sandbox_enabled => "sandbox on",
        None => "sandbox OFF",
    };
    let banner =
        crate::startup::first_run::banner(&config, &agent.limits, sandbox_word, picked.as_deref());
    let _ = writeln!(out, "{}", wrap::to_terminal(&banner));
    // Only what needs the user's attention: `/status` gives the details.
    if let Some(line) = shell_sandbox.as_ref().and_then(SandboxStatus::short) {
        let _ = writeln!(out, "{}", wrap::to_terminal(&line));
    }
    if let Some(path) = &resumed {
        let line = turn::resumed_line(path, &agent.conversation);
        let _ = writeln!(out, "{}", wrap::to_terminal(&line));
        for line in turn::restored_todos(&agent) {
            let _ = writeln!(out, "{line}");
        }
    }
    if cli.options.plan {
        agent.plan_mode = true;
    }
    let source = if resumed.is_some() {
        "resume"
    } else {
        "startup"
    };
    session_event(&mut agent, &config, (&mut *out, &mut *err), |agent, ui| {
        agent.start_session(source, ui);
    });
    let notifier = (terminal)
        .then(|| {
            crate::render::notify::Notifier::for_this_terminal(
                config.ui.notify,
                config.ui.notify_after_seconds,
            )
        })
        .flatten();
    // An approved plan is the next message, sent without reading one.
    let mut pending: Option<String> = None;
    // Text for the next prompt's line: what was typed during a turn and not sent.
    let mut prefill: Option<String> = None;
    loop {
        let text = match pending.take() {
            Some(text) => text,
            None => {
                let prompt = read::prompt(agent.plan_mode, config.ui.editing_mode);
                let mut on_paste = || {
                    match paste::paste(cwd, host.data_home.as_deref(), true) {
                        Ok(paste::Pasted::Text(text)) => return Some(text),
                        Ok(paste::Pasted::Image(part, said)) => {
                            images.push(*part);
                            let _ = writeln!(out, "{}", wrap::to_terminal(&said));
                        }
                        Err(error) => load::notice(&config, Notice::Error, &error, out),
                    }
                    None
                };
                let initial = prefill.take();
                match read::message(&mut editor, &edit_slot, (prompt, initial), &mut on_paste) {
                    Ok(Some(text)) => text,
                    Ok(None) => break,
                    Err(error) => return Err(Failed(format!("cannot read input: {error}"))),
                }
            }
        };
        let _ = editor.add_history_entry(text.as_str());
        if hangup.swap(false, Ordering::SeqCst) {
            reload_tools(&mut agent, &config, out);
        }
        if let Some(command) = shell::command(&text) {
            let painter = load::renderer(&config, terminal).painter();
            if let Err(error) = shell::run(command, &mut agent, &runtime, painter, out) {
                load::notice(&config, Notice::Error, &error, out);
            }
            continue;
        }
        // The rules a prompt file's `allowed-tools` give its own turn, and that turn only.
        let mut turn_rules = Vec::new();
        let invocation = prompts.invoke(&text);
        let server_prompt = match invocation {
            Some(_) => None,
            None => mcp_prompts::invoke(&text, &agent.mcp),
        };
        if let Some(Err(error)) = &server_prompt {
            load::notice(&config, Notice::Error, error, out);
            continue;
        }
        let input = match (invocation, server_prompt) {
            (None, Some(Ok(message))) => Ok(Input::Message(message)),
            (Some(invocation), _) => {
                turn_rules = prompt_files::turn_rules(&invocation, err);
                Ok(Input::Message(invocation.message))
            }
            (None, _) => match parse_input(&text) {
                Ok(Input::Command(SlashCommand::Init)) => Ok(Input::Message(INIT.to_owned())),
                Ok(Input::Command(SlashCommand::Resume(number))) => {
                    let current = sessions::Current {
                        agent: &mut agent,
                        file: &mut session_file,
                    };
                    let mut ask = |question: &str| editor.readline(question).ok();
                    if let Err(error) = sessions::resume(host, current, number, &mut ask, out) {
                        load::notice(&config, Notice::Error, &error, out);
                    }
                    continue;
                }
                Ok(Input::Command(SlashCommand::Exit)) => break,
                Ok(Input::Command(SlashCommand::Review(range))) => {
                    let cwd = host.locations.cwd.clone();
                    review::run(&mut agent, &config, &runtime, range.as_deref(), &cwd, out);
                    continue;
                }
                Ok(Input::Command(SlashCommand::Image(path))) => {
                    match images::image_part(&path, cwd) {
                        Ok(part) => {
                            images.push(part);
                            let shown =
                                crate::render::inert(&path.display().to_string()).into_owned();
                            let _ = writeln!(out, "image {shown} attached to the next message");
                        }
                        Err(error) => load::notice(&config, Notice::Error, &error, out),
                    }
                    continue;
                }
                Ok(Input::Command(SlashCommand::Paste)) => {
                    match paste::paste(cwd, host.data_home.as_deref(), false) {
                        Ok(paste::Pasted::Image(part, said)) => {
                            images.push(*part);
                            let _ = writeln!(out, "{}", wrap::to_terminal(&said));
                        }
                        Ok(paste::Pasted::Text(_)) => {}
                        Err(error) => load::notice(&config, Notice::Error, &error, out),
                    }
                    continue;
                }
                Ok(Input::Command(SlashCommand::Vim)) => {
                    config.ui.editing_mode = keys::toggled(config.ui.editing_mode);
                    rustyline::config::Configurer::set_edit_mode(
                        &mut editor,
                        keys::edit_mode(config.ui.editing_mode),
                    );
                    let said = match config.ui.editing_mode {
                        EditingMode::Vi => "vi keys on: Esc for normal mode, i to insert",
                        EditingMode::Emacs => "emacs keys on",
                    };
                    let said = format!("{said} (for this session; /vim switches back)");
                    let _ = writeln!(out, "{}", wrap::to_terminal(&said));
                    continue;
                }
                Ok(Input::Command(SlashCommand::Edit)) => {
                    match crate::frontends::repl::line_editor::edit("") {
                        Ok(message) => Ok(Input::Message(message)),
                        Err(error) => {
                            load::notice(&config, Notice::Error, &error, out);
                            continue;
                        }
                    }
                }
                other => other,
            },
        };
        match input {
            Ok(Input::Empty) => {}
            Ok(Input::Message(message)) => {
                let (message, unattached) = crate::frontends::repl::attach::expand(
                    &message,
                    &agent.registry,
                    &agent.tool_context,
                );
                for problem in unattached {
                    load::notice(&config, Notice::Warning, &problem, out);
                }
                let baseline = turn::git_baseline(&config, &host.locations.cwd, err);
                let started = std::time::Instant::now();
                let typeahead = TypeAhead::start(agent.steering.clone());
                let result = {
                    // The lock on stdin ends with the turn: reviewing a plan reads it again.
                    let mut stdin = io::stdin().lock();
                    let mut log = io::stdout();
                    let (mut out_around, mut log_around);
                    let (turn_out, turn_log): (&mut dyn Write, &mut dyn Write) = match &typeahead {
                        Some(keys) => {
                            out_around = keys.around(&mut *out);
                            log_around = keys.around(&mut log);
                            (&mut out_around, &mut log_around)
                        }
                        None => (&mut *out, &mut log),
                    };
                    let renderer =
                        load::renderer(&config, terminal).with_tools(agent.registry.clone());
                    let mut ui = LineUi::new(renderer, turn_out, turn_log, &mut stdin)
                        .with_spinner(terminal)
                        .with_notifier(notifier)
                        .with_key_reader(typeahead.as_ref().map(TypeAhead::handle));
                    let with_images = images::message(&message, std::mem::take(&mut images));
                    let granted = (agent.permissions).allow_for_now(Layer::Session, turn_rules);
                    let result = runtime.block_on(load::cancellable(async |token| {
                        ui.watch(token.clone());
                        if let Some(keys) = &typeahead {
                            keys.watch(token.clone());
                        }
                        agent.turn_message(with_images, &mut ui, &token).await
                    }));
                    agent.permissions.take_back(Layer::Session, &granted);
                    result
                };
                let typed = typeahead.map(TypeAhead::finish).unwrap_or_default();
                let cancelled =
                    !matches!(&result, Ok(report) if report.stop != ybs_agent::Stop::Cancelled);
                if let Some(notifier) = notifier.filter(|n| n.long_enough(started.elapsed())) {
                    let _ = write!(out, "{}", notifier.sequence("ybs: the turn is done"));
                }
                match result {
                    Ok(report) => {
                        turn::after_turn(
                            &mut agent,
                            &report,
                            &message,
                            &config,
                            session_file.as_deref(),
                            baseline.as_ref(),
                            err,
                        );
                        let proposed = agent.plan_mode
                            && report.stop == ybs_agent::Stop::Finished
                            && !report.reply.trim().is_empty();
                        if proposed && let Some(plan) = review_plan(&mut editor, &report.reply, out)
                        {
                            agent.plan_mode = false;
                            let _ = writeln!(out, "plan mode off: carrying out the plan");
                            pending = Some(ybs_agent::plan::approved(&plan));
                        }
                    }
                    Err(error) => {
                        let text = load::describe(&error, &config);
                        let had_images = (agent.conversation.last()).is_some_and(|last| {
                            last.parts
                                .iter()
                                .any(|p| matches!(p, ybs_core::Part::Image(_)))
                        });
                        let text = images::explain(text, had_images, &config.llm.model);
                        let _ = writeln!(err, "{}", wrap::problem("error", &text));
                    }
                }
                let left = typeahead::after_turn(typed, agent.steering.take(), cancelled, out);
                // A draft kept from an earlier turn stays, ahead of this one's.
                prefill = match (prefill.take(), left.prefill) {
                    (Some(earlier), Some(now)) => Some(format!("{earlier}\n{now}")),
                    (earlier, now) => earlier.or(now),
                };
                match (&pending, left.send) {
                    (None, send) => pending = send,
                    // An approved plan goes first; what was queued waits at the prompt.
                    (Some(_), Some(send)) => prefill = Some(send),
                    (Some(_), None) => {}
                }
            }
            Ok(Input::Command(command)) => {
                let help = command == SlashCommand::Help;
                let context = Context {
                    host,
                    loaded: &loaded,
                    runtime: &runtime,
                    sandbox: shell_sandbox.as_ref(),
                    mcp_failures: &mcp_failures,
                };
                slash(
                    command,
                    &context,
                    &mut agent,
                    &mut config,
                    &mut session_file,
                    out,
                );
                if help {
                    // Prompt files are named by whoever wrote them (a cloned project).
                    let more = format!(
                        "{}{}",
                        keys::help(&config.ui.keys, config.ui.editing_mode),
                        crate::render::inert_lines(&prompts.help())
                    );
                    let _ = write!(out, "{}", wrap::to_terminal(&more));
                }
            }
            Err(error) => load::notice(&config, Notice::Error, &error.to_string(), out),
        }
    }
    if let Some(history) = &history {
        if let Some(dir) = history.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = editor.save_history(history);
    }
    // The session's jobs end with it; say which were still running.
    if let Some(line) = jobs::stopped_at_exit(&agent.tool_context.jobs.stop_all()) {
        let _ = writeln!(out, "{}", wrap::to_terminal(&line));
    }
    session_event(&mut agent, &config, (&mut *out, &mut *err), |agent, ui| {
        agent.end_session("exit", ui);
    });
    Ok(0)
}

/// Runs a session's start or end hooks with a terminal UI that reads nothing.
fn session_event(
    agent: &mut Agent,
    config: &Config,
    (out, err): (&mut dyn Write, &mut dyn Write),
    event: impl FnOnce(&mut Agent, &mut LineUi<'_>),
) {
    if agent.hooks.session_start.is_empty() && agent.hooks.session_end.is_empty() {
        return;
    }
    let mut no_input = io::empty();
    let mut ui = LineUi::new(load::renderer(config, false), out, err, &mut no_input);
    event(agent, &mut ui);
}

/// Reloads the external tools (`/reload-tools`, SIGHUP) and says what was loaded.
fn reload_tools(agent: &mut Agent, config: &Config, out: &mut dyn Write) {
    let report = agent.registry.reload();
    let loaded = if report.loaded.is_empty() {
        "none".to_owned()
    } else {
        report.loaded.join(", ")
    };
    let _ = writeln!(out, "external tools reloaded: {loaded}");
    for error in report.errors {
        load::notice(config, Notice::Warning, &error.to_string(), out);
    }
}

/// A flag raised by SIGHUP; the REPL reloads the external tools before its next message.
fn watch_hangup(runtime: &tokio::runtime::Runtime, err: &mut dyn Write) -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let raised = flag.clone();
    let _guard = runtime.enter();
    match signal(SignalKind::hangup()) {
        Ok(mut hangups) => {
            runtime.spawn(async move {
                while hangups.recv().await.is_some() {
                    raised.store(true, Ordering::SeqCst);
                }
            });
        }
        Err(error) => {
            let _ = writeln!(
                err,
                "ybs: warning: cannot watch SIGHUP to reload tools: {error}"
            );
        }
    }
    flag
}

/// Asks whether the plan the model proposed is approved: `y` takes it as it is, `e` opens it
/// in the editor first; anything else keeps planning (`None`).
fn review_plan(
    editor: &mut crate::frontends::repl::line_editor::LineEditor,
    plan: &str,
    out: &mut dyn Write,
) -> Option<String> {
    let answer = editor
        .readline("approve this plan? [y]es / [e]dit / [n]o, keep planning: ")
        .ok()?;
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Some(plan.to_owned()),
        "e" | "edit" => match crate::frontends::repl::line_editor::edit(plan) {
            Ok(edited) if !edited.trim().is_empty() => Some(edited),
            Ok(_) => None,
            Err(error) => {
                let _ = writeln!(out, "ybs: error: {error}");
                None
            }
        },
        _ => {
            let _ = writeln!(out, "still in plan mode: say what to change, or /plan off");
            None
        }
    }
}
