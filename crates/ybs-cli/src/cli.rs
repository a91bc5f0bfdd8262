//! The command line: `ybs [OPTIONS] [COMMAND]`.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Args, Parser, Subcommand};
use clap_complete::Shell;

use ybs_agent::config::FlagOverrides;

/// What `ybs --help` says of the interactive session, before the list of tools.
const SESSION_HELP: &str = "In the interactive session: /help lists the commands (Tab completes them); \
                  /status shows the model, modes and sandbox; /exit leaves; !COMMAND runs a shell \
                  command in the sandbox and adds its output to the conversation; /last shows \
                  the last tool result whole (the terminal shows a summary); /resume picks a \
                  saved session, /fork copies this one into a new session; /init has the model \
                  write an AGENTS.md. The terminal bell (or an OSC 9 notification) tells when a \
                  long turn ends or a confirmation waits; ui.notify: false turns it off.";

/// ybs: a local-first terminal coding agent with sandboxed tools.
#[derive(Debug, Clone, PartialEq, Eq, Parser)]
#[command(
    name = "ybs",
    version,
    about,
    long_about = None,
    after_help = format!("{SESSION_HELP}\n\n{}", ybs_agent::tool_help::tools_help())
)]
pub struct Cli {
    /// Options that override the configuration.
    #[command(flatten)]
    pub options: GlobalOptions,
    /// Continue a saved session (default: the newest session of this directory); give a
    /// file as `--resume=FILE`.
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true)]
    pub resume: Option<Option<PathBuf>>,
    /// Continue the newest saved session of this directory (`ybs sessions` lists them)
    #[arg(long = "continue", conflicts_with = "resume")]
    pub continue_newest: bool,
    /// What to do; without a command, ybs starts the interactive session.
    #[command(subcommand)]
    pub command: Option<Command>,
}

impl Cli {
    /// Parses `args` (the program's name first) as [`Parser::try_parse_from`] does; an error
    /// a newcomer is likely to make gets a tip on what to type instead.
    pub fn parse_with_tips<T: Into<OsString>>(
        args: impl IntoIterator<Item = T>,
    ) -> Result<Cli, clap::Error> {
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        Cli::try_parse_from(&args).map_err(|mut error| {
            if let Some(tip) = tip_for(&error, &args) {
                let tip = ContextValue::StyledStrs(vec![tip.into()]);
                error.insert(ContextKind::Suggested, tip);
            }
            error
        })
    }

    /// The session to continue: `Some(None)` the newest (`--resume`, `--continue`),
    /// `Some(Some(FILE))` a file, `None` a new session.
    pub fn resume_choice(&self) -> Option<Option<PathBuf>> {
        match (&self.resume, self.continue_newest) {
            (Some(choice), _) => Some(choice.clone()),
            (None, true) => Some(None),
            (None, false) => None,
        }
    }
}

/// The tip for `error`: `--resume FILE` (a space) reads FILE as a command, since a bare
/// `--resume` is the newest session.
fn tip_for(error: &clap::Error, args: &[OsString]) -> Option<String> {
    if error.kind() != ErrorKind::InvalidSubcommand {
        return None;
    }
    let Some(ContextValue::String(word)) = error.get(ContextKind::InvalidSubcommand) else {
        return None;
    };
    let after_resume = (args.windows(2))
        .any(|pair| pair[0] == "--resume" && pair[1].to_string_lossy() == word.as_str());
    after_resume.then(|| {
        format!("write `ybs --resume={word}` (with `=`: `--resume` alone resumes the newest)")
    })
}

/// The global options; they may come before or after the command.
#[derive(Debug, Clone, Default, PartialEq, Eq, Args)]
pub struct GlobalOptions {
    /// Path to configuration file (read after all others)
    #[arg(short = 'c', long = "config", value_name = "FILE", global = true)]
    pub config: Option<PathBuf>,
    /// Override model from config
    #[arg(short = 'm', long, value_name = "NAME", global = true)]
    pub model: Option<String>,
    /// Override provider (ollama, openai, anthropic, openrouter, ...)
    #[arg(short = 'p', long, value_name = "NAME", global = true)]
    pub provider: Option<String>,
    /// Override API endpoint
    #[arg(long, value_name = "URL", global = true)]
    pub endpoint: Option<String>,
    /// Disable shell sandboxing (DANGEROUS)
    #[arg(long, global = true)]
    pub no_sandbox: bool,
    /// Show tool calls without executing them
    #[arg(long, global = true)]
    pub dry_run: bool,
    /// Trust this project's settings and chat files for this run (see `ybs trust`)
    #[arg(long, global = true)]
    pub trust_project: bool,
    /// How hard a reasoning model thinks: minimal, low, medium, high (llm.reasoning_effort)
    #[arg(long, value_name = "LEVEL", global = true, value_parser = ["minimal", "low", "medium", "high"])]
    pub reasoning_effort: Option<String>,
    /// What runs without asking: ask, auto-edit (edits inside the project), full-auto
    /// (everything, still sandboxed) (safety.approval)
    #[arg(long, value_name = "MODE", global = true, value_parser = ["ask", "auto-edit", "full-auto"])]
    pub approval: Option<String>,
    /// Whether a shell command may ask for the network: off, ask (the user is asked, with
    /// the model's reason), on (safety.network)
    #[arg(long, value_name = "MODE", global = true, value_parser = ["off", "ask", "on"])]
    pub network: Option<String>,
    /// Start in plan mode: the model only reads and proposes a plan to approve
    #[arg(long, global = true)]
    pub plan: bool,
    /// Attach an image to the (first) message (exec, exec --json and the REPL); repeatable
    #[arg(short = 'i', long = "image", value_name = "FILE", global = true)]
    pub images: Vec<PathBuf>,
}

impl GlobalOptions {
    /// The options that override configuration keys.
    pub fn overrides(&self) -> FlagOverrides {
        FlagOverrides {
            config_file: self.config.clone(),
            model: self.model.clone(),
            provider: self.provider.clone(),
            endpoint: self.endpoint.clone(),
            no_sandbox: self.no_sandbox,
            reasoning_effort: self.reasoning_effort.clone(),
            approval: self.approval.clone(),
            network: self.network.clone(),
        }
    }
}

/// `exec --review [RANGE]` and its threshold.
#[derive(Debug, Clone, Default, PartialEq, Eq, Args)]
pub struct ReviewArgs {
    /// Review the working tree's changes (or commit REV, or a range such as HEAD~3..) read-only
    /// and print {"findings":[{"file","line","severity","reason"}],"summary"} as JSON; exit
    /// code 3 when a finding is at or above --fail-on
    #[arg(long, value_name = "RANGE", num_args = 0..=1, default_missing_value = "")]
    pub review: Option<String>,
    /// With --review: the least severity (low, medium, high; default high) whose findings give
    /// exit code 3
    #[arg(long, value_name = "SEVERITY", requires = "review")]
    pub fail_on: Option<String>,
}

/// The commands.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
pub enum Command {
    /// Run one task non-interactively and print the reply
    Exec {
        /// The task; read from stdin when absent or `-`
        prompt: Option<String>,
        /// Allow the tool calls that need confirmation (denied otherwise)
        #[arg(short = 'y', long)]
        yes: bool,
        /// Write one JSON event per line on stdout (schema: crates/ybs-cli/schema)
        #[arg(long)]
        json: bool,
        /// Also write the final reply to FILE
        #[arg(long, value_name = "FILE")]
        output_last_message: Option<PathBuf>,
        /// Review changes instead of running a task (see --review)
        #[command(flatten)]
        review: ReviewArgs,
    },
    /// Answer from a .chat file and append the reply to it
    #[command(
        long_about = "Answer from a .chat file and append the reply to it. The question (if \
                      given) and the reply are written together once the model has replied; a \
                      failed turn leaves the file as it was, and `ybs undo` takes a turn back. \
                      Only the tools named on `tool:` lines (or offered by `mcp:` servers) are \
                      offered to the model: with no `tool:` line, no tools are offered. \
                      --model, --provider and --endpoint win over the chat's model:, backend: \
                      and endpoint: lines."
    )]
    Ask {
        /// The chat file
        #[arg(long, value_name = "FILE")]
        chat: PathBuf,
        /// A question appended to the file as a user message first
        question: Option<String>,
        /// Allow the tool calls and tasks that need confirmation (denied otherwise)
        #[arg(short = 'y', long)]
        yes: bool,
    },
    /// Read, write and expand .chat files as JSON (for other programs)
    Chat {
        /// What to do
        #[command(subcommand)]
        action: ChatAction,
    },
    /// List the tools the model would see, with their source (MCP servers are not started)
    Tools {
        /// Start the configured MCP servers to list their tools too
        #[arg(long)]
        connect: bool,
    },
    /// Run one tool directly and print its JSON result
    Tool {
        /// The tool's name
        name: String,
        /// Its arguments as a JSON object
        json: String,
        /// Run it even if it needs confirmation (otherwise asked on a terminal, denied elsewhere)
        #[arg(short = 'y', long)]
        yes: bool,
    },
    /// Take back the files of the newest exec, ask or REPL turn of this project
    #[command(
        long_about = "Take back the files of the newest exec, ask or REPL turn of this project \
                      (found from a subdirectory too), then of the one before if run again.\n\n\
                      Files the turn wrote are restored with their modes, files it created \
                      removed, its [ybs] auto-commit dropped (refused when commits were made on \
                      top), and for ask the chat file is restored too. A file changed since the \
                      turn is asked about on a terminal and refused otherwise, unless --yes (your \
                      version is then kept in a copy). What shell commands did cannot be \
                      undone.\n\nThe turn is also taken out of the session it was saved in \
                      (exec, the REPL), so that --resume does not give the model a conversation \
                      in which its change is still there. A session still as the turn left it is \
                      put back as it was (removed when the turn started it). When later turns \
                      were saved in it since, only the undone turn's messages are dropped: the \
                      later turns stay, and a copy of the session as it was is kept. A session \
                      changed otherwise since (compacted or edited) is left as it is, with a \
                      warning.\n\nThe journal is kept in $XDG_DATA_HOME/ybs/undo (default \
                      ~/.local/share), the last 20 runs of each project."
    )]
    Undo {
        /// Undo even over files changed since the turn (a copy of your version is kept)
        #[arg(short = 'y', long)]
        yes: bool,
        /// List the recorded turns, newest first, instead of undoing
        #[arg(long)]
        list: bool,
    },
    /// Serve the Agent Client Protocol on stdin/stdout, for editors (Zed, codecompanion.nvim,
    /// avante.nvim)
    Acp,
    /// The MCP servers ybs connects to: `ybs mcp list` shows each one's state
    Mcp {
        /// What to do
        #[command(subcommand)]
        action: McpAction,
    },
    /// Serve ybs's tasks over MCP (stdio, or streamable HTTP on 127.0.0.1 with a token)
    McpServer {
        /// Serve streamable HTTP at http://127.0.0.1:PORT/mcp instead of stdio (every request
        /// needs the bearer token: --token-file's, or a random one printed on stderr)
        #[arg(long)]
        http: bool,
        /// The port for --http; any free one when 0 (the URL is printed on stdout)
        #[arg(long, default_value_t = 0, requires = "http")]
        port: u16,
        /// Read the bearer token for --http from FILE (its first line)
        #[arg(long, value_name = "FILE", requires = "http")]
        token_file: Option<PathBuf>,
    },
    /// List this project's saved sessions, newest first: date, size and first request
    #[command(
        long_about = "List this project's saved sessions, newest first: when each was last \
                      saved (UTC), how many requests it has, its size and its first request. \
                      `ybs --continue` goes on with the newest, `ybs --resume=FILE` with any; \
                      in the REPL, /resume picks one from this list and /fork copies the \
                      current one into a new session."
    )]
    Sessions,
    /// Print the effective configuration, each value with its source
    Config,
    /// Trust this project's settings, or a chat file's directives, as they are now
    #[command(
        long_about = "Trust this project's settings, or a chat file's directives, as they are \
                      now.\n\nA project's .ybs.json is input, not configuration you chose: its \
                      settings that run programs (MCP servers, external tools), send data or a \
                      key somewhere (llm.provider, llm.endpoint, an MCP server's url or headers) \
                      or weaken safety (the sandbox, confirmations, shell_env, limits, blocked \
                      paths) are ignored until you trust them. So are a chat file's endpoint, \
                      backend and mcp lines for `ybs ask`. This command prints those settings and \
                      remembers that you trust them, in $XDG_DATA_HOME/ybs/trust.json (default \
                      ~/.local/share), by the file's real path and a digest of the settings: when \
                      they change, they are ignored again until you trust them again. \
                      --trust-project trusts them for one run without remembering."
    )]
    Trust {
        /// A chat file to trust instead of the project's settings
        chat: Option<PathBuf>,
    },
    /// Print a shell completion script
    Completions {
        /// The shell
        shell: Shell,
    },
}

impl Command {
    /// The command's name as typed.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Exec { .. } => "exec",
            Command::Ask { .. } => "ask",
            Command::Chat { .. } => "chat",
            Command::Tools { .. } => "tools",
            Command::Tool { .. } => "tool",
            Command::Undo { .. } => "undo",
            Command::Acp => "acp",
            Command::Mcp { .. } => "mcp",
            Command::McpServer { .. } => "mcp-server",
            Command::Sessions => "sessions",
            Command::Config => "config",
            Command::Trust { .. } => "trust",
            Command::Completions { .. } => "completions",
        }
    }
}

/// What `ybs mcp` does.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
pub enum McpAction {
    /// Start the configured servers and print each one's transport, state (what it offers,
    /// or why it failed) and the file that configured it
    List,
    /// Log in to an HTTP server that needs OAuth: prints the URL to approve in a browser and
    /// stores the token (mode 0600, by the server's URL) in ybs's data directory
    Login {
        /// The server's name in mcp.servers
        name: String,
    },
    /// Remove the token `ybs mcp login` stored for a server
    Logout {
        /// The server's name in mcp.servers
        name: String,
    },
}

/// What `ybs chat` does.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
pub enum ChatAction {
    /// Print the messages of a .chat file as JSON: [{"role","content","lines":[start,end]}]
    Parse {
        /// The chat file
        file: PathBuf,
    },
    /// Read messages as JSON on stdin and print them as .chat file text
    Print,
    /// Print the conversation as the model gets it (imports, files, options resolved) as JSON
    Expand {
        /// The chat file
        file: PathBuf,
    },
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, String> {
        Cli::try_parse_from(std::iter::once("ybs").chain(args.iter().copied()))
            .map_err(|err| err.to_string())
    }

    #[test]
    fn the_command_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn the_readme_names_every_command_help_lists() {
        let readme = include_str!("../../../README.md");
        let start = readme.find("`-- --help` lists every").unwrap_or(0);
        let claim = &readme[start..start + readme[start..].find(')').unwrap_or(0)];
        for command in Cli::command().get_subcommands() {
            let name = command.get_name();
            assert!(
                claim.contains(&format!("`{name}")),
                "{name} missing from: {claim}"
            );
        }
    }

    #[test]
    fn spec_options_parse_before_or_after_the_command() -> Result<(), String> {
        let cli = parse(&[
            "-c",
            "x.json",
            "-m",
            "qwen",
            "exec",
            "-p",
            "openai",
            "--endpoint",
            "http://h",
            "--no-sandbox",
            "--dry-run",
            "hi",
        ])?;
        assert_eq!(
            cli.options,
            GlobalOptions {
                config: Some("x.json".into()),
                model: Some("qwen".into()),
                provider: Some("openai".into()),
                endpoint: Some("http://h".into()),
                no_sandbox: true,
                dry_run: true,
                trust_project: false,
                reasoning_effort: None,
                approval: None,
                network: None,
                plan: false,
                images: Vec::new(),
            }
        );
        assert_eq!(
            cli.command,
            Some(Command::Exec {
                prompt: Some("hi".into()),
                yes: false,
                json: false,
                output_last_message: None,
                review: ReviewArgs::default(),
            })
        );
        let overrides = cli.options.overrides();
        assert_eq!(overrides.model.as_deref(), Some("qwen"));
        assert!(overrides.no_sandbox);
        Ok(())
    }

    #[test]
    fn no_command_is_the_interactive_session() -> Result<(), String> {
        let cli = parse(&[])?;
        assert_eq!(cli.command, None);
        assert_eq!(cli.resume, None);
        Ok(())
    }

    #[test]
    fn continue_is_the_newest_session() -> Result<(), String> {
        assert_eq!(parse(&["--continue"])?.resume_choice(), Some(None));
        assert_eq!(
            parse(&["--continue", "exec", "hi"])?.resume_choice(),
            Some(None)
        );
        assert_eq!(
            parse(&["--resume=s.chat"])?.resume_choice(),
            Some(Some("s.chat".into()))
        );
        assert_eq!(parse(&[])?.resume_choice(), None);
        assert!(parse(&["--continue", "--resume"]).is_err());
        assert_eq!(parse(&["sessions"])?.command, Some(Command::Sessions));
        Ok(())
    }

    #[test]
    fn resume_with_a_space_before_the_file_gets_a_tip() {
        let error = Cli::parse_with_tips(["ybs", "--resume", "old.chat"])
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(
            error.contains("unrecognized subcommand 'old.chat'"),
            "{error}"
        );
        assert!(
            error.contains("tip: write `ybs --resume=old.chat` (with `=`: `--resume` alone"),
            "{error}"
        );
        let other = Cli::parse_with_tips(["ybs", "nonsense"])
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(!other.contains("--resume="), "{other}");
    }

    #[test]
    fn resume_takes_an_optional_file() -> Result<(), String> {
        assert_eq!(parse(&["--resume"])?.resume, Some(None));
        let cli = parse(&["--resume", "exec", "hi"])?;
        assert_eq!(cli.resume, Some(None));
        assert!(matches!(cli.command, Some(Command::Exec { .. })));
        assert_eq!(
            parse(&["--resume=s.chat"])?.resume,
            Some(Some("s.chat".into()))
        );
        Ok(())
    }

    #[test]
    fn subcommands_parse() -> Result<(), String> {
        assert_eq!(
            parse(&["exec", "--yes"])?.command,
            Some(Command::Exec {
                prompt: None,
                yes: true,
                json: false,
                output_last_message: None,
                review: ReviewArgs::default(),
            })
        );
        assert_eq!(
            parse(&["exec", "--json", "--output-last-message", "l.txt", "-"])?.command,
            Some(Command::Exec {
                prompt: Some("-".into()),
                yes: false,
                json: true,
                output_last_message: Some("l.txt".into()),
                review: ReviewArgs::default(),
            })
        );
        assert_eq!(
            parse(&["ask", "--chat", "a.chat", "why?"])?.command,
            Some(Command::Ask {
                chat: "a.chat".into(),
                question: Some("why?".into()),
                yes: false
            })
        );
        assert_eq!(
            parse(&["ask", "--chat", "a.chat", "--yes"])?.command,
            Some(Command::Ask {
                chat: "a.chat".into(),
                question: None,
                yes: true
            })
        );
        assert_eq!(
            parse(&["tools"])?.command,
            Some(Command::Tools { connect: false })
        );
        assert_eq!(
            parse(&["trust", "a.chat"])?.command,
            Some(Command::Trust {
                chat: Some("a.chat".into())
            })
        );
        assert_eq!(
            parse(&["tool", "read_file", "{\"path\":\"a\"}"])?.command,
            Some(Command::Tool {
                name: "read_file".into(),
                json: "{\"path\":\"a\"}".into(),
                yes: false
            })
        );
        assert_eq!(parse(&["config"])?.command, Some(Command::Config));
        assert_eq!(
            parse(&["undo", "--yes"])?.command,
            Some(Command::Undo {
                yes: true,
                list: false
            })
        );
        assert_eq!(
            parse(&["undo", "--list"])?.command,
            Some(Command::Undo {
                yes: false,
                list: true
            })
        );
        assert_eq!(
            parse(&["completions", "zsh"])?.command,
            Some(Command::Completions { shell: Shell::Zsh })
        );
        Ok(())
    }

    #[test]
    fn usage_errors_are_reported() {
        assert!(parse(&["ask"]).is_err_and(|err| err.contains("--chat <FILE>")));
        assert!(parse(&["tool", "x"]).is_err_and(|err| err.contains("<JSON>")));
        assert!(
            parse(&["completions", "cmd"]).is_err_and(|err| err.contains("invalid value 'cmd'"))
        );
    }
}
