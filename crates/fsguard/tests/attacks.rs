//! The attacks a hostile tree can make on every way in (`confined`, `physical`, `guarded`,
//! `read_beneath`): a link in the middle of a path, a FIFO, `/dev/zero` through a link, a file
//! over the caller's cap, and a write that must keep the mode of the file it replaces. Each
//! checks the refusal and that nothing outside changed. `scripts/test` runs this binary as
//! root and again as an unprivileged user.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsStr;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ybs_fsguard::guarded::{self, Guard, Refusal, SafeFsError};
use ybs_fsguard::physical::{self, NoFollowError};
use ybs_fsguard::{Confined, FileId, Refused, refusal};

/// A project with a secret outside it, a FIFO, a link to `/dev/zero` and a directory link.
struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("project");
        let outside = base.join("outside");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret"), "SECRET").unwrap();
        std::fs::write(root.join("src/main.rs"), "fn main() {}").unwrap();
        symlink(&outside, root.join("linked")).unwrap();
        symlink("/dev/zero", root.join("zero")).unwrap();
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            root.join("pipe"),
            rustix::fs::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        Tree {
            _dir: dir,
            root,
            outside,
        }
    }

    fn outside_unchanged(&self) {
        let names: Vec<_> = std::fs::read_dir(&self.outside)
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names, ["secret"], "nothing was created outside");
        assert_eq!(
            std::fs::read_to_string(self.outside.join("secret")).unwrap(),
            "SECRET"
        );
    }
}

/// Fails the test if `work` blocks (a FIFO opened for reading waits for a writer).
fn quickly<T>(work: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let result = work();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "the access blocked for {:?}",
        start.elapsed()
    );
    result
}

/// A guard allowing one root and blocking nothing.
struct OneRoot(PathBuf);

impl Guard for OneRoot {
    fn root_of(&self, resolved: &Path) -> Option<&Path> {
        resolved.starts_with(&self.0).then_some(self.0.as_path())
    }
    fn is_blocked_id(&self, _: FileId) -> bool {
        false
    }
    fn is_read_only_id(&self, _: FileId) -> bool {
        false
    }
    fn check_write(&self, _: &str, _: &Path) -> Result<(), Refusal> {
        Ok(())
    }
}

#[test]
fn confined_refuses_a_link_in_the_middle_fifos_and_dev_zero() {
    let tree = Tree::new();
    let fs = Confined::new(&tree.root);
    let err = fs.read(&tree.root.join("linked/secret")).unwrap_err();
    assert!(matches!(refusal(&err), Some(Refused::Symlink(_))), "{err}");
    assert!(err.to_string().contains("is a symbolic link"), "{err}");
    let err = fs.read_capped(&tree.root.join("zero"), 16).unwrap_err();
    assert!(matches!(refusal(&err), Some(Refused::Symlink(_))), "{err}");
    let err = quickly(|| fs.read_capped(&tree.root.join("pipe"), 16)).unwrap_err();
    assert!(
        matches!(refusal(&err), Some(Refused::NotRegular(_))),
        "{err}"
    );
    assert!(fs.write(&tree.root.join("linked/new"), b"x").is_err());
    tree.outside_unchanged();
}

#[test]
fn confined_reads_no_more_than_the_cap() {
    let tree = Tree::new();
    let fs = Confined::new(&tree.root);
    let big = tree.root.join("big");
    std::fs::write(&big, vec![b'a'; 10_000]).unwrap();
    let read = fs.read_capped(&big, 100).unwrap();
    assert_eq!(read.bytes.len(), 100);
    assert!(read.truncated);
    let read = fs.read_capped(&big, 10_000).unwrap();
    assert_eq!(read.bytes.len(), 10_000);
    assert!(!read.truncated);
    // A whole-file read has a cap too: a sparse file of many gigabytes is refused.
    let sparse = tree.root.join("sparse");
    let file = std::fs::File::create(&sparse).unwrap();
    file.set_len(64 * ybs_fsguard::confined::WHOLE_FILE_CAP)
        .unwrap();
    for error in [
        fs.read(&sparse).unwrap_err(),
        fs.read_to_string(&sparse).unwrap_err(),
    ] {
        assert_eq!(error.kind(), std::io::ErrorKind::FileTooLarge, "{error}");
        assert!(error.to_string().contains("larger than"), "{error}");
    }
}

#[test]
fn every_atomic_write_keeps_the_mode_of_the_file_it_replaces() {
    let tree = Tree::new();
    let file = tree.root.join("src/run.sh");
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o7777;
    std::fs::write(&file, "old").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o750)).unwrap();

    Confined::new(&tree.root).write(&file, b"one").unwrap();
    assert_eq!(mode(&file), 0o750);
    guarded::write_atomic(&OneRoot(tree.root.clone()), &file, b"two").unwrap();
    assert_eq!(mode(&file), 0o750);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "two");
    // The physical form writes the bits it is given (undo restores the recorded mode).
    physical::write_atomic(&file, b"three", 0o700).unwrap();
    assert_eq!(mode(&file), 0o700);
    let leftovers: Vec<_> = std::fs::read_dir(tree.root.join("src"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        2,
        "no temporary file is left: {leftovers:?}"
    );
}

#[test]
fn physical_refuses_a_link_in_the_middle_fifos_dev_zero_and_large_files() {
    let tree = Tree::new();
    let err = physical::read(&tree.root.join("linked/secret"), 1024).unwrap_err();
    assert!(matches!(err, NoFollowError::Link(_)), "{err}");
    assert!(err.to_string().contains("refusing to follow it"), "{err}");
    let err = physical::read(&tree.root.join("zero"), 1024).unwrap_err();
    assert!(matches!(err, NoFollowError::Link(_)), "{err}");
    let err = quickly(|| physical::read(&tree.root.join("pipe"), 1024)).unwrap_err();
    assert!(
        matches!(err, NoFollowError::NotRegular { kind: "a FIFO", .. }),
        "{err}"
    );
    let err = physical::read(&tree.root.join("src/main.rs"), 4).unwrap_err();
    assert!(
        matches!(err, NoFollowError::TooLarge { limit: 4, .. }),
        "{err}"
    );
    let err = physical::write_atomic(&tree.root.join("linked/new"), b"x", 0o644).unwrap_err();
    assert!(matches!(err, NoFollowError::Link(_)), "{err}");
    tree.outside_unchanged();
}

#[test]
fn guarded_refuses_a_link_in_the_middle_fifos_and_dev_zero() {
    let tree = Tree::new();
    let guard = OneRoot(tree.root.clone());
    let err = guarded::read(&guard, &tree.root.join("linked/secret")).unwrap_err();
    assert!(matches!(err, SafeFsError::SymlinkRace(_)), "{err}");
    let err = guarded::read(&guard, &tree.root.join("zero")).unwrap_err();
    assert!(matches!(err, SafeFsError::SymlinkRace(_)), "{err}");
    let err = quickly(|| guarded::read(&guard, &tree.root.join("pipe"))).unwrap_err();
    assert!(matches!(err, SafeFsError::NotAFile(_)), "{err}");
    assert_eq!(
        err.to_string(),
        format!(
            "`{}` is not a regular file",
            tree.root.join("pipe").display()
        )
    );
    let err = guarded::write_atomic(&guard, &tree.root.join("linked/new"), b"x").unwrap_err();
    assert!(matches!(err, SafeFsError::SymlinkRace(_)), "{err}");
    // A link at the file itself is replaced, not written through.
    symlink(tree.outside.join("secret"), tree.root.join("src/out")).unwrap();
    guarded::write_atomic(&guard, &tree.root.join("src/out"), b"mine").unwrap();
    assert_eq!(
        std::fs::read_to_string(tree.root.join("src/out")).unwrap(),
        "mine"
    );
    tree.outside_unchanged();
}

#[test]
fn reading_beneath_an_open_directory_follows_nothing_and_caps_the_read() {
    let tree = Tree::new();
    let root = std::fs::File::open(&tree.root).unwrap();
    let names =
        |path: &'static str| -> Vec<&'static OsStr> { path.split('/').map(OsStr::new).collect() };
    let read = ybs_fsguard::read_beneath(&root, &names("src/main.rs"), 1024).unwrap();
    assert_eq!(read.bytes, b"fn main() {}");
    let read = ybs_fsguard::read_beneath(&root, &names("src/main.rs"), 2).unwrap();
    assert_eq!((read.bytes.as_slice(), read.truncated), (&b"fn"[..], true));
    assert!(ybs_fsguard::read_beneath(&root, &names("linked/secret"), 1024).is_err());
    assert!(ybs_fsguard::read_beneath(&root, &names("zero"), 1024).is_err());
    assert!(quickly(|| ybs_fsguard::read_beneath(&root, &names("pipe"), 1024)).is_err());
    assert!(ybs_fsguard::read_beneath(&root, &names("src/../src/main.rs"), 1024).is_err());
}

#[test]
fn a_device_is_read_no_further_than_the_cap_when_asked_for_directly() {
    // `/dev/zero` named through its own trusted directory: refused by its type, not read.
    let dev = Confined::new("/dev");
    let err = quickly(|| dev.read_capped(Path::new("/dev/zero"), 1024)).unwrap_err();
    assert!(
        matches!(refusal(&err), Some(Refused::NotRegular(_))),
        "{err}"
    );
    let err = quickly(|| physical::read(Path::new("/dev/zero"), 1024)).unwrap_err();
    assert!(
        matches!(
            err,
            NoFollowError::NotRegular {
                kind: "a character device",
                ..
            }
        ),
        "{err}"
    );
}
