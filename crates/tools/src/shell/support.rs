//! Whether the kernel lets this process give its children the namespaces: probed once, by
//! starting `/bin/sh -c exit` in a plan that uses every mount operation of `namespaces`
//! (entered the way the sandboxed child enters them, `child`).

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use super::child;
use super::loopback::loopback;
use super::namespaces::{Layout, Net, Plan};

/// What the kernel lets us set up, probed once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Support {
    /// User and mount namespaces with read-only remounts: `Err` says why not.
    pub mount: Result<(), String>,
    /// A PID namespace with its own `/proc` (only when `mount` is `Ok`).
    pub pid: Result<(), String>,
    /// A network namespace (only when `mount` is `Ok`).
    pub net: Result<(), String>,
    /// The session's loopback network, joined by commands without the network (only when
    /// `net` is `Ok`).
    pub loopback: Result<(), String>,
}

/// What this process can give its children, probed once by starting `/bin/sh -c exit` with
/// a plan that uses every mount operation.
pub(crate) fn support() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(|| {
        let dir = match tempfile::tempdir() {
            Ok(dir) => dir,
            Err(e) => {
                let why = format!("no temp dir to probe with ({e})");
                return Support {
                    mount: Err(why.clone()),
                    pid: Err(why.clone()),
                    net: Err(why.clone()),
                    loopback: Err(why),
                };
            }
        };
        let base = std::fs::canonicalize(dir.path()).unwrap_or_else(|_| dir.path().into());
        let hidden = base.join("a/hidden");
        let _ = std::fs::create_dir_all(&hidden);
        let layout = Layout {
            writable: std::slice::from_ref(&base),
            blocked: std::slice::from_ref(&hidden),
            read_only: &[],
        };
        let mount = probe(&layout, false, Net::Host);
        let pid = match &mount {
            Ok(()) => probe(&layout, true, Net::Host),
            Err(_) => Err("it needs the mount namespace".into()),
        };
        let net = match &mount {
            Ok(()) => probe(&layout, pid.is_ok(), Net::Own),
            Err(_) => Err("it needs the mount namespace".into()),
        };
        let loopback = match &net {
            Ok(()) => loopback()
                .map_err(String::from)
                .and_then(|shared| probe(&layout, pid.is_ok(), Net::Loopback(shared))),
            Err(_) => Err("it needs a network namespace".into()),
        };
        Support {
            mount,
            pid,
            net,
            loopback,
        }
    })
}

fn probe(layout: &Layout<'_>, pid: bool, net: Net) -> Result<(), String> {
    let plan = Plan::new(layout, pid, net).ok_or("a probe path is not valid")?;
    let mut probe = Command::new("/bin/sh");
    probe
        .args(["-c", "exit 0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: runs between fork and exec; the namespace steps make only system calls on data
    // prepared before the fork.
    #[allow(unsafe_code)]
    unsafe {
        probe.pre_exec(move || child::enter_namespaces(&plan));
    }
    match probe.status() {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!("the probe exited with {status}")),
        Err(e) => Err(child::describe(&e)
            .map(|(_, why)| why)
            .unwrap_or_else(|| e.to_string())),
    }
}
