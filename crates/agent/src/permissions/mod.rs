//! Permission rules: calls the user allows or denies once, by tool and by what the call
//! touches (`run_shell(cargo test*)`, `write_file(src/*)`, `web_fetch(docs.rs)`), in layers:
//! this session's rules, the project's (`./.ybs.json`: a layer of its own, so that a trust
//! check can leave it out) and the user's (`~/.config/ybs/config.json`).
//!
//! Rules match what runs, not how it is written. A shell command is matched as the shell
//! will run it ([`command`]): a deny rule matching any command of it refuses the call (and
//! a command the parser cannot know matches every deny rule); an allow rule must match
//! every command of its `;`, `&&`, `||` and `|` chain with its redirections, and a command
//! the parser cannot prove equal to what runs never matches an allow rule (only a rule for
//! the whole tool covers it). Paths are normalised, hosts and ports too ([`rule`]).

pub mod command;
pub mod rule;
pub mod store;

use std::fmt;
use std::path::PathBuf;

use serde_json::Value;
use ybs_tools::RuleSubject;
use ybs_tools::builtins::web_fetch::url_origin;

pub use rule::{Rule, RuleError, normalise_path};

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

    /// Adds the allow rules of `rules` that `layer` lacks, for a while: the ones added are
    /// returned, for [`take_back`](Permissions::take_back).
    pub fn allow_for_now(&mut self, layer: Layer, rules: Vec<Rule>) -> Vec<Rule> {
        let had = |permissions: &Permissions, rule: &Rule| {
            (permissions.list().iter())
                .any(|(l, kind, r)| *l == layer && *kind == "allow" && *r == rule)
        };
        let mut added = Vec::new();
        for rule in rules {
            if !had(self, &rule) && !added.contains(&rule) {
                self.allow(layer, rule.clone());
                added.push(rule);
            }
        }
        added
    }

    /// Removes the allow rules `rules` of `layer` that [`allow_for_now`] added.
    ///
    /// [`allow_for_now`]: Permissions::allow_for_now
    pub fn take_back(&mut self, layer: Layer, rules: &[Rule]) {
        for (l, set) in &mut self.layers {
            if *l == layer {
                set.allow.retain(|rule| !rules.contains(rule));
            }
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
    /// patterns match (the tool's declaration says). For a path, `physical` is the file the
    /// call would touch as the sandbox resolves it (links followed), relative to the project
    /// when inside it: a deny rule matching either form refuses, an allow rule must match
    /// both.
    pub fn check(
        &self,
        tool: &str,
        subject: RuleSubject,
        args: &Value,
        physical: Option<&str>,
    ) -> Verdict {
        let rules = |kind: fn(&RuleSet) -> &Vec<Rule>| {
            self.layers.iter().flat_map(move |(layer, set)| {
                kind(set)
                    .iter()
                    .filter(move |rule| rule.tool == tool)
                    .map(move |rule| (*layer, rule))
            })
        };
        let deny = |matches: &dyn Fn(&Rule) -> bool| {
            rules(|set| &set.deny)
                .find(|(_, rule)| matches(rule))
                .map(|(layer, rule)| Verdict::Deny {
                    rule: rule.clone(),
                    layer,
                })
        };
        match subject {
            RuleSubject::Command => {
                let line = args.get("command").and_then(Value::as_str).unwrap_or("");
                let parsed = command::parse(line);
                if let Some(verdict) =
                    deny(&|rule| parsed.commands.iter().any(|c| rule.denies_command(c)))
                {
                    return verdict;
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
                    .all(|c| allows.iter().any(|rule| rule.allows_command(c)));
                if covered {
                    Verdict::Allow
                } else {
                    Verdict::Ask { why: None }
                }
            }
            RuleSubject::Host => {
                let origin = url_of(args).and_then(url_origin);
                let Some(origin) = origin else {
                    // No host to match: only a rule for every call decides.
                    if let Some(verdict) = deny(&|rule| rule.pattern.is_none()) {
                        return verdict;
                    }
                    return Verdict::Ask { why: None };
                };
                if let Some(verdict) = deny(&|rule| rule.matches_origin(&origin, true)) {
                    return verdict;
                }
                if rules(|set| &set.allow).any(|(_, rule)| rule.matches_origin(&origin, false)) {
                    Verdict::Allow
                } else {
                    Verdict::Ask { why: None }
                }
            }
            RuleSubject::Path => {
                let given = args.get("path").and_then(Value::as_str).unwrap_or("");
                let forms: Vec<String> = (normalise_path(given).into_iter())
                    .chain(physical.map(str::to_owned))
                    .collect();
                // A path that cannot be placed cannot be cleared by a deny rule.
                let undecided = forms.is_empty();
                if let Some(verdict) = deny(&|rule| {
                    undecided
                        || rule.pattern.is_none()
                        || forms.iter().any(|f| rule.matches_path(f))
                }) {
                    return verdict;
                }
                let allowed = !undecided
                    && rules(|set| &set.allow)
                        .any(|(_, rule)| forms.iter().all(|f| rule.matches_path(f)));
                if allowed {
                    Verdict::Allow
                } else {
                    Verdict::Ask { why: None }
                }
            }
        }
    }
}

/// What an "always" answer may keep: one or more rules that together allow the call asked
/// about and nothing broader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    /// The rules, kept together.
    pub rules: Vec<Rule>,
}

impl fmt::Display for Offer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let texts: Vec<String> = self.rules.iter().map(ToString::to_string).collect();
        f.write_str(&texts.join(" and "))
    }
}

/// The rules a user may keep when answering "always" for `tool` with `args`: exactly this
/// call and never more. For a command, a rule for each command of its chain as it runs
/// (with its redirections); none when a command is not plain (no allow rule can match it);
/// for a fetch, its host and port; for a file tool, its path; for a tool with no subject in
/// its call, the tool.
pub fn offers(tool: &str, subject: RuleSubject, args: &Value) -> Vec<Offer> {
    let with = |pattern: String| Rule {
        tool: tool.to_owned(),
        pattern: Some(pattern),
    };
    let rules: Option<Vec<Rule>> = match subject {
        RuleSubject::Command => {
            let line = args.get("command").and_then(Value::as_str).unwrap_or("");
            let parsed = command::parse(line.trim());
            if parsed.plain {
                let mut rules: Vec<Rule> = Vec::new();
                let exact: Option<Vec<Rule>> = (parsed.commands.iter())
                    .map(|c| Rule::for_command(tool, c))
                    .collect();
                for rule in exact.unwrap_or_default() {
                    if !rules.contains(&rule) {
                        rules.push(rule);
                    }
                }
                (!rules.is_empty()).then_some(rules)
            } else {
                None
            }
        }
        RuleSubject::Host => url_of(args)
            .and_then(ybs_tools::builtins::web_fetch::url_authority)
            .map(|authority| vec![with(authority)]),
        RuleSubject::Path => match args.get("path").and_then(Value::as_str) {
            Some(path) => normalise_path(path)
                .filter(|path| !path.is_empty())
                .map(|path| vec![with(path)]),
            None => Some(vec![Rule {
                tool: tool.to_owned(),
                pattern: None,
            }]),
        },
    };
    rules.map(|rules| Offer { rules }).into_iter().collect()
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
    /// How an edit of the project's file keeps its trust; without it a rule saved there
    /// waits for trust at the next start.
    pub own_edits: Option<crate::config::OwnEdits>,
}

impl RuleFiles {
    /// The project's `.ybs.json` in the working directory and the user's configuration file
    /// of `locations`.
    pub fn of(locations: &crate::config::ConfigLocations) -> RuleFiles {
        RuleFiles {
            project: Some(locations.cwd.join(".ybs.json")),
            user: locations.user_file(),
            own_edits: None,
        }
    }
}

#[cfg(test)]
mod tests;
