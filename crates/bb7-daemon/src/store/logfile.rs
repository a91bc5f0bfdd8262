//! The daemon's log file, `~/.bb7/logs/bb7.log`, with a size cap: when a write would take it
//! past [`MAX_LOG_BYTES`] it is renamed to `bb7.log.1` (replacing the previous one) and a
//! new file is started, so the logs never hold more than about twice the cap.
//!
//! Logged strings may come from a repository (a context path, a model name): [`Escaped`]
//! writes each log record's control characters as visible escapes (`\n`, `\x1b`), so a
//! value can neither forge a log line nor put a raw escape sequence on a terminal that shows
//! the log; only the newline ending a record stays.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The largest a log file grows before it is rotated (1 MiB).
pub const MAX_LOG_BYTES: u64 = 1024 * 1024;

/// A log file rotated at a size cap.
#[derive(Debug)]
pub struct RotatingFile {
    path: PathBuf,
    file: File,
    size: u64,
    cap: u64,
}

impl RotatingFile {
    /// Opens (appending to) `path`, rotating first if it is already over `cap`.
    pub fn open(path: &Path, cap: u64) -> io::Result<RotatingFile> {
        let size = std::fs::metadata(path).map_or(0, |meta| meta.len());
        let mut log = RotatingFile {
            path: path.to_path_buf(),
            file: append(path)?,
            size,
            cap,
        };
        if size >= cap {
            log.rotate()?;
        }
        Ok(log)
    }

    /// The previous file's path (`bb7.log.1`).
    pub fn previous(path: &Path) -> PathBuf {
        let mut name = path.as_os_str().to_owned();
        name.push(".1");
        PathBuf::from(name)
    }

    fn rotate(&mut self) -> io::Result<()> {
        self.file.flush()?;
        std::fs::rename(&self.path, RotatingFile::previous(&self.path))?;
        self.file = append(&self.path)?;
        self.size = 0;
        Ok(())
    }
}

fn append(path: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
}

impl Write for RotatingFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.size > 0 && self.size + buf.len() as u64 > self.cap {
            self.rotate()?;
        }
        let written = self.file.write(buf)?;
        self.size += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// A writer that escapes the control characters of each record it is given (one `write`
/// per record, as the log formatter writes), keeping a final newline.
#[derive(Debug)]
pub struct Escaped<W>(pub W);

impl<W: Write> Write for Escaped<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let (body, end) = match buf.strip_suffix(b"\n") {
            Some(body) => (body, &b"\n"[..]),
            None => (buf, &b""[..]),
        };
        let mut clean = String::with_capacity(buf.len());
        for c in String::from_utf8_lossy(body).chars() {
            match c {
                '\n' => clean.push_str("\\n"),
                '\r' => clean.push_str("\\r"),
                c if ybs_core::is_terminal_control(c) && (c as u32) < 0x100 => {
                    clean.push_str(&format!("\\x{:02x}", c as u32));
                }
                c if ybs_core::is_terminal_control(c) => {
                    clean.push_str(&format!("\\u{{{:x}}}", c as u32));
                }
                c => clean.push(c),
            }
        }
        let mut clean = clean.into_bytes();
        clean.extend_from_slice(end);
        self.0.write_all(&clean)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn records_keep_one_line_and_no_raw_escape() {
        let mut out = Escaped(Vec::new());
        out.write_all(b"WARN path=a\n2026 FORGED \x1b[31mred\t!\n")
            .unwrap();
        assert_eq!(
            String::from_utf8(out.0).unwrap(),
            "WARN path=a\\n2026 FORGED \\x1b[31mred\t!\n"
        );
        // C1 controls (NEL, CSI) and bidi overrides from a shipped chat's id.
        let mut out = Escaped(Vec::new());
        out.write_all("chat=a\u{85}b\u{9b}31m\u{202e}txt.exe\n".as_bytes())
            .unwrap();
        assert_eq!(
            String::from_utf8(out.0).unwrap(),
            "chat=a\\x85b\\x9b31m\\u{202e}txt.exe\n"
        );
    }

    #[test]
    fn rotates_at_the_cap_keeping_one_previous_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bb7.log");
        let mut log = RotatingFile::open(&path, 100).unwrap();
        for _ in 0..25 {
            log.write_all(&[b'x'; 30]).unwrap();
        }
        let current = std::fs::metadata(&path).unwrap().len();
        let previous = std::fs::metadata(RotatingFile::previous(&path))
            .unwrap()
            .len();
        assert!(current <= 100 && previous <= 100, "{current} {previous}");
        let files = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(files, 2, "only bb7.log and bb7.log.1");
        drop(log);
        std::fs::write(&path, vec![b'y'; 150]).unwrap();
        let _log = RotatingFile::open(&path, 100).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            0,
            "an oversized log is rotated at start"
        );
    }
}
