//! Outputs and file statuses of the active chat: `get_file_statuses` (`""`, `M`, `A`, `!A`,
//! `S`, with cl100k token counts), reading and deleting outputs, accepting an output
//! (`apply_file`, `apply_file_as`: the snapshot takes the output, `UserApplyFile` /
//! `UserSaveAs` is recorded, the output removed) and the outcome of a local-vs-output diff
//! session.
//!
//! The daemon never writes a project file: the client writes the applied content itself (it
//! knows about open buffers, and keeps the file's mode and symlinks). Writes into `output/`
//! go through [`paths::guard_write`]: a destination that resolves outside the project root
//! is [`Error::ProjectEscape`], on which the daemon exits. Outputs are read, written and
//! removed beneath the chat directory without following links ([`ybs_fsguard::confined`]); a link
//! on the way to an output write is the same fatal escape.

use std::path::{Path, PathBuf};

use ybs_core::ContextAction;

use crate::send::tokens;
use crate::store::active::{Active, normalize, version_of};
use crate::store::atomic;
use crate::store::events::Event;
use crate::store::model::ContextFile;
use crate::store::paths;
use crate::wire::error::{Error, Result};

pub use super::file_status::FileStatus;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::wire::requests::{Request, fields};

    use crate::session::test_support::initialized_session as session;

    #[test]
    fn outputs_are_written_under_the_guard_and_never_for_global_chats() {
        let dir = tempfile::tempdir().unwrap();
        let mut session = session(dir.path());
        session
            .dispatch(Request::ChatNew(fields::ChatNew {
                name: "g".into(),
                model: None,
                global: true,
            }))
            .unwrap();
        let err = session
            .active()
            .unwrap()
            .write_output("a.txt", "x")
            .unwrap_err();
        assert_eq!(err.to_string(), "Global chats cannot write files");
        session
            .dispatch(Request::ChatNew(fields::ChatNew {
                name: "p".into(),
                model: None,
                global: false,
            }))
            .unwrap();
        let active = session.active_mut().unwrap();
        active.write_output("deep/a.txt", "x").unwrap();
        assert_eq!(
            active.output_files().unwrap(),
            vec!["deep/a.txt".to_owned()]
        );
        let statuses = active.file_statuses().unwrap();
        assert_eq!((statuses[0].status, statuses[0].tokens), ("A", 1));
        assert!(active.write_output("../escape.txt", "x").is_err());
        // A local link, even one pointing nowhere, is an existing file: `!A`.
        let project = dir.path().join("project").canonicalize().unwrap();
        std::fs::create_dir_all(project.join("deep")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("nowhere"), project.join("deep/a.txt")).unwrap();
        let statuses = active.file_statuses().unwrap();
        assert_eq!(statuses[0].status, "!A");
    }

    #[test]
    fn diff_local_done_outcomes() {
        let dir = tempfile::tempdir().unwrap();
        let mut session = session(dir.path());
        session
            .dispatch(Request::ChatNew(fields::ChatNew {
                name: "p".into(),
                model: None,
                global: false,
            }))
            .unwrap();
        let project = dir.path().join("project").canonicalize().unwrap();
        let active = session.active_mut().unwrap();
        std::fs::write(project.join("a.txt"), "one\n").unwrap();
        active.add_file("a.txt", "one\n", false).unwrap();
        active.write_output("a.txt", "one\ntwo\nthree\n").unwrap();
        assert_eq!(active.diff_local_done("a.txt").unwrap(), DiffOutcome::None);
        std::fs::write(project.join("a.txt"), "one\ntwo\n").unwrap();
        assert_eq!(
            active.diff_local_done("a.txt").unwrap(),
            DiffOutcome::Partial
        );
        assert_eq!(active.context_content("a.txt").unwrap(), "one\ntwo\n");
        assert!(
            active.has_output("a.txt"),
            "a partial apply keeps the output"
        );
        std::fs::write(project.join("a.txt"), "one\r\ntwo\r\nthree\r\n").unwrap();
        assert_eq!(active.diff_local_done("a.txt").unwrap(), DiffOutcome::Full);
        assert!(!active.has_output("a.txt"));
        assert_eq!(
            active.context_content("a.txt").unwrap(),
            "one\ntwo\nthree\n",
            "line endings alone do not re-snapshot, as in the first bb7"
        );
        assert_eq!(active.diff_local_done("a.txt").unwrap(), DiffOutcome::None);
        let actions: Vec<String> = active
            .chat
            .messages
            .iter()
            .filter_map(|message| match &message.parts[0] {
                ybs_core::Part::ContextEvent(event) => Some(event.action.to_string()),
                _ => None,
            })
            .collect();
        assert_eq!(
            actions,
            ["UserAddFile", "UserPartialApplyFile", "UserApplyFile"]
        );
    }
}

/// `UserPartialApplyFile`: some of an output taken into the local file.
pub fn partial_apply() -> ContextAction {
    ContextAction::Other("UserPartialApplyFile".into())
}

/// `outcome` of `diff_local_done`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffOutcome {
    /// The local file still equals the snapshot: nothing was taken.
    None,
    /// The local file equals the output: applied in full.
    Full,
    /// Some of the output was taken: the snapshot follows the local file, the output stays.
    Partial,
}

impl DiffOutcome {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            DiffOutcome::None => "none",
            DiffOutcome::Full => "full",
            DiffOutcome::Partial => "partial",
        }
    }
}

/// Fills the token counts of [`Active::file_statuses_uncounted`]: a file costs its snapshot's
/// tokens, plus its output's when it is modified (`M`); an output-only file its output's.
pub fn count_tokens(statuses: &mut [FileStatus]) {
    for status in statuses {
        let output = if status.has_output {
            tokens::count(&status.output_content)
        } else {
            0
        };
        status.output_tokens = output;
        if status.in_context {
            let context = tokens::count(&status.context_content);
            status.original_tokens = context;
            status.tokens = if status.status == "M" {
                context + output
            } else {
                context
            };
        } else {
            status.original_tokens = 0;
            status.tokens = output;
        }
    }
}

impl Active {
    /// `output/{path}` for a project-relative path.
    pub fn output_path(&self, path: &str) -> Result<PathBuf> {
        Ok(paths::join(&self.output_dir()?, path)?)
    }

    /// Whether `path` has an output file (a link or special file is none).
    pub fn has_output(&self, path: &str) -> bool {
        self.output_path(path)
            .is_ok_and(|path| self.store.fs().is_file(&path))
    }

    /// The output content of `path`.
    pub fn output_content(&self, path: &str) -> Result<String> {
        let path = self.output_path(path)?;
        self.store
            .fs()
            .read_to_string(&path)
            .map_err(|err| match err.kind() {
                std::io::ErrorKind::NotFound | std::io::ErrorKind::IsADirectory => {
                    Error::FileNotFound
                }
                _ => Error::io("read", &path)(err),
            })
    }

    /// Writes one output file (the model's writes) beneath the chat directory without
    /// following links; a link on the way is the safety guard's fatal escape. Sends commit
    /// through [`crate::store::commit`] instead, which stages all writes of a reply first.
    pub fn write_output(&self, path: &str, content: &str) -> Result<()> {
        if self.chat.global {
            return Err(Error::Invalid("Global chats cannot write files".into()));
        }
        let target = self.output_path(path)?;
        let root = self.require_root()?;
        self.store
            .fs()
            .write(&target, content.as_bytes())
            .map_err(|err| crate::store::paths::escape_or_io(root, &target, err).into())
    }

    /// All output files, as sorted project-relative paths. Links, special files and the
    /// daemon's temporary files are not outputs.
    pub fn output_files(&self) -> Result<Vec<String>> {
        let base = self.output_dir()?;
        let mut odd = Vec::new();
        let found = self
            .store
            .fs()
            .walk_files(&base, &mut odd)
            .map_err(Error::io("list", &base))?;
        if !odd.is_empty() {
            tracing::warn!(entries = ?odd, "links or special files in output/ are ignored");
        }
        Ok(found)
    }

    /// `get_file_statuses`: context files in context order, then output-only files by path.
    pub fn file_statuses(&self) -> Result<Vec<FileStatus>> {
        let mut statuses = self.file_statuses_uncounted()?;
        count_tokens(&mut statuses);
        Ok(statuses)
    }

    /// [`file_statuses`](Active::file_statuses) with every token count 0: what the session's
    /// thread gathers; [`count_tokens`] (linear, but long for a big file) runs elsewhere.
    pub fn file_statuses_uncounted(&self) -> Result<Vec<FileStatus>> {
        let mut outputs = self.output_files()?;
        let mut statuses = Vec::with_capacity(self.chat.context_files.len() + outputs.len());
        for file in &self.chat.context_files {
            let context = self.read_snapshot(file).unwrap_or_default();
            let mut status = FileStatus {
                path: file.path.clone(),
                status: "",
                in_context: true,
                has_output: false,
                readonly: file.readonly,
                external: file.external,
                context_content: context,
                output_content: String::new(),
                tokens: 0,
                original_tokens: 0,
                output_tokens: 0,
                start_line: file.start_line,
                end_line: file.end_line,
            };
            if file.section().is_some() {
                status.status = "S";
                status.readonly = true;
                statuses.push(status);
                continue;
            }
            if !file.external {
                if let Ok(position) = outputs.binary_search(&file.path) {
                    outputs.remove(position);
                    let output = self.output_content(&file.path).unwrap_or_default();
                    status.has_output = true;
                    if normalize(&output) != normalize(&status.context_content) {
                        status.status = "M";
                    }
                    status.output_content = output;
                }
            }
            statuses.push(status);
        }
        for path in outputs {
            let output = self.output_content(&path).unwrap_or_default();
            let exists_locally = self
                .root
                .as_deref()
                .and_then(|root| paths::join(root, &path).ok())
                // A link counts whatever it points at (or if it points nowhere): the client
                // must not write through it unasked.
                .is_some_and(|local| local.symlink_metadata().is_ok());
            statuses.push(FileStatus {
                path,
                status: if exists_locally { "!A" } else { "A" },
                in_context: false,
                has_output: true,
                readonly: false,
                external: false,
                context_content: String::new(),
                output_content: output,
                tokens: 0,
                original_tokens: 0,
                output_tokens: 0,
                start_line: None,
                end_line: None,
            });
        }
        Ok(statuses)
    }

    /// `apply_file`: makes the output the context snapshot (adding the file to context when
    /// the model created it), records `UserApplyFile` and removes the output. Returns the
    /// applied content, which the client writes to the project file; so `path` gets
    /// `apply_file_as`'s destination checks: nothing inside `.bb7/` or `.git/` (any case) or
    /// resolving outside the project.
    pub fn apply(&mut self, path: &str) -> Result<String> {
        let path = paths::validate_relative(path)?;
        self.destination(&path)?;
        let content = self.output_content(&path)?;
        let event = self.adopt_as_context(&path, &content, ContextAction::UserApplyFile)?;
        self.record(event);
        self.remove_output(&path)?;
        self.save()?;
        Ok(content)
    }

    /// `apply_file_as`: like [`apply`](Active::apply) but the snapshot is taken as
    /// `destination` (relative, or absolute inside the project); records `UserSaveAs` with
    /// the original path. The client writes `destination`.
    pub fn apply_as(&mut self, path: &str, destination: &str) -> Result<String> {
        let path = paths::validate_relative(path)?;
        let destination = self.destination(destination)?;
        let content = self.output_content(&path)?;
        let mut event = self.adopt_as_context(&destination, &content, ContextAction::UserSaveAs)?;
        event.original_path = Some(path.clone());
        self.record(event);
        self.remove_output(&path)?;
        self.save()?;
        Ok(content)
    }

    /// Where `apply_file_as` may take the output: a path resolving inside the project (links
    /// followed, as for context paths) and not inside `.bb7/` or `.git/`. A chat without a
    /// project (global-only mode) takes a relative path, with the same reserved directories.
    fn destination(&self, destination: &str) -> Result<String> {
        let named_destination = |err| match err {
            crate::store::error::Error::MissingField(_) => Error::MissingField("destination"),
            other => other.into(),
        };
        let invalid = |why| Error::InvalidPath {
            path: destination.to_owned(),
            why,
        };
        let placed = match self.root.as_deref() {
            Some(root) => paths::place_in_project(root, destination).map_err(named_destination)?,
            None => paths::Placed {
                path: paths::validate_relative(destination).map_err(named_destination)?,
                external: false,
            },
        };
        if placed.external {
            return Err(invalid("is outside the project"));
        }
        if paths::is_reserved(&placed.path) {
            return Err(invalid("is inside .bb7/ or .git/, which bb7 never writes"));
        }
        if let Some(root) = self.root.as_deref() {
            if let Some(dir) = paths::git_dir_on_the_way(root, &placed.path) {
                return Err(Error::InvalidPath {
                    path: destination.to_owned(),
                    why: if dir == "." {
                        "is inside a project root laid out as a git directory, which bb7 never writes"
                    } else {
                        "is inside a directory laid out as a git directory (HEAD, objects/, refs/), which bb7 never writes"
                    },
                });
            }
        }
        Ok(placed.path)
    }

    /// `output_delete`: removes an output and records `UserRejectOutput` (`prev_version`
    /// the context snapshot's id, as the first bb7 does: what the file stays at).
    pub fn reject_output(&mut self, path: &str) -> Result<()> {
        let path = paths::validate_relative(path)?;
        self.remove_output(&path)?;
        let file = self.chat.find_file(&path).cloned();
        let event = Event {
            action: ContextAction::UserRejectOutput,
            path: path.clone(),
            version: None,
            prev_version: file
                .as_ref()
                .map(|file| file.version.clone())
                .filter(|version| !version.is_empty()),
            readonly: file.as_ref().is_some_and(|file| file.readonly),
            external: file.as_ref().is_some_and(|file| file.external),
            lines: None,
            original_path: None,
        };
        self.record(event);
        Ok(self.save()?)
    }

    /// `get_diff_paths`: absolute paths of the output and of the local file.
    pub fn diff_paths(&self, path: &str) -> Result<(PathBuf, PathBuf)> {
        // The client may save the local side: the same checks as applying it.
        self.destination(path)?;
        let output = self.output_path(path)?;
        if !self.store.fs().is_file(&output) {
            return Err(Error::FileNotFound);
        }
        let local = paths::join(self.require_root()?, path)?;
        Ok((output, local))
    }

    /// `diff_local_done`: compares local, snapshot and output after a local diff session.
    pub fn diff_local_done(&mut self, path: &str) -> Result<DiffOutcome> {
        let path = paths::validate_relative(path)?;
        let Ok(output) = self.output_content(&path) else {
            return Ok(DiffOutcome::None);
        };
        // The local file becomes the snapshot (and is sent): it is read only when it resolves
        // inside the project, and only if it is a regular file.
        let root = self.require_root()?;
        let placed = paths::place_in_project(root, &path)?;
        if placed.external {
            return Ok(DiffOutcome::None);
        }
        let project = ybs_fsguard::confined::Confined::new(root);
        let Ok(local) = project.read_to_string(&root.join(&placed.path)) else {
            return Ok(DiffOutcome::None);
        };
        let context = match self.chat.find_file(&path) {
            Some(file) => self.read_snapshot(file).unwrap_or_default(),
            None => String::new(),
        };
        let local_norm = normalize(&local);
        if local_norm == normalize(&context) {
            return Ok(DiffOutcome::None);
        }
        if local_norm == normalize(&output) {
            // The user took everything: recorded with the output's id, as an apply; then the
            // snapshot silently follows the local text (a formatter may have run on save).
            self.apply(&path)?;
            self.sync_one(&path)?;
            self.save()?;
            return Ok(DiffOutcome::Full);
        }
        // Partial: the snapshot follows the local file, the output stays.
        let added = self.chat.find_file(&path).is_none();
        let event = self.adopt_as_context(&path, &local, partial_apply())?;
        let mut part = event.into_part();
        if let (ybs_core::Part::ContextEvent(event), true) = (&mut part, added) {
            event
                .extra
                .insert("added".into(), serde_json::Value::Bool(true));
        }
        self.chat.messages.push(
            ybs_core::Message::new(ybs_core::Role::Assistant, vec![part])
                .with_timestamp(crate::store::model::now()),
        );
        self.save()?;
        Ok(DiffOutcome::Partial)
    }

    /// Makes `content` the snapshot of `path` (adding it to context when absent) and returns
    /// the event describing the change.
    fn adopt_as_context(
        &mut self,
        path: &str,
        content: &str,
        action: ContextAction,
    ) -> Result<Event> {
        let existing = self.chat.find_file(path).cloned();
        let previous = existing
            .as_ref()
            .map(|file| file.version.clone())
            .unwrap_or_default();
        let mut file = existing.unwrap_or(ContextFile {
            path: path.to_owned(),
            readonly: false,
            external: false,
            version: String::new(),
            start_line: None,
            end_line: None,
        });
        file.version = version_of(&file, content);
        atomic::write_in(
            self.store.fs(),
            &self.storage_path(&file)?,
            content.as_bytes(),
        )?;
        let event = Event::about(action, &file).with_prev(previous);
        match self.chat.find_file_mut(path) {
            Some(entry) => *entry = file,
            None => self.chat.context_files.push(file),
        }
        Ok(event)
    }

    /// Deletes the outputs that no remaining assistant message produced (after history was
    /// cut: `chat_edit`, `message_delete`).
    pub fn drop_orphan_outputs(&self) -> Result<()> {
        let kept: std::collections::HashSet<&str> = self
            .chat
            .messages
            .iter()
            .filter(|message| message.role == ybs_core::Role::Assistant)
            .flat_map(|message| message.output_files.iter().flatten())
            .map(String::as_str)
            .collect();
        for path in self.output_files()? {
            if !kept.contains(path.as_str()) {
                self.remove_output(&path)?;
            }
        }
        Ok(())
    }

    /// Deletes an output file and the directories it leaves empty.
    fn remove_output(&self, path: &str) -> Result<()> {
        let base = self.output_dir()?;
        let target = self.output_path(path)?;
        let fs = self.store.fs();
        if !fs.is_file(&target) {
            return Err(Error::FileNotFound);
        }
        match fs.remove_file(&target) {
            Ok(()) => {}
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::FileNotFound);
            }
            Err(err) => return Err(Error::io("remove", &target)(err)),
        }
        let mut dir = target.parent().map(Path::to_path_buf);
        while let Some(current) = dir {
            if current == base || !current.starts_with(&base) || fs.remove_dir(&current).is_err() {
                break;
            }
            dir = current.parent().map(Path::to_path_buf);
        }
        Ok(())
    }
}
