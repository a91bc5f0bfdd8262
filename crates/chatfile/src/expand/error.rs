//! The errors of the expansion pipeline. Each names the chat file and line it comes from.

use std::fmt;
use std::io;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Where a message comes from: a chat file and a 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Source {
    /// The chat file.
    pub file: PathBuf,
    /// The line of the message's header (or first line of text).
    pub line: usize,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// Why a chat could not be expanded.
#[derive(Debug, Error)]
pub enum ExpandError {
    /// An `import`, `continue` or `last` names a file that does not exist.
    #[error("{at}: Import not found: {path}")]
    ImportNotFound {
        /// The importing message.
        at: Source,
        /// The path as written.
        path: String,
    },
    /// A chat imports itself, directly or through others.
    #[error("{at}: Import cycle: {chain}")]
    ImportCycle {
        /// The import that closes the cycle.
        at: Source,
        /// The files of the cycle, `a.chat -> b.chat -> a.chat`.
        chain: String,
    },
    /// A `file`, `directory`, `image` or `pdf` names a path that does not exist.
    #[error("{at}: File not found: {path}")]
    FileNotFound {
        /// The message.
        at: Source,
        /// The path as written.
        path: String,
    },
    /// A `function_call` or `function_call_output` whose content is not the expected JSON.
    #[error("{at}: malformed {role} JSON: {reason}")]
    MalformedTrace {
        /// The message.
        at: Source,
        /// `function_call` or `function_call_output`.
        role: String,
        /// What is wrong.
        reason: String,
    },
    /// A role this implementation has no counterpart for.
    #[error("{at}: unsupported role `{role}`: {hint}")]
    UnsupportedRole {
        /// The message.
        at: Source,
        /// The role.
        role: String,
        /// What to do instead.
        hint: String,
    },
    /// A `tool`, `mcp` or task line whose arguments cannot be split into words.
    #[error("{at}: cannot read the arguments of `{role}`: {reason}")]
    BadArguments {
        /// The message.
        at: Source,
        /// The role.
        role: String,
        /// What is wrong (an unbalanced quote).
        reason: String,
    },
    /// A file could not be read.
    #[error("{at}: cannot read {path}: {source}")]
    Read {
        /// The message that asked for the file.
        at: Source,
        /// The resolved path.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The caller does not let the chat read the file (outside the sandbox, blocked).
    #[error("{at}: {path} may not be read: {reason}")]
    Denied {
        /// The message that asked for the file.
        at: Source,
        /// The resolved path.
        path: PathBuf,
        /// Why not.
        reason: String,
    },
    /// The chat file itself could not be read.
    #[error("cannot read chat file {path}: {source}")]
    ReadChat {
        /// The chat file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
}
