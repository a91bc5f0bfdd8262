//! The front ends.

pub mod ask;
pub mod exec;
pub mod repl;
