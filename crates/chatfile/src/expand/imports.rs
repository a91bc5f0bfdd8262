//! `import`, `continue` and `last`: other chat files spliced in, each expanded recursively.

use std::fs;
use std::path::{Path, PathBuf};

use super::error::ExpandError;
use super::message::{ExpandedMessage, sourced};
use super::resolve::{Access, resolve};
use crate::grammar::strip;

/// Expands the messages of an imported file the way the top chat's are (imports, clear,
/// clean, files), with the chain of files that led to it.
pub(super) type ExpandImported<'a> =
    dyn Fn(Vec<ExpandedMessage>, &mut Vec<ChainLink>) -> Expanded + 'a;

/// Messages after a step, or why the chat cannot be expanded.
type Expanded = Result<Vec<ExpandedMessage>, ExpandError>;

/// One file on the way from the top chat to the one being expanded.
#[derive(Debug, Clone)]
pub(super) struct ChainLink {
    /// The path as found, for messages.
    shown: PathBuf,
    /// The path with links and `..` resolved, to recognise a file reached twice.
    identity: PathBuf,
}

impl ChainLink {
    pub(super) fn new(path: &Path) -> Self {
        ChainLink {
            shown: path.to_owned(),
            identity: fs::canonicalize(path).unwrap_or_else(|_| path.to_owned()),
        }
    }
}

/// Splices in the files that `import`, `continue` and `last` name, each expanded by `expand`;
/// an import that leads back to a file on `chain` is an error.
pub(super) fn imports(
    (working_dir, access): (&Path, &Access),
    messages: Vec<ExpandedMessage>,
    chain: &mut Vec<ChainLink>,
    expand: &ExpandImported<'_>,
) -> Expanded {
    let mut out = Vec::with_capacity(messages.len());
    for message in messages {
        let role = message.role.as_str();
        if !matches!(role, "import" | "continue" | "last") {
            out.push(message);
            continue;
        }
        let written = strip(&message.content);
        if written.is_empty() {
            // An empty import imports nothing (clean would drop it anyway).
            continue;
        }
        let found = resolve(working_dir, &message.source.file, written, Path::is_file).ok_or_else(
            || ExpandError::ImportNotFound {
                at: message.source.clone(),
                path: written.to_owned(),
            },
        )?;
        access.allow(&message.source, &found)?;
        let link = ChainLink::new(&found);
        if let Some(first) = chain.iter().position(|seen| seen.identity == link.identity) {
            let names: Vec<String> = chain[first..]
                .iter()
                .chain(std::iter::once(&link))
                .map(|seen| seen.shown.display().to_string())
                .collect();
            return Err(ExpandError::ImportCycle {
                at: message.source.clone(),
                chain: names.join(" -> "),
            });
        }
        let text = fs::read_to_string(&found).map_err(|source| ExpandError::Read {
            at: message.source.clone(),
            path: found.clone(),
            source,
        })?;
        let selected = select(role, sourced(&text, &found));
        chain.push(link);
        let expanded = expand(selected, chain);
        chain.pop();
        out.extend(expanded?);
    }
    Ok(out)
}

/// What each import role takes from the imported file: `import` every message but
/// `previous_response_id`; `continue` the last non-empty message; `last` the last non-empty
/// message once `previous_response_id` is removed.
fn select(role: &str, messages: Vec<ExpandedMessage>) -> Vec<ExpandedMessage> {
    let is_response_id = |message: &ExpandedMessage| message.role == "previous_response_id";
    let non_empty = |message: &ExpandedMessage| !strip(&message.content).is_empty();
    match role {
        "continue" => messages
            .into_iter()
            .rev()
            .find(non_empty)
            .into_iter()
            .collect(),
        "last" => messages
            .into_iter()
            .rev()
            .find(|message| !is_response_id(message) && non_empty(message))
            .into_iter()
            .collect(),
        _ => messages
            .into_iter()
            .filter(|message| !is_response_id(message))
            .collect(),
    }
}
