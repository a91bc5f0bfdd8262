//! The saved sessions of a project, newest first, each with its first request, when it was
//! last saved and its size: for `ybs sessions` and the REPL's `/resume`.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// One saved session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// The `.chat` file.
    pub path: PathBuf,
    /// The first user message (its first line), empty when it has none.
    pub first_request: String,
    /// When it was last saved, in seconds since the epoch.
    pub saved: u64,
    /// Its size in bytes.
    pub bytes: u64,
    /// How many user messages it has.
    pub requests: usize,
}

/// The sessions in `dir`, newest first; none when the directory does not exist. Files that
/// cannot be read are left out.
pub fn sessions(dir: &Path) -> Vec<SessionInfo> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<SessionInfo> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "chat"))
        .filter_map(|path| info(&path))
        .collect();
    // The file names sort by creation; the newest save comes first.
    found.sort_by(|a, b| (b.saved, &b.path).cmp(&(a.saved, &a.path)));
    found
}

fn info(path: &Path) -> Option<SessionInfo> {
    // Not a link: a session is a file ybs wrote.
    let metadata = std::fs::symlink_metadata(path).ok()?;
    if !metadata.is_file() {
        return None;
    }
    let text = super::read_text(path).ok()?;
    let messages = ybs_chatfile::parse_messages(&text);
    let users: Vec<_> = messages.iter().filter(|m| m.role == "user").collect();
    let first_request = first_line(users.first().map_or("", |m| m.content.as_str())).to_owned();
    let saved = (metadata.modified().ok())
        .and_then(|time| time.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |elapsed| elapsed.as_secs());
    Some(SessionInfo {
        path: path.to_owned(),
        first_request,
        saved,
        bytes: metadata.len(),
        requests: users.len(),
    })
}

/// The first line of `text` that is not blank, trimmed: how a request is named.
pub fn first_line(text: &str) -> &str {
    text.lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("")
        .trim()
}

/// `request` cut to 60 characters, `…` marking a cut.
pub fn cut_request(request: &str) -> String {
    let mut cut: String = request.chars().take(60).collect();
    if request.chars().count() > 60 {
        cut.push('…');
    }
    cut
}

/// `2026-11-25 21:40 UTC` for seconds since the epoch (said, as a list read in another zone
/// would be an hour or more off otherwise).
pub fn date(seconds: u64) -> String {
    let days = i64::try_from(seconds / 86_400).unwrap_or_default();
    let (hour, minute) = ((seconds % 86_400) / 3600, (seconds % 3600) / 60);
    let (year, month, day) = crate::prompt::env_block::civil_date(days);
    format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02} UTC")
}

/// `1.2 KB`, `340 B`.
fn size(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} B"),
        1024..1_048_576 => format!("{:.1} KB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MB", bytes as f64 / 1_048_576.0),
    }
}

/// One line per session, numbered from 1: `  1. 2026-11-25 21:40 UTC  3 requests, 4.1 KB  fix
/// the parser`; the request is cut to fit and not yet made inert.
pub fn lines(sessions: &[SessionInfo]) -> Vec<String> {
    (sessions.iter().enumerate())
        .map(|(index, session)| {
            let request = cut_request(&session.first_request);
            format!(
                "{:>3}. {}  {} {}, {}  {request}",
                index + 1,
                date(session.saved),
                session.requests,
                if session.requests == 1 {
                    "request"
                } else {
                    "requests"
                },
                size(session.bytes),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use ybs_core::Message;

    use super::*;

    #[test]
    fn dates_are_civil_utc() {
        assert_eq!(date(0), "1970-01-01 00:00 UTC");
        assert_eq!(date(1_764_106_800), "2025-11-25 21:40 UTC");
        assert_eq!(date(951_782_400), "2000-02-29 00:00 UTC");
    }

    #[test]
    fn sessions_are_listed_newest_first_with_their_first_request() {
        let dir = tempfile::tempdir().unwrap();
        let older = dir.path().join("session-1.chat");
        let newer = dir.path().join("session-2.chat");
        crate::session::save(
            &older,
            &[
                Message::user("fix the parser\nplease"),
                Message::assistant("done"),
            ],
        )
        .unwrap();
        crate::session::save(
            &newer,
            &[
                Message::user("add a test"),
                Message::assistant("ok"),
                Message::user("again"),
            ],
        )
        .unwrap();
        let old_time = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1000);
        std::fs::File::options()
            .write(true)
            .open(&older)
            .unwrap()
            .set_modified(old_time)
            .unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not a session").unwrap();
        let found = sessions(dir.path());
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].path, newer);
        assert_eq!(found[0].first_request, "add a test");
        assert_eq!(found[0].requests, 2);
        assert_eq!(found[1].first_request, "fix the parser");
        assert_eq!(found[1].saved, 1000);
        let shown = lines(&found);
        assert!(
            shown[1].starts_with("  2. 1970-01-01 00:16 UTC  1 request, "),
            "{shown:?}"
        );
        assert!(shown[1].ends_with(" B  fix the parser"), "{shown:?}");
        assert!(sessions(&dir.path().join("none")).is_empty());
    }
}
