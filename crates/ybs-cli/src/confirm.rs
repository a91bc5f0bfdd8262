//! The confirmation policy of spec section 8.3: which tool calls ask first, what the user's
//! answer means, and what a non-interactive run does instead of asking.

use std::collections::BTreeSet;

/// How confirmations are settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfirmMode {
    /// Ask the user at the terminal (the REPL).
    Ask,
    /// Allow every call (`ybs exec --yes`).
    AssumeYes,
    /// Nobody can answer (`ybs exec` without `--yes`): calls that need confirmation are denied.
    Deny,
}

/// What to do with one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run it.
    Run,
    /// Ask the user with [`prompt`]; pass the answer to [`ConfirmationPolicy::answer`].
    Ask,
    /// Do not run it; the text tells the user why.
    Deny(String),
}

/// The user's answer to `[y]es / [n]o / [a]lways this session`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Run this call.
    Yes,
    /// Do not run it.
    No,
    /// Run it and every later call of the same tool this session.
    Always,
}

impl Answer {
    /// Reads an answer; anything but yes or always is no (deny by default).
    pub fn parse(input: &str) -> Answer {
        match input.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => Answer::Yes,
            "a" | "always" => Answer::Always,
            _ => Answer::No,
        }
    }
}

/// The question asked before a call runs.
pub fn prompt(tool: &str) -> String {
    format!("Allow {tool}? [y]es / [n]o / [a]lways this session: ")
}

/// What the model is told when its call did not run.
pub fn denied_result(tool: &str) -> String {
    format!(
        "The user denied this call of {tool}; it did not run. Do not repeat it unless the user \
         asks; continue without it or explain what you need."
    )
}

/// Which tools need confirmation, and which the user allowed for the rest of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfirmationPolicy {
    mode: ConfirmMode,
    required: BTreeSet<String>,
    always: BTreeSet<String>,
}

impl ConfirmationPolicy {
    /// A policy asking for the tools of `safety.require_confirmation`.
    pub fn new(mode: ConfirmMode, required: impl IntoIterator<Item = String>) -> Self {
        ConfirmationPolicy {
            mode,
            required: required.into_iter().collect(),
            always: BTreeSet::new(),
        }
    }

    /// Whether `tool` must be confirmed at all.
    pub fn requires_confirmation(&self, tool: &str) -> bool {
        self.required.contains(tool)
    }

    /// What to do with a call of `tool`.
    pub fn decide(&self, tool: &str) -> Decision {
        if !self.requires_confirmation(tool) || self.always.contains(tool) {
            return Decision::Run;
        }
        match self.mode {
            ConfirmMode::Ask => Decision::Ask,
            ConfirmMode::AssumeYes => Decision::Run,
            ConfirmMode::Deny => Decision::Deny(format!(
                "{tool} needs confirmation and nobody can answer here; it was denied (run with \
                 --yes to allow such calls)"
            )),
        }
    }

    /// Applies the user's answer for `tool`; returns whether the call runs.
    pub fn answer(&mut self, tool: &str, answer: Answer) -> bool {
        match answer {
            Answer::Yes => true,
            Answer::No => false,
            Answer::Always => {
                self.always.insert(tool.to_owned());
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(mode: ConfirmMode) -> ConfirmationPolicy {
        ConfirmationPolicy::new(mode, ["write_file".to_owned(), "run_shell".to_owned()])
    }

    #[test]
    fn only_listed_tools_ask() {
        let policy = policy(ConfirmMode::Ask);
        assert_eq!(policy.decide("read_file"), Decision::Run);
        assert_eq!(policy.decide("write_file"), Decision::Ask);
    }

    #[test]
    fn always_allows_the_tool_for_the_session_only() {
        let mut policy = policy(ConfirmMode::Ask);
        assert!(policy.answer("run_shell", Answer::Always));
        assert_eq!(policy.decide("run_shell"), Decision::Run);
        assert_eq!(policy.decide("write_file"), Decision::Ask);
        assert!(!policy.answer("write_file", Answer::No));
        assert_eq!(policy.decide("write_file"), Decision::Ask);
    }

    #[test]
    fn non_interactive_runs_deny_or_allow_by_flag() {
        assert_eq!(
            policy(ConfirmMode::Deny).decide("write_file"),
            Decision::Deny(
                "write_file needs confirmation and nobody can answer here; it was denied (run \
                 with --yes to allow such calls)"
                    .into()
            )
        );
        assert_eq!(
            policy(ConfirmMode::AssumeYes).decide("write_file"),
            Decision::Run
        );
        assert_eq!(policy(ConfirmMode::Deny).decide("read_file"), Decision::Run);
    }

    #[test]
    fn answers_default_to_no() {
        assert_eq!(Answer::parse("y"), Answer::Yes);
        assert_eq!(Answer::parse(" YES\n"), Answer::Yes);
        assert_eq!(Answer::parse("a"), Answer::Always);
        assert_eq!(Answer::parse("always"), Answer::Always);
        assert_eq!(Answer::parse(""), Answer::No);
        assert_eq!(Answer::parse("sure"), Answer::No);
    }

    #[test]
    fn texts_name_the_tool() {
        assert_eq!(
            prompt("run_shell"),
            "Allow run_shell? [y]es / [n]o / [a]lways this session: "
        );
        assert!(denied_result("run_shell").starts_with("The user denied this call of run_shell;"));
    }
}
