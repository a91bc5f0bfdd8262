//! Which layers of the shell sandbox apply here, for the banner: "sandbox: on" only when
//! every one does; otherwise the layer that does not, why, and what the user can do.

use super::{ShellPolicy, probe};
use crate::path_sandbox::PathSandbox;

/// One layer of the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    /// What it is ("Landlock", "PID namespace", ...).
    pub name: &'static str,
    /// Whether commands get it.
    pub applied: bool,
    /// When not applied: why, and what to do.
    pub note: String,
}

/// The state of the shell sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxStatus {
    /// The user turned it off.
    Off,
    /// It cannot be enforced: commands are refused. The reason.
    Unavailable(String),
    /// Commands run sandboxed, with these layers.
    Layers(Vec<Layer>),
}

impl SandboxStatus {
    /// Whether every layer applies.
    pub fn fully_on(&self) -> bool {
        matches!(self, SandboxStatus::Layers(layers) if layers.iter().all(|l| l.applied))
    }

    /// The short line under the banner when the sandbox is not fully on: what it means for
    /// the user, with the reasons left to [`banner`](Self::banner) (shown by `/status`).
    /// `None` when every layer applies.
    pub fn short(&self) -> Option<String> {
        match self {
            SandboxStatus::Off => Some("sandbox off: commands run with your full rights".into()),
            SandboxStatus::Unavailable(_) => {
                Some("sandbox unavailable: run_shell refuses commands (/status says why)".into())
            }
            SandboxStatus::Layers(layers) => {
                let missing: Vec<&str> = (layers.iter())
                    .filter(|l| !l.applied)
                    .map(|l| l.name)
                    .collect();
                (!missing.is_empty()).then(|| {
                    format!(
                        "sandbox partial: without {} (/status says why)",
                        missing.join(", ")
                    )
                })
            }
        }
    }

    /// The whole state in one line: each layer, and why one does not apply.
    pub fn banner(&self) -> String {
        match self {
            SandboxStatus::Off => {
                "sandbox: off (--no-sandbox or safety.sandbox_enabled: false); commands run with your full rights".into()
            }
            SandboxStatus::Unavailable(why) => {
                format!("sandbox: unavailable, run_shell will refuse commands: {why}")
            }
            SandboxStatus::Layers(layers) => {
                let missing: Vec<&Layer> = layers.iter().filter(|l| !l.applied).collect();
                if missing.is_empty() {
                    let names: Vec<&str> = layers.iter().map(|l| l.name).collect();
                    format!("sandbox: on ({})", names.join(", "))
                } else {
                    let notes: Vec<String> = missing
                        .iter()
                        .map(|l| format!("{} not applied: {}", l.name, l.note))
                        .collect();
                    format!("sandbox: partial; {}", notes.join("; "))
                }
            }
        }
    }
}

/// Probes the sandbox (runs `true` in it) and reports its layers.
pub fn status(policy: &ShellPolicy, sandbox: &PathSandbox) -> SandboxStatus {
    if !policy.sandbox_enabled {
        return SandboxStatus::Off;
    }
    if let Err(error) = probe(policy, sandbox) {
        return SandboxStatus::Unavailable(error.to_string());
    }
    SandboxStatus::Layers(layers())
}

#[cfg(target_os = "linux")]
fn layers() -> Vec<Layer> {
    let support = super::support::support();
    let abi = landlock_abi();
    let pids = super::cgroup::support(super::cgroup::Controller::Pids);
    let memory = super::cgroup::support(super::cgroup::Controller::Memory);
    let always = |name: &'static str| Layer {
        name,
        applied: true,
        note: String::new(),
    };
    vec![
        Layer {
            name: "Landlock",
            applied: abi >= 6,
            note: format!(
                "the kernel has Landlock ABI {abi}; ABI 6 (Linux 6.12) is needed to stop signals to outside processes and abstract unix sockets. Upgrade the kernel"
            ),
        },
        always("seccomp"),
        Layer {
            name: "user+mount namespaces",
            applied: support.mount.is_ok(),
            note: format!(
                "{}; without them only Landlock keeps blocked paths and .git out, path-based chmod/chown/touch are refused everywhere, and blocked files can be seen to exist. Allow unprivileged user namespaces (sysctl user.max_user_namespaces=15000, kernel.unprivileged_userns_clone=1, or on Ubuntu kernel.apparmor_restrict_unprivileged_userns=0)",
                support.mount.as_ref().err().map_or("", String::as_str)
            ),
        },
        Layer {
            name: "PID namespace",
            applied: support.pid.is_ok(),
            note: format!(
                "{}; commands can see other processes' command lines in /proc. Run ybs where a new /proc can be mounted (a container that masks /proc paths prevents it)",
                support.pid.as_ref().err().map_or("", String::as_str)
            ),
        },
        Layer {
            name: "network namespace",
            applied: support.net.is_ok(),
            note: format!(
                "{}; commands without the network can read the host's connections and sockets in /proc/net",
                support.net.as_ref().err().map_or("", String::as_str)
            ),
        },
        always("no capabilities"),
        Layer {
            name: "process limit",
            applied: !rustix::process::geteuid().is_root() || pids.is_ok(),
            note: format!(
                "the kernel does not apply RLIMIT_NPROC to uid 0 and {}, so as root a command can start any number of processes (memory, file size and core limits do apply). Run ybs as a normal user, or where /sys/fs/cgroup is writable",
                pids.as_ref().err().map_or("", String::as_str)
            ),
        },
        // Said either way: per process, N processes of one command may each use the limit.
        always(if memory.is_ok() {
            "memory limit per command (cgroup), file limits"
        } else {
            "memory limit per process only, file limits"
        }),
    ]
}

#[cfg(not(target_os = "linux"))]
fn layers() -> Vec<Layer> {
    vec![Layer {
        name: "sandbox-exec",
        applied: true,
        note: String::new(),
    }]
}

/// Whether a server that a sandboxed command without the network starts answers the
/// commands after it (the session's loopback network), in words for `/status`.
#[cfg(target_os = "linux")]
pub fn local_servers() -> String {
    match &super::support::support().loopback {
        Ok(()) => "a server a command starts on 127.0.0.1 answers the later commands, not your browser or a command granted the network (the session's own loopback network)".into(),
        Err(why) => format!(
            "each command has a network of its own, so a server one starts does not answer the next: {why}"
        ),
    }
}

/// Whether a server that a sandboxed command without the network starts answers the
/// commands after it, in words for `/status`.
#[cfg(not(target_os = "linux"))]
pub fn local_servers() -> String {
    "sandboxed commands have no network, so a server one starts does not answer the next".into()
}

/// The Landlock ABI version of the running kernel (0 without Landlock).
#[cfg(target_os = "linux")]
pub fn landlock_abi() -> i64 {
    const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;
    // SAFETY: the documented way to query the ABI: a null attribute pointer, size 0.
    #[allow(unsafe_code)]
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    version.max(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_short_line_names_what_is_missing_and_where_the_reasons_are() {
        let layer = |name, applied| Layer {
            name,
            applied,
            note: "a long reason with what to do about it".into(),
        };
        let full = SandboxStatus::Layers(vec![layer("Landlock", true), layer("seccomp", true)]);
        assert_eq!(full.short(), None);
        let partial = SandboxStatus::Layers(vec![
            layer("Landlock", true),
            layer("PID namespace", false),
            layer("process limit", false),
        ]);
        assert_eq!(
            partial.short().as_deref(),
            Some("sandbox partial: without PID namespace, process limit (/status says why)")
        );
        assert!(partial.banner().contains("a long reason"));
        let off = SandboxStatus::Off.short().unwrap_or_default();
        assert!(off.starts_with("sandbox off"), "{off}");
        let gone = SandboxStatus::Unavailable("no user namespaces".into()).short();
        assert!(gone.is_some_and(|line| !line.contains("no user namespaces")));
    }
}
