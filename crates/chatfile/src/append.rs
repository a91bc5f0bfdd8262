//! Appending messages to a chat file on disk, as `ybs ask --chat FILE` does after a reply.
//!
//! The bytes already in the file are kept exactly; the new messages go after them. The new file
//! is written beside the old one and renamed over it, so a crash leaves either the old file or
//! the new one, never half of either.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::parse::{BlockKind, ChatMessage, parse_document, parse_messages};
use crate::print::{PrintError, print};

/// Why messages could not be appended.
#[derive(Debug, Error)]
pub enum AppendError {
    /// A message could not be written.
    #[error("cannot append to {path}: {source}")]
    Print {
        /// The chat file.
        path: PathBuf,
        /// Why.
        source: PrintError,
    },
    /// The file ends inside a fence or XML block, which would swallow anything appended.
    #[error(
        "cannot append to {path}: the {block} opened at line {line} is never closed, so new messages would become part of it; close it and try again"
    )]
    UnclosedBlock {
        /// The chat file.
        path: PathBuf,
        /// How the block is written.
        block: &'static str,
        /// Where it opens.
        line: usize,
    },
    /// The file's text would not read back as its old messages followed by the new ones.
    #[error(
        "cannot append to {path}: the new messages would change how the existing text reads (an opening tag above may match a closing tag in the new text); fix the file and try again"
    )]
    WouldChangeMeaning {
        /// The chat file.
        path: PathBuf,
    },
    /// The file changed while the new version was being written.
    #[error("cannot append to {path}: it changed while the reply was being written; try again")]
    Changed {
        /// The chat file.
        path: PathBuf,
    },
    /// Reading or writing failed.
    #[error("cannot append to {path}: {source}")]
    Io {
        /// The chat file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
}

/// Appends `messages` at the end of the chat file at `path` (creating it when missing),
/// atomically, leaving everything already in the file byte for byte as it was.
///
/// A `[[` block left open at the end is closed with a `]]` line first (that changes no
/// message); a fence or XML block left open is an error, since closing it would change the
/// last message.
pub fn append(path: &Path, messages: &[ChatMessage]) -> Result<(), AppendError> {
    if messages.is_empty() {
        return Ok(());
    }
    let io_err = |source| AppendError::Io {
        path: path.to_owned(),
        source,
    };
    let old_bytes = match fs::read(path) {
        Ok(bytes) => Some(bytes),
        Err(err) if err.kind() == io::ErrorKind::NotFound => None,
        Err(err) => return Err(io_err(err)),
    };
    let before = fs::metadata(path)
        .ok()
        .map(|meta| (meta.len(), meta.modified().ok()));
    let old = old_bytes
        .as_deref()
        .map(String::from_utf8_lossy)
        .unwrap_or_default();
    let text = appended_text(path, &old, messages)?;

    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut file = tempfile::NamedTempFile::new_in(dir).map_err(io_err)?;
    if let Some(bytes) = &old_bytes {
        // The old bytes, not their lossy decoding: nothing above is rewritten.
        file.write_all(bytes).map_err(io_err)?;
        file.write_all(&text.as_bytes()[old.len()..])
            .map_err(io_err)?;
    } else {
        file.write_all(text.as_bytes()).map_err(io_err)?;
    }
    file.as_file().sync_all().map_err(io_err)?;
    if let Ok(meta) = fs::metadata(path) {
        fs::set_permissions(file.path(), meta.permissions()).map_err(io_err)?;
    }
    let now = fs::metadata(path)
        .ok()
        .map(|meta| (meta.len(), meta.modified().ok()));
    if now != before {
        return Err(AppendError::Changed {
            path: path.to_owned(),
        });
    }
    file.persist(path).map_err(|err| io_err(err.error))?;
    if let Ok(dir) = fs::File::open(dir) {
        // Make the rename itself durable; some platforms cannot sync a directory.
        let _ = dir.sync_all();
    }
    Ok(())
}

/// The text of the file after appending: `old` unchanged, then the new messages.
pub fn appended_text(
    path: &Path,
    old: &str,
    messages: &[ChatMessage],
) -> Result<String, AppendError> {
    let printed = print(messages).map_err(|source| AppendError::Print {
        path: path.to_owned(),
        source,
    })?;
    let document = parse_document(old);
    let mut text = old.to_owned();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    match document.unclosed {
        Some(open) if open.kind == BlockKind::Square => text.push_str("]]\n"),
        Some(open) => {
            return Err(AppendError::UnclosedBlock {
                path: path.to_owned(),
                block: open.kind.describe(),
                line: open.line,
            });
        }
        None => {}
    }
    if !text.trim().is_empty() {
        text.push('\n');
    }
    text.push_str(&printed);

    let mut expected: Vec<ChatMessage> = document
        .messages
        .iter()
        .map(|message| message.to_message())
        .collect();
    expected.extend_from_slice(messages);
    if parse_messages(&text) != expected {
        return Err(AppendError::WouldChangeMeaning {
            path: path.to_owned(),
        });
    }
    Ok(text)
}
