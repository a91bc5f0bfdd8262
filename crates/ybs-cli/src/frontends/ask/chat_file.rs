//! The chat file `ask` reads and appends to. It usually lies in the project, a tree someone
//! else may have shaped: a path below the working directory is opened one name at a time
//! without following a link ([`ybs_fsguard::Confined`]), so neither the file nor a directory
//! on the way can lead out of the project, for the read or for the write. A path the user
//! names outside the project is theirs: only its last name is not followed. Either way only a
//! regular file is read (a FIFO would hang, `/dev/zero` fill memory), up to a cap, and the
//! new text replaces the old atomically, keeping the file's permission bits.

use std::io;
use std::path::{Component, Path, PathBuf};

use ybs_chatfile::{AppendError, ChatMessage, appended_text};
use ybs_fsguard::Confined;

/// The largest chat file read.
const MAX_CHAT_BYTES: u64 = 256 * 1024 * 1024;

/// A chat file, and how it may be reached.
pub struct ChatFile {
    path: PathBuf,
    /// The project's confinement, for a file inside it.
    project: Option<Confined>,
}

impl ChatFile {
    /// The chat file `chat` (relative to `cwd`, or absolute).
    pub fn new(cwd: &Path, chat: &Path) -> ChatFile {
        let path = cwd.join(chat);
        let below = (path.strip_prefix(cwd).ok())
            .is_some_and(|rest| rest.components().all(|c| matches!(c, Component::Normal(_))));
        ChatFile {
            project: below.then(|| Confined::new(cwd)),
            path,
        }
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its text.
    pub fn read(&self) -> io::Result<String> {
        let read = match &self.project {
            Some(project) => project.read_capped(&self.path, MAX_CHAT_BYTES)?,
            None => ybs_fsguard::read_file(&self.path, MAX_CHAT_BYTES, ybs_fsguard::Links::Refuse)?,
        };
        read.into_text(MAX_CHAT_BYTES)
    }

    /// Appends `messages` after what the file holds now (creating it when missing), leaving
    /// every byte already there as it was; a file that changes while the new text is made is
    /// left alone.
    pub fn append(&self, messages: &[ChatMessage]) -> Result<(), AppendError> {
        if messages.is_empty() {
            return Ok(());
        }
        let io_err = |source| AppendError::Io {
            path: self.path.clone(),
            source,
        };
        let current = || match self.read() {
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(String::new()),
            read => read,
        };
        let old = current().map_err(io_err)?;
        let text = appended_text(&self.path, &old, messages)?;
        if current().map_err(io_err)? != old {
            return Err(AppendError::Changed {
                path: self.path.clone(),
            });
        }
        let written = match &self.project {
            Some(project) => project.write(&self.path, text.as_bytes()),
            None => ybs_fsguard::write_atomic(
                &self.path,
                text.as_bytes(),
                ybs_fsguard::Permissions::KeepOr(0o644),
            ),
        };
        written.map_err(io_err)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_chat_file_that_is_a_link_a_fifo_or_dev_zero_is_refused_without_hanging() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir(&project).unwrap();
        std::fs::write(dir.path().join("secret"), "SECRET").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), project.join("leak.chat")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", project.join("zero.chat")).unwrap();
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            project.join("pipe.chat"),
            rustix::fs::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        // Inside the project, and the same files named from outside it.
        for cwd in [project.as_path(), dir.path()] {
            for (name, reason) in [
                ("leak.chat", "link"),
                ("zero.chat", "link"),
                ("pipe.chat", "not a regular file"),
            ] {
                let chat = ChatFile::new(cwd, &project.join(name));
                let error = chat.read().unwrap_err().to_string();
                assert!(error.contains(reason), "{name}: {error}");
                let appended = chat.append(&[ChatMessage::new("user", "hi")]);
                assert!(appended.is_err(), "{name}");
            }
        }
        std::fs::write(project.join("ok.chat"), "@user\nhi\n").unwrap();
        let chat = ChatFile::new(&project, Path::new("ok.chat"));
        assert_eq!(chat.read().unwrap(), "@user\nhi\n");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("secret")).unwrap(),
            "SECRET"
        );
    }

    #[test]
    fn a_linked_directory_in_the_project_leads_neither_read_nor_write_out() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("kept.chat"), "@user\nold\n").unwrap();
        std::os::unix::fs::symlink(&outside, project.join("notes")).unwrap();
        for name in ["notes/todo.chat", "notes/kept.chat"] {
            let chat = ChatFile::new(&project, Path::new(name));
            assert!(chat.read().is_err(), "{name}");
            let error = chat
                .append(&[ChatMessage::new("user", "hi")])
                .unwrap_err()
                .to_string();
            assert!(error.contains("link"), "{name}: {error}");
        }
        assert!(!outside.join("todo.chat").exists());
        assert_eq!(
            std::fs::read_to_string(outside.join("kept.chat")).unwrap(),
            "@user\nold\n"
        );
    }

    #[test]
    fn appending_keeps_the_old_bytes_and_the_files_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.chat");
        std::fs::write(&path, "@user\nhi\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let chat = ChatFile::new(dir.path(), Path::new("a.chat"));
        chat.append(&[ChatMessage::new("assistant", "hello")])
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("@user\nhi\n"), "{text}");
        assert!(text.contains("hello"), "{text}");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // A new file in a new directory of the project.
        let fresh = ChatFile::new(dir.path(), Path::new("new/b.chat"));
        fresh.append(&[ChatMessage::new("user", "q")]).unwrap();
        assert!(fresh.read().unwrap().contains('q'));
    }
}
