//! End-to-end tests of the `ybs` binary with an isolated HOME and working directory:
//! `ybs config` with values and their sources, a malformed config file, completions and help.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::process::{Command, Output};

struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        let sandbox = Sandbox {
            dir: tempfile::tempdir().unwrap(),
        };
        fs::create_dir_all(sandbox.path("home")).unwrap();
        fs::create_dir_all(sandbox.path("project")).unwrap();
        sandbox
    }

    fn path(&self, relative: &str) -> std::path::PathBuf {
        self.dir.path().join(relative)
    }

    fn write(&self, relative: &str, text: &str) {
        let path = self.path(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    /// Runs ybs in `project/` with only HOME (and the given variables) set.
    fn ybs(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut command = Command::new(ybs_e2e::binary("ybs"));
        command
            .args(args)
            .current_dir(self.path("project"))
            .env_clear()
            .env("HOME", self.path("home"));
        for (name, value) in env {
            command.env(name, value);
        }
        command.output().unwrap()
    }

    /// Output with the temporary directory's path replaced by `[TMP]`.
    fn text(&self, bytes: &[u8]) -> String {
        let root = self.dir.path().canonicalize().unwrap();
        String::from_utf8_lossy(bytes)
            .replace(&root.display().to_string(), "[TMP]")
            .replace(&self.dir.path().display().to_string(), "[TMP]")
    }
}

fn line_of<'a>(text: &'a str, key: &str) -> &'a str {
    text.lines()
        .find(|line| line.starts_with(&format!("{key} = ")))
        .unwrap_or_else(|| panic!("no {key} in\n{text}"))
}

fn squeeze(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn config_shows_each_value_with_its_source() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "home/.config/ybs/config.json",
        r#"{"llm": {"provider": "openai", "model": "user-model", "api_key": "sk-live-0123456789abcdef"},
            "ui": {"show_token_usage": false}}"#,
    );
    sandbox.write(
        "project/.ybs.json",
        r#"{"llm": {"model": "project-model"}, "agent": {"max_iterations": 7}, "colour": true}"#,
    );
    let output = sandbox.ybs(
        &[
            "config",
            "--endpoint",
            "http://127.0.0.1:9/v1",
            "--no-sandbox",
        ],
        &[("YBS_LLM_TEMPERATURE", "0.2"), ("NO_COLOR", "1")],
    );
    let stdout = sandbox.text(&output.stdout);
    let stderr = sandbox.text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(
        stderr,
        "ybs: warning: [TMP]/project/.ybs.json: unknown key colour (ignored)\n"
    );
    let user = "[TMP]/home/.config/ybs/config.json";
    let project = "[TMP]/project/.ybs.json";
    for (key, expected) in [
        ("llm.provider", format!("\"openai\" # {user}")),
        ("llm.model", format!("\"project-model\" # {project}")),
        ("llm.api_key", format!("\"***cdef\" # {user}")),
        (
            "llm.endpoint",
            "\"http://127.0.0.1:9/v1\" # flag --endpoint".to_owned(),
        ),
        (
            "llm.temperature",
            "0.2 # env YBS_LLM_TEMPERATURE".to_owned(),
        ),
        ("agent.max_iterations", format!("7 # {project}")),
        ("agent.retry_attempts", "3 # default".to_owned()),
        (
            "safety.sandbox_enabled",
            "false # flag --no-sandbox".to_owned(),
        ),
        ("ui.color", "false # env NO_COLOR".to_owned()),
        ("ui.show_token_usage", format!("false # {user}")),
        (
            "safety.sandbox_blocked_paths",
            "[\"[TMP]/home/.ssh\",\"[TMP]/home/.aws\",\"[TMP]/home/.config\"] # default".to_owned(),
        ),
    ] {
        assert_eq!(
            squeeze(line_of(&stdout, key)),
            format!("{key} = {expected}")
        );
    }
    assert!(
        !stdout.contains("0123456789"),
        "the API key leaked:\n{stdout}"
    );
    insta::assert_snapshot!(stdout);
}

#[test]
fn a_malformed_config_file_names_file_line_and_column() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "home/.ybs.json",
        "{\n  \"llm\": {\n    \"model\": \"x\"\n    \"provider\": \"y\"\n  }\n}\n",
    );
    let output = sandbox.ybs(&["config"], &[]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(sandbox.text(&output.stdout), "");
    assert_eq!(
        sandbox.text(&output.stderr),
        "ybs: error: [TMP]/home/.ybs.json:4:5: malformed config file: expected `,` or `}`\n"
    );
}

#[test]
fn a_value_of_the_wrong_type_names_key_line_and_column() {
    let sandbox = Sandbox::new();
    sandbox.write("project/.ybs.json", "{\"ui\": {\n  \"color\": \"yes\"\n}}");
    let output = sandbox.ybs(&["config"], &[]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        sandbox.text(&output.stderr),
        "ybs: error: [TMP]/project/.ybs.json:2:16: ui.color: invalid type: string \"yes\", expected a boolean\n"
    );
}

#[test]
fn xdg_config_home_replaces_dot_config() {
    let sandbox = Sandbox::new();
    sandbox.write("xdg/ybs/config.json", r#"{"llm": {"model": "from-xdg"}}"#);
    let xdg = sandbox.path("xdg");
    let output = sandbox.ybs(&["config"], &[("XDG_CONFIG_HOME", xdg.to_str().unwrap())]);
    let stdout = sandbox.text(&output.stdout);
    assert_eq!(
        squeeze(line_of(&stdout, "llm.model")),
        "llm.model = \"from-xdg\" # [TMP]/xdg/ybs/config.json"
    );
}

#[test]
fn completions_version_and_help_work() {
    let sandbox = Sandbox::new();
    let output = sandbox.ybs(&["completions", "zsh"], &[]);
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).contains("#compdef ybs"));
    let output = sandbox.ybs(&["--version"], &[]);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!("ybs {}\n", env!("CARGO_PKG_VERSION"))
    );
    let output = sandbox.ybs(&["--help"], &[]);
    let help = String::from_utf8_lossy(&output.stdout);
    for option in [
        "--config <FILE>",
        "--model <NAME>",
        "--provider <NAME>",
        "--endpoint <URL>",
        "--no-sandbox",
        "--dry-run",
        "--resume[=<FILE>]",
    ] {
        assert!(help.contains(option), "{option} missing from\n{help}");
    }
}

#[test]
fn resume_with_a_space_before_the_file_says_how_to_write_it() {
    let sandbox = Sandbox::new();
    sandbox.write("project/old.chat", "user:\n\nhello\n");
    let output = sandbox.ybs(&["--resume", "old.chat"], &[]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = sandbox.text(&output.stderr);
    assert!(
        stderr.contains("error: unrecognized subcommand 'old.chat'"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "\n  tip: write `ybs --resume=old.chat` (with `=`: `--resume` alone resumes the \
             newest)\n"
        ),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());
    assert_eq!(
        fs::read_to_string(sandbox.path("project/old.chat")).unwrap(),
        "user:\n\nhello\n"
    );
}

#[test]
fn trust_without_a_project_file_says_there_is_nothing_to_trust() {
    let sandbox = Sandbox::new();
    let output = sandbox.ybs(&["trust"], &[]);
    assert!(output.status.success(), "{}", sandbox.text(&output.stderr));
    assert_eq!(
        sandbox.text(&output.stdout),
        "nothing to trust: there is no project configuration (.ybs.json) in [TMP]/project\n"
    );
    assert!(!sandbox.path("project/.ybs.json").exists());
}
