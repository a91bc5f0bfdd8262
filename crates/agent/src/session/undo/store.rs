//! The undo journal on disk, so that `ybs undo` can take back a run after ybs exited.
//!
//! Per project (the git work tree around the working directory, else the directory ybs ran
//! in) a directory under `$XDG_DATA_HOME/ybs/undo/` holds one directory per run (`exec`,
//! `ask` or a REPL session), named so that they sort by start time, each with one directory
//! per turn: `turn.json` (what the turn did) and the contents of its files before
//! (`N.before`) and after (`N.after`) it, and of its session file (`session.before`,
//! `session.after`). Only the newest [`KEEP_RUNS`] runs are kept; the
//! copies of the user's versions an undo saved are in `kept/`, which is never pruned.
//! Directories are private (0700), files too (0600), and every file is written atomically.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::record::{FileRecord, TurnRecord};

/// How many runs of a project are kept.
pub const KEEP_RUNS: usize = 20;
/// The description of a turn in its directory.
const MANIFEST: &str = "turn.json";
/// The format of [`MANIFEST`].
const VERSION: u32 = 1;
/// The name of the session file's contents in a turn directory.
const SESSION: &str = "session";

/// The run a journal records: written with each of its turns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunInfo {
    /// `exec`, `ask` or `repl`.
    pub command: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Manifest {
    version: u32,
    command: String,
    request: String,
    start: usize,
    ended_ms: u64,
    finished: bool,
    ran_shell: bool,
    commit: Option<Commit>,
    files: Vec<FileEntry>,
    /// The session file the turn was saved in (absent in journals written before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session: Option<FileEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Commit {
    id: String,
    root: PathBuf,
}

/// A file of the turn; its contents are `N.before` and `N.after`, N its index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct FileEntry {
    path: PathBuf,
    existed_before: bool,
    mode: Option<u32>,
    exists_after: bool,
    /// Whether its content differs after the turn (always, for a turn that did not end).
    changed: bool,
    /// Why undo cannot put it back, when it cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    unrestorable: Option<String>,
}

/// The journal on disk cannot be read: nothing was undone.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the undo journal {} cannot be read ({reason}); nothing was changed. Remove that directory \
     to undo earlier runs",
    dir.display()
)]
pub struct CorruptJournal {
    /// The turn's (or project's) directory.
    pub dir: PathBuf,
    /// Why.
    pub reason: String,
}

/// A turn found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredTurn {
    /// Its directory.
    pub dir: PathBuf,
    manifest: Manifest,
}

/// Milliseconds since the epoch.
pub fn now_ms() -> u64 {
    (SystemTime::now().duration_since(UNIX_EPOCH)).map_or(0, |elapsed| {
        u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
    })
}

/// The project around `cwd` whose journal ybs uses: the git work tree; outside git, the
/// nearest directory up from `cwd` that has a journal, else `cwd`.
pub fn project_root(data_home: &Path, cwd: &Path) -> PathBuf {
    let base = data_home.join("ybs").join("undo");
    let root = crate::project::git_root(cwd).or_else(|| {
        (cwd.ancestors())
            .find(|dir| crate::session::dir_name(dir).is_some_and(|name| base.join(name).is_dir()))
            .map(Path::to_path_buf)
    });
    root.unwrap_or_else(|| cwd.to_path_buf())
}

/// The journal directory of the project around `cwd` ([`project_root`]).
pub fn project_dir(data_home: &Path, cwd: &Path) -> PathBuf {
    let root = project_root(data_home, cwd);
    let name = crate::session::dir_name(&root).unwrap_or_else(|| "root".to_owned());
    (data_home.join("ybs").join("undo")).join(name)
}

/// The directory of a new run in the project directory `project`.
pub fn new_run_dir(project: &Path) -> PathBuf {
    project.join(format!("{:015}-{}", now_ms(), std::process::id()))
}

fn is_run_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_digit() || c == '-')
}

pub use crate::session::create_private_dir;

/// Writes `bytes` to `path` atomically, readable by the user only.
pub fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic(path, bytes, 0o600)
}

/// Writes `bytes` to `path` through a synced temporary file in the same directory renamed
/// over it, with `mode`; missing parent directories are created.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    ybs_fsguard::write_atomic(path, bytes, ybs_fsguard::Permissions::Exact(mode))
}

/// Saves `turn` of the run `info` in its directory. A turn that changed no file and ran no
/// command leaves nothing on disk. The run's first saved turn prunes the project's older runs.
pub fn save_turn(turn: &TurnRecord, info: &RunInfo, images: Images) -> io::Result<()> {
    let Some(dir) = &turn.dir else {
        return Ok(());
    };
    let changed = !turn.finished || turn.changed_files();
    if (turn.files.is_empty() || !changed) && !turn.ran_shell {
        return match fs::remove_dir_all(dir) {
            Err(error) if error.kind() != io::ErrorKind::NotFound => Err(error),
            _ => Ok(()),
        };
    }
    if let Some(run) = dir.parent().filter(|run| !run.exists()) {
        create_private_dir(run)?;
        if let Some(project) = run.parent() {
            prune(project, run, KEEP_RUNS);
        }
    }
    create_private_dir(dir)?;
    if images == Images::All {
        for (index, file) in turn.files.iter().enumerate() {
            write_images(dir, &index.to_string(), file, turn.finished)?;
        }
    }
    if let (Some(file), Images::All | Images::Session) = (&turn.session, images) {
        write_images(dir, SESSION, file, turn.finished)?;
    }
    let files = (turn.files.iter())
        .map(|file| entry(file, turn.finished))
        .collect();
    let session = (turn.session.as_ref()).map(|file| entry(file, turn.finished));
    let manifest = Manifest {
        version: VERSION,
        command: info.command.clone(),
        request: turn.request.clone(),
        start: turn.start,
        ended_ms: if turn.finished {
            turn.ended_ms
        } else {
            now_ms()
        },
        finished: turn.finished,
        ran_shell: turn.ran_shell,
        commit: (turn.commit.clone()).map(|(id, root)| Commit { id, root }),
        files,
        session,
    };
    let json = serde_json::to_vec_pretty(&manifest).map_err(io::Error::other)?;
    write_private(&dir.join(MANIFEST), &json)
}

/// Which contents [`save_turn`] writes besides the manifest: those of the turn's files and
/// its session file, of the session file only (it was just saved), or none (only the
/// manifest changed: a commit, a shell command).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Images {
    /// The files' and the session's.
    All,
    /// The session file's only.
    Session,
    /// None: only the manifest.
    None,
}

/// Writes the contents of `file` as `NAME.before` (once: a pre-image never changes) and
/// `NAME.after` in the turn directory `dir`.
fn write_images(dir: &Path, name: &str, file: &FileRecord, finished: bool) -> io::Result<()> {
    if let Some(before) = &file.before {
        let path = dir.join(format!("{name}.before"));
        if !path.exists() {
            write_private(&path, before)?;
        }
    }
    let after = dir.join(format!("{name}.after"));
    match (&file.after, finished) {
        (Some(bytes), true) => write_private(&after, bytes)?,
        _ => match fs::remove_file(&after) {
            Err(error) if error.kind() != io::ErrorKind::NotFound => return Err(error),
            _ => {}
        },
    }
    Ok(())
}

/// The manifest entry of `file`.
fn entry(file: &FileRecord, finished: bool) -> FileEntry {
    FileEntry {
        path: file.path.clone(),
        existed_before: file.before.is_some(),
        mode: file.mode,
        exists_after: finished && file.after.is_some(),
        changed: !finished || file.before != file.after,
        unrestorable: file.unrestorable.clone(),
    }
}

/// Removes all but the newest `keep` runs of `project`; `current`, the run being recorded,
/// is one of them whatever its age (a long REPL session).
fn prune(project: &Path, current: &Path, keep: usize) {
    let Ok(entries) = fs::read_dir(project) else {
        return;
    };
    let mut runs: Vec<PathBuf> = (entries.filter_map(Result::ok))
        .filter(|entry| entry.file_name().to_str().is_some_and(is_run_name))
        .map(|entry| entry.path())
        .filter(|run| run != current)
        .collect();
    runs.sort();
    let old = runs.len().saturating_sub(keep.saturating_sub(1));
    for run in &runs[..old] {
        let _ = fs::remove_dir_all(run);
    }
}

/// Every turn recorded for `project`, oldest first (by the time each ended). Any turn that
/// cannot be read is an error: which turn is newest cannot be known without it.
pub fn load(project: &Path) -> Result<Vec<StoredTurn>, CorruptJournal> {
    let corrupt = |dir: &Path, reason: String| CorruptJournal {
        dir: dir.to_path_buf(),
        reason,
    };
    let runs = match fs::read_dir(project) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(corrupt(project, error.to_string())),
    };
    let mut turns = Vec::new();
    for run in runs {
        let run = run.map_err(|error| corrupt(project, error.to_string()))?;
        if !run.file_name().to_str().is_some_and(is_run_name) {
            continue;
        }
        let entries = fs::read_dir(run.path()).map_err(|e| corrupt(&run.path(), e.to_string()))?;
        for entry in entries {
            let entry = entry.map_err(|error| corrupt(&run.path(), error.to_string()))?;
            let dir = entry.path();
            if !entry.file_name().to_string_lossy().starts_with("turn-") {
                continue;
            }
            let text = fs::read(dir.join(MANIFEST))
                .map_err(|error| corrupt(&dir, format!("{MANIFEST}: {error}")))?;
            let manifest: Manifest = serde_json::from_slice(&text)
                .map_err(|error| corrupt(&dir, format!("{MANIFEST}: {error}")))?;
            if manifest.version != VERSION {
                let reason = format!("{MANIFEST} has format {}", manifest.version);
                return Err(corrupt(&dir, reason));
            }
            turns.push(StoredTurn { dir, manifest });
        }
    }
    turns.sort_by(|a, b| (a.manifest.ended_ms, &a.dir).cmp(&(b.manifest.ended_ms, &b.dir)));
    Ok(turns)
}

impl StoredTurn {
    /// `exec`, `ask` or `repl`.
    pub fn command(&self) -> &str {
        &self.manifest.command
    }

    /// The user's request.
    pub fn request(&self) -> &str {
        &self.manifest.request
    }

    /// When the turn ended, in milliseconds since the epoch.
    pub fn ended_ms(&self) -> u64 {
        self.manifest.ended_ms
    }

    /// The files it changed (a failed write leaves a file as it was).
    pub fn changed_files(&self) -> impl Iterator<Item = &Path> {
        (self.manifest.files.iter())
            .filter(|file| file.changed)
            .map(|file| file.path.as_path())
    }

    /// Whether it ran shell commands.
    pub fn ran_shell(&self) -> bool {
        self.manifest.ran_shell
    }

    /// The turn with its files' contents, read from disk.
    pub fn record(&self) -> Result<TurnRecord, CorruptJournal> {
        let read = |name: String| {
            fs::read(self.dir.join(&name)).map_err(|error| CorruptJournal {
                dir: self.dir.clone(),
                reason: format!("{name}: {error}"),
            })
        };
        let manifest = &self.manifest;
        let record = |name: &str, file: &FileEntry| -> Result<FileRecord, CorruptJournal> {
            let before = (file.existed_before)
                .then(|| read(format!("{name}.before")))
                .transpose()?;
            let after = (file.exists_after && manifest.finished)
                .then(|| read(format!("{name}.after")))
                .transpose()?;
            Ok(FileRecord {
                path: file.path.clone(),
                before,
                mode: file.mode,
                after,
                unrestorable: file.unrestorable.clone(),
            })
        };
        let files = (manifest.files.iter().enumerate())
            .map(|(index, file)| record(&index.to_string(), file))
            .collect::<Result<Vec<_>, _>>()?;
        let session = (manifest.session.as_ref())
            .map(|file| record(SESSION, file))
            .transpose()?;
        Ok(TurnRecord {
            start: manifest.start,
            request: manifest.request.clone(),
            files,
            ran_shell: manifest.ran_shell,
            session,
            cleared: false,
            commit: (manifest.commit.clone()).map(|commit| (commit.id, commit.root)),
            finished: manifest.finished,
            ended_ms: manifest.ended_ms,
            dir: Some(self.dir.clone()),
        })
    }
}

/// Removes the turn directory `dir`, and its run's directory when no turn is left in it.
pub fn remove_turn(dir: &Path) {
    let _ = fs::remove_dir_all(dir);
    if let Some(run) = dir.parent() {
        // Only when empty.
        let _ = fs::remove_dir(run);
    }
}

/// Where an undo keeps the user's versions for the run in `run_dir`.
pub fn kept_dir(run_dir: &Path) -> PathBuf {
    run_dir.parent().unwrap_or(run_dir).join("kept")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_corrupt_or_missing_manifest_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        let turn = project.join("000000000000001-1/turn-0001");
        fs::create_dir_all(&turn).unwrap();
        let error = load(&project).unwrap_err();
        assert_eq!(error.dir, turn);
        assert!(
            error.to_string().contains("turn.json: No such file"),
            "{error}"
        );
        fs::write(turn.join("turn.json"), "{not json").unwrap();
        let error = load(&project).unwrap_err().to_string();
        assert!(
            error.contains("cannot be read (turn.json: key must be a string"),
            "{error}"
        );
        assert!(error.contains("nothing was changed"), "{error}");
    }

    #[test]
    fn the_project_is_the_git_root_or_the_nearest_directory_with_a_journal() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let sub = dir.path().join("w/a/b");
        fs::create_dir_all(&sub).unwrap();
        let base = data.join("ybs/undo");
        assert_eq!(
            project_dir(&data, &sub),
            base.join(crate::session::dir_name(&sub).unwrap())
        );
        let upper = dir.path().join("w");
        fs::create_dir_all(base.join(crate::session::dir_name(&upper).unwrap())).unwrap();
        assert_eq!(
            project_dir(&data, &sub),
            base.join(crate::session::dir_name(&upper).unwrap())
        );
        fs::create_dir(dir.path().join("w/a/.git")).unwrap();
        assert_eq!(
            project_dir(&data, &sub),
            base.join(crate::session::dir_name(&dir.path().join("w/a")).unwrap())
        );
    }
}
