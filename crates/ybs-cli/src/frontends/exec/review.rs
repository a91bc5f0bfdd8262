//! `ybs exec --review [RANGE]`: a read-only review of the working tree's changes, a commit
//! or a range, printed as one JSON object on stdout for scripts and CI
//! (`{"findings":[{"file","line","severity","reason"}],"summary"}`); the turn's progress goes
//! to stderr. Exit code [`FINDINGS_AT_THRESHOLD`] when a finding is at or above `--fail-on`.

use std::io::{self, Write};

use ybs_agent::confirm::ConfirmMode;
use ybs_agent::host::Host;
use ybs_agent::project::diff::ReviewTarget;
use ybs_agent::review::{Review, Severity};

use crate::cli::Cli;
use crate::render::LineUi;
use crate::startup::exit::{Failed, USAGE_ERROR};
use crate::startup::{first_run, load};

/// The exit code of a review with a finding at or above the threshold.
pub const FINDINGS_AT_THRESHOLD: u8 = 3;

/// Runs the review of `range` (the working tree when `None`).
pub fn run(
    cli: &Cli,
    host: &Host,
    range: Option<&str>,
    fail_on: Option<&str>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, Failed> {
    let usage = |err: &mut dyn Write, message: &str| {
        let _ = writeln!(err, "ybs: error: {}", crate::render::inert_lines(message));
        Ok(USAGE_ERROR)
    };
    // Both are checked before anything runs: a refused range reaches no git.
    let threshold = match fail_on.map(Severity::parse) {
        None => Severity::High,
        Some(Some(severity)) => severity,
        Some(None) => return usage(err, "--fail-on takes low, medium or high"),
    };
    let target = match ReviewTarget::parse(range) {
        Ok(target) => target,
        Err(error) => return usage(err, &error.to_string()),
    };
    let mut loaded = load::load(cli, host, err)?;
    if let Err(code) = first_run::check(&mut loaded, host, false, err) {
        return Ok(code);
    }
    let config = &loaded.config;
    let mut agent = load::build_agent(
        (config, &loaded),
        host,
        ("exec", ConfirmMode::Deny),
        &cli.options,
        err,
    )?;
    let runtime = load::runtime()?;
    let mut no_input = io::empty();
    let mut reply = io::sink();
    let reviewed = {
        let renderer = load::renderer(config, false).with_tools(agent.registry.clone());
        let mut ui = LineUi::new(renderer, &mut reply, err, &mut no_input);
        let cwd = host.locations.cwd.clone();
        runtime.block_on(load::cancellable(async |token| {
            agent.review(&cwd, &target, &mut ui, &token).await
        }))
    };
    let review = match reviewed {
        Ok(Some((review, _))) => review,
        Ok(None) => Review {
            findings: Vec::new(),
            summary: format!("nothing to review: {} has no changes", target.describe()),
        },
        Err(error) => return Err(Failed(error.to_string())),
    };
    let json = serde_json::to_string_pretty(&review)
        .map_err(|e| Failed(format!("cannot write the review: {e}")))?;
    let _ = writeln!(out, "{json}");
    let at_threshold = review.findings.iter().any(|f| f.severity >= threshold);
    Ok(if at_threshold {
        FINDINGS_AT_THRESHOLD
    } else {
        0
    })
}
