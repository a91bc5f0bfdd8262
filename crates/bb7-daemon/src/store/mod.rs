//! Everything on disk under `.bb7/` and `~/.bb7/`. A chats directory ([`chats`]: a
//! project's `.bb7/chats` or the global `~/.bb7/chats`) holds per chat `chats/{id}/chat.json`
//! ([`model`], format version 2, older versions migrated on load), context snapshots in
//! `context/` (sections in `context/_sections/{hash}`, external files in
//! `context/_external/{hash}`, named by [`paths`]), the model's outputs in `output/` and a
//! PID lock ([`lock`]); the index `chats/index.json` changes only under an advisory lock.
//! The open chat is [`active::Active`]; the per-user config, state, logs and usage are
//! [`global`], [`logfile`] and [`usage_log`]; instruction files are [`instructions`] (an `@include` git does not vouch for, [`tracked`]
//! with the index read by [`git_index`], needs the user's consent, bound by [`consent`] to what
//! it sends).
//!
//! Safety (threat model in the bb7 section of `SECURITY.md`): every file under `.bb7/` is
//! reached through `ybs_fsguard::confined` (opened beneath the project root, no link followed,
//! regular files only) and written atomically ([`atomic`]); a send's writes land all or nothing through [`commit`],
//! and a commit cut short is finished or undone by [`recovery`]; chats a cloned repository
//! may have planted are checked by [`trust`] (`chat_get` then carries `untrusted`; such a
//! chat is not restored by `init` and not sent). Its failures are its own [`error::Error`],
//! which the handlers turn into the wire's error; this folder imports nothing above it.

pub mod active;
pub mod atomic;
pub mod chats;
pub mod commit;
pub mod consent;
pub mod dirs;
pub mod error;
pub mod events;
pub mod git_index;
pub mod global;
pub mod instructions;
pub mod lock;
pub mod logfile;
pub mod model;
pub mod paths;
pub mod recovery;
pub mod tracked;
pub mod trust;
pub mod usage_log;

pub use chats::ChatStore;
