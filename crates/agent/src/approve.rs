//! Whether a tool call may run: the permission rules first (a deny rule refuses, allow
//! rules covering the call run it), then the confirmation policy (and, for a command that
//! asks for the network, `safety.network`), then the approval mode, and last the user,
//! whose "always" can become a rule of the session, the project or the user.

use ybs_core::ToolCall;
use ybs_tools::{Confirmation, Decision, Effect, RuleSubject};

use super::permissions::{self, Layer, Verdict};
use super::{Agent, Ui};
use crate::Notice;
pub use crate::config::Approval;
use crate::confirm::{Answer, Settle};

impl Agent {
    /// Settles `call`: whether it may run.
    pub(super) fn allowed(&mut self, call: &ToolCall, ui: &mut dyn Ui) -> bool {
        let declaration = self.registry.declaration(&call.name);
        let subject = declaration.rule_subject;
        let why_rules = match (self.permissions).check(&call.name, subject, &call.arguments) {
            Verdict::Deny { rule, layer } => {
                ui.notice(
                    Notice::Warning,
                    &format!("{} refused by the {layer} rule deny `{rule}`", call.name),
                );
                return false;
            }
            Verdict::Allow => return true,
            Verdict::Ask { why } => why,
        };
        // A call that asks for the network asks the user even where the tool would not.
        let network = super::network::question(call, declaration.network, self.network);
        let reason = match (
            (self.policy).check(
                &call.name,
                &declaration,
                &call.arguments,
                &self.tool_context,
            ),
            network,
        ) {
            (Confirmation::NotNeeded, None) => return true,
            (Confirmation::NotNeeded, Some(network)) => format!("`{}`: {network}", call.name),
            (Confirmation::Required { reason }, None) => reason,
            (Confirmation::Required { reason }, Some(network)) => format!("{reason}; {network}"),
        };
        match self.approval {
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
        match self.settings.confirm.settle(&call.name, true) {
            Settle::Run => true,
            Settle::Deny(message) => {
                ui.notice(Notice::Warning, &message);
                false
            }
            Settle::Ask => match ui.confirm(call, &reason) {
                Answer::Yes => {
                    self.allow_host(call, subject);
                    self.policy.record(&call.name, Decision::Allow)
                }
                Answer::No => self.policy.record(&call.name, Decision::Deny),
                Answer::Always => {
                    self.keep_rule(call, subject, ui);
                    true
                }
            },
        }
    }

    /// After a yes to a tool whose rules name hosts (`web_fetch`): its host is allowed for
    /// the rest of the session (the user is asked once per host).
    fn allow_host(&mut self, call: &ToolCall, subject: RuleSubject) {
        let url = call.arguments.get("url").and_then(|url| url.as_str());
        if let Some(host) = (subject == RuleSubject::Host)
            .then(|| url.and_then(ybs_tools::builtins::url_host))
            .flatten()
        {
            let rule = permissions::Rule {
                tool: call.name.clone(),
                pattern: Some(host),
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

    /// After "always": the rule the user picks, in the layer they pick (the whole tool for
    /// the session when the front end cannot ask); the rule kept is always said.
    fn keep_rule(&mut self, call: &ToolCall, subject: RuleSubject, ui: &mut dyn Ui) {
        let offers = permissions::offers(&call.name, subject, &call.arguments);
        let choice = ui.choose_rule(&offers);
        let (rule, layer) = match choice {
            Some((index, layer)) => match offers.get(index) {
                Some(rule) => (rule.clone(), layer),
                None => return,
            },
            None => match offers.last() {
                Some(rule) => (rule.clone(), Layer::Session),
                None => return,
            },
        };
        let file = match layer {
            Layer::Session => None,
            Layer::Project => self.rule_files.project.clone(),
            Layer::User => self.rule_files.user.clone(),
        };
        if let Some(path) = &file {
            match permissions::store::save_rule(path, "allow", &rule) {
                Ok(()) => {
                    // A project's file may be shared: what loosens safety in it waits for
                    // trust when ybs starts again, this rule too.
                    let later = match layer {
                        Layer::Project => {
                            "; in later runs it applies once you trust the project's settings \
                             (ybs asks when it starts, or `ybs trust`)"
                        }
                        _ => "",
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
