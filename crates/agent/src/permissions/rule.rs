//! One permission rule and what it matches: a shell command as it runs (its resolved
//! program, its words and where its output goes), a file tool's path after normalising, or
//! a fetch's host and port after normalising the address.

use std::fmt;

use ybs_tools::builtins::web_fetch::{Origin, canonical_host};
use ybs_tools::shell::program;

use super::command::SimpleCommand;

/// Why a permission rule does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// `tool(pattern` without its `)`.
    #[error("permission rule `{0}` has no closing `)`; write TOOL or TOOL(PATTERN)")]
    Unclosed(String),
    /// Something other than a tool name before the pattern.
    #[error(
        "permission rule `{0}` does not start with a tool name; write TOOL or TOOL(PATTERN), \
         e.g. run_shell(cargo test*)"
    )]
    NoTool(String),
    /// `tool()`.
    #[error("permission rule `{0}` has an empty pattern")]
    EmptyPattern(String),
}

/// One rule: a tool, and optionally what its call must be (`git status`, `cargo test*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The tool's name.
    pub tool: String,
    /// For `run_shell` the command's words (a trailing `*` allows any further words) and
    /// its output redirections (`git log > log.txt`); for the file tools the `path` (a
    /// trailing `*` allows any path starting so); for `web_fetch` the host, with a port or
    /// not (`docs.rs`, `*.example.com`, `127.0.0.1:8080`). `None`: every call of the tool.
    pub pattern: Option<String>,
}

/// A command pattern taken apart.
struct CommandPattern {
    words: Vec<String>,
    /// A trailing `*`: any further words (never a redirection).
    prefix: bool,
    writes: Vec<(String, String)>,
}

impl Rule {
    /// Reads `tool` or `tool(pattern)`.
    pub fn parse(text: &str) -> Result<Rule, RuleError> {
        let text = text.trim();
        let (tool, pattern) = match text.split_once('(') {
            Some((tool, rest)) => {
                let pattern =
                    (rest.strip_suffix(')')).ok_or_else(|| RuleError::Unclosed(text.to_owned()))?;
                (tool.trim(), Some(pattern.trim().to_owned()))
            }
            None => (text, None),
        };
        let valid = !tool.is_empty()
            && tool
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid {
            return Err(RuleError::NoTool(text.to_owned()));
        }
        if pattern.as_deref().is_some_and(str::is_empty) {
            return Err(RuleError::EmptyPattern(text.to_owned()));
        }
        Ok(Rule {
            tool: tool.to_owned(),
            pattern,
        })
    }

    /// The rule allowing exactly `command`, when its words are all known.
    pub(super) fn for_command(tool: &str, command: &SimpleCommand) -> Option<Rule> {
        let words = command.literal()?;
        let mut pattern = shell_words::join(&words);
        for (operator, target) in &command.writes {
            pattern.push_str(&format!(" {operator} {}", shell_words::quote(target)));
        }
        Some(Rule {
            tool: tool.to_owned(),
            pattern: Some(pattern),
        })
    }

    fn command_pattern(pattern: &str) -> CommandPattern {
        let tokens = shell_words::split(pattern)
            .unwrap_or_else(|_| pattern.split_whitespace().map(str::to_owned).collect());
        let mut words = Vec::new();
        let mut writes = Vec::new();
        let mut tokens = tokens.into_iter();
        while let Some(token) = tokens.next() {
            let digits = token.trim_start_matches(|c: char| c.is_ascii_digit());
            let operator_len = [">>", ">|", "&>", ">"]
                .iter()
                .find(|op| digits.starts_with(**op))
                .map(|op| token.len() - digits.len() + op.len());
            match operator_len {
                Some(len) => {
                    let (operator, target) = token.split_at(len);
                    let target = if target.is_empty() {
                        tokens.next().unwrap_or_default()
                    } else {
                        target.to_owned()
                    };
                    writes.push((operator.to_owned(), target));
                }
                None => words.push(token),
            }
        }
        let prefix = match words.last_mut() {
            Some(last) if last == "*" => {
                words.pop();
                true
            }
            Some(last) if last.ends_with('*') => {
                last.pop();
                true
            }
            _ => false,
        };
        CommandPattern {
            words,
            prefix,
            writes,
        }
    }

    /// Whether the rule allows `command`: only a command whose words are exactly what runs,
    /// with the same output redirections as the rule (a `*` never covers a redirection).
    pub(super) fn allows_command(&self, command: &SimpleCommand) -> bool {
        let Some(pattern) = &self.pattern else {
            return true;
        };
        if !command.exact || command.more {
            return false;
        }
        let wanted = Self::command_pattern(pattern);
        if command.writes != wanted.writes {
            return false;
        }
        let words = &command.words;
        let head_matches = words.len() >= wanted.words.len()
            && (words.iter().zip(&wanted.words)).all(|(word, want)| word.as_ref() == Some(want));
        // Past a `*`, a glob's file names are words like any other.
        head_matches && (wanted.prefix || words.len() == wanted.words.len())
    }

    /// Whether the rule denies `command`: its program resolved as for commands (so
    /// `run_shell(/usr/bin/git push*)` is `git push*`), and a word or program the parser
    /// cannot know counted as matching (a deny that cannot be decided denies).
    pub(super) fn denies_command(&self, command: &SimpleCommand) -> bool {
        let Some(pattern) = &self.pattern else {
            return true;
        };
        let wanted = Self::command_pattern(pattern);
        let given: Vec<program::Word> = wanted.words.iter().cloned().map(Some).collect();
        let resolved = program::resolve(&given);
        // A rule naming a wrapper (`sudo*`) keeps it; others name the program behind it.
        let wanted_words: Vec<String> = match resolved.wrappers.first() {
            Some(as_written) => as_written.iter().flatten().cloned().collect(),
            None => resolved.words.into_iter().flatten().collect(),
        };
        let matches = |words: &[program::Word], more: bool| {
            for (index, want) in wanted_words.iter().enumerate() {
                match words.get(index) {
                    Some(None) => return true,
                    Some(Some(word)) if word == want => {}
                    Some(Some(_)) => return false,
                    None => return more,
                }
            }
            // Unknown words may expand to nothing.
            wanted.prefix || words[wanted_words.len()..].iter().all(Option::is_none)
        };
        matches(&command.words, command.more)
            || (command.wrappers.iter()).any(|as_written| matches(as_written, command.more))
    }

    /// Whether the rule matches a fetch of `origin`. A rule without a port matches the
    /// default ports of http and https when it allows, every port when it denies.
    pub(super) fn matches_origin(&self, origin: &Origin, deny: bool) -> bool {
        let Some(pattern) = &self.pattern else {
            return true;
        };
        let (host, port) = split_host_port(pattern);
        let port_matches = match port {
            Some(port) => port == origin.port,
            None => deny || matches!(origin.port, 80 | 443),
        };
        let host_matches = match host.strip_prefix("*.") {
            Some(domain) => {
                let domain = domain.to_ascii_lowercase();
                origin.host == domain || origin.host.ends_with(&format!(".{domain}"))
            }
            None => origin.host == canonical_host(host),
        };
        port_matches && host_matches
    }

    /// Whether the rule matches a file tool's path, both normalised (`./a`, `a/../a`).
    pub(super) fn matches_path(&self, path: &str) -> bool {
        let Some(pattern) = &self.pattern else {
            return true;
        };
        match pattern.strip_suffix('*') {
            Some(prefix) => {
                let prefix = prefix.trim_end_matches('*');
                let Some(mut normal) = normalise_path(prefix) else {
                    return false;
                };
                if prefix.ends_with('/') && !normal.is_empty() && !normal.ends_with('/') {
                    normal.push('/');
                }
                path.starts_with(&normal)
            }
            None => normalise_path(pattern).is_some_and(|normal| normal == path),
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.pattern {
            Some(pattern) => write!(f, "{}({pattern})", self.tool),
            None => f.write_str(&self.tool),
        }
    }
}

/// `host`, `host:port`, `[v6]`, `[v6]:port`.
fn split_host_port(pattern: &str) -> (&str, Option<u16>) {
    if let Some(rest) = pattern.strip_prefix('[')
        && let Some((host, after)) = rest.split_once(']')
    {
        return (host, after.strip_prefix(':').and_then(|p| p.parse().ok()));
    }
    match pattern.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => match port.parse() {
            Ok(port) => (host, Some(port)),
            Err(_) => (pattern, None),
        },
        _ => (pattern, None),
    }
}

/// `path` with `.` and empty parts dropped and `..` applied to the part before it; `None`
/// when a `..` leaves the start (the path cannot be placed without the file system).
pub fn normalise_path(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    let joined = parts.join("/");
    Some(if path.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    })
}
