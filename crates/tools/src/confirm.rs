//! The confirmation policy as data: which calls need the user's yes, the session
//! allow-list, and the decision the agent gets from its UI. No UI here.
//!
//! A call needs confirmation when its tool is in `require_confirmation` and not allowed for
//! the session, or when its tool's [`Declaration::asks`] says so: every host a fetching tool
//! reaches, an edit of a file the model has not read in this session. Allowing a tool
//! "always for this session" covers both. A change to a file ybs reads as configuration
//! (`.ybs.json`, `.ybs/`, `.chat`) always asks.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::declaration::{Asks, Declaration, Effect};
use crate::tool::ToolContext;

/// What the user answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Run this call.
    Allow,
    /// Do not run it.
    Deny,
    /// Run it, and every later call of the same tool in this session.
    AllowForSession,
}

/// Whether a call may run without asking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirmation {
    /// Run it.
    NotNeeded,
    /// Ask the user first; `reason` says why, for the prompt.
    Required {
        /// Why confirmation is needed.
        reason: String,
    },
}

/// Why the call `name(args)` must ask whatever else allowed it (rules, the approval mode,
/// the session's list): it changes a file ybs reads as configuration. `None` for other
/// calls.
pub fn configuration_change(name: &str, declaration: &Declaration, args: &Value) -> Option<String> {
    let path = args.get("path").and_then(Value::as_str)?;
    let changes = matches!(declaration.effect, Effect::FileAtPath | Effect::Unknown);
    (changes && crate::protected::is_configuration(std::path::Path::new(path))).then(|| {
        format!("`{name}` of `{path}`, a file ybs reads as configuration (it is shown whole)")
    })
}

/// The `require_confirmation` list plus the tools allowed for this session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfirmationPolicy {
    require: BTreeSet<String>,
    /// Tools added by the caller, each with the reason shown when it asks.
    added: BTreeMap<String, String>,
    session_allowed: BTreeSet<String>,
}

impl ConfirmationPolicy {
    /// A policy from `safety.require_confirmation`.
    pub fn new<I, S>(require_confirmation: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ConfirmationPolicy {
            require: require_confirmation.into_iter().map(Into::into).collect(),
            added: BTreeMap::new(),
            session_allowed: BTreeSet::new(),
        }
    }

    /// Makes every call of `name` ask first, with `reason` in the prompt (for tools the
    /// configuration cannot list in advance, such as those of an MCP server).
    pub fn require(&mut self, name: impl Into<String>, reason: impl Into<String>) {
        self.added.insert(name.into(), reason.into());
    }

    /// Whether the call `name(args)` of a tool that declares `declaration` needs the user's
    /// confirmation.
    pub fn check(
        &self,
        name: &str,
        declaration: &Declaration,
        args: &Value,
        ctx: &ToolContext,
    ) -> Confirmation {
        let path = args.get("path").and_then(Value::as_str);
        if let Some(reason) = configuration_change(name, declaration, args) {
            return Confirmation::Required { reason };
        }
        if self.session_allowed.contains(name) {
            return Confirmation::NotNeeded;
        }
        if declaration.asks == Asks::EveryHost {
            // Each host and port is allowed on its own (the caller keeps which), loopback and
            // private addresses too.
            let url = args.get("url").and_then(Value::as_str).unwrap_or_default();
            let origin = crate::builtins::web_fetch::url_origin(url);
            let kind = (origin.as_ref())
                .and_then(|origin| crate::builtins::web_fetch::host_kind(&origin.host))
                .map_or_else(String::new, |kind| format!(", {kind}"));
            let authority = crate::builtins::web_fetch::url_authority(url);
            return Confirmation::Required {
                reason: format!(
                    "`{name}` of {} ({}{kind})",
                    crate::truncate::truncate_output(url, 200),
                    authority.map_or_else(|| "no host".to_owned(), |at| format!("host {at}"))
                ),
            };
        }
        if self.require.contains(name) {
            return Confirmation::Required {
                reason: format!("`{name}` requires confirmation (safety.require_confirmation)"),
            };
        }
        if let Some(reason) = self.added.get(name) {
            return Confirmation::Required {
                reason: reason.clone(),
            };
        }
        // A path the sandbox refuses will fail in the tool; no need to ask.
        if declaration.asks == Asks::UnreadFile
            && let Some(path) = path
            && let Ok(resolved) = ctx.resolve(path)
            && !ctx.session.was_read(&resolved)
        {
            return Confirmation::Required {
                reason: format!("`{name}` of `{path}`, which was not read in this session"),
            };
        }
        Confirmation::NotNeeded
    }

    /// Records the user's answer for `name`; returns whether the call may run.
    pub fn record(&mut self, name: &str, decision: Decision) -> bool {
        match decision {
            Decision::Allow => true,
            Decision::Deny => false,
            Decision::AllowForSession => {
                self.session_allowed.insert(name.to_string());
                true
            }
        }
    }

    /// Whether `name` was allowed for the rest of the session.
    pub fn is_allowed_for_session(&self, name: &str) -> bool {
        self.session_allowed.contains(name)
    }

    /// The tools allowed for the rest of the session.
    pub fn session_allowed(&self) -> impl Iterator<Item = &str> {
        self.session_allowed.iter().map(String::as_str)
    }

    /// Forgets the session allow-list (a new session).
    pub fn reset_session(&mut self) {
        self.session_allowed.clear();
    }
}
