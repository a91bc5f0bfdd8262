//! `.chat` files: the human-editable conversation format. Owns the parser, the loss-free
//! serializer and the expansion pipeline (imports, files, options, tool traces) that turns a
//! file into [`ybs_core::Message`]s.
//!
//! This crate is filled in by the `.chat` files issue; for now it only fixes its place in the
//! workspace.
