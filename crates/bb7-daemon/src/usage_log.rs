//! `~/.bb7/usage.csv`: one row per model request (time, chat, model, tokens, cost), with a
//! header when the file is new. Failures are logged, never fatal: usage is bookkeeping.

use std::io::Write;

use ybs_core::Usage;

use crate::global::Home;

/// The header row.
pub const HEADER: &str =
    "timestamp,chat_id,model,prompt_tokens,completion_tokens,cached_tokens,total_tokens,cost";

/// Appends one row.
pub fn append(home: &Home, chat_id: &str, model: &str, usage: &Usage) {
    if let Err(err) = try_append(home, chat_id, model, usage) {
        tracing::warn!(error = %err, "could not append to usage.csv");
    }
}

fn try_append(home: &Home, chat_id: &str, model: &str, usage: &Usage) -> std::io::Result<()> {
    let dir = home.bb7_dir();
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("usage.csv");
    let new = !path.exists();
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)?;
    let usage = (*usage).with_total();
    let mut text = String::new();
    if new {
        text.push_str(HEADER);
        text.push('\n');
    }
    text.push_str(&format!(
        "{},{},{},{},{},{},{},{}\n",
        crate::model::now_rfc3339(),
        field(chat_id),
        field(model),
        usage.prompt_tokens,
        usage.completion_tokens,
        usage.cached_tokens,
        usage.total_tokens,
        usage.cost.unwrap_or(0.0)
    ));
    // One write call per row, so rows of two daemons do not interleave.
    file.write_all(text.as_bytes())
}

/// A CSV field, quoted when it needs to be.
fn field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn usage(prompt_tokens: u64, completion_tokens: u64) -> Usage {
        Usage {
            prompt_tokens,
            completion_tokens,
            ..Usage::default()
        }
    }

    #[test]
    fn rows_follow_a_header() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path().to_path_buf(), None);
        append(&home, "abc", "m,1", &usage(10, 5));
        append(&home, "abc", "m", &usage(1, 1));
        let text = std::fs::read_to_string(dir.path().join(".bb7/usage.csv")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], HEADER);
        assert!(
            lines[1].ends_with(",abc,\"m,1\",10,5,0,15,0"),
            "{}",
            lines[1]
        );
        assert!(lines[2].ends_with(",abc,m,1,1,0,2,0"), "{}", lines[2]);
    }
}
