//! One entry of the `file_statuses` reply: a leaf, so the reply types and the handler that
//! fills it both use it without importing each other.

use serde::Serialize;

/// One entry of a `file_statuses` reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileStatus {
    /// The file.
    pub path: String,
    /// `""`, `M`, `A`, `!A` or `S`.
    pub status: &'static str,
    /// Whether it is in context.
    pub in_context: bool,
    /// Whether it has output.
    pub has_output: bool,
    /// Read-only flag.
    pub readonly: bool,
    /// External flag.
    pub external: bool,
    /// The snapshot (for the client's sync comparison).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub context_content: String,
    /// The output (for previews).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub output_content: String,
    /// Tokens this file costs in a request.
    pub tokens: usize,
    /// Tokens of the snapshot.
    #[serde(skip_serializing_if = "is_zero")]
    pub original_tokens: usize,
    /// Tokens of the output.
    #[serde(skip_serializing_if = "is_zero")]
    pub output_tokens: usize,
    /// Section start line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_line: Option<u32>,
    /// Section end line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
}

fn is_zero(value: &usize) -> bool {
    *value == 0
}
