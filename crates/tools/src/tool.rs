//! The `Tool` trait and what a call runs with: the sandbox, the working directory, the shell
//! policy and the session's memory of which files were read.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use ybs_core::ToolSpec;

pub use crate::cancel::CancelFlag;
use crate::declaration::Declaration;
use crate::error::ToolError;
use crate::path_sandbox::{PathSandbox, SandboxError};
use crate::schema::Args;
use crate::shell::ShellPolicy;
use crate::summary::{Change, Summary};
use crate::todo::Todo;

/// A tool the model can call.
///
/// The registry validates the arguments against [`spec`](Tool::spec)`().parameters` before
/// calling [`invoke`](Tool::invoke), so `invoke` sees well-typed arguments with defaults
/// filled in. `invoke` blocks (file I/O, child processes): call it from a blocking thread
/// (`tokio::task::spawn_blocking`) in async code.
pub trait Tool: Send + Sync {
    /// The name, description and JSON Schema the model sees.
    fn spec(&self) -> &ToolSpec;

    /// Runs the tool and returns its JSON result.
    fn invoke(&self, args: &Args, ctx: &ToolContext) -> Result<Value, ToolError>;

    /// What the tool is: what it changes, where it is offered, when it asks. The default is
    /// the conservative [`Declaration::default`].
    fn declaration(&self) -> Declaration {
        Declaration::default()
    }

    /// A short title of a call: its action and what it acts on (`Edit src/main.rs`, the
    /// command); `None` leaves the tool's name.
    fn title(&self, arguments: &Value) -> Option<String> {
        let _ = arguments;
        None
    }

    /// A person's one-line summary of a successful result, from the call's `arguments`
    /// (`Null` when unknown), the result as JSON and the previewed `change`; `None` leaves
    /// the front end's generic summary (the result's size, or the result when short).
    fn summarize(
        &self,
        arguments: &Value,
        result: &Value,
        change: Option<Change>,
    ) -> Option<Summary> {
        let _ = (arguments, result, change);
        None
    }

    /// The whole of a successful result as lines a person reads (a file's lines, a command's
    /// output); `None` leaves the front end's generic form (JSON pretty-printed).
    fn result_lines(&self, result: &Value) -> Option<Vec<String>> {
        let _ = result;
        None
    }

    /// The text of the file named by `path` after the call, from its text `before` (`None`
    /// when it does not exist yet), for a tool that changes that file; `None` when the
    /// change cannot be shown (the call will fail, or the tool does not say).
    fn text_after(&self, before: Option<&str>, arguments: &Value) -> Option<String> {
        let _ = (before, arguments);
        None
    }
}

/// Everything a tool call runs with. Cheap to clone: the session state is shared.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Which paths the tools may touch.
    pub sandbox: PathSandbox,
    /// Where relative paths start (usually the project root).
    pub working_dir: PathBuf,
    /// How `run_shell` runs commands.
    pub shell: ShellPolicy,
    /// What this session has done so far (files read).
    pub session: SessionState,
    /// Set when the user cancelled the running call (Ctrl-C during a turn). A tool that runs
    /// for long (a child process, a remote call) polls it and stops early, reporting that
    /// it was cancelled by the user; a quick tool may ignore it. The caller resets it before
    /// each call; clones of the context share it, so another thread can set it while the
    /// call blocks.
    pub cancel: CancelFlag,
    /// The editor the file tools read and write through, when the front end has one.
    pub editor: crate::editor::Editor,
    /// How `web_fetch` fetches (its time and size bounds).
    pub web: crate::web_policy::WebPolicy,
    /// The session's background jobs (`run_shell` with `background`); clones share them.
    pub jobs: crate::jobs::Jobs,
}

impl ToolContext {
    /// A context whose working directory is the first allowed root.
    pub fn new(sandbox: PathSandbox, shell: ShellPolicy) -> Result<Self, SandboxError> {
        let working_dir =
            sandbox
                .roots()
                .first()
                .cloned()
                .ok_or_else(|| SandboxError::BadRoot {
                    root: String::new(),
                    message: "no allowed directory is configured".into(),
                })?;
        Ok(ToolContext {
            sandbox,
            working_dir,
            shell,
            session: SessionState::default(),
            cancel: CancelFlag::default(),
            editor: crate::editor::Editor::default(),
            web: crate::web_policy::WebPolicy::default(),
            jobs: crate::jobs::Jobs::default(),
        })
    }

    /// Sets the working directory (where relative paths start); it must resolve inside the
    /// sandbox. Stored physically resolved so paths are shown relative to it.
    pub fn set_working_dir(&mut self, dir: &Path) -> Result<(), SandboxError> {
        let shown = dir.display().to_string();
        let resolved = self.sandbox.resolve(&self.working_dir, &shown)?;
        if !resolved.is_dir() {
            return Err(SandboxError::Unresolvable {
                path: shown,
                message: "it is not an existing directory".into(),
            });
        }
        self.working_dir = resolved;
        Ok(())
    }

    /// Resolves and checks a path given by the model.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, ToolError> {
        Ok(self.sandbox.resolve(&self.working_dir, path)?)
    }

    /// How a resolved path is shown to the model: relative to the working directory when it
    /// is inside it, absolute otherwise.
    pub fn display_path(&self, resolved: &Path) -> String {
        match resolved.strip_prefix(&self.working_dir) {
            Ok(relative) if relative.as_os_str().is_empty() => ".".to_string(),
            Ok(relative) => relative.display().to_string(),
            Err(_) => resolved.display().to_string(),
        }
    }
}

/// Per-session memory shared by the tools and the confirmation policy: which files the
/// model has read (or written) in this session, and its task list (`todo_write`).
#[derive(Debug, Clone, Default)]
pub struct SessionState {
    files_read: Arc<Mutex<HashSet<PathBuf>>>,
    todos: Arc<Mutex<Vec<Todo>>>,
}

impl SessionState {
    /// Records that the model has seen this file's contents.
    pub fn record_read(&self, resolved: &Path) {
        if let Ok(mut files) = self.files_read.lock() {
            files.insert(resolved.to_path_buf());
        }
    }

    /// Whether the model has seen this file's contents in this session.
    pub fn was_read(&self, resolved: &Path) -> bool {
        self.files_read
            .lock()
            .map(|files| files.contains(resolved))
            .unwrap_or(false)
    }

    /// The model's task list, as its newest `todo_write` left it.
    pub fn todos(&self) -> Vec<Todo> {
        self.todos
            .lock()
            .map(|todos| todos.clone())
            .unwrap_or_default()
    }

    /// Replaces the task list.
    pub fn set_todos(&self, list: Vec<Todo>) {
        if let Ok(mut todos) = self.todos.lock() {
            *todos = list;
        }
    }

    /// Forgets all reads and the task list (a new session).
    pub fn clear(&self) {
        if let Ok(mut files) = self.files_read.lock() {
            files.clear();
        }
        self.set_todos(Vec::new());
    }
}
