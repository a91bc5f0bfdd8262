//! The expansion pipeline: what happens to a parsed chat before a model is asked. This is the
//! only part of the crate that touches the file system.
//!
//! In order (notes/chatfile-rules.md): imports (`import`, `continue`, `last`, each imported
//! file expanded recursively), `clear` (and `clear_tools`), clean (empty messages and `skip`),
//! files (`file`, `directory`, `image`, `pdf`), then the extraction of options, tool requests
//! and the tool-call trace. Tasks are not run here: `task`, `inline_task` and `exec_task`
//! become [`ToolRequest`]s for the caller, like `tool` and `mcp`.

mod error;
mod extract;
mod files;
mod imports;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use error::{ExpandError, Source};

use crate::parse::{ChatMessage, parse};

/// A message after expansion, with the file and line it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpandedMessage {
    /// `system`, `user`, `assistant`, `function_call`, `function_call_output`, `image` or `pdf`.
    pub role: String,
    /// The text (for `image` and `pdf`, the resolved path).
    pub content: String,
    /// Where it came from.
    pub source: Source,
}

impl ExpandedMessage {
    /// The message without its source.
    pub fn to_message(&self) -> ChatMessage {
        ChatMessage::new(self.role.clone(), self.content.clone())
    }
}

/// The options a chat sets, later values winning.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Options {
    /// `endpoint`, `backend`, `model`, `agent`, `previous_response_id` and `sticky_option key
    /// value`: they hold across turns.
    pub sticky: BTreeMap<String, String>,
    /// `format`, `persist`, `websearch` and `option key value` set after the last `assistant`
    /// message (each assistant message clears them).
    pub transient: BTreeMap<String, String>,
}

impl Options {
    /// The options in force: the sticky ones, overridden by the transient ones.
    pub fn effective(&self) -> BTreeMap<String, String> {
        let mut all = self.sticky.clone();
        all.extend(self.transient.clone());
        all
    }
}

/// What a [`ToolRequest`] asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolRequestKind {
    /// `tool: NAME [inputs...]`: expose a tool to the model.
    Tool,
    /// `mcp: URL [tools...]` or `mcp: stdio COMMAND [tools...]`: expose an MCP server's tools.
    Mcp,
    /// `task: NAME [key=value...]`: run a tool before the model is asked; its call and result
    /// join the trace.
    Task,
    /// `inline_task: NAME [key=value...]`: run a tool; its output joins as a file.
    InlineTask,
    /// `exec_task: NAME [key=value...]`: run a tool; its output joins as a user message.
    ExecTask,
}

/// A tool line for the caller to resolve: this crate runs nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolRequest {
    /// What is asked.
    pub kind: ToolRequestKind,
    /// The line's words, split like a shell would (quotes group words).
    pub args: Vec<String>,
    /// Where the line is.
    pub source: Source,
    /// The index in [`Expansion::messages`] where the line stood: a task's output belongs
    /// before the message now at this index.
    pub position: usize,
}

/// A chat ready for a model: its messages, the options it sets and the tools it asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expansion {
    /// The conversation, in file order.
    pub messages: Vec<ExpandedMessage>,
    /// The options.
    pub options: Options,
    /// The tool lines, in file order.
    pub tools: Vec<ToolRequest>,
    /// The content of `meta` lines (bookkeeping, never sent to a model).
    pub meta: Vec<String>,
}

/// Expands chat files, resolving relative paths against the importing file's directory and
/// then a working directory.
#[derive(Debug, Clone)]
pub struct Expander {
    working_dir: PathBuf,
}

impl Expander {
    /// An expander whose second place to look for relative paths is `working_dir`.
    pub fn new(working_dir: impl Into<PathBuf>) -> Self {
        Expander {
            working_dir: working_dir.into(),
        }
    }

    /// Reads, parses and expands the chat file at `path`.
    pub fn expand_file(&self, path: &Path) -> Result<Expansion, ExpandError> {
        let text = fs::read_to_string(path).map_err(|source| ExpandError::ReadChat {
            path: path.to_owned(),
            source,
        })?;
        self.expand_text(&text, path)
    }

    /// Parses and expands `text`, read from the chat file `origin` (relative paths resolve
    /// against its directory; errors name it).
    pub fn expand_text(&self, text: &str, origin: &Path) -> Result<Expansion, ExpandError> {
        let messages = sourced(text, origin);
        let mut chain = vec![imports::ChainLink::new(origin)];
        let messages = self.expand_messages(messages, &mut chain)?;
        extract::extract(messages)
    }

    /// Imports, clear, clean and files: what an imported file goes through too.
    fn expand_messages(
        &self,
        messages: Vec<ExpandedMessage>,
        chain: &mut Vec<imports::ChainLink>,
    ) -> Result<Vec<ExpandedMessage>, ExpandError> {
        let messages = self.imports(messages, chain)?;
        let messages = clear(messages);
        let messages = clean(messages);
        self.files(messages)
    }

    /// Finds `written` relative to the directory of `from`, then the working directory
    /// (absolute paths as they are), keeping the first candidate that `fits`.
    fn resolve(&self, from: &Path, written: &str, fits: fn(&Path) -> bool) -> Option<PathBuf> {
        let path = Path::new(written);
        if path.is_absolute() {
            return fits(path).then(|| path.to_owned());
        }
        let beside = from
            .parent()
            .map(|dir| dir.join(path))
            .filter(|candidate| fits(candidate));
        beside.or_else(|| {
            let candidate = self.working_dir.join(path);
            fits(&candidate).then_some(candidate)
        })
    }
}

impl Default for Expander {
    /// An expander whose working directory is the process's current directory.
    fn default() -> Self {
        Expander::new(std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")))
    }
}

/// Reads, parses and expands the chat file at `path`, with the current directory as the
/// working directory.
pub fn expand_file(path: &Path) -> Result<Expansion, ExpandError> {
    Expander::default().expand_file(path)
}

/// The parsed messages of `text`, each with its source in `file`.
fn sourced(text: &str, file: &Path) -> Vec<ExpandedMessage> {
    parse(text)
        .into_iter()
        .map(|message| ExpandedMessage {
            role: message.role,
            content: message.content,
            source: Source {
                file: file.to_owned(),
                line: message.span.start,
            },
        })
        .collect()
}

/// Roles that `clear_tools` removes when they come before it.
const TOOL_ROLES: [&str; 4] = ["tool", "mcp", "function_call", "function_call_output"];

/// Drops everything up to and including the last `clear`; each `clear_tools` drops the tool
/// declarations and tool traces before it, and itself.
fn clear(messages: Vec<ExpandedMessage>) -> Vec<ExpandedMessage> {
    let start = messages
        .iter()
        .rposition(|message| message.role == "clear")
        .map_or(0, |at| at + 1);
    let mut kept: Vec<ExpandedMessage> = Vec::with_capacity(messages.len() - start);
    for message in messages.into_iter().skip(start) {
        if message.role == "clear_tools" {
            kept.retain(|earlier| !TOOL_ROLES.contains(&earlier.role.as_str()));
        } else {
            kept.push(message);
        }
    }
    kept
}

/// Drops empty messages and `skip` messages.
fn clean(messages: Vec<ExpandedMessage>) -> Vec<ExpandedMessage> {
    messages
        .into_iter()
        .filter(|message| {
            !crate::grammar::strip(&message.content).is_empty() && message.role != "skip"
        })
        .collect()
}
