//! The one-line summary of a tool's result that a person sees while the model gets all of
//! it (`Read src/main.rs (120 lines)`), as each tool writes it in
//! [`Tool::summarize`](crate::Tool::summarize), and the small helpers the tools share for it.
//! Styling and making the text inert are the front end's.

use serde_json::Value;

/// Lines a change adds and removes, when the front end previewed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
    /// The file did not exist before.
    pub created: bool,
}

/// A result as shown: whether it succeeded, one line, and lines under it (plain text, not
/// yet made inert).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// The call succeeded (a command that exited with another status than 0 did not).
    pub ok: bool,
    /// The line after the mark.
    pub headline: String,
    /// Lines shown under it (a command's last lines of output).
    pub detail: Vec<String>,
    /// How many lines of output are not shown.
    pub hidden: usize,
}

impl Summary {
    /// A successful result told in one line.
    pub fn ok(headline: String) -> Self {
        Summary {
            ok: true,
            headline,
            detail: Vec::new(),
            hidden: 0,
        }
    }
}

/// `n` with thousands separators: `12,345`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// `count` with its noun: `1 line`, `1,200 lines`.
pub fn counted(count: u64, one: &str, many: &str) -> String {
    format!(
        "{} {}",
        thousands(count),
        if count == 1 { one } else { many }
    )
}

/// The first `max` characters, with `…` when cut.
pub fn truncate_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max).collect();
    cut.push('…');
    cut
}

/// The call's `path` argument, or `the file` when it is missing.
pub(crate) fn path_of(arguments: &Value) -> String {
    arguments
        .get("path")
        .and_then(Value::as_str)
        .unwrap_or("the file")
        .to_owned()
}

/// A whole number field of a result or of the arguments.
pub(crate) fn number(value: &Value, key: &str) -> Option<u64> {
    value.get(key).and_then(Value::as_u64)
}

/// ` (+3 -1)` for a previewed change.
pub(crate) fn change_note(change: Change) -> String {
    format!(" (+{} -{})", change.added, change.removed)
}
