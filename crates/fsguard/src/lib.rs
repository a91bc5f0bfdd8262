//! File access in trees that someone else may have shaped: a cloned repository, a folder a
//! model writes into, a store beside them. Every access opens one name at a time relative to
//! a directory already open, with `O_NOFOLLOW`, so a symbolic link planted anywhere (or
//! swapped in between a check and the access) makes the access fail instead of leading out.
//! Reads accept regular files only, opened without blocking and checked with `fstat` before
//! anything is read, and never read more than a cap the caller names and one byte: a FIFO,
//! `/dev/zero` or a device is refused at once. Writes are atomic (a temporary file in the same
//! directory, fsynced, renamed over the target) and keep the permission bits of the file they
//! replace. The threat model is the `fsguard` section of the repository's `SECURITY.md`.
//!
//! # Layout
//!
//! - `at`: the primitives relative to an open directory ([`open_dir_at`], [`read_beneath`],
//!   [`Kind`], [`FileId`], [`Capped`], the atomic replace); the only place that calls
//!   `openat` and `renameat`.
//! - [`confined`]: paths beneath an anchor directory ([`Confined`]: read, write, rename, list,
//!   remove, lock files), and [`confined_dir`], one directory held open for scans
//!   ([`ConfinedDir`]). bb7's store uses these.
//! - [`physical`]: absolute physical paths walked from `/` (ybs's undo, previews, instruction
//!   files).
//! - [`guarded`]: paths a [`Guard`] (the tools' path sandbox) allowed, walked from the guard's
//!   root and checked by identity against what it blocks (the file tools).
//! - [`by_path`]: a program's own files by path, the directory trusted: capped reads of
//!   regular files ([`read_file`]), atomic writes ([`write_atomic`]).
//! - [`ownership`]: whether a directory belongs to another user ([`owned_by_someone_else`]),
//!   so nothing above the user's own files is taken from a stranger.
//! - [`ignore_files`]: keeps a walk built on the `ignore` crate from reading an ignore file
//!   that is a FIFO, a device or huge.
//!
//! ```
//! # fn main() -> std::io::Result<()> {
//! let dir = tempfile::tempdir()?;
//! let store = ybs_fsguard::Confined::new(dir.path());
//! let file = dir.path().join("state/settings.json");
//! store.write(&file, b"{}")?; // atomic; missing directories are made
//! let read = store.read_capped(&file, 1024)?; // at most 1 KiB, regular files only
//! assert_eq!(read.bytes, b"{}");
//! assert!(!read.truncated);
//! # Ok(())
//! # }
//! ```

mod at;
pub mod by_path;
pub mod confined;
pub mod confined_dir;
pub mod guarded;
pub mod ignore_files;
pub mod ownership;
pub mod physical;

pub use at::{Capped, FileId, Kind, open_dir_at, read_beneath};
pub use by_path::{Links, Permissions, read_file, write_atomic};
pub use confined::{Confined, Refused, refusal};
pub use confined_dir::ConfinedDir;
pub use guarded::{Guard, Refusal, SafeFsError};
pub use ownership::owned_by_someone_else;
pub use physical::NoFollowError;
