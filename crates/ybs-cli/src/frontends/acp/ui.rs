//! The agent's [`Ui`] for an editor: what it streams and asks becomes `session/update`
//! notifications and `session/request_permission` requests on the connection.

use std::io::Write;
use std::path::PathBuf;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Cost, Notice as AcpNotice, NoticeSeverity, PermissionOption,
    PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest, SessionId,
    SessionNotification, SessionUpdate, TextContent, ToolCallContent, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields, UsageUpdate,
};
use ybs_core::{StreamEvent, ToolCall, ToolResult, Usage};

use super::calls;
use crate::render::diff_view::Preview;
use ybs_agent::Notice;
use ybs_agent::Ui;
use ybs_agent::confirm::Answer;
use ybs_agent::permissions::{self, Layer, Offer};

/// The permission choices ybs offers, as option ids: run the call once.
pub const ALLOW_ONCE: &str = "allow_once";
/// Do not run the call.
pub const REJECT: &str = "reject";
/// The prefix of the "always" choices: `always:N` keeps allow rule N of the call's offers
/// for the session, `always:N:user` saves it in the user's configuration file.
const ALWAYS: &str = "always:";

/// Streams one session's turn to the editor.
pub struct AcpUi {
    connection: ConnectionTo<Client>,
    session: SessionId,
    /// The project directory (paths sent are absolute).
    cwd: PathBuf,
    /// Whether the client takes `notice` updates; else warnings are told in the reply.
    notices: bool,
    /// The call being settled and its preview's content.
    current: Option<(String, Option<ToolCallContent>)>,
    /// The rule and layer of the last "always" answer, for [`Ui::choose_rule`].
    chosen: Option<(usize, Layer)>,
    /// Where ybs's own log lines go (stderr).
    log: Box<dyn Write + Send>,
    /// The agent's tools, whose declarations say how their calls are shown.
    tools: ybs_tools::ToolRegistry,
}

impl AcpUi {
    /// A Ui for `session` of `connection`.
    pub fn new(
        connection: ConnectionTo<Client>,
        session: SessionId,
        cwd: PathBuf,
        tools: ybs_tools::ToolRegistry,
        notices: bool,
        log: Box<dyn Write + Send>,
    ) -> Self {
        AcpUi {
            connection,
            session,
            cwd,
            notices,
            current: None,
            chosen: None,
            log,
            tools,
        }
    }

    /// Sends one update; a closed connection only ends up in the log (the turn still ends
    /// and is saved).
    pub fn update(&mut self, update: SessionUpdate) {
        let notification = SessionNotification::new(self.session.clone(), update);
        if let Err(error) = self.connection.send_notification(notification) {
            let _ = writeln!(self.log, "ybs acp: cannot send an update: {error}");
        }
    }

    fn text(&mut self, text: &str, thought: bool) {
        let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(text)));
        self.update(if thought {
            SessionUpdate::AgentThoughtChunk(chunk)
        } else {
            SessionUpdate::AgentMessageChunk(chunk)
        });
    }

    fn update_call(&mut self, id: &str, fields: ToolCallUpdateFields) {
        self.update(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            id.to_owned(),
            fields,
        )));
    }
}

impl Ui for AcpUi {
    fn stream_event(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::TextDelta { text } => self.text(text, false),
            StreamEvent::ThinkingDelta { text, .. } => self.text(text, true),
            _ => {}
        }
    }

    fn reply_done(&mut self) {}

    fn todos(&mut self, todos: &[ybs_tools::builtins::Todo]) {
        self.update(super::plan::of_todos(todos));
    }

    fn tool_call(&mut self, call: &ToolCall) {
        self.current = Some((call.id.clone(), None));
        let update = calls::pending(&self.tools, call, &self.cwd);
        self.update(SessionUpdate::ToolCall(update));
    }

    fn preview(&mut self, preview: &Preview) {
        let content = calls::preview_content(preview, &self.cwd);
        let Some((id, _)) = self.current.take() else {
            return;
        };
        self.update_call(
            &id,
            ToolCallUpdateFields::new().content(vec![content.clone()]),
        );
        self.current = Some((id, Some(content)));
    }

    fn tool_result(&mut self, _tool: &str, result: &ToolResult) {
        let diff = match self.current.take() {
            Some((id, content)) if id == result.call_id => content,
            _ => None,
        };
        let (status, content) = calls::outcome(result, diff);
        let fields = ToolCallUpdateFields::new()
            .status(status)
            .content(content)
            .raw_output(calls::raw_output(result));
        self.update_call(&result.call_id, fields);
    }

    fn notice(&mut self, kind: Notice, message: &str) {
        let _ = writeln!(self.log, "ybs: {message}");
        let severity = match kind {
            Notice::Info => return,
            Notice::Warning => NoticeSeverity::Warning,
            Notice::Error => NoticeSeverity::Error,
        };
        if self.notices {
            self.update(SessionUpdate::Notice(AcpNotice::new(severity, message)));
        } else {
            self.text(&format!("\n\n_ybs: {message}_\n\n"), false);
        }
    }

    /// How full the context window is and what the session has cost, after each turn.
    fn usage(&mut self, _turn: &Usage, session: &Usage, fill: Option<(u64, u64)>) {
        let Some((used, window)) = fill else {
            return;
        };
        let mut update = UsageUpdate::new(used, window);
        if let Some(cost) = session.cost {
            update = update.cost(Cost::new(cost, "USD"));
        }
        self.update(SessionUpdate::UsageUpdate(update));
    }

    fn confirm(&mut self, call: &ToolCall, reason: &str) -> Answer {
        let content = (self.current.as_ref())
            .filter(|(id, _)| *id == call.id)
            .and_then(|(_, content)| content.clone());
        let fields = ToolCallUpdateFields::new()
            .title(calls::title(&self.tools, call))
            .kind(calls::kind_of(&self.tools, call))
            .status(ToolCallStatus::Pending)
            .locations(calls::locations(&self.tools, call, &self.cwd))
            .content(content.map(|content| vec![content]))
            .raw_input(call.arguments.clone());
        let subject = self.tools.declaration(&call.name).rule_subject;
        let offers = permissions::offers(&call.name, subject, &call.arguments);
        let request = RequestPermissionRequest::new(
            self.session.clone(),
            ToolCallUpdate::new(call.id.clone(), fields),
            options(&offers),
        );
        let _ = writeln!(self.log, "ybs: asking the editor: {reason}");
        let response =
            futures::executor::block_on(self.connection.send_request(request).block_task());
        let answer = match response {
            Ok(response) => {
                let (answer, chosen) = answer(&response.outcome, offers.len());
                self.chosen = chosen;
                answer
            }
            Err(error) => {
                let _ = writeln!(
                    self.log,
                    "ybs acp: no answer to a permission request: {error}"
                );
                Answer::No
            }
        };
        if answer != Answer::No {
            self.update_call(
                &call.id,
                ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
            );
        }
        answer
    }

    fn choose_rule(&mut self, offers: &[Offer]) -> Option<(usize, Layer)> {
        self.chosen
            .take()
            .filter(|(index, _)| *index < offers.len())
    }
}

/// ybs's choices for a call whose permission rules would be `offers` (narrowest first):
/// allow once; always allow the narrowest rule for the session (what Enter keeps in the
/// terminal); reject. One option of each kind: clients such as codecompanion.nvim label an
/// option by its kind, so several "always" options would look the same there. Broader rules
/// are for `/permissions` and the configuration file.
pub fn options(offers: &[Offer]) -> Vec<PermissionOption> {
    let mut options = vec![PermissionOption::new(
        ALLOW_ONCE,
        "Allow once",
        PermissionOptionKind::AllowOnce,
    )];
    if let Some(narrowest) = offers.first() {
        options.push(PermissionOption::new(
            format!("{ALWAYS}0"),
            format!("Always allow `{narrowest}` in this session"),
            PermissionOptionKind::AllowAlways,
        ));
    }
    options.push(PermissionOption::new(
        REJECT,
        "Reject",
        PermissionOptionKind::RejectOnce,
    ));
    options
}

/// The answer an outcome gives, with the rule and layer of an "always" answer (one of
/// `offers` rules); a cancelled request or an unknown option is no.
pub fn answer(
    outcome: &RequestPermissionOutcome,
    offers: usize,
) -> (Answer, Option<(usize, Layer)>) {
    let RequestPermissionOutcome::Selected(selected) = outcome else {
        return (Answer::No, None);
    };
    let id = &*selected.option_id.0;
    if id == ALLOW_ONCE {
        return (Answer::Yes, None);
    }
    let Some(always) = id.strip_prefix(ALWAYS) else {
        return (Answer::No, None);
    };
    let (index, layer) = match always.split_once(':') {
        Some((index, "user")) => (index, Layer::User),
        Some(_) => return (Answer::No, None),
        None => (always, Layer::Session),
    };
    match index.parse::<usize>() {
        Ok(index) if index < offers => (Answer::Always, Some((index, layer))),
        _ => (Answer::No, None),
    }
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::SelectedPermissionOutcome;

    use super::*;

    #[test]
    fn only_the_allow_options_allow_and_always_names_a_rule_offered() {
        let selected = |id: &'static str| {
            RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id))
        };
        let offers = permissions::offers(
            "run_shell",
            ybs_tools::RuleSubject::Command,
            &serde_json::json!({"command": "cargo test --all"}),
        );
        let ids: Vec<String> = (options(&offers).iter())
            .map(|o| o.option_id.to_string())
            .collect();
        assert_eq!(ids, [ALLOW_ONCE, "always:0", REJECT]);
        let names: Vec<String> = options(&offers).iter().map(|o| o.name.clone()).collect();
        assert_eq!(
            names[1],
            format!("Always allow `{}` in this session", offers[0])
        );
        let n = offers.len();
        assert_eq!(answer(&selected(ALLOW_ONCE), n), (Answer::Yes, None));
        assert_eq!(
            answer(&selected("always:1"), 2),
            (Answer::Always, Some((1, Layer::Session)))
        );
        assert_eq!(
            answer(&selected("always:0:user"), n),
            (Answer::Always, Some((0, Layer::User)))
        );
        for no in [
            REJECT,
            "always:1",
            "always:3",
            "always:0:project",
            "always:x",
            "else",
        ] {
            assert_eq!(answer(&selected(no), n), (Answer::No, None), "{no}");
        }
        assert_eq!(
            answer(&RequestPermissionOutcome::Cancelled, n),
            (Answer::No, None)
        );
    }
}
