//! ybs: the terminal coding agent. Owns configuration layering, the agent loop, the REPL and
//! its display, and sessions saved as `.chat` files.
//!
//! This crate is filled in by the `ybs` terminal agent issue; for now it only fixes its place in
//! the workspace.
