//! The confined file I/O's refusals and writes, against real links, FIFOs and modes.
#![allow(clippy::unwrap_used)]
use std::os::unix::fs::{PermissionsExt, symlink};

use super::*;

#[test]
fn links_below_the_anchor_are_refused_everywhere() {
    let anchor = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "S").unwrap();
    symlink(outside.path(), anchor.path().join("dir")).unwrap();
    symlink(outside.path().join("secret"), anchor.path().join("file")).unwrap();
    let fs = Confined::new(anchor.path());
    let err = fs.read(&anchor.path().join("dir/secret")).unwrap_err();
    assert!(matches!(refusal(&err), Some(Refused::Symlink(_))), "{err}");
    let err = fs.read(&anchor.path().join("file")).unwrap_err();
    assert!(matches!(refusal(&err), Some(Refused::Symlink(_))), "{err}");
    assert!(fs.write(&anchor.path().join("dir/new"), b"x").is_err());
    assert!(!outside.path().join("new").exists());
    // Writing over a link replaces the link, never writes through it.
    fs.write(&anchor.path().join("file"), b"mine").unwrap();
    assert_eq!(
        std::fs::read_to_string(outside.path().join("secret")).unwrap(),
        "S"
    );
    assert_eq!(
        fs.kind(&anchor.path().join("dir")).unwrap(),
        Some(Kind::Symlink)
    );
    fs.remove_all(&anchor.path().join("dir")).unwrap();
    assert!(outside.path().join("secret").exists());
    assert!(fs.read(Path::new("/etc/passwd")).is_err());
}

#[test]
fn fifos_are_refused_not_read() {
    let anchor = tempfile::tempdir().unwrap();
    let fifo = anchor.path().join("pipe");
    rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, Mode::from_bits_truncate(0o600)).unwrap();
    let err = Confined::new(anchor.path()).read(&fifo).unwrap_err();
    assert!(
        matches!(refusal(&err), Some(Refused::NotRegular(_))),
        "{err}"
    );
}

#[test]
fn new_files_get_ordinary_modes_and_existing_ones_keep_theirs() {
    let anchor = tempfile::tempdir().unwrap();
    let fs = Confined::new(anchor.path());
    let umask = rustix::process::umask(Mode::from_bits_truncate(0o022));
    rustix::process::umask(umask);
    let expected = 0o666 & !umask.bits();
    let path = anchor.path().join("a/b.txt");
    fs.write(&path, b"one").unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, expected);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    fs.write(&path, b"two").unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o755);
    let mut odd = Vec::new();
    assert_eq!(fs.walk_files(anchor.path(), &mut odd).unwrap(), ["a/b.txt"]);
    assert!(odd.is_empty());
}

#[test]
fn a_write_with_a_mode_gives_exactly_that_mode_over_a_looser_file() {
    let anchor = tempfile::tempdir().unwrap();
    let fs = Confined::new(anchor.path());
    let path = anchor.path().join("snap/copy");
    fs.write_unsynced_dir(&path, b"old").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    fs.write_unsynced_dir_with_mode(&path, b"TOKEN=1", 0o600)
        .unwrap();
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::read(&path).unwrap(), b"TOKEN=1");
}
