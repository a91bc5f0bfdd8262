//! The pseudo-terminal harness of the REPL tests: `ybs` in a detached tmux session, keys sent
//! with `send-keys`, the screen read with `capture-pane`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// How long to wait for the screen to show something before failing (a hang, not a speed
/// limit: a passing run waits milliseconds).
pub const PATIENCE: Duration = Duration::from_secs(60);

pub struct Tmux {
    pub socket: PathBuf,
}

impl Tmux {
    /// A detached 160x50 session named `ybs` running `command` in `dir`, on its own socket.
    pub fn start(socket: &Path, dir: &Path, command: &str) -> Tmux {
        Tmux::start_sized(socket, dir, command, (160, 50))
    }

    /// [`Tmux::start`] on a terminal of `(columns, rows)`.
    pub fn start_sized(socket: &Path, dir: &Path, command: &str, size: (u16, u16)) -> Tmux {
        let (columns, rows) = (size.0.to_string(), size.1.to_string());
        let tmux = Tmux {
            socket: socket.to_path_buf(),
        };
        let dir = dir.to_str().expect("a UTF-8 path");
        tmux.run(&[
            "new-session",
            "-d",
            "-s",
            "ybs",
            "-x",
            &columns,
            "-y",
            &rows,
            "-c",
            dir,
            command,
        ]);
        tmux
    }

    pub fn run(&self, args: &[&str]) -> String {
        let output = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "ybs"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "ybs", "-S", "-200"])
    }

    pub fn wait_for(&self, text: &str) -> String {
        self.wait_for_after("", text)
    }

    /// Waits until `text` shows after `anchor` (a prompt after a reply, say).
    pub fn wait_for_after(&self, anchor: &str, text: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            let after = screen.find(anchor).map(|at| &screen[at + anchor.len()..]);
            if after.is_some_and(|after| after.contains(text)) {
                return screen;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "never saw {text:?} on\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}

pub fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', "'\\''"))
}

/// Writes a configuration for the fake LLM at `base_url` (no retries, colour as asked) to
/// `path`.
pub fn write_fake_llm_config(path: &Path, base_url: &str, color: bool) {
    let settings = serde_json::json!({
        "llm": {"provider": "openai-compatible", "model": "fake-model",
                "endpoint": format!("{base_url}/v1")},
        "agent": {"retry_attempts": 0},
        "ui": {"color": color}
    });
    std::fs::write(path, settings.to_string()).unwrap_or_else(|err| panic!("{err}"));
}

/// The shell command that runs `ybs -c CONFIG ARGS` in an empty environment: HOME and
/// XDG_DATA_HOME under `root`, `TERM=term`, then the `extra` assignments (`NAME=value ...`).
pub fn ybs_command(root: &Path, term: &str, extra: &str, config: &Path, args: &str) -> String {
    format!(
        "env -i HOME={} XDG_DATA_HOME={} PATH=/usr/bin:/bin TERM={term} {extra} {} -c {} {args}",
        shell_quote(&root.join("home")),
        shell_quote(&root.join("data")),
        shell_quote(&ybs_e2e::binary("ybs")),
        shell_quote(config),
    )
}

/// Whether tmux is missing (the pseudo-terminal tests then skip, saying so).
pub fn tmux_missing() -> bool {
    let missing = std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_err();
    if missing {
        eprintln!("tmux is not installed: skipping the pseudo-terminal test");
    }
    missing
}

/// A temporary root with the `home`, `data` and `project` folders a run of ybs uses.
pub fn scratch_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["home", "data", "project"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
    }
    dir
}
