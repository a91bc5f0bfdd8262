//! `file`, `directory`, `image` and `pdf`: files from disk in the conversation.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::error::{ExpandError, Source};
use super::message::ExpandedMessage;
use super::resolve::{Access, resolve};
use crate::grammar::strip;

fn exists(path: &Path) -> bool {
    path.exists()
}

/// Replaces `file` and `directory` lines with the files' text as user messages, and resolves
/// the paths of `image` and `pdf` lines.
pub(super) fn files(
    working_dir: &Path,
    access: &Access,
    messages: Vec<ExpandedMessage>,
) -> Result<Vec<ExpandedMessage>, ExpandError> {
    let mut out = Vec::with_capacity(messages.len());
    for message in messages {
        let fits: fn(&Path) -> bool = match message.role.as_str() {
            "file" => Path::is_file,
            "directory" => Path::is_dir,
            "image" | "pdf" => exists,
            _ => {
                out.push(message);
                continue;
            }
        };
        let written = strip(&message.content).to_owned();
        let found =
            resolve(working_dir, &message.source.file, &written, fits).ok_or_else(|| {
                ExpandError::FileNotFound {
                    at: message.source.clone(),
                    path: written.clone(),
                }
            })?;
        access.allow(&message.source, &found)?;
        match message.role.as_str() {
            "file" => out.push(file_message(&message.source, &written, &found)?),
            "directory" => {
                let files = walk(&found).map_err(|source| ExpandError::Read {
                    at: message.source.clone(),
                    path: found.clone(),
                    source,
                })?;
                for relative in files {
                    let name = format!(
                        "{}/{}",
                        written.trim_end_matches('/'),
                        relative
                            .components()
                            .map(|part| part.as_os_str().to_string_lossy())
                            .collect::<Vec<_>>()
                            .join("/")
                    );
                    let path = found.join(&relative);
                    access.allow(&message.source, &path)?;
                    out.push(file_message(&message.source, &name, &path)?);
                }
            }
            _ => out.push(ExpandedMessage {
                content: found.display().to_string(),
                ..message
            }),
        }
    }
    Ok(out)
}

/// `<file name="NAME">\nCONTENT\n</file>` as a user message.
fn file_message(at: &Source, name: &str, path: &Path) -> Result<ExpandedMessage, ExpandError> {
    let bytes = fs::read(path).map_err(|source| ExpandError::Read {
        at: at.clone(),
        path: path.to_owned(),
        source,
    })?;
    let text = String::from_utf8_lossy(&bytes);
    Ok(ExpandedMessage {
        role: "user".to_owned(),
        content: format!("<file name=\"{name}\">\n{text}\n</file>"),
        source: at.clone(),
    })
}

/// The files under `root`, relative to it, recursively, without dot files or dot directories,
/// sorted. Links to directories are not followed (they could loop).
fn walk(root: &Path) -> io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        for entry in fs::read_dir(root.join(&relative))? {
            let entry = entry?;
            let name = entry.file_name();
            if name.to_string_lossy().starts_with('.') {
                continue;
            }
            let kind = entry.file_type()?;
            let path = relative.join(&name);
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_file() || (kind.is_symlink() && entry.path().is_file()) {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}
