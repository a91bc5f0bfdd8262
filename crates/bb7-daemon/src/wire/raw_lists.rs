//! Long lists of a reply written straight to JSON text, their keys sorted as
//! [`crate::wire::sorted`] sorts them, without building a `serde_json::Value` tree first:
//! for `context_list`, answered many times in a row, that tree (an allocation per key and per
//! string) cost more than everything else the request does.

use std::io::Write as _;

use crate::store::model::ContextFile;

/// `files` as the JSON array [`crate::wire::replies::ContextList`] serializes to, each
/// object's keys sorted.
pub fn context_files(files: &[ContextFile]) -> String {
    let mut out: Vec<u8> = Vec::with_capacity(files.len() * 96 + 2);
    out.push(b'[');
    for (index, file) in files.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        // The fields in sorted order, those left out when empty left out here too.
        out.push(b'{');
        if let Some(end) = file.end_line {
            let _ = write!(out, "\"end_line\":{end},");
        }
        let _ = write!(out, "\"external\":{},\"path\":", file.external);
        string(&mut out, &file.path);
        let _ = write!(out, ",\"readonly\":{}", file.readonly);
        if let Some(start) = file.start_line {
            let _ = write!(out, ",\"start_line\":{start}");
        }
        if !file.version.is_empty() {
            out.extend_from_slice(b",\"version\":");
            string(&mut out, &file.version);
        }
        out.push(b'}');
    }
    out.push(b']');
    // Only JSON text went in.
    String::from_utf8(out).unwrap_or_else(|_| "[]".to_owned())
}

/// Appends `text` as a JSON string, escaped as serde_json escapes it.
fn string(out: &mut Vec<u8>, text: &str) {
    if serde_json::to_writer(&mut *out, text).is_err() {
        // Cannot happen for a `str` written to memory.
        out.extend_from_slice(b"\"\"");
    }
}
