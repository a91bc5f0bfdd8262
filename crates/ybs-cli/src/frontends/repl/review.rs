//! `/review [RANGE]`: a read-only review turn (the working tree's changes, a commit, or a
//! range), its findings shown as a numbered list of `file:line`, severity and reason.

use std::io::{self, Write};

use ybs_agent::Agent;
use ybs_agent::config::Config;
use ybs_agent::project::diff::ReviewTarget;
use ybs_agent::review::Review;

use crate::render::{LineUi, inert, wrap};
use crate::startup::load;

/// Runs `/review` with what followed it (`None`: the working tree).
pub(super) fn run(
    agent: &mut Agent,
    config: &Config,
    runtime: &tokio::runtime::Runtime,
    range: Option<&str>,
    cwd: &std::path::Path,
    out: &mut dyn Write,
) {
    let target = match ReviewTarget::parse(range) {
        Ok(target) => target,
        Err(error) => {
            let _ = writeln!(out, "{}", wrap::problem("error", &error.to_string()));
            return;
        }
    };
    let terminal = io::IsTerminal::is_terminal(&io::stdout());
    let reviewed = {
        let mut stdin = io::stdin().lock();
        let mut log = io::stdout();
        let renderer = load::renderer(config, terminal).with_tools(agent.registry.clone());
        let mut ui = LineUi::new(renderer, out, &mut log, &mut stdin).with_spinner(terminal);
        runtime.block_on(load::cancellable(async |token| {
            ui.watch(token.clone());
            agent.review(cwd, &target, &mut ui, &token).await
        }))
    };
    match reviewed {
        Ok(Some((review, _))) => {
            let _ = writeln!(out, "{}", listing(&review, &target));
        }
        Ok(None) => {
            let line = format!("nothing to review: {} has no changes", target.describe());
            let _ = writeln!(out, "{}", wrap::to_terminal(&inert(&line)));
        }
        Err(error) => {
            let _ = writeln!(out, "{}", wrap::problem("error", &error.to_string()));
        }
    }
}

/// The findings as a numbered list (`1. src/a.rs:12  high  reason`), then the summary.
pub(super) fn listing(review: &Review, target: &ReviewTarget) -> String {
    let width = wrap::terminal_width();
    let mut lines = vec![format!(
        "Review of {}: {}",
        target.describe(),
        ybs_tools::summary::counted(review.findings.len() as u64, "finding", "findings")
    )];
    for (number, finding) in review.findings.iter().enumerate() {
        let place = match finding.line {
            Some(line) => format!("{}:{line}", finding.file),
            None => finding.file.clone(),
        };
        // Every word of a finding is the model's.
        let row = format!(
            "{:>2}. {}  {}  {}",
            number + 1,
            inert(&place),
            finding.severity.name(),
            inert(&finding.reason)
        );
        lines.push(wrap::hanging(&row, width, 4));
    }
    if !review.summary.is_empty() && !review.findings.is_empty() {
        lines.push(wrap::hanging(&inert(&review.summary), width, 0));
    }
    lines.join("\n")
}
