//! Sessions: the conversation saved as a `.chat` file after every turn and read back by
//! `--resume` (this module), listed by [`list`], and [`undo`]: what each turn wrote, kept in memory and on disk so
//! that `/undo` and `ybs undo` can take it back, with the turn's messages and commit.

pub mod list;
pub mod undo;

use std::fs::DirBuilder;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use ybs_chatfile::{Access, Expander, from_core, print};
use ybs_core::Message;
use ybs_tools::PathSandbox;

/// Why a session could not be saved or read.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// Writing failed.
    #[error("cannot save the session to {path}: {reason}")]
    Save {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// Reading failed.
    #[error("cannot resume the session {path}: {reason}")]
    Load {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// `--resume` without a file and no session of this directory.
    #[error("no saved session for {cwd} in {dir}; start one with `ybs` or `ybs exec`")]
    NoneSaved {
        /// The project directory.
        cwd: PathBuf,
        /// Where sessions are kept.
        dir: PathBuf,
    },
}

/// Where the sessions of project `cwd` are kept: `DATA/ybs/sessions/<cwd as a name>/`, DATA
/// being `$XDG_DATA_HOME` or `~/.local/share`.
pub fn sessions_dir(data_home: &Path, cwd: &Path) -> PathBuf {
    let name = dir_name(cwd).unwrap_or_else(|| "root".to_owned());
    data_home.join("ybs").join("sessions").join(name)
}

/// A directory's path as one file name: a readable part (`/home/u/proj` gives `home-u-proj`)
/// and a hash of its real path, so that two directories never share a name (`/x/y-z` and
/// `/x-y/z` read alike but hash apart); the root directory has none (`None`).
pub fn dir_name(dir: &Path) -> Option<String> {
    use sha2::Digest;
    use std::os::unix::ffi::OsStrExt;
    let real = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    real.parent()?;
    let readable: String = (real.display().to_string().chars())
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let digest = sha2::Sha256::digest(real.as_os_str().as_bytes());
    let hash: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    let readable: String = readable.trim_matches('-').chars().take(80).collect();
    Some(format!("{readable}-{hash}"))
}

/// A new session file name in `dir`, sorting after every earlier one.
pub fn new_session_path(dir: &Path) -> PathBuf {
    let millis = (SystemTime::now().duration_since(UNIX_EPOCH))
        .map(|elapsed| elapsed.as_millis())
        .unwrap_or_default();
    dir.join(format!("session-{millis:015}-{}.chat", std::process::id()))
}

/// The newest session in `dir`.
pub fn newest(dir: &Path, cwd: &Path) -> Result<PathBuf, SessionError> {
    let none = || SessionError::NoneSaved {
        cwd: cwd.to_owned(),
        dir: dir.to_owned(),
    };
    let entries = std::fs::read_dir(dir).map_err(|_| none())?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "chat"))
        .collect();
    files.sort();
    files.pop().ok_or_else(none)
}

/// Creates `dir` and its missing parents, readable by the user only.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// Writes `conversation` to `path` atomically, creating its directory.
pub fn save(path: &Path, conversation: &[Message]) -> Result<(), SessionError> {
    let fail = |reason: String| SessionError::Save {
        path: path.to_owned(),
        reason,
    };
    // Private, as the directory's file names say which projects the user works on and when;
    // one made by an older ybs with the umask's mode is closed too.
    if let Some(dir) = path.parent() {
        create_private_dir(dir).map_err(|err| fail(err.to_string()))?;
        let private = std::fs::Permissions::from_mode(0o700);
        std::fs::set_permissions(dir, private).map_err(|err| fail(err.to_string()))?;
    }
    let text = print(&from_core(conversation)).map_err(|err| fail(err.to_string()))?;
    // Private, as a session holds the whole conversation.
    ybs_fsguard::write_atomic(
        path,
        text.as_bytes(),
        ybs_fsguard::Permissions::Exact(0o600),
    )
    .map_err(|err| fail(err.to_string()))
}

/// The largest session or chat file read back.
const MAX_SESSION_BYTES: u64 = 256 * 1024 * 1024;

/// The text of a session file: a regular file, not a link (one planted in a project to a
/// secret, or to `/dev/zero`), not a FIFO (which would hang), of at most
/// [`MAX_SESSION_BYTES`].
pub(crate) fn read_text(path: &Path) -> std::io::Result<String> {
    ybs_fsguard::read_file(path, MAX_SESSION_BYTES, ybs_fsguard::Links::Refuse)
        .and_then(|read| read.into_text(MAX_SESSION_BYTES))
}

/// Reads a saved session back as a conversation. Its `file:`, `import:` and other lines that
/// read a file may read only what `access` allows (the tools' path sandbox: [`access`]), as
/// in `ybs ask`: a session or chat file handed to `--resume` is input, not the user's choice
/// of files.
pub fn load(path: &Path, cwd: &Path, access: Access) -> Result<Vec<Message>, SessionError> {
    let fail = |reason: String| SessionError::Load {
        path: path.to_owned(),
        reason,
    };
    let text = read_text(path).map_err(|err| fail(err.to_string()))?;
    let expansion = (Expander::new(cwd)
        .with_access(access)
        .expand_text(&text, path))
    .map_err(|err| fail(err.to_string()))?;
    expansion
        .to_core_messages()
        .map_err(|err| fail(err.to_string()))
}

/// The files a chat may bring in: those `read_file` may read in `sandbox` (inside its roots,
/// outside its blocked paths, every link resolved).
pub fn access(sandbox: PathSandbox) -> Access {
    Access::new(move |path: &Path| {
        let written = path.to_string_lossy();
        (sandbox.resolve(Path::new("/"), &written))
            .map(|_| ())
            .map_err(|error| error.to_string())
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use ybs_core::{Part, Role, ToolCall, ToolResult};

    use super::*;

    #[test]
    fn a_session_file_that_is_a_link_a_fifo_or_dev_zero_is_refused_without_hanging() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("secret"), "user:\nSECRET\n").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), dir.path().join("a.chat")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", dir.path().join("b.chat")).unwrap();
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            dir.path().join("c.chat"),
            rustix::fs::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        let sandbox =
            PathSandbox::new([dir.path().display().to_string()], Vec::<String>::new()).unwrap();
        for (name, reason) in [
            ("a.chat", "link"),
            ("b.chat", "link"),
            ("c.chat", "regular"),
        ] {
            let error = load(&dir.path().join(name), dir.path(), access(sandbox.clone()))
                .unwrap_err()
                .to_string();
            assert!(error.contains(reason), "{name}: {error}");
        }
        assert!(list::sessions(dir.path()).is_empty());
    }

    #[test]
    fn directories_that_read_alike_get_two_names() {
        let one = dir_name(Path::new("/x/y-z")).unwrap();
        let two = dir_name(Path::new("/x-y/z")).unwrap();
        assert!(
            one.starts_with("x-y-z-") && two.starts_with("x-y-z-"),
            "{one} {two}"
        );
        assert_ne!(one, two);
        assert_eq!(dir_name(Path::new("/x/y-z")).unwrap(), one);
        assert_eq!(dir_name(Path::new("/")), None);
    }

    #[test]
    fn a_session_with_a_tool_trace_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = new_session_path(&sessions_dir(dir.path(), Path::new("/home/u/proj")));
        let conversation = vec![
            Message::user("list the files"),
            Message::new(
                Role::Assistant,
                vec![Part::ToolCall(ToolCall::new(
                    "c1",
                    "list_files",
                    serde_json::json!({"path": "."}),
                ))],
            ),
            Message::new(
                Role::Tool,
                vec![Part::ToolResult(ToolResult {
                    call_id: "c1".into(),
                    name: Some("list_files".into()),
                    content: "{\"files\":[\"a\"]}".into(),
                    is_error: false,
                })],
            ),
            Message::assistant("There is one file, a."),
        ];
        save(&path, &conversation).unwrap();
        let name = path
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy();
        assert!(name.starts_with("home-u-proj-"), "{name}");
        let loaded = load(&path, dir.path(), Access::default()).unwrap();
        assert_eq!(loaded.len(), 4);
        assert_eq!(loaded[0].text_content(), "list the files");
        assert_eq!(loaded[1].tool_calls().count(), 1);
        assert_eq!(loaded[3].text_content(), "There is one file, a.");
        let newest_found = newest(path.parent().unwrap(), Path::new("/p")).unwrap();
        assert_eq!(newest_found, path);
    }

    #[test]
    fn resume_without_sessions_says_where_it_looked() {
        let err = newest(Path::new("/nonexistent/s"), Path::new("/p")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no saved session for /p in /nonexistent/s; start one with `ybs` or `ybs exec`"
        );
    }
}
