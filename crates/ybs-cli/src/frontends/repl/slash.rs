//! Slash commands typed at the REPL prompt (`/model NAME`, `/save [FILE]`...), parsed into a
//! [`SlashCommand`]. A line that starts with `//` is a message starting with `/`.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::render::wrap;

/// A parsed slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlashCommand {
    /// `/provider list|current|NAME [MODEL]`.
    Provider(ProviderAction),
    /// `/model NAME`: another model of the same provider (`/model` alone shows the current one).
    Model(String),
    /// `/config`: the effective configuration.
    Config,
    /// `/tools`: the tools the model sees.
    Tools,
    /// `/skills`: the skills the model may read.
    Skills,
    /// `/agents`: the custom sub-agents the model may run.
    Agents,
    /// `/help`: the commands.
    Help,
    /// `/clear`: forget the conversation.
    Clear,
    /// `/compact`: summarize the older history now.
    Compact,
    /// `/usage`: tokens and cost so far.
    Usage,
    /// `/save [FILE]`: save the session as a `.chat` file.
    Save(Option<PathBuf>),
    /// `/reload-tools`: reload the external tools.
    ReloadTools,
    /// `/undo`: revert the files of the last turn and drop it from the conversation.
    Undo,
    /// `/diff`: the whole diff of the last turn.
    Diff,
    /// `/effort [LEVEL|off]`: show or set the reasoning effort (`Some(None)`: off).
    Effort(Option<Option<ybs_core::ReasoningEffort>>),
    /// `/plan [on|off]`: switch plan mode (`None`: toggle).
    Plan(Option<bool>),
    /// `/approval [MODE]`: show or set the approval mode.
    Approval(Option<String>),
    /// `/permissions [remove N]`: list the rules, or remove rule N (from 1).
    Permissions(Option<usize>),
    /// `/last`: the whole result of the last tool call.
    Last,
    /// `/resume [N]`: pick a saved session of this project and continue it.
    Resume(Option<usize>),
    /// `/fork`: go on in a new session that starts as a copy of this one.
    Fork,
    /// `/init`: have the model write an AGENTS.md for the project.
    Init,
    /// `/image PATH`: attach an image to the next message.
    Image(PathBuf),
    /// `/edit`: write the message in `$VISUAL` or `$EDITOR`.
    Edit,
    /// `/paste`: attach the clipboard's image to the next message.
    Paste,
    /// `/vim`: switch the line editor between vi and emacs keys for this session.
    Vim,
    /// `/status`: the model, window, modes, sandbox, trust and MCP servers on one screen.
    Status,
    /// `/jobs`: the session's background jobs.
    Jobs,
    /// `/review [RANGE]`: a read-only review of the working tree's changes (`None`), a
    /// commit or a range.
    Review(Option<String>),
    /// `/exit` or `/quit`: leave, as Ctrl-D does.
    Exit,
}

/// What `/provider` does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderAction {
    /// `/provider list`: the providers this build knows.
    List,
    /// `/provider current`: the provider and model in use.
    Current,
    /// `/provider NAME [MODEL]`: switch, keeping the conversation.
    Switch {
        /// The provider.
        name: String,
        /// The model; the provider's default when absent.
        model: Option<String>,
    },
}

/// One line typed at the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// Nothing but whitespace.
    Empty,
    /// A message for the model.
    Message(String),
    /// A slash command.
    Command(SlashCommand),
}

/// A slash command that cannot be run as typed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SlashError {
    /// No such command.
    #[error(
        "unknown command /{name}{}; known commands: {}",
        suggestion(name),
        known_names()
    )]
    Unknown {
        /// The name typed, without the slash.
        name: String,
    },
    /// A required argument is missing.
    #[error("/{name} needs an argument; usage: {usage}")]
    MissingArgument {
        /// The command.
        name: &'static str,
        /// Its usage line.
        usage: &'static str,
    },
    /// More arguments than the command takes.
    #[error("/{name} takes fewer arguments; usage: {usage}")]
    TooManyArguments {
        /// The command.
        name: &'static str,
        /// Its usage line.
        usage: &'static str,
    },
}

/// Each command: name, usage line, what it does. `/help`, the "unknown command" list and Tab
/// completion read this table; a new command is a row here and an arm in [`parse_command`].
pub const COMMANDS: &[(&str, &str, &str)] = &[
    (
        "provider",
        "/provider list|current|NAME [MODEL]",
        "list providers, show the current one, or switch (the conversation is kept)",
    ),
    (
        "model",
        "/model [NAME]",
        "show the model, or switch to another model of the same provider",
    ),
    (
        "status",
        "/status",
        "show the model, context window, modes, sandbox, trust and MCP servers",
    ),
    (
        "config",
        "/config",
        "show the effective configuration and where each value came from",
    ),
    ("tools", "/tools", "list the tools the model can call"),
    (
        "skills",
        "/skills",
        "list the skills the model can read, and where each is",
    ),
    (
        "agents",
        "/agents",
        "list the custom sub-agents the model can hand a task to",
    ),
    ("help", "/help", "show this help"),
    (
        "clear",
        "/clear",
        "forget the conversation and start afresh (/undo still takes back earlier turns)",
    ),
    (
        "compact",
        "/compact",
        "summarize the older part of the conversation now",
    ),
    (
        "usage",
        "/usage",
        "show the tokens and cost of this session",
    ),
    (
        "save",
        "/save [FILE]",
        "save the session as a .chat file (default: its session file)",
    ),
    (
        "reload-tools",
        "/reload-tools",
        "reload the external tools (as SIGHUP does)",
    ),
    (
        "undo",
        "/undo",
        "put back the files the last turn changed and drop the turn (again for earlier ones)",
    ),
    ("diff", "/diff", "show everything the last turn changed"),
    (
        "effort",
        "/effort [minimal|low|medium|high|off]",
        "show or set how hard a reasoning model thinks",
    ),
    (
        "approval",
        "/approval [ask|auto-edit|full-auto]",
        "show or set what runs without asking",
    ),
    (
        "permissions",
        "/permissions [remove N]",
        "list the allow and deny rules, or remove rule N",
    ),
    (
        "plan",
        "/plan [on|off]",
        "plan mode: the model only reads and proposes a plan for you to approve",
    ),
    (
        "last",
        "/last",
        "show the whole result of the last tool call (the terminal shows a summary)",
    ),
    (
        "resume",
        "/resume [N]",
        "list this project's saved sessions and continue the one picked",
    ),
    (
        "fork",
        "/fork",
        "go on in a new session that starts as a copy of this one",
    ),
    (
        "init",
        "/init",
        "have the model write an AGENTS.md for this project (asks before writing)",
    ),
    (
        "edit",
        "/edit",
        "write the message in $VISUAL or $EDITOR (Ctrl-G does it with what is typed)",
    ),
    (
        "paste",
        "/paste",
        "attach the clipboard's image to the next message (Ctrl-V does it while typing)",
    ),
    (
        "vim",
        "/vim",
        "switch the line editor between vi and emacs keys (ui.editing_mode sets the default)",
    ),
    (
        "image",
        "/image PATH",
        "attach an image (PNG, JPEG, GIF or WebP) to the next message",
    ),
    (
        "review",
        "/review [REV|RANGE]",
        "review the uncommitted changes, a commit or a range (HEAD~3..), read-only",
    ),
    (
        "jobs",
        "/jobs",
        "list the background jobs: state, running time, command, last lines",
    ),
    ("exit", "/exit", "leave ybs, as Ctrl-D does (also /quit)"),
];

/// Other names of commands: (alias, command).
pub const ALIASES: &[(&str, &str)] = &[("quit", "exit")];

/// Every name Tab completes after a `/`: the commands and their aliases.
pub fn names() -> impl Iterator<Item = &'static str> {
    (COMMANDS.iter().map(|(name, _, _)| *name)).chain(ALIASES.iter().map(|(alias, _)| *alias))
}

/// Reads one line typed at the prompt.
pub fn parse_input(line: &str) -> Result<Input, SlashError> {
    let trimmed = line.trim();
    if trimmed.is_empty() {
        return Ok(Input::Empty);
    }
    if let Some(literal) = trimmed.strip_prefix("//") {
        return Ok(Input::Message(format!("/{literal}")));
    }
    match trimmed.strip_prefix('/') {
        Some(command) => parse_command(command).map(Input::Command),
        None => Ok(Input::Message(line.to_owned())),
    }
}

/// Parses the text after the slash.
pub fn parse_command(text: &str) -> Result<SlashCommand, SlashError> {
    let text = text.trim();
    let (name, rest) = match text.split_once(char::is_whitespace) {
        Some((name, rest)) => (name, rest.trim()),
        None => (text, ""),
    };
    let args: Vec<&str> = rest.split_whitespace().collect();
    let name = name.to_ascii_lowercase();
    let name = (ALIASES.iter())
        .find(|(alias, _)| *alias == name)
        .map_or(name.as_str(), |(_, command)| *command);
    let Some(&(known, usage, _)) = COMMANDS.iter().find(|(known, _, _)| *known == name) else {
        return Err(SlashError::Unknown {
            name: name.to_owned(),
        });
    };
    let missing = SlashError::MissingArgument { name: known, usage };
    let too_many = SlashError::TooManyArguments { name: known, usage };
    let no_args = |command: SlashCommand| {
        if args.is_empty() {
            Ok(command)
        } else {
            Err(too_many.clone())
        }
    };
    match known {
        "provider" => match args.as_slice() {
            [] => Err(missing),
            ["list"] => Ok(SlashCommand::Provider(ProviderAction::List)),
            ["current"] => Ok(SlashCommand::Provider(ProviderAction::Current)),
            ["list" | "current", ..] => Err(too_many),
            [name] => Ok(SlashCommand::Provider(ProviderAction::Switch {
                name: (*name).to_owned(),
                model: None,
            })),
            [name, model] => Ok(SlashCommand::Provider(ProviderAction::Switch {
                name: (*name).to_owned(),
                model: Some((*model).to_owned()),
            })),
            _ => Err(too_many),
        },
        "model" => match args.as_slice() {
            [] => Ok(SlashCommand::Provider(ProviderAction::Current)),
            [model] => Ok(SlashCommand::Model((*model).to_owned())),
            _ => Err(too_many),
        },
        // The rest of the line is the file, spaces included.
        "image" if rest.is_empty() => Err(missing),
        "image" => Ok(SlashCommand::Image(PathBuf::from(rest))),
        "edit" => no_args(SlashCommand::Edit),
        "vim" => no_args(SlashCommand::Vim),
        "paste" => no_args(SlashCommand::Paste),
        "status" => no_args(SlashCommand::Status),
        "exit" => no_args(SlashCommand::Exit),
        "jobs" => no_args(SlashCommand::Jobs),
        "review" => match args.as_slice() {
            [] => Ok(SlashCommand::Review(None)),
            [range] => Ok(SlashCommand::Review(Some((*range).to_owned()))),
            _ => Err(too_many),
        },
        // The rest of the line is the file, spaces included.
        "save" => Ok(SlashCommand::Save(
            (!rest.is_empty()).then(|| PathBuf::from(rest)),
        )),
        "config" => no_args(SlashCommand::Config),
        "tools" => no_args(SlashCommand::Tools),
        "skills" => no_args(SlashCommand::Skills),
        "agents" => no_args(SlashCommand::Agents),
        "help" => no_args(SlashCommand::Help),
        "clear" => no_args(SlashCommand::Clear),
        "compact" => no_args(SlashCommand::Compact),
        "usage" => no_args(SlashCommand::Usage),
        "undo" => no_args(SlashCommand::Undo),
        "last" => no_args(SlashCommand::Last),
        "fork" => no_args(SlashCommand::Fork),
        "init" => no_args(SlashCommand::Init),
        "resume" => match args.as_slice() {
            [] => Ok(SlashCommand::Resume(None)),
            [number] => number
                .parse::<usize>()
                .map(|n| SlashCommand::Resume(Some(n)))
                .map_err(|_| missing.clone()),
            _ => Err(too_many),
        },
        "diff" => no_args(SlashCommand::Diff),
        "effort" => match args.as_slice() {
            [] => Ok(SlashCommand::Effort(None)),
            ["off" | "none" | "default"] => Ok(SlashCommand::Effort(Some(None))),
            [level] => serde_json::from_value(serde_json::Value::String(level.to_lowercase()))
                .map(|effort| SlashCommand::Effort(Some(Some(effort))))
                .map_err(|_| missing.clone()),
            _ => Err(too_many),
        },
        "approval" => match args.as_slice() {
            [] => Ok(SlashCommand::Approval(None)),
            [mode] => Ok(SlashCommand::Approval(Some((*mode).to_owned()))),
            _ => Err(too_many),
        },
        "permissions" => match args.as_slice() {
            [] => Ok(SlashCommand::Permissions(None)),
            ["remove", number] => number
                .parse::<usize>()
                .map(|n| SlashCommand::Permissions(Some(n)))
                .map_err(|_| missing.clone()),
            _ => Err(too_many),
        },
        "plan" => match args.as_slice() {
            [] => Ok(SlashCommand::Plan(None)),
            ["on"] => Ok(SlashCommand::Plan(Some(true))),
            ["off"] => Ok(SlashCommand::Plan(Some(false))),
            _ => Err(too_many),
        },
        _ => no_args(SlashCommand::ReloadTools),
    }
}

/// The text `/help` prints: every command with its usage and purpose, the purposes in a
/// column whose lines wrap under it to `width` (a terminal's columns; `None`: no wrapping).
pub fn help_text(width: Option<usize>) -> String {
    let column = COMMANDS
        .iter()
        .map(|(_, usage, _)| usage.len())
        .max()
        .unwrap_or(0);
    let mut text = String::from("Commands:\n");
    for (_, usage, what) in COMMANDS {
        let row = format!("  {usage:<column$}  {what}");
        let _ = writeln!(text, "{}", wrap::hanging(&row, width, column + 4));
    }
    text.push_str("Start a message with // to send a line that begins with /.\n");
    text.push_str(
        "Start it with ! to run a shell command in the sandbox (!cargo test): its output is \
         shown and added to the conversation.\n",
    );
    text.push_str(&ybs_agent::tool_help::tools_help());
    wrap::wrap(&text, width)
}

fn known_names() -> String {
    COMMANDS
        .iter()
        .map(|(name, _, _)| format!("/{name}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn suggestion(typed: &str) -> String {
    let matches: Vec<&str> = COMMANDS
        .iter()
        .map(|(name, _, _)| *name)
        .filter(|name| !typed.is_empty() && name.starts_with(typed))
        .collect();
    match matches.as_slice() {
        [only] => format!(" (did you mean /{only}?)"),
        _ => String::new(),
    }
}

#[cfg(test)]
#[path = "slash_tests.rs"]
mod tests;
