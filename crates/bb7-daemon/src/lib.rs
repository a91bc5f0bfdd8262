//! bb7: the daemon behind the Neovim plugin. Owns the line-delimited JSON protocol on
//! stdin/stdout, the `.bb7/` store (chats, context snapshots, outputs), request assembly and
//! sends.
//!
//! This crate is filled in by the bb7 daemon issues; for now it only fixes its place in the
//! workspace.
