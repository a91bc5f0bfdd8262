//! `ybs exec`: one task without a conversation, its reply as text on stdout and the rest on
//! stderr, or with `--json` as events for scripts ([`json`]). Also what the two share: the
//! task (`exec -` reads stdin) and `--output-last-message`. `exec --review` is [`review`].

pub mod json;
pub mod review;

use std::io::{self, IsTerminal, Read, Write};
use std::path::Path;

use crate::cli::Cli;
use crate::render::LineUi;
use crate::startup::exit::{Failed, USAGE_ERROR, exit_code};
use crate::startup::{first_run, images, load, turn};
use ybs_agent::confirm::ConfirmMode;
use ybs_agent::host::Host;

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

/// Where `--output-last-message` writes the final reply: its directory, opened when ybs
/// starts (before the model can touch it), and the file's name. The reply is written into
/// that directory even if the model renamed it or put a link in its place meanwhile, and a
/// link at the file's name is replaced, not followed: no link planted during the run is.
pub struct LastMessage {
    dir: std::os::fd::OwnedFd,
    name: std::ffi::OsString,
    path: std::path::PathBuf,
}

impl LastMessage {
    /// Opens the directory of `path` (the links the user has in it now are followed).
    pub fn open(path: &Path) -> Result<LastMessage, String> {
        let failed = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", path.display());
        let name = (path.file_name()).ok_or_else(|| failed(&"the path names no file"))?;
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        let file = std::fs::File::open(dir).map_err(|e| failed(&e))?;
        if !file.metadata().map_err(|e| failed(&e))?.is_dir() {
            return Err(failed(&format!("{} is not a directory", dir.display())));
        }
        Ok(LastMessage {
            dir: file.into(),
            name: name.to_owned(),
            path: path.to_path_buf(),
        })
    }

    /// Writes the reply, atomically, readable by the user only.
    pub fn write(&self, text: &str) -> Result<(), String> {
        ybs_fsguard::physical::write_atomic_at(&self.dir, &self.name, text.as_bytes(), 0o600)
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))
    }
}

/// `ybs exec`: one task, non-interactively.
pub fn run(
    cli: &Cli,
    host: &Host,
    args: &ExecArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, Failed> {
    if args.prompt.is_none_or(|prompt| prompt == "-") && io::stdin().is_terminal() {
        // Otherwise a bare `ybs exec` on a terminal is a silent wait.
        let _ = writeln!(
            err,
            "ybs: reading the task from the terminal; end it with Ctrl-D (or give it: \
             `ybs exec \"TASK\"`)"
        );
    }
    let task = match read_task(args.prompt, &mut io::stdin()) {
        Ok(task) => task,
        Err(message) => {
            let _ = writeln!(
                err,
                "ybs: error: {}",
                crate::render::inert_lines(&message.to_string())
            );
            return Ok(USAGE_ERROR);
        }
    };
    let last_message = (args.last_message)
        .map(|path| LastMessage::open(&host.locations.cwd.join(path)))
        .transpose()
        .map_err(Failed)?;
    let mut loaded = load::load(cli, host, err)?;
    match first_run::check(&mut loaded, host, false, err) {
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
    let mut agent = load::build_agent((config, &loaded), host, ("exec", mode), &cli.options, err)?;
    agent.plan_mode = cli.options.plan;
    let resumed = turn::resume(cli, host, &mut agent)?;
    if let Some(path) = &resumed {
        let _ = writeln!(
            err,
            "ybs: {}",
            turn::resumed_line(path, &agent.conversation)
        );
        for line in turn::restored_todos(&agent) {
            let _ = writeln!(err, "{line}");
        }
    }
    let session_file = host.session_file(resumed.as_deref());
    let baseline = turn::git_baseline(config, &host.locations.cwd, err);
    let terminal = io::stdout().is_terminal();
    let mut no_input = io::empty();
    let result = {
        let renderer = load::renderer(config, terminal).with_tools(agent.registry.clone());
        let mut ui = LineUi::new(renderer, out, err, &mut no_input).with_spinner(terminal);
        let runtime = load::runtime()?;
        let message = images::message(&task, images);
        let source = if resumed.is_some() {
            "resume"
        } else {
            "startup"
        };
        agent.start_session(source, &mut ui);
        let result = runtime.block_on(load::cancellable(async |token| {
            agent.turn_message(message, &mut ui, &token).await
        }));
        agent.end_session("done", &mut ui);
        result
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
    if let Some(last_message) = last_message {
        last_message.write(&report.reply).map_err(Failed)?;
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
        let path = dir.path().join("out/last.txt");
        std::fs::create_dir(dir.path().join("out")).unwrap();
        let last = LastMessage::open(&path).unwrap();
        // The directory is swapped for a link elsewhere after it was opened.
        std::fs::rename(dir.path().join("out"), dir.path().join("moved")).unwrap();
        std::fs::create_dir(dir.path().join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), dir.path().join("out")).unwrap();
        last.write("done\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("moved/last.txt")).unwrap(),
            "done\n"
        );
        assert!(!dir.path().join("elsewhere/last.txt").exists());
        // A link at the name itself is replaced.
        std::fs::write(dir.path().join("elsewhere/target"), "keep").unwrap();
        std::fs::remove_file(dir.path().join("moved/last.txt")).unwrap();
        std::os::unix::fs::symlink(
            dir.path().join("elsewhere/target"),
            dir.path().join("moved/last.txt"),
        )
        .unwrap();
        last.write("again\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("elsewhere/target")).unwrap(),
            "keep"
        );
        let error = LastMessage::open(&dir.path().join("no/such/dir/x"))
            .err()
            .unwrap();
        assert!(error.contains("cannot write"), "{error}");
    }
}
