//! `ybs ask`.

pub mod options;
pub mod tool_lines;
