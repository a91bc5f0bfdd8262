//! End-to-end tests of the workspace's programs. Each test under `ybs/` and `bb7/` spawns a
//! real binary (`ybs`, `bb7`, `fake-llm`, `fake-mcp`) as a process and talks to it the way a
//! user, a script or an editor client would; the model side is always a `ybs-testkit` fake on
//! 127.0.0.1. Tests of one crate's library stay in that crate's own `tests/`.
//!
//! This library only finds the binaries: [`binary`] builds the workspace's binaries once per
//! test process (a no-op when they are fresh) so a run of this package alone never tests a
//! stale build.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The path of the workspace binary `name` (`ybs`, `bb7`, `fake-llm`, `fake-mcp`), built with
/// the same profile and target directory as the running test.
///
/// # Panics
///
/// When the binaries cannot be built, or `name` is not one of them: a test cannot go on
/// without its program.
pub fn binary(name: &str) -> PathBuf {
    let dir = built_binaries();
    let path = dir.join(name);
    assert!(
        path.is_file(),
        "{} is missing after `cargo build --workspace --bins`",
        path.display()
    );
    path
}

/// Builds the workspace's binaries once per process and returns the directory they are in
/// (`<target>/<profile>`, the parent of the test's own `deps/`).
fn built_binaries() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        #[allow(clippy::expect_used)] // A test process always knows its own path.
        let exe = std::env::current_exe().expect("the test's own path");
        let deps = exe.parent().unwrap_or(Path::new("."));
        let profile_dir = deps.parent().unwrap_or(Path::new(".")).to_path_buf();
        let target = profile_dir.parent().unwrap_or(Path::new("."));
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build
            .args(["build", "--quiet", "--workspace", "--bins"])
            .arg("--target-dir")
            .arg(target)
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        if profile_dir
            .file_name()
            .is_some_and(|name| name == "release")
        {
            build.arg("--release");
        }
        let status = build.status();
        assert!(
            status.as_ref().is_ok_and(|status| status.success()),
            "cannot build the workspace's binaries (`cargo build --workspace --bins`): {status:?}"
        );
        profile_dir
    })
}
