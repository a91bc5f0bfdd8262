//! A code review: the message that asks the model for one (in our own words, with the diff
//! and a JSON block to answer in) and the findings read back from its reply. The turn runs
//! in plan mode, so the model can read the project but change nothing. When the reply holds
//! no readable JSON block, the findings are empty and its text stands as the summary.

use std::path::Path;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::project::diff::{self, ReviewTarget};
use crate::{Agent, TurnReport, Ui};

/// Why a review could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// The target is not a revision, or git failed.
    #[error(transparent)]
    Diff(#[from] diff::DiffError),
    /// The turn failed.
    #[error(transparent)]
    Turn(#[from] crate::AgentError),
}

/// What a review turn gave: the review and the turn's report; `None` when there was nothing
/// to review (no model was asked).
pub type Reviewed = Option<(Review, TurnReport)>;

impl Agent {
    /// Reviews `target` in the repository around `dir`: gathers the diff, then runs one
    /// turn in plan mode (the model reads, changes nothing) and reads its findings.
    pub async fn review(
        &mut self,
        dir: &Path,
        target: &ReviewTarget,
        ui: &mut dyn Ui,
        cancel: &CancellationToken,
    ) -> Result<Reviewed, ReviewError> {
        let changes = diff::gather(dir, target)?;
        if changes.trim().is_empty() {
            return Ok(None);
        }
        let plan_mode = std::mem::replace(&mut self.plan_mode, true);
        let report = self.turn(&prompt(target, &changes), ui, cancel).await;
        self.plan_mode = plan_mode;
        let report = report?;
        Ok(Some((read_reply(&report.reply), report)))
    }
}

/// How serious a finding is, from least to most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Style, naming, a nit.
    Low,
    /// A likely bug in a corner, missing test, unclear code.
    Medium,
    /// A bug, a security hole, data loss.
    High,
}

impl Severity {
    /// The severity a person or script names (`low`, `medium`, `high`).
    pub fn parse(name: &str) -> Option<Severity> {
        match name.trim().to_ascii_lowercase().as_str() {
            "low" | "minor" | "nit" | "info" => Some(Severity::Low),
            "medium" | "moderate" | "major" => Some(Severity::Medium),
            "high" | "critical" | "severe" | "blocker" => Some(Severity::High),
            _ => None,
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
        }
    }
}

/// One finding of a review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The file, relative to the project.
    pub file: String,
    /// The line in the new version of the file, when the model named one.
    pub line: Option<u64>,
    /// How serious it is.
    pub severity: Severity,
    /// What is wrong and why.
    pub reason: String,
}

/// A review's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Review {
    /// The findings, most serious first.
    pub findings: Vec<Finding>,
    /// The model's overall word (its whole reply when it gave no JSON block).
    pub summary: String,
}

/// The message of a review turn for `target`, whose changes are `diff`.
pub fn prompt(target: &ReviewTarget, diff: &str) -> String {
    format!(
        "Review {what} as a careful senior engineer would before it is merged. Look for \
         bugs, security holes, data loss, races, wrong error handling, missing tests of \
         changed behaviour, and code that does not do what its names and comments say. Read \
         the files around a change when the diff alone does not tell. Do not change \
         anything. Report only real problems in the changed code, not praise and not a \
         summary of the change.\n\n\
         Answer with a short overall summary, then exactly one fenced JSON block:\n\n\
         ```json\n\
         {{\"findings\": [{{\"file\": \"path/relative/to/project\", \"line\": 12, \
         \"severity\": \"high\", \"reason\": \"what is wrong and why\"}}], \
         \"summary\": \"one or two sentences\"}}\n\
         ```\n\n\
         severity is \"high\" (a bug, a security hole, data loss), \"medium\" (a likely \
         problem, a missing test) or \"low\" (a nit); line is the line in the new version \
         of the file. An empty findings list is a fine answer.\n\n\
         The changes:\n\n```diff\n{diff}\n```\n",
        what = target.describe(),
    )
}

#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    findings: Vec<RawFinding>,
    #[serde(default)]
    summary: String,
}

#[derive(Deserialize)]
struct RawFinding {
    #[serde(default, alias = "path")]
    file: String,
    #[serde(default)]
    line: Option<serde_json::Value>,
    #[serde(default)]
    severity: String,
    #[serde(default, alias = "message", alias = "description")]
    reason: String,
}

/// The review in the model's `reply`: its last JSON block that reads as one, or none (the
/// reply's text as the summary).
pub fn read_reply(reply: &str) -> Review {
    let parsed = json_blocks(reply)
        .into_iter()
        .rev()
        .find_map(|block| serde_json::from_str::<Answer>(block).ok());
    let Some(answer) = parsed else {
        return Review {
            findings: Vec::new(),
            summary: reply.trim().to_owned(),
        };
    };
    let mut findings: Vec<Finding> = (answer.findings.into_iter())
        .filter(|raw| !raw.reason.trim().is_empty())
        .map(|raw| Finding {
            file: raw.file,
            line: raw.line.and_then(|line| match line {
                serde_json::Value::Number(n) => n.as_u64(),
                serde_json::Value::String(s) => s.trim().parse().ok(),
                _ => None,
            }),
            severity: Severity::parse(&raw.severity).unwrap_or(Severity::Medium),
            reason: raw.reason.trim().to_owned(),
        })
        .collect();
    findings.sort_by_key(|finding| std::cmp::Reverse(finding.severity));
    let summary = if answer.summary.trim().is_empty() {
        // The text before the block.
        reply.split("```").next().unwrap_or("").trim().to_owned()
    } else {
        answer.summary.trim().to_owned()
    };
    Review { findings, summary }
}

/// The contents of the reply's fenced blocks (```json or bare), and the reply itself when
/// it is one JSON object.
fn json_blocks(reply: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut rest = reply;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let body_start = after.find('\n').map_or(after.len(), |n| n + 1);
        let body = &after[body_start..];
        let Some(end) = body.find("```") else { break };
        blocks.push(body[..end].trim());
        rest = &body[end + 3..];
    }
    let whole = reply.trim();
    if whole.starts_with('{') {
        blocks.push(whole);
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_are_read_from_the_json_block_most_serious_first() {
        let reply = "Two problems.\n\n```json\n{\"findings\": [\
            {\"file\": \"a.py\", \"line\": 3, \"severity\": \"low\", \"reason\": \"nit\"},\
            {\"file\": \"b.py\", \"line\": \"7\", \"severity\": \"HIGH\", \"reason\": \"bug\"}],\
            \"summary\": \"risky\"}\n```\n";
        let review = read_reply(reply);
        assert_eq!(review.summary, "risky");
        assert_eq!(review.findings.len(), 2);
        assert_eq!(review.findings[0].file, "b.py");
        assert_eq!(review.findings[0].line, Some(7));
        assert_eq!(review.findings[0].severity, Severity::High);
        assert_eq!(review.findings[1].severity, Severity::Low);
    }

    #[test]
    fn a_reply_without_json_is_its_own_summary() {
        let review = read_reply("Looks fine to me.");
        assert!(review.findings.is_empty());
        assert_eq!(review.summary, "Looks fine to me.");
        let review = read_reply("```json\n{not json\n```");
        assert!(review.findings.is_empty());
    }
}
