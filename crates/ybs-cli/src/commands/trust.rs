//! `ybs trust [CHAT]`: prints the project's settings (or a chat file's directives) that wait
//! for the user's trust, and remembers that the user trusts them as they are now.

use std::io::Write;
use std::path::Path;

use crate::cli::Cli;
use crate::startup::exit::Failed;
use crate::startup::load::load_trusting;
use ybs_agent::config::{FileRole, Trust, TrustStore};
use ybs_agent::host::Host;

/// Trusts the project's settings, or with `chat` that chat file's directives.
pub fn run(
    cli: &Cli,
    host: &Host,
    chat: Option<&Path>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, Failed> {
    let mut store = TrustStore::open(host.data_home.as_deref());
    // What is trusted already, never what --trust-project would trust for this run.
    let trust = Trust {
        everything: false,
        store: store.clone(),
    };
    if let Some(chat) = chat {
        let loaded = load_trusting(cli, host, &Trust::default(), err)?;
        return crate::frontends::ask::trust::trust_chat(
            &loaded.config,
            &host.surroundings(),
            &host.locations.cwd.join(chat),
            &mut store,
            out,
        );
    }
    let loaded = load_trusting(cli, host, &trust, err)?;
    let has_project_file =
        (loaded.files.iter()).any(|status| status.loaded && status.file.role == FileRole::Project);
    // Skills and sub-agents a project brings wait for trust without any `.ybs.json`.
    if !has_project_file && loaded.untrusted.is_empty() {
        let _ = writeln!(
            out,
            "nothing to trust: there is no project configuration (.ybs.json) in {}",
            crate::render::inert(&host.locations.cwd.display().to_string())
        );
        return Ok(0);
    }
    if loaded.untrusted.is_empty() {
        let _ = writeln!(
            out,
            "nothing to trust: the project's settings in {} need no trust or are trusted already",
            host.locations.cwd.display()
        );
        return Ok(0);
    }
    for file in &loaded.untrusted {
        store.trust(&file.path, &file.digest).map_err(|error| {
            Failed(format!(
                "cannot record the trust of {}: {error}",
                file.path.display()
            ))
        })?;
    }
    let _ = writeln!(
        out,
        "trusted (until they change; the record is kept outside the project):"
    );
    for line in crate::startup::trust::listing(&loaded.untrusted) {
        let _ = writeln!(out, "{line}");
    }
    Ok(0)
}
