//! The confined walk of `list_files` and `search_files`: the regular files below a base
//! directory, one directory at a time, in parallel.
//!
//! Each directory is opened relative to the directory it was listed in, without following a
//! link ([`ybs_fsguard::open_dir_at`]), so a directory renamed or swapped for a symlink during the
//! walk cannot lead it out of the tree, and is checked against the blocked set by what it
//! is (its device and inode, from one `fstat` of the open directory) and by its path, before
//! it is listed; a blocked directory's files are never reached. A file is compared with the
//! blocked paths only when one ends in its name, and `stat`ed only when its inode (which the
//! listing gives) is the inode of something blocked: the files of a tree cost no system call
//! and no path comparison each. `.git` is skipped and the ignore files are respected
//! ([`super::walk_rules`]). A visitor gets each file with its open directory, so a search
//! opens it with one no-follow open of its name.
//!
//! The directories wait on a shared stack; each thread takes one, pushes its subdirectories
//! and then visits its files, and sleeps on a condition variable when the stack is empty
//! while another thread may still push more. The listing is read with `getdents64` into one
//! 32 KB buffer per thread; an entry's path is built in a buffer reused from entry to entry.

use std::ffi::OsStr;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use rustix::fs::{AtFlags, FileType, RawDir};
use ybs_fsguard::open_dir_at;

use super::walk_rules::{self, Found, Rules};
use crate::PathSandbox;
use ybs_fsguard::FileId;

/// A regular file the walk found.
pub(crate) struct FileEntry<'a> {
    /// The directory holding it, as the walk opened and checked it.
    pub dir: BorrowedFd<'a>,
    /// Its name in that directory.
    pub name: &'a OsStr,
    /// Its path below the walk's base.
    pub relative: &'a Path,
}

/// Visits the regular files below `base` (see the module documentation), on as many threads
/// as there are cores (at most 12). `visitor` makes one visitor per thread, dropped when the
/// thread is done. Nothing is visited when `base` cannot be opened as a directory without
/// following a link or is blocked.
pub(crate) fn walk<F, V>(base: &Path, sandbox: &PathSandbox, visitor: F)
where
    F: Fn() -> V + Sync,
    V: FnMut(&FileEntry<'_>),
{
    // The no-follow walk gives an `O_PATH` descriptor; the directory itself, to be listed,
    // is opened through it.
    let Ok(Some(path_fd)) = ybs_fsguard::physical::open_dir(base) else {
        return;
    };
    let Ok(fd) = open_dir_at(&path_fd, OsStr::new(".")) else {
        return;
    };
    drop(path_fd);
    let shared = Shared {
        base,
        sandbox,
        stack: Mutex::new(Stack {
            jobs: vec![Job {
                open: Open::Base(fd),
                relative: Vec::new(),
                rules: walk_rules::above(base),
            }],
            busy: 0,
        }),
        ready: Condvar::new(),
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(12));
    std::thread::scope(|scope| {
        for _ in 1..threads {
            scope.spawn(|| shared.work(visitor()));
        }
        shared.work(visitor());
    });
}

/// A directory to walk.
struct Job {
    open: Open,
    /// Its path below the base (empty for the base).
    relative: Vec<u8>,
    /// The rules of the directories above it.
    rules: Option<Arc<Rules>>,
}

/// How a directory to walk is opened.
enum Open {
    /// The base, already open.
    Base(OwnedFd),
    /// By its name in its open parent.
    At(Arc<OwnedFd>, Box<[u8]>),
}

/// The directories waiting, and how many threads are walking one (and may push more).
struct Stack {
    jobs: Vec<Job>,
    busy: usize,
}

struct Shared<'a> {
    base: &'a Path,
    sandbox: &'a PathSandbox,
    stack: Mutex<Stack>,
    ready: Condvar,
}

/// One thread's buffers, reused from directory to directory.
struct Buffers {
    listing: Vec<MaybeUninit<u8>>,
    /// The names of the current directory's entries, one after another.
    names: Vec<u8>,
    /// Each entry: where its name is in `names`, its type and its inode.
    entries: Vec<(usize, usize, FileType, u64)>,
    /// The path below the base of the entry at hand.
    relative: Vec<u8>,
    /// A full path (for the blocked paths).
    full: PathBuf,
    scratch: Vec<u8>,
}

impl Shared<'_> {
    fn work<V: FnMut(&FileEntry<'_>)>(&self, mut visit: V) {
        let mut buffers = Buffers {
            listing: vec![MaybeUninit::uninit(); 32 * 1024],
            names: Vec::new(),
            entries: Vec::new(),
            relative: Vec::new(),
            full: PathBuf::new(),
            scratch: Vec::new(),
        };
        while let Some(job) = self.next() {
            // Done with the directory even if the visitor panics, so no thread waits forever.
            let _busy = Busy(self);
            self.walk_dir(job, &mut buffers, &mut visit);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Stack> {
        self.stack.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next directory to walk, waiting while other threads may still push one; `None`
    /// when the walk is over.
    fn next(&self) -> Option<Job> {
        let mut stack = self.lock();
        loop {
            if let Some(job) = stack.jobs.pop() {
                stack.busy += 1;
                return Some(job);
            }
            if stack.busy == 0 {
                return None;
            }
            stack = self
                .ready
                .wait(stack)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn push(&self, jobs: &mut Vec<Job>) {
        if jobs.is_empty() {
            return;
        }
        self.lock().jobs.append(jobs);
        self.ready.notify_all();
    }

    /// Opens, checks and lists one directory; pushes its subdirectories, then visits its
    /// files.
    fn walk_dir<V: FnMut(&FileEntry<'_>)>(&self, job: Job, buffers: &mut Buffers, visit: &mut V) {
        let fd = match job.open {
            Open::Base(fd) => fd,
            Open::At(parent, name) => match open_dir_at(&*parent, OsStr::from_bytes(&name)) {
                Ok(fd) => fd,
                Err(_) => return,
            },
        };
        let Ok(stat) = rustix::fs::fstat(&fd) else {
            return;
        };
        set_full(&mut buffers.full, self.base, &job.relative);
        if self.sandbox.is_blocked_id(FileId::from_stat(&stat))
            || self.sandbox.is_blocked(&buffers.full)
        {
            return;
        }
        let found = list(&fd, buffers);
        let rules = walk_rules::below(job.rules, fd.as_fd(), &buffers.full, &job.relative, found);
        let fd = Arc::new(fd);
        let Buffers {
            names,
            entries,
            relative,
            full,
            scratch,
            ..
        } = buffers;
        let mut subdirs = Vec::new();
        for pass in [Pass::Dirs, Pass::Files] {
            for &(start, end, kind, ino) in entries.iter() {
                let name = &names[start..end];
                let kind = match kind {
                    FileType::Unknown => {
                        match rustix::fs::statat(
                            &*fd,
                            OsStr::from_bytes(name),
                            AtFlags::SYMLINK_NOFOLLOW,
                        ) {
                            Ok(stat) => FileType::from_raw_mode(stat.st_mode),
                            Err(_) => continue,
                        }
                    }
                    kind => kind,
                };
                let wanted = match pass {
                    Pass::Dirs => kind == FileType::Directory,
                    Pass::Files => kind == FileType::RegularFile,
                };
                if !wanted || name == b".git" {
                    continue;
                }
                relative.clear();
                relative.extend_from_slice(&job.relative);
                if !job.relative.is_empty() {
                    relative.push(b'/');
                }
                relative.extend_from_slice(name);
                let is_dir = pass == Pass::Dirs;
                if walk_rules::ignores(rules.as_ref(), relative, is_dir, scratch) {
                    continue;
                }
                if is_dir {
                    subdirs.push(Job {
                        open: Open::At(fd.clone(), name.into()),
                        relative: relative.clone(),
                        rules: rules.clone(),
                    });
                    continue;
                }
                let name = OsStr::from_bytes(name);
                if self.file_is_blocked(&fd, name, ino, relative, full) {
                    continue;
                }
                visit(&FileEntry {
                    dir: fd.as_fd(),
                    name,
                    relative: Path::new(OsStr::from_bytes(relative)),
                });
            }
            if pass == Pass::Dirs {
                // Pushed before the files are visited, so other threads can take them.
                self.push(&mut subdirs);
            }
        }
    }

    /// Whether the file `name` in `dir` is blocked, by its path or, under another name, by
    /// its identity (see the module documentation for the cheap tests first).
    fn file_is_blocked(
        &self,
        dir: &OwnedFd,
        name: &OsStr,
        ino: u64,
        relative: &[u8],
        full: &mut PathBuf,
    ) -> bool {
        if self.sandbox.may_block_name(name) {
            set_full(full, self.base, relative);
            if self.sandbox.is_blocked(full) {
                return true;
            }
        }
        if !self.sandbox.may_be_blocked_ino(ino) {
            return false;
        }
        rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|stat| self.sandbox.is_blocked_id(FileId::from_stat(&stat)))
    }
}

/// A directory being walked: when it is done, the thread is no longer busy, and when no
/// thread is busy and no directory waits, the waiting threads are woken to finish.
struct Busy<'s, 'a>(&'s Shared<'a>);

impl Drop for Busy<'_, '_> {
    fn drop(&mut self) {
        let mut stack = self.0.lock();
        stack.busy -= 1;
        if stack.busy == 0 && stack.jobs.is_empty() {
            self.0.ready.notify_all();
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    Dirs,
    Files,
}

/// Sets `full` to `base` joined with `relative`.
fn set_full(full: &mut PathBuf, base: &Path, relative: &[u8]) {
    full.clear();
    full.push(base);
    if !relative.is_empty() {
        full.push(OsStr::from_bytes(relative));
    }
}

/// Reads the listing of `fd` into `buffers.names` and `buffers.entries` (without `.` and
/// `..`), and notes which ignore files it has. A listing that fails part way keeps what was
/// read.
fn list(fd: &OwnedFd, buffers: &mut Buffers) -> Found {
    buffers.names.clear();
    buffers.entries.clear();
    let mut found = Found::default();
    let mut listing = RawDir::new(fd, &mut buffers.listing);
    while let Some(entry) = listing.next() {
        let Ok(entry) = entry else {
            break;
        };
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        found.note(name);
        let start = buffers.names.len();
        buffers.names.extend_from_slice(name);
        buffers
            .entries
            .push((start, buffers.names.len(), entry.file_type(), entry.ino()));
    }
    found
}
