//! `ybs exec`: one task without a conversation, its reply as text on stdout and the rest on
//! stderr, or with `--json` as events for scripts ([`json`]). Also what the two share: the
//! task (`exec -` reads stdin) and `--output-last-message`.

pub mod json;

use std::io::{self, IsTerminal, Read, Write};
use std::path::Path;

use crate::agent::LineUi;
use crate::agent::confirm::ConfirmMode;
use crate::cli::Cli;
use crate::startup::exit::{Failed, USAGE_ERROR, exit_code};
use crate::startup::host::Host;
use crate::startup::{first_run, images, load, turn};

/// What `exec` was given besides the global options.
pub struct ExecArgs<'a> {
    /// The task, or `-`/absent for stdin.
    pub prompt: Option<&'a str>,
    /// `--yes`.
    pub yes: bool,
    /// `--output-last-message FILE`.
    pub last_message: Option<&'a Path>,
}

/// The task of `exec`: the argument, or stdin when it is absent or `-`. `Err` is a usage
/// error's message.
pub fn read_task(prompt: Option<&str>, stdin: &mut dyn Read) -> Result<String, String> {
    let task = match prompt {
        Some(task) if task != "-" => task.to_owned(),
        _ => {
            let mut task = String::new();
            stdin
                .read_to_string(&mut task)
                .map_err(|e| format!("cannot read the task from stdin: {e}"))?;
            task
        }
    };
    if task.trim().is_empty() {
        return Err(
            "no task given: `ybs exec \"TASK\"`, or `ybs exec -` with the task on stdin".into(),
        );
    }
    Ok(task)
}

/// Writes the final reply to `path` (atomically; `--output-last-message`).
pub fn write_last_message(path: &Path, text: &str) -> Result<(), String> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let failed = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", path.display());
    let mut file = tempfile::NamedTempFile::new_in(dir).map_err(|e| failed(&e))?;
    file.write_all(text.as_bytes()).map_err(|e| failed(&e))?;
    file.persist(path).map_err(|e| failed(&e.error))?;
    Ok(())
}

/// `ybs exec`: one task, non-interactively.
pub fn run(
    cli: &Cli,
    host: &Host,
    args: &ExecArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, Failed> {
    let task = match read_task(args.prompt, &mut io::stdin()) {
        Ok(task) => task,
        Err(message) => {
            let _ = writeln!(err, "ybs: error: {message}");
            return Ok(USAGE_ERROR);
        }
    };
    let mut loaded = load::load(cli, host, err)?;
    match first_run::check(&mut loaded, host, err) {
        Ok(Some(note)) => {
            let _ = writeln!(err, "ybs: using {note}");
        }
        Ok(None) => {}
        Err(code) => return Ok(code),
    }
    let config = &loaded.config;
    let cwd = &host.locations.cwd;
    let images = (cli.options.images.iter())
        .map(|path| images::image_part(path, cwd))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failed)?;
    let had_images = !images.is_empty();
    let mode = if args.yes {
        ConfirmMode::AssumeYes
    } else {
        ConfirmMode::Deny
    };
    let mut agent = load::build_agent(
        (config, &loaded),
        host,
        ("exec", mode),
        cli.options.dry_run,
        err,
    )?;
    agent.plan_mode = cli.options.plan;
    let resumed = turn::resume(cli, host, &mut agent)?;
    let session_file = turn::session_file(host, resumed.as_deref());
    let baseline = turn::git_baseline(config, &host.locations.cwd, err);
    let terminal = io::stdout().is_terminal();
    let mut no_input = io::empty();
    let result = {
        let mut ui = LineUi::new(load::renderer(config, terminal), out, err, &mut no_input)
            .with_spinner(terminal);
        let runtime = load::runtime()?;
        let message = images::message(&task, images);
        runtime.block_on(load::cancellable(async |token| {
            agent.turn_message(message, &mut ui, &token).await
        }))
    };
    let report = result.map_err(|error| {
        let text = load::describe(&error, config);
        Failed(images::explain(text, had_images, &config.llm.model))
    })?;
    turn::after_turn(
        &mut agent,
        &report,
        &task,
        config,
        session_file.as_deref(),
        baseline.as_ref(),
        err,
    );
    if let Some(path) = args.last_message {
        write_last_message(&host.locations.cwd.join(path), &report.reply).map_err(Failed)?;
    }
    Ok(exit_code(report.stop))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_task_comes_from_the_argument_or_stdin() {
        assert_eq!(read_task(Some("hi"), &mut &b"x"[..]).unwrap(), "hi");
        assert_eq!(
            read_task(Some("-"), &mut &b"from stdin"[..]).unwrap(),
            "from stdin"
        );
        assert_eq!(read_task(None, &mut &b"piped"[..]).unwrap(), "piped");
        let error = read_task(Some("-"), &mut &b"  \n"[..]).unwrap_err();
        assert!(error.starts_with("no task given"), "{error}");
    }

    #[test]
    fn the_last_message_is_written_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("last.txt");
        write_last_message(&path, "done\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "done\n");
        let error = write_last_message(&dir.path().join("no/such/dir/x"), "t").unwrap_err();
        assert!(error.contains("cannot write"), "{error}");
    }
}
