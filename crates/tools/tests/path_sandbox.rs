//! `PathSandbox` on its own: resolution rules and the exact refusal messages.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::symlink;
use std::path::PathBuf;

use ybs_tools::{PathSandbox, SandboxError};

struct Setup {
    _dir: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
    sandbox: PathSandbox,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("root");
    std::fs::create_dir_all(root.join("secrets")).unwrap();
    std::fs::create_dir_all(base.join("home/.ssh")).unwrap();
    let sandbox = PathSandbox::with_home(
        [root.to_str().unwrap()],
        ["~/.ssh", root.join("secrets").to_str().unwrap()],
        Some(base.join("home")),
    )
    .unwrap();
    Setup {
        _dir: dir,
        base,
        root,
        sandbox,
    }
}

#[test]
fn resolves_inside_paths_physically() {
    let s = setup();
    std::fs::create_dir(s.root.join("real")).unwrap();
    symlink("real", s.root.join("alias")).unwrap();
    assert_eq!(
        s.sandbox.resolve(&s.root, "alias/new/file.txt").unwrap(),
        s.root.join("real/new/file.txt")
    );
    assert_eq!(
        s.sandbox.resolve(&s.root, "./a/../b").unwrap(),
        s.root.join("b")
    );
    assert_eq!(
        s.sandbox
            .resolve(&s.root, s.root.to_str().unwrap())
            .unwrap(),
        s.root
    );
    assert_eq!(s.sandbox.roots(), std::slice::from_ref(&s.root));
    // The configured ones first, then the credential files of the home directory.
    assert_eq!(
        s.sandbox.blocked()[..2],
        [s.base.join("home/.ssh"), s.root.join("secrets")]
    );
    assert!(
        (s.sandbox.blocked().iter()).any(|b| *b == s.base.join("home/.cargo/credentials.toml"))
    );
}

#[test]
fn refusal_messages_are_exact() {
    let s = setup();
    let root = s.root.display();
    let base = s.base.display();
    let err = |path: &str| s.sandbox.resolve(&s.root, path).unwrap_err().to_string();
    assert_eq!(
        err("../x"),
        format!(
            "access denied: `../x` resolves to `{base}/x`, which is outside the allowed directories ({root}); use a path inside them"
        )
    );
    assert_eq!(
        err("secrets/k"),
        format!(
            "access denied: `secrets/k` resolves to `{root}/secrets/k`, which is inside the blocked path `{root}/secrets`"
        )
    );
    assert_eq!(
        err("~/.ssh/id_rsa"),
        format!(
            "access denied: `~/.ssh/id_rsa` resolves to `{base}/home/.ssh/id_rsa`, which is inside the blocked path `{base}/home/.ssh`"
        )
    );
    assert_eq!(
        err("a\0b"),
        "path `a\\0b` contains a NUL byte; paths must not contain NUL"
    );
    assert_eq!(
        err(&"x".repeat(5000)),
        "path is too long (5000 bytes; the limit is 4096); use a shorter path"
    );
    assert_eq!(
        err(""),
        "the path is empty; give a file or directory path relative to the working directory"
    );
    symlink("l2", s.root.join("l1")).unwrap();
    symlink("l1", s.root.join("l2")).unwrap();
    assert_eq!(
        err("l1"),
        "cannot resolve `l1`: too many levels of symbolic links (a symlink loop?)"
    );
    std::fs::write(s.root.join("file"), "").unwrap();
    assert_eq!(
        err("file/x"),
        "cannot resolve `file/x`: Not a directory (os error 20)"
    );
}

#[test]
fn construction_errors_are_exact() {
    let s = setup();
    let missing = s.base.join("missing");
    let err = PathSandbox::new([missing.to_str().unwrap()], Vec::<String>::new()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "allowed directory `{}` cannot be used: No such file or directory (os error 2); create it or fix the configuration",
            missing.display()
        )
    );
    let no_home = PathSandbox::with_home([s.root.to_str().unwrap()], ["~/.ssh"], None).unwrap_err();
    assert_eq!(
        no_home,
        SandboxError::NoHome {
            path: "~/.ssh".into()
        }
    );
    assert_eq!(
        no_home.to_string(),
        "cannot expand `~` in `~/.ssh`: the home directory is unknown; use an explicit path"
    );
}

#[test]
fn a_blocked_symlink_blocks_its_target_too() {
    let s = setup();
    std::fs::create_dir(s.base.join("real-config")).unwrap();
    symlink(s.base.join("real-config"), s.base.join("home/.config")).unwrap();
    let sandbox = PathSandbox::with_home(
        [s.base.to_str().unwrap()],
        ["~/.config"],
        Some(s.base.join("home")),
    )
    .unwrap();
    let err = sandbox.resolve(&s.base, "real-config/x").unwrap_err();
    assert!(matches!(err, SandboxError::Blocked { .. }), "{err}");
    let err = sandbox.resolve(&s.base, "home/.config/x").unwrap_err();
    assert!(matches!(err, SandboxError::Blocked { .. }), "{err}");
}

#[test]
fn registry_and_context_can_cross_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<ybs_tools::ToolRegistry>();
    assert_send_sync::<ybs_tools::ToolContext>();
    assert_send_sync::<ybs_tools::ConfirmationPolicy>();
}
