//! The REPL's question about a project's settings that wait for trust: on a terminal it
//! shows them whole and asks; the answer is remembered (`a`), kept for this session (`o`)
//! or they stay ignored (anything else). Without a terminal they are ignored with a warning
//! each, as in `exec`.

use std::io::{self, IsTerminal, Write};

use crate::cli::Cli;
use crate::startup::exit::Failed;
use crate::startup::load::{load_trusting, run_trust};
use crate::startup::trust::{TrustAnswer, ask, warnings};
use ybs_agent::config::{LoadedConfig, Trust, TrustStore};
use ybs_agent::host::Host;

/// Loads the configuration, asking on a terminal about the settings that wait for trust.
pub fn load_asking(
    cli: &Cli,
    host: &Host,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<LoadedConfig, Failed> {
    let loaded = load_trusting(cli, host, &run_trust(cli, host), err)?;
    if loaded.untrusted.is_empty() {
        return Ok(loaded);
    }
    if !(io::stdin().is_terminal() && io::stdout().is_terminal()) {
        for warning in warnings(&loaded.untrusted) {
            let _ = writeln!(
                err,
                "ybs: warning: {}",
                crate::render::inert_lines(&warning.to_string())
            );
        }
        return Ok(loaded);
    }
    let answer = ask(&loaded.untrusted, &mut io::stdin().lock(), out);
    // What was shown, as it was shown: a file changed while the question waited is not
    // trusted by the answer.
    let shown =
        || (loaded.untrusted.iter()).map(|file| (file.path.as_path(), file.digest.as_str()));
    let trust = match answer {
        TrustAnswer::No => {
            let _ = writeln!(
                out,
                "ybs: these settings are ignored; `ybs trust` trusts them later"
            );
            return Ok(loaded);
        }
        TrustAnswer::Once => Trust::exactly(shown()),
        TrustAnswer::Always => {
            let mut store = TrustStore::open(host.data_home.as_deref());
            for file in &loaded.untrusted {
                if let Err(error) = store.trust(&file.path, &file.digest) {
                    let _ = writeln!(
                        err,
                        "ybs: warning: cannot remember the trust of {} ({error}); trusted for \
                         this session only",
                        file.path.display()
                    );
                    break;
                }
            }
            Trust::exactly(shown())
        }
    };
    // The same files again, now trusted (a file changed meanwhile is asked about next time).
    let again = load_trusting(cli, host, &trust, &mut io::sink())?;
    for warning in warnings(&again.untrusted) {
        let _ = writeln!(
            err,
            "ybs: warning: {}",
            crate::render::inert_lines(&warning.to_string())
        );
    }
    Ok(again)
}
