//! Permission rules: calls the user allows or denies once, by tool and, for `run_shell`, by
//! command prefix (`run_shell(cargo test*)`), in layers: this session's rules, the
//! project's (`./.ybs.json`: a layer of its own, so that a trust check can leave it out) and
//! the user's (`~/.config/ybs/config.json`).
//!
//! A shell command is matched as the shell will run it ([`command`]): a deny rule matching
//! any command of it refuses the call; an allow rule must match every command of its `;`,
//! `&&`, `||` and `|` chain, and a command with substitutions, expansions or redirections into
//! protected paths never matches an allow rule (only a rule for the whole tool covers it).

pub mod command;
pub mod store;

use std::fmt;
use std::path::PathBuf;

use serde_json::Value;
use ybs_tools::RuleSubject;

/// Where a rule lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Layer {
    /// Until ybs exits.
    Session,
    /// The project's `.ybs.json`.
    Project,
    /// The user's configuration file.
    User,
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Layer::Session => "session",
            Layer::Project => "project",
            Layer::User => "user",
        })
    }
}

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
    /// For `run_shell` the command's words (a trailing `*` allows any further words); for
    /// the file tools the `path` (a trailing `*` allows any path starting so). `None`: every
    /// call of the tool.
    pub pattern: Option<String>,
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

    /// Whether the rule matches one simple command's words.
    fn matches_words(&self, words: &[String]) -> bool {
        let Some(pattern) = &self.pattern else {
            return true;
        };
        let mut wanted: Vec<String> = shell_words(pattern);
        let prefix = match wanted.last_mut() {
            Some(last) if last == "*" => {
                wanted.pop();
                true
            }
            Some(last) if last.ends_with('*') => {
                last.pop();
                true
            }
            _ => false,
        };
        if prefix {
            words.len() >= wanted.len() && words[..wanted.len()] == wanted[..]
        } else {
            words == wanted.as_slice()
        }
    }

    /// Whether the rule matches `web_fetch`'s host: `docs.rs`, or `*.example.com` for the
    /// domain and every name under it.
    fn matches_host(&self, host: &str) -> bool {
        match &self.pattern {
            None => true,
            Some(pattern) => {
                let pattern = pattern.to_ascii_lowercase();
                match pattern.strip_prefix("*.") {
                    Some(domain) => host == domain || host.ends_with(&format!(".{domain}")),
                    None => host == pattern,
                }
            }
        }
    }

    /// Whether the rule matches a file tool's `path`.
    fn matches_path(&self, path: &str) -> bool {
        match &self.pattern {
            None => true,
            Some(pattern) => match pattern.strip_suffix('*') {
                Some(prefix) => path.starts_with(prefix) && !path.contains(".."),
                None => path == pattern,
            },
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

/// The words of a pattern (quotes as the shell reads them; unparsable text by spaces).
fn shell_words(pattern: &str) -> Vec<String> {
    shell_words::split(pattern)
        .unwrap_or_else(|_| pattern.split_whitespace().map(str::to_owned).collect())
}

/// Allow and deny rules of one layer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleSet {
    /// Calls that run without asking.
    pub allow: Vec<Rule>,
    /// Calls that never run.
    pub deny: Vec<Rule>,
}

/// What the rules say about a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// A deny rule matches: the call does not run.
    Deny {
        /// The rule.
        rule: Rule,
        /// Its layer.
        layer: Layer,
    },
    /// Allow rules cover the whole call.
    Allow,
    /// No rule decides; `why` says why allow rules could not match, when that is the
    /// reason (a command with a substitution, say).
    Ask {
        /// Why no allow rule could match, if one might have.
        why: Option<String>,
    },
}

/// The rules of every layer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Permissions {
    layers: Vec<(Layer, RuleSet)>,
}

impl Permissions {
    /// Rules from `layers`.
    pub fn new(layers: Vec<(Layer, RuleSet)>) -> Self {
        let mut permissions = Permissions { layers };
        permissions.layers.sort_by_key(|(layer, _)| *layer);
        permissions
    }

    /// Adds `rule` to the allow rules of `layer` (once).
    pub fn allow(&mut self, layer: Layer, rule: Rule) {
        let index = match self.layers.iter().position(|(l, _)| *l == layer) {
            Some(index) => index,
            None => {
                self.layers.push((layer, RuleSet::default()));
                self.layers.sort_by_key(|(layer, _)| *layer);
                self.layers
                    .iter()
                    .position(|(l, _)| *l == layer)
                    .unwrap_or(0)
            }
        };
        let set = &mut self.layers[index].1;
        if !set.allow.contains(&rule) {
            set.allow.push(rule);
        }
    }

    /// Every rule: layer, `allow` or `deny`, the rule; in the order `/permissions` numbers
    /// them.
    pub fn list(&self) -> Vec<(Layer, &'static str, &Rule)> {
        let mut out = Vec::new();
        for (layer, set) in &self.layers {
            out.extend(set.allow.iter().map(|rule| (*layer, "allow", rule)));
            out.extend(set.deny.iter().map(|rule| (*layer, "deny", rule)));
        }
        out
    }

    /// Removes the rule numbered `index` (from 0) by [`list`](Permissions::list).
    pub fn remove(&mut self, index: usize) -> Option<(Layer, &'static str, Rule)> {
        let (layer, kind, rule) = {
            let (layer, kind, rule) = self.list().get(index).copied()?;
            (layer, kind, rule.clone())
        };
        for (l, set) in &mut self.layers {
            if *l != layer {
                continue;
            }
            let list = if kind == "allow" {
                &mut set.allow
            } else {
                &mut set.deny
            };
            if let Some(at) = list.iter().position(|r| *r == rule) {
                list.remove(at);
            }
        }
        Some((layer, kind, rule))
    }

    /// Forgets the session's rules.
    pub fn clear_session(&mut self) {
        self.layers.retain(|(layer, _)| *layer != Layer::Session);
    }

    /// What the rules say about calling `tool` with `args`; `subject` is what its rules'
    /// patterns match (the tool's declaration says).
    pub fn check(&self, tool: &str, subject: RuleSubject, args: &Value) -> Verdict {
        let rules = |kind: fn(&RuleSet) -> &Vec<Rule>| {
            self.layers.iter().flat_map(move |(layer, set)| {
                kind(set)
                    .iter()
                    .filter(move |rule| rule.tool == tool)
                    .map(move |rule| (*layer, rule))
            })
        };
        if subject == RuleSubject::Command {
            let line = args.get("command").and_then(Value::as_str).unwrap_or("");
            let parsed = command::parse(line);
            for (layer, rule) in rules(|set| &set.deny) {
                if parsed
                    .commands
                    .iter()
                    .any(|words| rule.matches_words(words))
                {
                    return Verdict::Deny {
                        rule: rule.clone(),
                        layer,
                    };
                }
            }
            let allows: Vec<&Rule> = rules(|set| &set.allow).map(|(_, rule)| rule).collect();
            if allows.iter().any(|rule| rule.pattern.is_none()) {
                return Verdict::Allow;
            }
            if allows.is_empty() {
                return Verdict::Ask { why: None };
            }
            if !parsed.plain {
                return Verdict::Ask {
                    why: parsed.not_plain,
                };
            }
            let covered = (parsed.commands.iter())
                .all(|words| allows.iter().any(|rule| rule.matches_words(words)));
            return if covered {
                Verdict::Allow
            } else {
                Verdict::Ask { why: None }
            };
        }
        if subject == RuleSubject::Host {
            let host = url_of(args).and_then(ybs_tools::builtins::url_host);
            let host = host.as_deref().unwrap_or("");
            if let Some((layer, rule)) =
                rules(|set| &set.deny).find(|(_, rule)| rule.matches_host(host))
            {
                return Verdict::Deny {
                    rule: rule.clone(),
                    layer,
                };
            }
            let allowed = rules(|set| &set.allow).any(|(_, rule)| rule.matches_host(host));
            return if allowed && !host.is_empty() {
                Verdict::Allow
            } else {
                Verdict::Ask { why: None }
            };
        }
        let path = args.get("path").and_then(Value::as_str).unwrap_or("");
        if let Some((layer, rule)) =
            rules(|set| &set.deny).find(|(_, rule)| rule.matches_path(path))
        {
            return Verdict::Deny {
                rule: rule.clone(),
                layer,
            };
        }
        if rules(|set| &set.allow).any(|(_, rule)| rule.matches_path(path)) {
            Verdict::Allow
        } else {
            Verdict::Ask { why: None }
        }
    }
}

/// The rules a user may save when answering "always" for `tool` with `args`: this exact
/// call (its command, host or path, as `subject` says), its command prefix (the first two
/// words) for commands, and the whole tool.
pub fn offers(tool: &str, subject: RuleSubject, args: &Value) -> Vec<Rule> {
    let mut offers = Vec::new();
    let with = |pattern: String| Rule {
        tool: tool.to_owned(),
        pattern: Some(pattern),
    };
    if subject == RuleSubject::Command {
        let line = args
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim();
        let parsed = command::parse(line);
        if parsed.plain && parsed.commands.len() == 1 {
            let words = &parsed.commands[0];
            offers.push(with(shell_words::join(words)));
            if words.len() > 2 {
                offers.push(with(format!("{}*", shell_words::join(&words[..2]))));
            }
        }
    } else if subject == RuleSubject::Host {
        if let Some(host) = url_of(args).and_then(ybs_tools::builtins::url_host) {
            offers.push(with(host));
        }
    } else if let Some(path) = args.get("path").and_then(Value::as_str) {
        offers.push(with(path.to_owned()));
    }
    offers.push(Rule {
        tool: tool.to_owned(),
        pattern: None,
    });
    offers
}

/// The `url` argument of a tool whose rules name hosts.
fn url_of(args: &Value) -> Option<&str> {
    args.get("url").and_then(Value::as_str)
}

/// The files that "always" answers may save rules in.
#[derive(Debug, Clone, Default)]
pub struct RuleFiles {
    /// The project's `.ybs.json`.
    pub project: Option<PathBuf>,
    /// The user's configuration file.
    pub user: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rules(allow: &[&str], deny: &[&str]) -> Permissions {
        let parse = |list: &[&str]| list.iter().map(|r| Rule::parse(r).unwrap()).collect();
        Permissions::new(vec![(
            Layer::User,
            RuleSet {
                allow: parse(allow),
                deny: parse(deny),
            },
        )])
    }

    fn shell(permissions: &Permissions, command: &str) -> Verdict {
        permissions.check(
            "run_shell",
            RuleSubject::Command,
            &json!({ "command": command }),
        )
    }

    #[test]
    fn web_fetch_rules_match_the_host() {
        let p = rules(&["web_fetch(docs.rs)", "web_fetch(*.example.com)"], &[]);
        let fetch = |url: &str| p.check("web_fetch", RuleSubject::Host, &json!({ "url": url }));
        assert_eq!(fetch("https://docs.rs/tokio"), Verdict::Allow);
        assert_eq!(fetch("http://a.example.com/x"), Verdict::Allow);
        assert_eq!(fetch("http://example.com/x"), Verdict::Allow);
        assert_eq!(
            fetch("http://docs.rs.evil.net/"),
            Verdict::Ask { why: None }
        );
        assert_eq!(fetch("http://127.0.0.1:8080/"), Verdict::Ask { why: None });
        assert_eq!(fetch("not a url"), Verdict::Ask { why: None });
        assert_eq!(
            offers(
                "web_fetch",
                RuleSubject::Host,
                &json!({"url": "http://127.0.0.1:9/x"})
            )
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
            ["web_fetch(127.0.0.1)", "web_fetch"]
        );
    }

    #[test]
    fn rules_parse_and_print_the_same() {
        for text in ["run_shell(cargo test*)", "write_file", "edit_file(src/*)"] {
            assert_eq!(Rule::parse(text).unwrap().to_string(), text);
        }
        assert!(Rule::parse("run_shell(ls").is_err());
        assert!(Rule::parse("(ls)").is_err());
        assert!(Rule::parse("run_shell()").is_err());
    }

    #[test]
    fn every_command_of_a_chain_must_be_allowed() {
        let p = rules(
            &[
                "run_shell(git status)",
                "run_shell(cargo test*)",
                "run_shell(ls*)",
            ],
            &[],
        );
        assert_eq!(shell(&p, "git status"), Verdict::Allow);
        assert_eq!(shell(&p, "cargo test --all && ls -la | ls"), Verdict::Allow);
        assert_eq!(shell(&p, "cargo tests"), Verdict::Ask { why: None });
        assert_eq!(
            shell(&p, "git status; rm -rf target"),
            Verdict::Ask { why: None }
        );
        assert_eq!(shell(&p, "git status --short"), Verdict::Ask { why: None });
        let Verdict::Ask { why: Some(why) } = shell(&p, "ls $(rm -rf ~)") else {
            panic!("a substitution matched an allow rule");
        };
        assert!(why.contains("command substitution"), "{why}");
        assert!(matches!(
            shell(&p, "ls > .git/config"),
            Verdict::Ask { why: Some(_) }
        ));
        assert!(matches!(
            shell(&p, "ls `rm x`"),
            Verdict::Ask { why: Some(_) }
        ));
    }

    #[test]
    fn a_deny_rule_wins_anywhere_in_the_command() {
        let p = rules(&["run_shell"], &["run_shell(git push*)"]);
        assert_eq!(shell(&p, "ls"), Verdict::Allow);
        for command in [
            "git push",
            "ls && git push origin main",
            "echo $(git push -f)",
        ] {
            assert!(
                matches!(shell(&p, command), Verdict::Deny { .. }),
                "{command}"
            );
        }
    }

    #[test]
    fn file_tools_match_by_path_and_always_offers_narrow_to_wide() {
        let p = rules(&["write_file(src/*)"], &["write_file(src/secret.rs)"]);
        let check = |path: &str| p.check("write_file", RuleSubject::Path, &json!({ "path": path }));
        assert_eq!(check("src/main.rs"), Verdict::Allow);
        assert!(matches!(check("src/secret.rs"), Verdict::Deny { .. }));
        assert_eq!(check("build.rs"), Verdict::Ask { why: None });
        assert_eq!(check("src/../x"), Verdict::Ask { why: None });
        let offered: Vec<String> = offers(
            "run_shell",
            RuleSubject::Command,
            &json!({"command": "cargo test --all"}),
        )
        .iter()
        .map(ToString::to_string)
        .collect();
        assert_eq!(
            offered,
            [
                "run_shell(cargo test --all)",
                "run_shell(cargo test*)",
                "run_shell"
            ]
        );
        assert_eq!(
            offers(
                "run_shell",
                RuleSubject::Command,
                &json!({"command": "ls | wc"})
            )
            .len(),
            1
        );
    }

    #[test]
    fn rules_are_listed_by_layer_and_removed_by_number() {
        let mut p = rules(&["run_shell(ls*)"], &["run_shell(git push*)"]);
        p.allow(Layer::Session, Rule::parse("write_file").unwrap());
        let listed: Vec<String> = (p.list().iter())
            .map(|(layer, kind, rule)| format!("{layer} {kind} {rule}"))
            .collect();
        assert_eq!(
            listed,
            [
                "session allow write_file",
                "user allow run_shell(ls*)",
                "user deny run_shell(git push*)"
            ]
        );
        let removed = p.remove(1).unwrap();
        assert_eq!(removed.2.to_string(), "run_shell(ls*)");
        assert_eq!(p.list().len(), 2);
        p.clear_session();
        assert_eq!(p.list().len(), 1);
    }
}
