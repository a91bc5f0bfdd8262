//! Whether a tool call may run: the permission rules first (a deny rule refuses, allow
//! rules covering the call run it), then the confirmation policy (and, for a command that
//! asks for the network, `safety.network`), then the approval mode, and last the user,
//! whose "always" can become a rule of the session, the project or the user.

use ybs_core::ToolCall;
use ybs_tools::{
    Confirmation, ConfirmationPolicy, Decision, Effect, RuleSubject, ToolContext, ToolRegistry,
};

use super::permissions::{self, Layer, Permissions, RuleFiles, Verdict};
use super::{Agent, Ui};
use crate::Notice;
pub use crate::config::Approval;
use crate::config::{Network, TrustAfterEdit};
use crate::confirm::{Answer, ConfirmMode, Settle};
use crate::hooks::HookRunner;

/// What settles whether a tool call may run, borrowed from an [`Agent`] or put together by a
/// front end that runs one tool without the model (`ybs tool`): one decision for both.
pub struct Approver<'a> {
    /// The tools, for each one's declaration.
    pub registry: &'a ToolRegistry,
    /// Where the tools work, to resolve the paths rules match.
    pub tool_context: &'a ToolContext,
    /// The allow and deny rules; "always" adds to them.
    pub permissions: &'a mut Permissions,
    /// Which tools ask, and the answers given this session.
    pub policy: &'a mut ConfirmationPolicy,
    /// `safety.network`.
    pub network: Network,
    /// `safety.approval`.
    pub approval: Approval,
    /// How a question is settled in this run (asked, yes, no).
    pub confirm: ConfirmMode,
    /// Where "always" answers save rules.
    pub rule_files: &'a RuleFiles,
    /// The `notification` hooks told before the user is asked, when there are any.
    pub notify: Option<HookRunner<'a>>,
}

impl Agent {
    /// Settles `call`: whether it may run.
    pub(super) fn allowed(&mut self, call: &ToolCall, ui: &mut dyn Ui) -> bool {
        let mut approver = Approver {
            registry: &self.registry,
            tool_context: &self.tool_context,
            permissions: &mut self.permissions,
            policy: &mut self.policy,
            network: self.network,
            approval: self.approval,
            confirm: self.settings.confirm,
            rule_files: &self.rule_files,
            notify: Some(HookRunner {
                hooks: &self.hooks,
                tool_context: &self.tool_context,
            }),
        };
        approver.allowed(call, ui)
    }
}

impl Approver<'_> {
    /// Settles `call`: whether it may run.
    pub fn allowed(&mut self, call: &ToolCall, ui: &mut dyn Ui) -> bool {
        let declaration = self.registry.declaration(&call.name);
        let subject = declaration.rule_subject;
        let physical = self.physical_path(call, subject);
        let verdict =
            (self.permissions).check(&call.name, subject, &call.arguments, physical.as_deref());
        let (rules_allow, why_rules) = match verdict {
            Verdict::Deny { rule, layer } => {
                ui.notice(
                    Notice::Warning,
                    &format!("{} refused by the {layer} rule deny `{rule}`", call.name),
                );
                return false;
            }
            Verdict::Allow => (true, None),
            Verdict::Ask { why } => (false, why),
        };
        // A call that asks for the network asks the user even where the tool or a rule would
        // not; a change to a file ybs reads as configuration asks whatever allowed it.
        let network = super::network::question(call, declaration.network, self.network);
        let configuration =
            ybs_tools::confirm::configuration_change(&call.name, &declaration, &call.arguments);
        if rules_allow && network.is_none() && configuration.is_none() {
            return true;
        }
        let confirmation = match &configuration {
            Some(reason) => Confirmation::Required {
                reason: reason.clone(),
            },
            None if rules_allow => Confirmation::NotNeeded,
            None => {
                (self.policy).check(&call.name, &declaration, &call.arguments, self.tool_context)
            }
        };
        let reason = match (confirmation, network) {
            (Confirmation::NotNeeded, None) => return true,
            (Confirmation::NotNeeded, Some(network)) => format!("`{}`: {network}", call.name),
            (Confirmation::Required { reason }, None) => reason,
            (Confirmation::Required { reason }, Some(network)) => format!("{reason}; {network}"),
        };
        match self.approval {
            _ if configuration.is_some() => {}
            Approval::FullAuto => return true,
            Approval::AutoEdit if self.edits_inside_project(call, declaration.effect) => {
                return true;
            }
            _ => {}
        }
        let reason = match why_rules {
            Some(why) => format!("{reason}; no allow rule can match it: {why}"),
            None => reason,
        };
        match self.confirm.settle(&call.name, true) {
            Settle::Run => true,
            Settle::Deny(message) => {
                ui.notice(Notice::Warning, &message);
                false
            }
            Settle::Ask => match self.confirm_notified(call, &reason, ui) {
                Answer::Yes => {
                    self.allow_origin(call, subject);
                    self.policy.record(&call.name, Decision::Allow)
                }
                Answer::No => self.policy.record(&call.name, Decision::Deny),
                Answer::Always => self.keep_rule(call, subject, ui),
            },
        }
    }

    /// Asks the user about `call`, after the `notification` hooks were told ybs waits.
    fn confirm_notified(&mut self, call: &ToolCall, reason: &str, ui: &mut dyn Ui) -> Answer {
        let message = format!("ybs needs your permission to use {}", call.name);
        if let Some(hooks) = self.notify {
            let _ = hooks.event(
                crate::hook_events::HookEvent::Notification,
                serde_json::json!({"message": message}),
                ui,
                &tokio_util::sync::CancellationToken::new(),
            );
        }
        ui.confirm(call, reason)
    }

    /// For a file tool, the file `call` would touch as the sandbox resolves it, relative to
    /// the project when inside it (rules match it besides the path as written).
    fn physical_path(&self, call: &ToolCall, subject: RuleSubject) -> Option<String> {
        if subject != RuleSubject::Path {
            return None;
        }
        let path = call.arguments.get("path").and_then(|path| path.as_str())?;
        let resolved = self.tool_context.resolve(path).ok()?;
        Some(self.tool_context.display_path(&resolved))
    }

    /// After a yes to a tool whose rules name hosts (`web_fetch`): its host and port are
    /// allowed for the rest of the session (the user is asked once per host and port).
    fn allow_origin(&mut self, call: &ToolCall, subject: RuleSubject) {
        let url = call.arguments.get("url").and_then(|url| url.as_str());
        if let Some(origin) = (subject == RuleSubject::Host)
            .then(|| url.and_then(ybs_tools::builtins::web_fetch::url_authority))
            .flatten()
        {
            let rule = permissions::Rule {
                tool: call.name.clone(),
                pattern: Some(origin),
            };
            self.permissions.allow(Layer::Session, rule);
        }
    }

    /// An edit of a file inside the project (the sandbox's roots).
    fn edits_inside_project(&self, call: &ToolCall, effect: Effect) -> bool {
        if effect != Effect::FileAtPath {
            return false;
        }
        let path = call.arguments.get("path").and_then(|path| path.as_str());
        path.is_some_and(|path| self.tool_context.resolve(path).is_ok())
    }

    /// After "always": the rules the user picks, in the layer they pick; the rule kept is
    /// always said. Returns whether the call runs: an answer to the choice that names no
    /// offer (or a front end that cannot ask) is no; a call no rule can allow exactly runs
    /// this once.
    fn keep_rule(&mut self, call: &ToolCall, subject: RuleSubject, ui: &mut dyn Ui) -> bool {
        let offers = permissions::offers(&call.name, subject, &call.arguments);
        if offers.is_empty() {
            ui.notice(
                Notice::Info,
                &format!(
                    "no rule can allow exactly this {} call; allowed this once",
                    call.name
                ),
            );
            return self.policy.record(&call.name, Decision::Allow);
        }
        let Some((index, layer)) = ui.choose_rule(&offers) else {
            ui.notice(Notice::Info, "no rule chosen; the call does not run");
            return self.policy.record(&call.name, Decision::Deny);
        };
        let Some(offer) = offers.get(index) else {
            return self.policy.record(&call.name, Decision::Deny);
        };
        for rule in &offer.rules {
            self.keep_one(rule.clone(), layer, ui);
        }
        true
    }

    /// Keeps `rule` in `layer` (the session's when its file cannot be written).
    fn keep_one(&mut self, rule: permissions::Rule, layer: Layer, ui: &mut dyn Ui) {
        let file = match layer {
            Layer::Session => None,
            Layer::Project => self.rule_files.project.clone(),
            Layer::User => self.rule_files.user.clone(),
        };
        if let Some(path) = &file {
            let saved = match (layer, &self.rule_files.own_edits) {
                (Layer::Project, Some(edits)) => edits
                    .edit(path, || permissions::store::save_rule(path, "allow", &rule))
                    .map(|((), trust)| Some(trust)),
                (Layer::Project, None) => (permissions::store::save_rule(path, "allow", &rule))
                    .map(|()| Some(TrustAfterEdit::StillUntrusted)),
                _ => permissions::store::save_rule(path, "allow", &rule).map(|()| None),
            };
            match saved {
                Ok(trust) => {
                    // The user's own rule keeps the trust the file had; a file that was
                    // waiting for trust still waits, with this rule among its settings.
                    let later = match trust {
                        Some(TrustAfterEdit::StillUntrusted) => {
                            "; in later runs it applies once you trust the project's settings \
                             (ybs asks when it starts, or `ybs trust`)"
                                .to_owned()
                        }
                        Some(TrustAfterEdit::NotRecorded(why)) => format!(
                            "; its trust could not be recorded ({why}): in later runs it \
                             applies once you trust the project's settings (`ybs trust`)"
                        ),
                        Some(TrustAfterEdit::Kept) | None => String::new(),
                    };
                    ui.notice(
                        Notice::Info,
                        &format!("saved allow `{rule}` in {}{later}", path.display()),
                    );
                }
                Err(error) => {
                    ui.notice(
                        Notice::Warning,
                        &format!("{error}; kept for this session only"),
                    );
                    self.permissions.allow(Layer::Session, rule);
                    return;
                }
            }
        } else if layer != Layer::Session {
            ui.notice(
                Notice::Warning,
                &format!("no configuration file to save in; allow `{rule}` kept for this session"),
            );
        } else {
            ui.notice(
                Notice::Info,
                &format!("allow `{rule}` for this session (/permissions lists and removes it)"),
            );
        }
        self.permissions.allow(
            if file.is_some() {
                layer
            } else {
                Layer::Session
            },
            rule,
        );
    }
}
