//! Diagnostics from language servers after the agent changes a file: the server configured
//! for the file's name (`lsp.servers`, or a well-known one found on `PATH`) is started on the
//! first change of such a file, in the shell sandbox without the network (the rules of a
//! `run_shell` command), and told the file's text before and after the change; the errors
//! that are new after it go back to the model with the tool's result. Errors the file had
//! before are not repeated. A server that cannot be used is not tried again in the session
//! (`/status` says why).
//! Every server is stopped when the session ends.

pub mod client;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use globset::{Glob, GlobSet, GlobSetBuilder};
use ybs_tools::{PathSandbox, ShellPolicy};

use crate::config::{LspConfig, LspServer, default_servers};
use client::{Client, Diagnostic};

/// How long a server may take to start and answer `initialize`.
const START_WAIT: Duration = Duration::from_secs(60);

/// The most new errors given to the model for one change.
const MAX_REPORTED: usize = 20;

struct Server {
    name: String,
    settings: LspServer,
    patterns: GlobSet,
}

/// The session's language servers.
pub struct LanguageServers {
    servers: Vec<Server>,
    wait: Duration,
    root: PathBuf,
    policy: ShellPolicy,
    sandbox: PathSandbox,
    running: HashMap<String, Client>,
    /// The servers that could not be used, with why.
    failed: BTreeMap<String, String>,
    /// A file's text before the change in progress (`None`: it did not exist).
    before: HashMap<PathBuf, Option<String>>,
    /// The newest diagnostics of each file ybs sent a server.
    last: HashMap<PathBuf, Vec<Diagnostic>>,
}

impl LanguageServers {
    /// The servers of `config` (on top of the well-known ones on `PATH`) for the project at
    /// `root`, run under `policy` (without the network) in `sandbox`. Nothing starts yet.
    pub fn new(
        config: &LspConfig,
        root: &Path,
        policy: &ShellPolicy,
        sandbox: &PathSandbox,
    ) -> LanguageServers {
        let mut all: BTreeMap<String, LspServer> = if config.enabled {
            default_servers(std::env::var_os("PATH").as_deref())
        } else {
            BTreeMap::new()
        };
        if config.enabled {
            all.extend(config.servers.clone());
        }
        let servers = (all.into_iter())
            .filter(|(_, settings)| !settings.command.is_empty())
            .filter_map(|(name, settings)| {
                let mut set = GlobSetBuilder::new();
                for pattern in &settings.patterns {
                    set.add(Glob::new(pattern).ok()?);
                }
                Some(Server {
                    name,
                    patterns: set.build().ok()?,
                    settings,
                })
            })
            .collect();
        LanguageServers {
            servers,
            wait: Duration::from_secs(config.wait_seconds.max(1)),
            root: root.to_path_buf(),
            policy: ShellPolicy {
                network: false,
                ..policy.clone()
            },
            sandbox: sandbox.clone(),
            running: HashMap::new(),
            failed: BTreeMap::new(),
            before: HashMap::new(),
            last: HashMap::new(),
        }
    }

    /// The servers that could not be used this session, with why.
    pub fn failed(&self) -> &BTreeMap<String, String> {
        &self.failed
    }

    /// The names of the servers running now.
    pub fn running(&self) -> Vec<String> {
        let mut names: Vec<String> = self.running.keys().cloned().collect();
        names.sort();
        names
    }

    fn server_for(&self, path: &Path) -> Option<usize> {
        let relative = path.strip_prefix(&self.root).unwrap_or(path);
        let name = Path::new(path.file_name()?);
        self.servers
            .iter()
            .position(|server| server.patterns.is_match(name) || server.patterns.is_match(relative))
    }

    /// Keeps the text of `path` before a tool changes it (only for a file a server checks).
    pub fn before_change(&mut self, path: &Path) {
        if self.server_for(path).is_none() {
            return;
        }
        let text = ybs_fsguard::guarded::read(&self.sandbox, path)
            .ok()
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
        self.before.insert(path.to_path_buf(), text);
    }

    /// After a tool changed `path`: the note for the model of the errors that are new, or
    /// of a server that could not be used; `None` when there is nothing to say.
    pub fn after_change(&mut self, path: &Path) -> Option<String> {
        let index = self.server_for(path)?;
        let before = self.before.remove(path).flatten();
        let name = self.servers[index].name.clone();
        if self.failed.contains_key(&name) {
            return None;
        }
        let after = ybs_fsguard::guarded::read(&self.sandbox, path).ok()?;
        let after = String::from_utf8_lossy(&after).into_owned();
        match self.new_errors(index, path, before, &after) {
            Ok(None) => None,
            Ok(Some(errors)) if errors.is_empty() => None,
            Ok(Some(errors)) => {
                let shown = path
                    .strip_prefix(&self.root)
                    .unwrap_or(path)
                    .display()
                    .to_string();
                let mut note = format!("New errors from {name} after this change:");
                for error in errors.iter().take(MAX_REPORTED) {
                    note.push_str(&format!(
                        "\n{shown}:{}:{}: {}: {}",
                        error.line, error.column, error.severity, error.message
                    ));
                }
                if errors.len() > MAX_REPORTED {
                    note.push_str(&format!("\n… and {} more", errors.len() - MAX_REPORTED));
                }
                Some(note)
            }
            // Nothing the model could act on: `/status` tells the user.
            Err(problem) => {
                self.failed.insert(name.clone(), problem);
                if let Some(mut client) = self.running.remove(&name) {
                    client.stop();
                }
                None
            }
        }
    }

    fn new_errors(
        &mut self,
        index: usize,
        path: &Path,
        before: Option<String>,
        after: &str,
    ) -> Result<Option<Vec<Diagnostic>>, String> {
        let server = &self.servers[index];
        let language = language_of(path);
        if !self.running.contains_key(&server.name) {
            let line = shell_words::join(&server.settings.command);
            let installed = installed_dirs(&server.settings.command);
            let service = ybs_tools::shell::start_service(
                &self.policy,
                &self.sandbox,
                &line,
                &self.root,
                &installed,
            )
            .map_err(|e| e.to_string())?;
            let client =
                Client::start(service, &self.root, START_WAIT).map_err(|e| e.to_string())?;
            self.running.insert(server.name.clone(), client);
        }
        let name = server.name.clone();
        let Some(client) = self.running.get_mut(&name) else {
            return Ok(None);
        };
        let baseline = match (self.last.get(path), before) {
            (Some(last), _) => last.clone(),
            (None, Some(text)) => (client.check(path, language, &text, self.wait))
                .map_err(|e| e.to_string())?
                .unwrap_or_default(),
            (None, None) => Vec::new(),
        };
        let Some(now) = client
            .check(path, language, after, self.wait)
            .map_err(|e| e.to_string())?
        else {
            return Ok(None);
        };
        self.last.insert(path.to_path_buf(), now.clone());
        Ok(Some(only_new(&baseline, now)))
    }

    /// Stops every server.
    pub fn stop_all(&mut self) {
        for (_, mut client) in self.running.drain() {
            client.stop();
        }
    }
}

impl Drop for LanguageServers {
    fn drop(&mut self) {
        self.stop_all();
    }
}

/// Where the server's program is installed: the directory of each word of its command that
/// names an existing file (the program found on `PATH` for the first word), links followed.
/// The command is the user's own choice, and outside the system's directories the sandbox
/// would not let the server read its own code.
fn installed_dirs(command: &[String]) -> Vec<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut files: Vec<PathBuf> = Vec::new();
    if let Some(program) = command.first().filter(|p| !p.contains('/')) {
        files.extend(
            std::env::split_paths(&path)
                .map(|dir| dir.join(program))
                .find(|candidate| candidate.is_file()),
        );
    }
    files.extend(
        (command.iter())
            .filter(|word| word.starts_with('/'))
            .map(PathBuf::from),
    );
    let mut dirs: Vec<PathBuf> = (files.into_iter())
        .filter_map(|file| std::fs::canonicalize(file).ok())
        .filter(|file| file.is_file())
        .filter_map(|file| file.parent().map(Path::to_path_buf))
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

/// The errors of `now` that `before` did not have (by message: lines move with an edit).
fn only_new(before: &[Diagnostic], now: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for old in before.iter().filter(|d| d.severity == "error") {
        *seen.entry(old.message.as_str()).or_default() += 1;
    }
    now.into_iter()
        .filter(|d| d.severity == "error")
        .filter(|d| match seen.get_mut(d.message.as_str()) {
            Some(count) if *count > 0 => {
                *count -= 1;
                false
            }
            _ => true,
        })
        .collect()
}

/// The LSP language id of a file, by its extension.
fn language_of(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "py" | "pyi" => "python",
        "rs" => "rust",
        "go" => "go",
        "ts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        _ => "plaintext",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(line: u64, message: &str) -> Diagnostic {
        Diagnostic {
            line,
            column: 1,
            severity: "error",
            message: message.to_owned(),
        }
    }

    #[test]
    fn only_errors_the_file_did_not_have_are_new() {
        let before = vec![error(3, "\"a\" is not defined")];
        let now = vec![
            error(5, "\"a\" is not defined"),
            error(6, "\"b\" is not defined"),
            Diagnostic {
                severity: "warning",
                ..error(7, "unused")
            },
        ];
        let new = only_new(&before, now);
        assert_eq!(new, vec![error(6, "\"b\" is not defined")]);
    }
}
