//! The REPL's line editor: the editor key (Ctrl-G by default, and `/edit`) opens `$VISUAL` or
//! `$EDITOR` on the current input and submits what is saved; the newline keys (Alt-Enter and
//! Ctrl-J by default) insert a newline; the keys are configured in `ui.keys` ([`super::keys`]);
//! Tab completes `@path` (and the path of `/image`) from the project's files, and `/command`
//! from the slash commands and prompt files.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;
use rustyline::{
    Cmd, ConditionalEventHandler, Editor, Event, EventContext, EventHandler, Helper, RepeatCount,
};
use ybs_agent::config::{KeyAction, UiConfig};

use super::keys;

/// What a key that interrupts the prompt asks the REPL for, with the input at that moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyRequest {
    /// The editor key: open `$VISUAL`/`$EDITOR` on this input.
    Editor(String),
    /// The paste key: read the clipboard, then go on editing this line at `pos`.
    Paste {
        /// The line so far.
        line: String,
        /// The cursor's byte position in it.
        pos: usize,
    },
}

/// Where the editor and paste keys leave their [`KeyRequest`] for the REPL.
pub type EditSlot = Arc<Mutex<Option<KeyRequest>>>;

/// The REPL's editor type.
pub type LineEditor = Editor<Completion, DefaultHistory>;

/// Completes `@path` words from the files under the project directory (and the MCP
/// servers' resources), and the first word of a line that starts with `/` from the commands.
pub struct Completion {
    /// The project directory.
    pub cwd: PathBuf,
    /// The words Tab completes besides the project's files.
    pub words: Words,
}

/// What Tab completes that is not a file of the project.
#[derive(Debug, Default)]
pub struct Words {
    /// The command names without their slash: the built-in ones, the prompt files' and the
    /// MCP servers' prompts.
    pub commands: Vec<String>,
    /// `SERVER:URI` of the MCP servers' resources, completed after `@`.
    pub mentions: Vec<String>,
}

impl Completer for Completion {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let head = &line[..pos];
        if let Some(typed) = head.strip_prefix('/')
            && !typed.contains(char::is_whitespace)
        {
            return Ok((1, command_candidates(&self.words.commands, typed)));
        }
        if let Some(path) = head.strip_prefix("/image ") {
            return Ok((pos - path.len(), path_candidates(&self.cwd, path)));
        }
        let start = head.rfind(char::is_whitespace).map_or(0, |at| at + 1);
        let Some(prefix) = head[start..].strip_prefix('@') else {
            return Ok((pos, Vec::new()));
        };
        let mut candidates = path_candidates(&self.cwd, prefix);
        candidates.extend(mention_candidates(&self.words.mentions, prefix));
        Ok((start + 1, candidates))
    }
}

/// The resources (`SERVER:URI`) that start with `prefix`, as completions.
fn mention_candidates(mentions: &[String], prefix: &str) -> Vec<Pair> {
    (mentions.iter())
        .filter(|mention| mention.starts_with(prefix))
        .map(|mention| Pair {
            display: mention.clone(),
            replacement: mention.clone(),
        })
        .collect()
}

/// The project's files and directories that start with `prefix`, as completions.
fn path_candidates(cwd: &Path, prefix: &str) -> Vec<Pair> {
    (project_files(cwd, prefix).into_iter())
        .map(|path| Pair {
            display: path.clone(),
            replacement: path,
        })
        .collect()
}

/// The commands that start with `typed` (any case), each followed by a space so that its
/// arguments can be typed next.
fn command_candidates(commands: &[String], typed: &str) -> Vec<Pair> {
    let typed = typed.to_ascii_lowercase();
    (commands.iter())
        .filter(|name| name.starts_with(&typed))
        .map(|name| Pair {
            display: format!("/{name}"),
            replacement: format!("{name} "),
        })
        .collect()
}

/// Entries of the project directory that start with `prefix` (directories with a `/`); none
/// for absolute paths or `..`, which lead out of the project, nor names with control
/// characters.
pub fn project_files(cwd: &Path, prefix: &str) -> Vec<String> {
    if prefix.starts_with('/') || prefix.split('/').any(|part| part == "..") {
        return Vec::new();
    }
    let (dir, _) = prefix.rsplit_once('/').unwrap_or(("", prefix));
    let Ok(entries) = std::fs::read_dir(cwd.join(dir)) else {
        return Vec::new();
    };
    let mut found: Vec<String> = (entries.flatten())
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            // The editor writes a completion to the terminal as it is: a name with control
            // characters (escape sequences) is not offered.
            if name.chars().any(char::is_control) {
                return None;
            }
            let path = if dir.is_empty() {
                name
            } else {
                format!("{dir}/{name}")
            };
            let is_dir = entry.file_type().ok()?.is_dir();
            let path = if is_dir { format!("{path}/") } else { path };
            path.starts_with(prefix).then_some(path)
        })
        .collect();
    found.sort();
    found
}

impl Hinter for Completion {
    type Hint = String;
}
impl Highlighter for Completion {}
impl Validator for Completion {}
impl Helper for Completion {}

/// The editor and paste keys: keep the current input and interrupt the prompt; the REPL then
/// opens the editor or reads the clipboard.
struct RequestKey {
    slot: EditSlot,
    paste: bool,
}

impl ConditionalEventHandler for RequestKey {
    fn handle(&self, _: &Event, _: RepeatCount, _: bool, ctx: &EventContext) -> Option<Cmd> {
        let line = ctx.line().to_owned();
        let request = if self.paste {
            KeyRequest::Paste {
                line,
                pos: ctx.pos(),
            }
        } else {
            KeyRequest::Editor(line)
        };
        if let Ok(mut slot) = self.slot.lock() {
            *slot = Some(request);
        }
        Some(Cmd::Interrupt)
    }
}

/// The REPL's editor with `ui`'s editing mode and key bindings, completion of `@path` under
/// `cwd` and of `words`, and the slot the editor and paste keys fill.
pub fn new(cwd: &Path, words: Words, ui: &UiConfig) -> rustyline::Result<(LineEditor, EditSlot)> {
    let config = rustyline::Config::builder()
        .edit_mode(keys::edit_mode(ui.editing_mode))
        .build();
    let mut editor = LineEditor::with_config(config)?;
    editor.set_helper(Some(Completion {
        cwd: cwd.to_owned(),
        words,
    }));
    let slot = EditSlot::default();
    for (action, key) in keys::to_bind(&ui.keys) {
        let handler = match keys::command(action) {
            Some(command) => EventHandler::Simple(command),
            None => EventHandler::Conditional(Box::new(RequestKey {
                slot: Arc::clone(&slot),
                paste: action == KeyAction::Paste,
            })),
        };
        editor.bind_sequence(keys::key_event(key), handler);
    }
    Ok((editor, slot))
}

/// The editor command: `$VISUAL`, else `$EDITOR`, else `vi`.
fn editor_command() -> String {
    ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|name| std::env::var(name).ok())
        .find(|value| !value.trim().is_empty())
        .unwrap_or_else(|| "vi".to_owned())
}

/// Opens the editor on `text` in a temporary file and returns what was saved.
pub fn edit(text: &str) -> Result<String, String> {
    let mut file = tempfile::Builder::new()
        .prefix("ybs-message-")
        .suffix(".md")
        .tempfile()
        .map_err(|e| format!("cannot make a file for the editor: {e}"))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.flush())
        .map_err(|e| format!("cannot make a file for the editor: {e}"))?;
    let command = editor_command();
    // Through the shell, so `EDITOR="code --wait"` works as in git.
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{command} \"$1\""))
        .arg("sh")
        .arg(file.path())
        .status()
        .map_err(|e| format!("cannot run the editor `{command}`: {e}"))?;
    if !status.success() {
        return Err(format!(
            "the editor `{command}` failed ({status}); nothing sent"
        ));
    }
    std::fs::read_to_string(file.path()).map_err(|e| format!("cannot read the edited text: {e}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn project_files_complete_inside_the_project_only() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/main.rs"), "").unwrap();
        std::fs::write(dir.path().join("README.md"), "").unwrap();
        assert_eq!(project_files(dir.path(), "s"), ["src/"]);
        assert_eq!(project_files(dir.path(), "src/m"), ["src/main.rs"]);
        assert_eq!(project_files(dir.path(), ""), ["README.md", "src/"]);
        assert!(project_files(dir.path(), "../").is_empty());
        assert!(project_files(dir.path(), "/etc/").is_empty());
        std::fs::write(dir.path().join("R\u{1b}]0;x\u{7}.md"), "").unwrap();
        assert_eq!(project_files(dir.path(), "R"), ["README.md"]);
    }

    #[test]
    fn commands_complete_from_their_start() {
        let commands: Vec<String> = ["exit", "edit", "effort", "review"]
            .map(String::from)
            .into();
        let shown = |typed: &str| -> Vec<String> {
            (command_candidates(&commands, typed).into_iter())
                .map(|pair| pair.replacement)
                .collect()
        };
        assert_eq!(shown("e"), ["exit ", "edit ", "effort "]);
        assert_eq!(shown("Ex"), ["exit "]);
        assert_eq!(shown("rev"), ["review "]);
        assert!(shown("zzz").is_empty());
    }

    #[test]
    fn resources_complete_after_the_at_sign() {
        let mentions: Vec<String> = ["docs:fake://readme", "docs:fake://escape", "ev:demo://a"]
            .map(String::from)
            .into();
        let shown = |typed: &str| -> Vec<String> {
            (mention_candidates(&mentions, typed).into_iter())
                .map(|pair| pair.replacement)
                .collect()
        };
        assert_eq!(shown("docs:fake://r"), ["docs:fake://readme"]);
        assert_eq!(shown("ev"), ["ev:demo://a"]);
        assert!(shown("src/").is_empty());
    }
}
