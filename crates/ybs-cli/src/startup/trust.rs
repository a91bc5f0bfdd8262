//! Settings that wait for trust, said to the user: one warning each where nobody can be asked
//! (`exec`, `ask`, scripts), a question in the REPL on a terminal, and the list `ybs trust`
//! prints before it records them.

use std::io::{BufRead, Write};

use ybs_agent::config::UntrustedFile;

use crate::render::inert;

/// How to trust what was ignored, for the warnings.
pub const HOW_TO_TRUST: &str =
    "run `ybs trust` in the project to trust its settings, or pass --trust-project for one run";

/// One warning per ignored setting, naming the file, the key and what it would do.
pub fn warnings(files: &[UntrustedFile]) -> Vec<String> {
    let mut lines = Vec::new();
    for file in files {
        for setting in &file.settings {
            lines.push(format!(
                "{}: {} ignored: this project is not trusted and {}; {HOW_TO_TRUST}",
                inert(&file.path.display().to_string()),
                inert(&setting.key),
                setting.risk.describe()
            ));
        }
    }
    lines
}

/// The settings trusting a file covers, whole, as indented lines under each file's name; the
/// ones the user's own choices override in this run are said to be.
pub fn listing(files: &[UntrustedFile]) -> Vec<String> {
    let mut lines = Vec::new();
    for file in files {
        lines.push(format!("  {}", inert(&file.path.display().to_string())));
        for setting in &file.recorded {
            let value = serde_json::to_string(&setting.value).unwrap_or_default();
            lines.push(format!("    {} = {}", inert(&setting.key), inert(&value)));
            let overridden = !(file.settings.iter()).any(|left_out| left_out.key == setting.key);
            lines.push(if overridden {
                format!(
                    "      ({}; your own setting overrides it in this run)",
                    setting.risk.describe()
                )
            } else {
                format!("      ({})", setting.risk.describe())
            });
        }
    }
    lines
}

/// What the user answered to the trust question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustAnswer {
    /// Trust them, and remember it.
    Always,
    /// Trust them for this run only.
    Once,
    /// Leave them ignored.
    No,
}

/// Shows the settings of `files` and asks whether to trust them; reads the answer from
/// `input`. An empty or unknown answer is no.
pub fn ask(files: &[UntrustedFile], input: &mut dyn BufRead, out: &mut dyn Write) -> TrustAnswer {
    let mut question = String::from(
        "This project's configuration has settings that ybs applies only if you trust them:\n",
    );
    for line in listing(files) {
        question.push_str(&line);
        question.push('\n');
    }
    question.push_str(
        "Trust them? [a]lways (remembered until they change), [o]nce (this session), [N]o: ",
    );
    let _ = write!(out, "{}", crate::render::wrap::to_terminal(&question));
    let _ = out.flush();
    let mut line = String::new();
    let _ = input.read_line(&mut line);
    match line.trim().to_ascii_lowercase().as_str() {
        "a" | "always" | "y" | "yes" => TrustAnswer::Always,
        "o" | "once" => TrustAnswer::Once,
        _ => TrustAnswer::No,
    }
}
