//! bb7: the daemon behind the bb7 Neovim plugin, a drop-in for the first bb7's daemon. It
//! reads one JSON request per stdin line and answers in JSON lines on stdout; it keeps a
//! project's chats, their context snapshots and the model's outputs under `.bb7/` (global
//! chats under `~/.bb7/chats`); it sends a chat to the model with the files in its context
//! and keeps the model's file changes as outputs, which the user applies (the daemon never
//! writes a project file). Where it differs from the first bb7 on purpose, what it adds, and
//! the choices the specs leave open are listed in `README.md`; the threat model is the
//! bb7 section of the repository's `SECURITY.md`.
//!
//! The folders are layers; each uses only those below it:
//!
//! - [`server`] (top): the process. The stdin reader (it only reads: malformed lines, `ping`,
//!   `version` and `cancel` are answered at once, everything else is queued), the worker
//!   thread that owns the session and runs the queued requests in order, and the dispatch of
//!   each request to its handler.
//! - [`send`]: the model-calling half: preparing a `send`, streaming it, applying the
//!   reply's tool calls, the hidden repair, recording the outcome; titles, token estimates,
//!   the models list and the balance; what the worker and the background tasks share
//!   ([`send::shared`]).
//! - [`session`]: the state machine and the handlers of the actions that do not call a
//!   model: chats, context files, outputs, history rewrites.
//! - [`store`]: everything on disk under `.bb7/` and `~/.bb7/`: chats and the index, confined
//!   I/O that never follows a link, locks, trust checks, the all-or-nothing commit of a send.
//! - [`wire`] (bottom): every request declared once with its reply and when it may run, the
//!   replies, the errors (their text is what the client sees), parsing a line.
//!
//! No file imports a file that imports it back.

pub mod send;
pub mod server;
pub mod session;
pub mod store;
pub mod wire;

pub use session::Session;
pub use store::global::Home;
pub use wire::error::{Error, Result};
pub use wire::{Reply, Request};
