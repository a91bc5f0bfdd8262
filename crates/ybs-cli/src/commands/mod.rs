//! The commands of the command line: [`run`] hands each to its front end or to its module
//! here, and turns failures into a message on stderr and a non-zero exit code. The commands
//! that do not run the agent live here: `chat` ([`chat`]), `tools` and `tool` ([`tools`]),
//! `sessions` ([`sessions`]) and `undo` ([`undo`]).

pub mod chat;
pub mod mcp;
pub mod sessions;
pub mod tools;
pub mod trust;
pub mod undo;

use std::io::{self, Write};

use clap::CommandFactory;

use crate::cli::{Cli, Command, McpAction};
use crate::frontends::{acp, ask, exec, mcp_server, repl};
use crate::startup::exit::Failed;
use ybs_agent::config;
use ybs_agent::host::Host;

/// Runs `cli`, writing results to `out` and diagnostics to `err`; returns the exit code.
pub fn run(cli: &Cli, host: &Host, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let result = match &cli.command {
        Some(Command::Config) => show_config(cli, host, out, err),
        Some(Command::Sessions) => sessions::run(host, out, err),
        Some(Command::Completions { shell }) => {
            clap_complete::generate(*shell, &mut Cli::command(), "ybs", out);
            Ok(0)
        }
        Some(Command::Exec {
            prompt,
            yes,
            json,
            output_last_message,
            review,
        }) => {
            let args = exec::ExecArgs {
                prompt: prompt.as_deref(),
                yes: *yes,
                last_message: output_last_message.as_deref(),
            };
            if let Some(range) = &review.review {
                let range = Some(range.as_str()).filter(|range| !range.is_empty());
                let fail_on = review.fail_on.as_deref();
                finish(exec::review::run(cli, host, range, fail_on, out, err), err)
            } else if *json {
                Ok(exec::json::run(cli, host, &args, out, err))
            } else {
                finish(exec::run(cli, host, &args, out, err), err)
            }
        }
        Some(Command::Ask {
            chat,
            question,
            yes,
        }) => finish(
            ask::run(cli, host, chat, question.as_deref(), *yes, out, err),
            err,
        ),
        Some(Command::Chat { action }) => match chat_access(cli, host, action, err) {
            Ok(access) => chat::run(
                action,
                &host.locations.cwd,
                access,
                &mut io::stdin(),
                out,
                err,
            ),
            Err(failure) => finish(Err(failure), err),
        },
        Some(Command::Undo { yes, list }) => finish(undo::run(host, *yes, *list, out, err), err),
        Some(Command::Acp) => finish(acp::run(cli, host, err), err),
        Some(Command::McpServer {
            http,
            port,
            token_file,
        }) => {
            let http = http.then(|| mcp_server::Http {
                port: *port,
                token_file: token_file.clone(),
            });
            finish(mcp_server::run(cli, host, http, out, err), err)
        }
        Some(Command::Mcp { action }) => match action {
            McpAction::List => finish(mcp::list(cli, host, out, err), err),
            McpAction::Login { name } => finish(mcp::login(cli, host, name, out, err), err),
            McpAction::Logout { name } => finish(mcp::logout(cli, host, name, out, err), err),
        },
        Some(Command::Tools { connect }) => finish(tools::list(cli, host, *connect, out, err), err),
        Some(Command::Trust { chat }) => {
            finish(trust::run(cli, host, chat.as_deref(), out, err), err)
        }
        Some(Command::Tool { name, json, yes }) => {
            finish(tools::call(cli, host, name, json, *yes, out, err), err)
        }
        None => finish(repl::run(cli, host, out, err), err),
    };
    match result {
        Ok(code) => code,
        Err(failure) if failure.kind() == io::ErrorKind::BrokenPipe => 0,
        Err(failure) => {
            let _ = writeln!(err, "ybs: error: cannot write the output: {failure}");
            1
        }
    }
}

fn show_config(cli: &Cli, host: &Host, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<u8> {
    let trust = crate::startup::load::run_trust(cli, host);
    let mut loaded =
        match config::load(&host.locations, &host.env, &cli.options.overrides(), &trust) {
            Ok(loaded) => loaded,
            Err(failure) => {
                writeln!(
                    err,
                    "ybs: error: {}",
                    crate::render::inert_lines(&failure.to_string())
                )?;
                return Ok(1);
            }
        };
    for warning in &loaded.warnings {
        writeln!(
            err,
            "ybs: warning: {}",
            crate::render::inert_lines(&warning.to_string())
        )?;
    }
    for warning in crate::startup::trust::warnings(&loaded.untrusted) {
        writeln!(
            err,
            "ybs: warning: {}",
            crate::render::inert_lines(&warning.to_string())
        )?;
    }
    // The provider and model a run would use, also when picked from an API key, and
    // whether a server of one's own answers (asked once, without retries: a server that is
    // down is said at once).
    let picked = match crate::startup::first_run::settle(&mut loaded, host) {
        crate::startup::first_run::Choice::Picked(note) => Some(note),
        _ => None,
    };
    let chooser = crate::startup::model::Chooser::from_sources(
        *loaded.sources.of("llm.model") != config::Source::Default,
    );
    let unanswered = crate::startup::model::settle(&mut loaded.config, chooser, &host.env);
    // Every value may come from a project's file: nothing in it reaches the terminal raw.
    let inert = |text: String| crate::render::inert_lines(&text).into_owned();
    out.write_all(inert(config::show(&loaded)).as_bytes())?;
    let instructions = ybs_agent::prepare::describe_instructions(&loaded.config, &host.locations);
    out.write_all(inert(instructions).as_bytes())?;
    let config = &loaded.config;
    let llm = &config.llm;
    let how = picked.map_or_else(String::new, |note| format!(" (using {note})"));
    let model = if llm.model.is_empty() {
        "(the model the server lists)"
    } else {
        llm.model.as_str()
    };
    let endpoint = ybs_agent::setup::endpoint(config);
    let effective = format!(
        "# Effective provider and model: {} {model} at {endpoint}{how}",
        llm.provider
    );
    writeln!(out, "{}", inert(effective))?;
    if let Some(error) = unanswered {
        let line = format!(
            "# Unreachable: {} at {endpoint} does not answer ({})",
            llm.provider, error.message
        );
        writeln!(out, "{}", inert(line))?;
        writeln!(out, "# Model limits: unknown (the server does not answer)")?;
        return Ok(0);
    }
    let limits = ybs_agent::setup::provider(config, &host.env).and_then(|provider| {
        let prices = ybs_agent::pricing::price_table(&config.llm.prices)?;
        Ok(ybs_agent::limits::discover(
            config,
            &loaded.sources,
            provider.as_ref(),
            &prices,
        ))
    });
    match limits {
        Ok(limits) => out.write_all(inert(limits.describe()).as_bytes())?,
        Err(error) => writeln!(
            out,
            "{}",
            inert(format!("# Model limits: unknown ({error})"))
        )?,
    }
    Ok(0)
}

/// What `ybs chat expand` may read: the same path sandbox and blocked paths as `read_file`
/// (`file:`, `import:` and the other lines that read a file); `parse` and `print` read no
/// file but the one named, and start nothing.
fn chat_access(
    cli: &Cli,
    host: &Host,
    action: &crate::cli::ChatAction,
    err: &mut dyn Write,
) -> Result<Option<ybs_chatfile::Access>, Failed> {
    if !matches!(action, crate::cli::ChatAction::Expand { .. }) {
        return Ok(None);
    }
    let trust = crate::startup::load::run_trust(cli, host);
    let loaded = crate::startup::load::load_trusting(cli, host, &trust, err)?;
    let around = host.surroundings();
    ask::trust::access(&loaded.config, &around).map(Some)
}

fn finish(result: Result<u8, Failed>, err: &mut dyn Write) -> io::Result<u8> {
    match result {
        Ok(code) => Ok(code),
        Err(Failed(message)) => {
            writeln!(err, "{}", crate::render::wrap::problem("error", &message))?;
            Ok(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use clap::Parser;

    use super::*;
    use ybs_agent::config::ConfigLocations;

    fn host(root: &std::path::Path) -> Host {
        Host {
            locations: ConfigLocations {
                system_file: root.join("etc/config.json"),
                home: Some(root.join("home")),
                xdg_config_home: None,
                cwd: root.join("cwd"),
            },
            env: BTreeMap::new(),
            data_home: Some(root.join("data")),
        }
    }

    fn run_args(args: &[&str], host: &Host) -> (u8, String, String) {
        let cli = Cli::parse_from(std::iter::once("ybs").chain(args.iter().copied()));
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run(&cli, host, &mut out, &mut err);
        (
            code,
            String::from_utf8_lossy(&out).into_owned(),
            String::from_utf8_lossy(&err).into_owned(),
        )
    }

    #[test]
    fn completions_are_generated_for_each_shell() {
        let host = host(&PathBuf::from("/nonexistent"));
        let (code, out, _) = run_args(&["completions", "bash"], &host);
        assert_eq!(code, 0);
        assert!(out.contains("_ybs()"), "{out}");
        assert!(out.contains("--no-sandbox"));
        let (code, out, _) = run_args(&["completions", "fish"], &host);
        assert_eq!(code, 0);
        assert!(out.contains("complete -c ybs"), "{out}");
    }

    #[test]
    fn config_errors_exit_non_zero_with_the_message() {
        let host = host(&PathBuf::from("/nonexistent"));
        let (code, out, err) = run_args(&["config", "-c", "/nonexistent/x.json"], &host);
        assert_eq!(code, 1);
        assert_eq!(out, "");
        assert_eq!(
            err,
            "ybs: error: config file /nonexistent/x.json (given with --config) does not exist\n"
        );
    }

    #[test]
    fn config_warnings_go_to_stderr() {
        let mut host = host(&PathBuf::from("/nonexistent"));
        host.env.insert("YBS_MODLE".into(), "x".into());
        let (code, out, err) = run_args(&["config", "-m", "m1"], &host);
        assert_eq!(code, 0);
        assert!(out.contains("llm.model = \"m1\""), "{out}");
        assert_eq!(
            err,
            "ybs: warning: environment variable YBS_MODLE is not a ybs setting (ignored); `ybs \
             config` lists the keys\n"
        );
    }
}
