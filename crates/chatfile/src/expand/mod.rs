//! The expansion pipeline: what happens to a parsed chat before a model is asked. This is the
//! only part of the crate that touches the file system.
//!
//! In order (notes/chatfile-rules.md): imports (`import`, `continue`, `last`, each imported
//! file expanded recursively), `clear` (and `clear_tools`), clean (empty messages and `skip`),
//! files (`file`, `directory`, `image`, `pdf`), then the extraction of options, tool requests
//! and the tool-call trace. Tasks are not run here: `task`, `inline_task` and `exec_task`
//! become [`ToolRequest`]s for the caller, like `tool` and `mcp`.
//!
//! This module runs the steps in that order; each step is a module below it (`imports`,
//! `files`, `extract`), over the types of `message` and `error`; `trace` reads the tool-call
//! lines and `to_core` turns an [`Expansion`] into core messages.

mod error;
mod extract;
mod files;
mod imports;
mod message;
mod resolve;
mod to_core;
mod trace;

use std::fs;
use std::path::{Path, PathBuf};

pub use error::{ExpandError, Source};
pub use message::{ExpandedMessage, Expansion, Options, ToolRequest, ToolRequestKind};
pub use resolve::Access;

use extract::extract;
use files::files;
use imports::{ChainLink, imports};
use message::sourced;

/// Expands chat files, resolving relative paths against the importing file's directory and
/// then a working directory.
#[derive(Debug, Clone)]
pub struct Expander {
    working_dir: PathBuf,
    access: Access,
}

impl Expander {
    /// An expander whose second place to look for relative paths is `working_dir`.
    pub fn new(working_dir: impl Into<PathBuf>) -> Self {
        Expander {
            working_dir: working_dir.into(),
            access: Access::default(),
        }
    }

    /// The expander with the files its chats may read limited by `access`.
    pub fn with_access(mut self, access: Access) -> Self {
        self.access = access;
        self
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
        let mut chain = vec![ChainLink::new(origin)];
        let messages = self.expand_messages(messages, &mut chain)?;
        extract(messages)
    }

    /// Imports, clear, clean and files: what an imported file goes through too.
    fn expand_messages(
        &self,
        messages: Vec<ExpandedMessage>,
        chain: &mut Vec<ChainLink>,
    ) -> Result<Vec<ExpandedMessage>, ExpandError> {
        let expand_imported =
            |messages, chain: &mut Vec<ChainLink>| self.expand_messages(messages, chain);
        let messages = imports(
            (&self.working_dir, &self.access),
            messages,
            chain,
            &expand_imported,
        )?;
        let messages = clear(messages);
        let messages = clean(messages);
        files(&self.working_dir, &self.access, messages)
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
