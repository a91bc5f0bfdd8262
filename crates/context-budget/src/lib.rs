//! Context budget: token counters (chars-per-token, cl100k/o200k BPE), the WYSIWYG prediction
//! boundary and trim loop, compaction planning and token estimate breakdowns. Pure: no I/O, no
//! async runtime.
//!
//! This crate is filled in by the context-budget issue; for now it only fixes its place in the
//! workspace.
