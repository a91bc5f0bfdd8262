//! The macOS shell sandbox: `sandbox-exec` with the spec's profile, granting
//! each allowed root and the command's temp dir, plus read access to the system so `/bin/sh`
//! can start. Untested in CI (Linux only).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The `sandbox-exec` profile for the given roots; `network` allows the network.
pub(crate) fn profile(
    roots: &[PathBuf],
    temp: &Path,
    toolchains: &[PathBuf],
    network: bool,
) -> String {
    let mut profile = String::from("(version 1)\n(deny default)\n");
    for dir in roots.iter().map(PathBuf::as_path).chain([temp]) {
        let dir = quote(dir);
        let _ = writeln!(profile, "(allow file-read* (subpath \"{dir}\"))");
        let _ = writeln!(profile, "(allow file-write* (subpath \"{dir}\"))");
    }
    for dir in [
        "/usr",
        "/bin",
        "/sbin",
        "/System",
        "/Library",
        "/private/etc",
        "/dev",
        "/opt",
    ]
    .iter()
    .map(Path::new)
    .chain(toolchains.iter().map(PathBuf::as_path))
    {
        let _ = writeln!(profile, "(allow file-read* (subpath \"{}\"))", quote(dir));
    }
    profile.push_str("(allow file-write* (literal \"/dev/null\"))\n");
    profile.push_str("(allow process-fork)\n(allow process-exec)\n(allow sysctl-read)\n");
    profile.push_str(if network {
        "(allow network*)\n"
    } else {
        "(deny network*)\n"
    });
    profile
}

fn quote(path: &Path) -> String {
    path.display()
        .to_string()
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
}
