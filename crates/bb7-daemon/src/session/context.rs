//! Context operations on the active chat: adding files and sections (snapshotted into
//! `context/`), updating, removing, toggling read-only and syncing with the disk. Each change
//! is recorded as a context event.
//!
//! Rules: external files (outside the project) are always read-only; sections are immutable
//! and always read-only; read-only cannot be set on a file with pending output; in a global
//! chat every file is external and read-only.

use std::path::Path;

use ybs_core::ContextAction;

use crate::store::active::{Active, normalize, version_of};
use crate::store::events::Event;
use crate::store::model::ContextFile;
use crate::store::paths;
use crate::wire::error::{Error, Result};
use ybs_fsguard::confined::Confined;

use crate::store::paths::Placed;

impl Active {
    fn place(&self, path: &str) -> Result<Placed> {
        if path.is_empty() {
            return Err(Error::MissingField("path"));
        }
        let absolute = Path::new(path).is_absolute();
        if self.chat.global {
            let path = match (absolute, &self.root) {
                (true, _) => path.to_owned(),
                (false, Some(root)) => root
                    .join(paths::validate_relative(path)?)
                    .display()
                    .to_string(),
                (false, None) => {
                    return Err(Error::Invalid(
                        "global chats require absolute paths when no project is set".into(),
                    ));
                }
            };
            return Ok(Placed {
                path,
                external: true,
            });
        }
        if let Some(root) = self.root.as_deref() {
            return Ok(paths::place_in_project(root, path)?);
        }
        if absolute {
            if path.contains('\0') {
                return Err(Error::InvalidPath {
                    path: path.to_owned(),
                    why: "contains a NUL byte",
                });
            }
            return Ok(Placed {
                path: path.to_owned(),
                external: true,
            });
        }
        Ok(Placed {
            path: paths::validate_relative(path)?,
            external: false,
        })
    }

    /// Writes the snapshot of a context entry; `chat.json`, saved after it, is the commit that
    /// makes it reachable (see [`Confined::write_unsynced_dir`]).
    ///
    /// [`Confined::write_unsynced_dir`]: ybs_fsguard::confined::Confined::write_unsynced_dir
    pub(crate) fn write_snapshot(&self, file: &ContextFile, content: &str) -> Result<()> {
        let path = self.storage_path(file)?;
        let fs = self.store.fs();
        let written = if self.source_is_private(file) {
            fs.write_unsynced_dir_with_mode(&path, content.as_bytes(), 0o600)
        } else {
            fs.write_unsynced_dir(&path, content.as_bytes())
        };
        written.map_err(Error::io("write", &path))
    }

    /// Whether the file a snapshot copies is readable by its owner only (`.env`,
    /// `~/.aws/credentials` at `0600`): its copy under `.bb7/` is then `0600` too, not the
    /// `0644` a new file gets. Only `stat` is used (nothing is opened); a source that cannot
    /// be examined is taken as private.
    fn source_is_private(&self, file: &ContextFile) -> bool {
        use std::os::unix::fs::PermissionsExt;
        let source = match self.root.as_deref() {
            Some(root) if !file.external && !Path::new(&file.path).is_absolute() => {
                root.join(&file.path)
            }
            _ => Path::new(&file.path).to_path_buf(),
        };
        match std::fs::metadata(&source) {
            Ok(meta) => meta.permissions().mode() & 0o077 == 0,
            Err(err) => err.kind() != std::io::ErrorKind::NotFound,
        }
    }

    /// Refuses a context path that names something other than a regular file (`/dev/tty`,
    /// `/dev/zero`, a FIFO): a client re-reading it (on open, on watch) would block. Only
    /// `stat` is used; a path that does not exist yet is left to the client.
    fn refuse_special(&self, placed: &Placed) -> Result<()> {
        let path = match self.root.as_deref() {
            Some(root) if !placed.external => root.join(&placed.path),
            _ => Path::new(&placed.path).to_path_buf(),
        };
        match std::fs::metadata(&path) {
            Ok(meta) if !meta.is_file() => Err(Error::Invalid(format!(
                "{} is not a regular file: only regular files can be context files",
                placed.path
            ))),
            _ => Ok(()),
        }
    }

    /// `context_add`: snapshots a whole file.
    pub fn add_file(&mut self, path: &str, content: &str, readonly: bool) -> Result<()> {
        let placed = self.place(path)?;
        self.refuse_special(&placed)?;
        if self.chat.find_file(&placed.path).is_some() {
            return Err(Error::FileExists);
        }
        let mut file = ContextFile {
            path: placed.path,
            readonly: readonly || placed.external,
            external: placed.external,
            version: String::new(),
            start_line: None,
            end_line: None,
        };
        file.version = version_of(&file, content);
        self.write_snapshot(&file, content)?;
        self.record(Event::about(ContextAction::UserAddFile, &file));
        self.chat.context_files.push(file);
        Ok(self.save()?)
    }

    /// `context_add_section`: snapshots lines `start..=end` (the client sends their content).
    pub fn add_section(&mut self, path: &str, content: &str, start: i64, end: i64) -> Result<()> {
        let (start, end) = section_lines(start, end)?;
        let placed = self.place(path)?;
        self.refuse_special(&placed)?;
        let exists = self
            .chat
            .context_files
            .iter()
            .any(|file| file.path == placed.path && file.section() == Some((start, end)));
        if exists {
            return Err(Error::FileExists);
        }
        let mut file = ContextFile {
            path: placed.path,
            readonly: true,
            external: placed.external,
            version: String::new(),
            start_line: Some(start),
            end_line: Some(end),
        };
        file.version = version_of(&file, content);
        self.write_snapshot(&file, content)?;
        self.record(Event::about(ContextAction::UserAddSection, &file));
        self.chat.context_files.push(file);
        Ok(self.save()?)
    }

    /// `context_update`: re-snapshots a whole file and records `UserWriteFile`. Sections are
    /// immutable.
    pub fn update_file(&mut self, path: &str, content: &str) -> Result<()> {
        let key = self.lookup_path(path);
        let Some(file) = self.chat.find_file(&key).cloned() else {
            return Err(match self.missing_or_section(&key) {
                Error::FileExists => Error::SectionImmutable,
                other => other,
            });
        };
        if let Some(now) = self.leads_elsewhere(&file)? {
            // The old snapshot must not go on being sent as if it were current: the entry
            // goes, and the user adds what the path now leads to if that is what they mean.
            self.chat
                .context_files
                .retain(|entry| !(entry.path == file.path && entry.section().is_none()));
            self.record(Event::about(ContextAction::UserRemoveFile, &file));
            self.save()?;
            return Err(Error::Invalid(format!(
                "context file {} now leads to {now} through a link: not updated, and removed \
                 from context (add {now} itself if you mean to send it)",
                file.path
            )));
        }
        // Always re-snapshotted and recorded, even when unchanged, as the first bb7 does.
        let version = version_of(&file, content);
        self.write_snapshot(&file, content)?;
        let updated = ContextFile {
            version,
            ..file.clone()
        };
        self.record(Event::about(ContextAction::UserWriteFile, &updated).with_prev(file.version));
        if let Some(entry) = self.chat.find_file_mut(&key) {
            *entry = updated;
        }
        Ok(self.save()?)
    }

    /// Where a project context file now leads when that is no longer the file it was added
    /// as: a link swapped in (the path itself or a directory on the way) since, to another
    /// project file or outside. Its content the client read through the link is never
    /// taken for it.
    fn leads_elsewhere(&self, file: &ContextFile) -> Result<Option<String>> {
        let Some(root) = self.root.as_deref() else {
            return Ok(None);
        };
        if file.external || self.chat.global {
            return Ok(None);
        }
        let placed = paths::place_in_project(root, &file.path)?;
        Ok((placed.external || placed.path != file.path).then_some(placed.path))
    }

    /// `context_remove`: drops a whole file from context (its snapshot stays for history).
    pub fn remove_file(&mut self, path: &str) -> Result<()> {
        let key = self.lookup_path(path);
        let Some(index) = self
            .chat
            .context_files
            .iter()
            .position(|file| file.path == key && file.section().is_none())
        else {
            return Err(Error::FileNotFound);
        };
        let file = self.chat.context_files.remove(index);
        self.record(Event::about(ContextAction::UserRemoveFile, &file));
        Ok(self.save()?)
    }

    /// `context_remove_section`.
    pub fn remove_section(&mut self, path: &str, start: i64, end: i64) -> Result<()> {
        let (start, end) = section_lines(start, end)?;
        let key = self.lookup_path(path);
        let Some(index) = self
            .chat
            .context_files
            .iter()
            .position(|file| file.path == key && file.section() == Some((start, end)))
        else {
            return Err(Error::FileNotFound);
        };
        let file = self.chat.context_files.remove(index);
        self.record(Event::about(ContextAction::UserRemoveSection, &file));
        Ok(self.save()?)
    }

    /// `context_set_readonly`.
    pub fn set_readonly(&mut self, path: &str, readonly: bool) -> Result<()> {
        let key = self.lookup_path(path);
        let Some(file) = self.chat.find_file(&key).cloned() else {
            return Err(match self.missing_or_section(&key) {
                Error::FileExists => Error::SectionReadOnly,
                other => other,
            });
        };
        if file.external {
            return if readonly {
                Ok(())
            } else {
                Err(Error::ExternalReadOnly)
            };
        }
        if readonly && self.has_output(&file.path) {
            return Err(Error::PendingOutput);
        }
        if file.readonly == readonly {
            return Ok(());
        }
        let updated = ContextFile { readonly, ..file };
        self.record(Event::about(ContextAction::UserSetReadOnly, &updated));
        if let Some(entry) = self.chat.find_file_mut(&key) {
            *entry = updated;
        }
        Ok(self.save()?)
    }

    /// `sync_context {path}`: the client has just written `path` (after an apply); when the
    /// local file differs from the snapshot, the snapshot silently follows it (no event: the
    /// change is the one already recorded). Files not in context, external files, sections
    /// and files missing locally are left alone.
    pub fn sync_one(&mut self, path: &str) -> Result<()> {
        let Some(root) = self.root.clone() else {
            return Ok(());
        };
        let key = self.lookup_path(path);
        let Some(file) = self.chat.find_file(&key).cloned() else {
            return Ok(());
        };
        if file.external || file.section().is_some() {
            return Ok(());
        }
        // Re-resolved now: a link swapped in since the file was added may lead outside, and
        // then the file is not read; inside, only a regular file is read, without links.
        let placed = paths::place_in_project(&root, &file.path)?;
        if placed.external {
            tracing::warn!(path = %file.path, "context file now resolves outside the project; not synced");
            return Ok(());
        }
        let Ok(local) = Confined::new(&root).read_to_string(&root.join(&placed.path)) else {
            return Ok(());
        };
        let snapshot = self.read_snapshot(&file).unwrap_or_default();
        if normalize(&local) == normalize(&snapshot) {
            return Ok(());
        }
        self.write_snapshot(&file, &local)?;
        if let Some(entry) = self.chat.find_file_mut(&file.path) {
            entry.version = version_of(&file, &local);
        }
        Ok(self.save()?)
    }

    /// `get_context_file`: the snapshot of a whole file, or else of the first section of it.
    pub fn context_content(&self, path: &str) -> Result<String> {
        let key = self.lookup_path(path);
        let file = self
            .chat
            .find_file(&key)
            .or_else(|| self.chat.context_files.iter().find(|file| file.path == key))
            .ok_or(Error::FileNotFound)?;
        Ok(self.read_snapshot(file)?)
    }

    /// `FileExists` as a marker that only sections of `path` are in context, else
    /// `FileNotFound`.
    fn missing_or_section(&self, path: &str) -> Error {
        if self.chat.context_files.iter().any(|file| file.path == path) {
            Error::FileExists
        } else {
            Error::FileNotFound
        }
    }
}

fn section_lines(start: i64, end: i64) -> Result<(u32, u32)> {
    if start <= 0 || end <= 0 {
        return Err(Error::Invalid(
            "start_line and end_line must be positive integers".into(),
        ));
    }
    if start > end {
        return Err(Error::Invalid(format!(
            "start_line ({start}) cannot be greater than end_line ({end})"
        )));
    }
    let convert = |line: i64| {
        u32::try_from(line).map_err(|_| Error::Invalid(format!("line {line} is too large")))
    };
    Ok((convert(start)?, convert(end)?))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::session::Session;
    use crate::wire::requests::{Request, fields};

    /// An initialized session with one project chat active.
    fn session(dir: &Path) -> Session {
        let mut session = crate::session::test_support::initialized_session(dir);
        session
            .dispatch(Request::ChatNew(fields::ChatNew {
                name: "c".into(),
                model: None,
                global: false,
            }))
            .unwrap();
        session
    }

    #[test]
    fn sections_are_immutable_and_always_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let mut session = session(dir.path());
        let active = session.active_mut().unwrap();
        active.add_section("a.rs", "two\nthree\n", 2, 3).unwrap();
        assert_eq!(
            active
                .add_section("a.rs", "x", 2, 3)
                .unwrap_err()
                .to_string(),
            "Context file already exists"
        );
        assert_eq!(
            active.update_file("a.rs", "new").unwrap_err().to_string(),
            "Sections are immutable: remove the section and add it again"
        );
        assert_eq!(
            active.set_readonly("a.rs", false).unwrap_err().to_string(),
            "Sections are always read-only"
        );
        assert_eq!(
            active
                .add_section("a.rs", "x", 0, 3)
                .unwrap_err()
                .to_string(),
            "start_line and end_line must be positive integers"
        );
        // A whole file and sections of it live side by side.
        active.add_file("a.rs", "one\ntwo\nthree\n", false).unwrap();
        active.update_file("a.rs", "one\n2\nthree\n").unwrap();
        assert_eq!(active.context_content("a.rs").unwrap(), "one\n2\nthree\n");
        let section = active
            .chat
            .context_files
            .iter()
            .find(|file| file.section().is_some())
            .unwrap();
        assert_eq!(active.read_snapshot(section).unwrap(), "two\nthree\n");
        assert_eq!(section.version, version_of(section, "two\nthree\n"));
        assert_eq!(
            active.remove_section("a.rs", 2, 4).unwrap_err().to_string(),
            "File not found"
        );
        active.remove_section("a.rs", 2, 3).unwrap();
        assert_eq!(active.chat.context_files.len(), 1);
    }

    #[test]
    fn absolute_paths_inside_the_project_become_relative() {
        let dir = tempfile::tempdir().unwrap();
        let mut session = session(dir.path());
        let project = dir.path().join("project").canonicalize().unwrap();
        let active = session.active_mut().unwrap();
        active
            .add_file(
                &project.join("src/lib.rs").display().to_string(),
                "x",
                false,
            )
            .unwrap();
        let file = &active.chat.context_files[0];
        assert_eq!(
            (file.path.as_str(), file.external, file.readonly),
            ("src/lib.rs", false, false)
        );
        assert_eq!(file.version, ybs_core::file_id("src/lib.rs", "x"));
        let absolute = project.join("src/lib.rs").display().to_string();
        assert_eq!(active.context_content(&absolute).unwrap(), "x");
        assert_eq!(
            active
                .add_file("src/lib.rs", "y", false)
                .unwrap_err()
                .to_string(),
            "Context file already exists"
        );
        active.remove_file(&absolute).unwrap();
        assert!(active.chat.context_files.is_empty());
    }
}
