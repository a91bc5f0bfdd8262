//! Appending to a chat file: the old bytes stay exactly, the new messages read back after them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;

use ybs_chatfile::{AppendError, ChatMessage, append, parse_messages};

fn m(role: &str, content: &str) -> ChatMessage {
    ChatMessage::new(role, content)
}

#[test]
fn appends_after_the_existing_bytes_without_touching_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("talk.chat");
    let old = "user:\r\n\r\nWhat is 2+2?  \r\n# my notes, untouched";
    fs::write(&path, old).unwrap();
    append(
        &path,
        &[m("assistant", "4."), m("previous_response_id", "r1")],
    )
    .unwrap();
    let new = fs::read_to_string(&path).unwrap();
    assert!(new.starts_with(old));
    assert_eq!(
        &new[old.len()..],
        "\n\nassistant:\n\n4.\n\nprevious_response_id: r1\n"
    );
    assert_eq!(
        parse_messages(&new),
        vec![
            m("user", "What is 2+2?  \r\n# my notes, untouched"),
            m("assistant", "4."),
            m("previous_response_id", "r1"),
        ]
    );
    // No temporary file is left behind.
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn creates_a_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.chat");
    append(&path, &[m("user", "hello")]).unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "user:\n\nhello\n");
}

#[test]
fn an_open_square_block_is_closed_first_without_changing_any_message() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.chat");
    fs::write(&path, "user:\n[[x: y\n").unwrap();
    append(&path, &[m("assistant", "ok")]).unwrap();
    let text = fs::read_to_string(&path).unwrap();
    assert_eq!(text, "user:\n[[x: y\n]]\n\nassistant:\n\nok\n");
    assert_eq!(
        parse_messages(&text),
        vec![m("user", "x: y"), m("assistant", "ok")]
    );
}

#[test]
fn an_open_fence_is_an_error_and_the_file_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.chat");
    fs::write(&path, "user:\nlook\n```rust\nfn main() {}\n").unwrap();
    let err = append(&path, &[m("assistant", "ok")]).unwrap_err();
    assert!(matches!(err, AppendError::UnclosedBlock { line: 3, .. }));
    assert_eq!(
        err.to_string(),
        format!(
            "cannot append to {}: the ``` fence opened at line 3 is never closed, so new messages would become part of it; close it and try again",
            path.display()
        )
    );
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "user:\nlook\n```rust\nfn main() {}\n"
    );
}

#[test]
fn new_text_that_would_reopen_a_tag_above_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.chat");
    fs::write(&path, "user:\n<b>\nwhy?\n").unwrap();
    let err = append(&path, &[m("assistant", "because\n</b>")]).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "cannot append to {}: the new messages would change how the existing text reads (an opening tag above may match a closing tag in the new text); fix the file and try again",
            path.display()
        )
    );
}

#[test]
fn an_invalid_role_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.chat");
    let err = append(&path, &[m("Bad Role", "x")]).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "cannot append to {}: cannot write message 0 with role `Bad Role`: a .chat role is one or more of a-z, 0-9 and _",
            path.display()
        )
    );
    assert!(!path.exists());
}

#[cfg(unix)]
#[test]
fn the_file_keeps_its_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.chat");
    fs::write(&path, "user:\nq\n").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
    append(&path, &[m("assistant", "a")]).unwrap();
    let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
}
