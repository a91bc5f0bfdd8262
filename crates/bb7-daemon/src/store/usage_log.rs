//! `~/.bb7/usage.csv`, in the first bb7's format, which its client reads to sum today's cost:
//! no header; one row per paid call (cost above zero): local time `YYYY-MM-DDTHH:MM:SS`,
//! project root (empty in global-only mode), model, prompt, completion and cached tokens,
//! cost with six decimals. Failures are logged, never fatal: usage is bookkeeping. Text
//! fields are quoted as RFC 4180 says when they must be, formula-leading ones prefixed with
//! `'`, control characters escaped (see [`field`]).

use std::io::Write;
use std::path::Path;

use ybs_core::Usage;

use crate::store::global::Home;

/// Appends one row for a call that cost something.
pub fn append(home: &Home, project_root: Option<&Path>, model: &str, usage: &Usage) {
    let cost = usage.cost.unwrap_or(0.0);
    if cost <= 0.0 {
        return;
    }
    if let Err(err) = try_append(home, &row(project_root, model, usage, cost)) {
        tracing::warn!(error = %err, "could not append to usage.csv");
    }
}

/// One row, newline included. The text fields (project root, model) may come from a
/// restored chat: see [`field`].
fn row(project_root: Option<&Path>, model: &str, usage: &Usage, cost: f64) -> String {
    format!(
        "{},{},{},{},{},{},{:.6}\n",
        chrono::Local::now().format("%Y-%m-%dT%H:%M:%S"),
        field(
            &project_root
                .map(|root| root.display().to_string())
                .unwrap_or_default()
        ),
        field(model),
        usage.prompt_tokens,
        usage.completion_tokens,
        usage.cached_tokens,
        cost
    )
}

/// A text field that can neither forge a row nor run as a spreadsheet formula: control
/// characters (a newline would start a forged row, even inside quotes for a line-based
/// reader) are written as `\u{..}` escapes, a field starting with `=`, `+`, `-`, `@` gets a
/// leading `'`, and a field holding `,` or `"` is quoted as RFC 4180 says.
fn field(text: &str) -> String {
    let mut clean: String = text
        .chars()
        .map(|c| {
            if c.is_control() {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect();
    if clean.starts_with(['=', '+', '-', '@']) {
        clean.insert(0, '\'');
    }
    if clean.contains([',', '"']) {
        format!("\"{}\"", clean.replace('"', "\"\""))
    } else {
        clean
    }
}

fn try_append(home: &Home, row: &str) -> std::io::Result<()> {
    let dir = home.bb7_dir();
    std::fs::create_dir_all(&dir)?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("usage.csv"))?;
    // One write call per row, so rows of two daemons do not interleave.
    file.write_all(row.as_bytes())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn usage(prompt_tokens: u64, completion_tokens: u64, cost: f64) -> Usage {
        Usage {
            prompt_tokens,
            completion_tokens,
            cached_tokens: 3,
            cost: Some(cost),
            ..Usage::default()
        }
    }

    #[test]
    fn paid_calls_get_one_row_in_the_first_bb7_format() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path().to_path_buf(), None);
        append(
            &home,
            Some(Path::new("/p/roj")),
            "a/m",
            &usage(10, 5, 0.0125),
        );
        append(&home, None, "a/m", &usage(1, 1, 0.0));
        append(&home, None, "b/m", &usage(1, 2, 0.5));
        let text = std::fs::read_to_string(dir.path().join(".bb7/usage.csv")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "no header, free calls left out: {text}");
        let (time, rest) = lines[0].split_once(',').unwrap();
        assert!(
            chrono::NaiveDateTime::parse_from_str(time, "%Y-%m-%dT%H:%M:%S").is_ok(),
            "{time}"
        );
        assert_eq!(rest, "/p/roj,a/m,10,5,3,0.012500");
        assert!(lines[1].ends_with(",,b/m,1,2,3,0.500000"), "{}", lines[1]);
    }

    #[test]
    fn hostile_fields_neither_forge_rows_nor_run_as_formulas() {
        assert_eq!(field("a/m"), "a/m");
        assert_eq!(
            field("m\n2026-01-01T00:00:00,/p,x,1,1,1,999999.000000"),
            "\"m\\u{a}2026-01-01T00:00:00,/p,x,1,1,1,999999.000000\""
        );
        assert_eq!(
            field("=HYPERLINK(\"http://x\")"),
            "\"'=HYPERLINK(\"\"http://x\"\")\""
        );
        assert_eq!(field("@cmd"), "'@cmd");
        assert_eq!(field("-1+2"), "'-1+2");
        assert_eq!(field("a\x1b[31m"), "a\\u{1b}[31m");
    }
}
