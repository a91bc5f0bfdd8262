//! Running a parsed command line: what works in this build, and a clear refusal for what
//! needs the agent loop.

use std::collections::BTreeMap;
use std::io::{self, Write};

use clap::CommandFactory;

use crate::cli::{Cli, Command};
use crate::config::{self, ConfigLocations};

/// What ybs reads from its surroundings: where configuration lives and the environment
/// variables it honours. Tests build one by hand to isolate themselves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    /// Configuration file locations.
    pub locations: ConfigLocations,
    /// `YBS_*` and `NO_COLOR`.
    pub env: BTreeMap<String, String>,
}

impl Host {
    /// This process's home, `XDG_CONFIG_HOME`, working directory and variables.
    pub fn from_process() -> io::Result<Host> {
        Ok(Host {
            locations: ConfigLocations::from_process()?,
            env: config::process_env(),
        })
    }
}

/// Runs `cli`, writing results to `out` and diagnostics to `err`; returns the exit code.
pub fn run(cli: &Cli, host: &Host, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let result = match &cli.command {
        Some(Command::Config) => show_config(cli, host, out, err),
        Some(Command::Completions { shell }) => {
            clap_complete::generate(*shell, &mut Cli::command(), "ybs", out);
            Ok(0)
        }
        Some(command) => unavailable(&format!("`ybs {}`", command.name()), err),
        None => unavailable("the interactive session", err),
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
    let loaded = match config::load(&host.locations, &host.env, &cli.options.overrides()) {
        Ok(loaded) => loaded,
        Err(failure) => {
            writeln!(err, "ybs: error: {failure}")?;
            return Ok(1);
        }
    };
    for warning in &loaded.warnings {
        writeln!(err, "ybs: warning: {warning}")?;
    }
    out.write_all(config::show(&loaded).as_bytes())?;
    Ok(0)
}

fn unavailable(what: &str, err: &mut dyn Write) -> io::Result<u8> {
    writeln!(
        err,
        "ybs: error: {what} is not available in this build yet (the agent loop is not wired in); \
         `ybs config` and `ybs completions` work"
    )?;
    Ok(1)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use clap::Parser;

    use super::*;

    fn host(root: &std::path::Path) -> Host {
        Host {
            locations: ConfigLocations {
                system_file: root.join("etc/config.json"),
                home: Some(root.join("home")),
                xdg_config_home: None,
                cwd: root.join("cwd"),
            },
            env: BTreeMap::new(),
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
    fn commands_that_need_the_agent_loop_refuse_clearly() {
        let host = host(&PathBuf::from("/nonexistent"));
        for (args, what) in [
            (&[][..], "the interactive session"),
            (&["exec", "hi"][..], "`ybs exec`"),
            (&["ask", "--chat", "a.chat"][..], "`ybs ask`"),
            (&["tools"][..], "`ybs tools`"),
            (&["tool", "read_file", "{}"][..], "`ybs tool`"),
        ] {
            let (code, out, err) = run_args(args, &host);
            assert_eq!(code, 1);
            assert_eq!(out, "");
            assert_eq!(
                err,
                format!(
                    "ybs: error: {what} is not available in this build yet (the agent loop is not \
                     wired in); `ybs config` and `ybs completions` work\n"
                )
            );
        }
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
