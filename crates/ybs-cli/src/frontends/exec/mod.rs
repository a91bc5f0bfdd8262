//! `ybs exec`.

pub mod json;
