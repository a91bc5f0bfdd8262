//! Bench placeholder.
fn main() {}
