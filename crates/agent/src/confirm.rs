//! The terminal side of confirmations. Which calls need confirmation and
//! the session allow-list are `ybs-tools`' `ConfirmationPolicy`; this module decides what
//! happens when nobody can answer (`exec`), reads the user's answer, and words the prompt
//! and the message the model gets for a denied call.

use crate::permissions::Layer;

/// How confirmations are settled in this run.
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
pub enum Settle {
    /// Run it.
    Run,
    /// Ask the user with [`prompt`] and read the reply with [`Answer::parse`].
    Ask,
    /// Do not run it; the text tells the user why.
    Deny(String),
}

impl ConfirmMode {
    /// What to do with a call of `tool`, given whether the policy requires confirmation.
    pub fn settle(self, tool: &str, confirmation_required: bool) -> Settle {
        if !confirmation_required {
            return Settle::Run;
        }
        match self {
            ConfirmMode::Ask => Settle::Ask,
            ConfirmMode::AssumeYes => Settle::Run,
            ConfirmMode::Deny => Settle::Deny(format!(
                "{tool} needs confirmation and nobody can answer here; it was denied (run with \
                 --yes to allow such calls)"
            )),
        }
    }
}

/// The user's answer to `[y]es / [n]o / [a]lways (a rule)`.
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

/// Reads the answer to "which rule, and where" after "always", among `offers` rules: `N`
/// then `s`, `p` or `u` (the session, the project, the user; the session when left out),
/// or Enter for the first for the session. Anything else (`n`, `x`, `no`, a number not
/// offered) is `None`: no rule, and the call does not run.
pub fn parse_rule_choice(input: &str, offers: usize) -> Option<(usize, Layer)> {
    let answer = input.trim().to_ascii_lowercase();
    let digits: String = answer.chars().take_while(char::is_ascii_digit).collect();
    let index = match digits.parse::<usize>() {
        Ok(number) if (1..=offers).contains(&number) => number - 1,
        Ok(_) => return None,
        Err(_) if offers > 0 => 0,
        Err(_) => return None,
    };
    let layer = match answer[digits.len()..].trim() {
        "" | "s" | "session" => Layer::Session,
        "p" | "project" => Layer::Project,
        "u" | "user" => Layer::User,
        _ => return None,
    };
    Some((index, layer))
}

/// The question asked before a call runs; `reason` is the policy's.
pub fn prompt(reason: &str) -> String {
    format!("{reason}. Allow? [y]es / [n]o / [a]lways (a rule): ")
}

/// How [`denied_result`] begins, for the terminal's summary of it.
pub const DENIED: &str = "The user denied this call of ";

/// What the model is told when its call did not run.
pub fn denied_result(tool: &str) -> String {
    format!(
        "{DENIED}{tool}; it did not run. Do not repeat it unless the user asks; continue \
         without it or explain what you need."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_without_confirmation_always_run() {
        for mode in [ConfirmMode::Ask, ConfirmMode::AssumeYes, ConfirmMode::Deny] {
            assert_eq!(mode.settle("read_file", false), Settle::Run);
        }
    }

    #[test]
    fn required_confirmations_ask_run_or_deny_by_mode() {
        assert_eq!(ConfirmMode::Ask.settle("write_file", true), Settle::Ask);
        assert_eq!(
            ConfirmMode::AssumeYes.settle("write_file", true),
            Settle::Run
        );
        assert_eq!(
            ConfirmMode::Deny.settle("write_file", true),
            Settle::Deny(
                "write_file needs confirmation and nobody can answer here; it was denied (run \
                 with --yes to allow such calls)"
                    .into()
            )
        );
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

    /// The attack: answering `n` to back out of "always" kept a rule allowing every command.
    #[test]
    fn a_rule_choice_that_names_no_offer_is_no() {
        assert_eq!(parse_rule_choice("", 2), Some((0, Layer::Session)));
        assert_eq!(parse_rule_choice("2u", 2), Some((1, Layer::User)));
        assert_eq!(parse_rule_choice(" 1 p\n", 2), Some((0, Layer::Project)));
        assert_eq!(parse_rule_choice("p", 2), Some((0, Layer::Project)));
        assert_eq!(parse_rule_choice("1s", 1), Some((0, Layer::Session)));
        for answer in ["n", "N", "no", "x", "3", "0", "1x", "never", "q"] {
            assert_eq!(parse_rule_choice(answer, 2), None, "{answer}");
        }
        assert_eq!(parse_rule_choice("", 0), None);
    }

    #[test]
    fn texts_name_the_tool_and_reason() {
        assert_eq!(
            prompt("`run_shell` requires confirmation (safety.require_confirmation)"),
            "`run_shell` requires confirmation (safety.require_confirmation). Allow? [y]es / \
             [n]o / [a]lways (a rule): "
        );
        assert!(denied_result("run_shell").starts_with("The user denied this call of run_shell;"));
    }
}
