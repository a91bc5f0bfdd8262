//! `ybs ask --chat FILE [QUESTION]`: one turn on a chat file, the question and reply appended
//! to it together. The file's `endpoint`/`backend`/`model` ([`target`], below the command
//! line's flags) choose where it goes, its options ([`options`]) set the request, and its tool
//! lines ([`tool_lines`]) choose the tools offered, connect MCP servers and run tasks before
//! the model is asked.

mod chat_file;
pub mod options;
pub mod target;
pub mod tool_lines;
pub mod trust;

use std::io::{self, IsTerminal, Write};
use std::path::Path;

use ybs_chatfile::{ChatMessage, Expander, Expansion, appended_text, from_core};
use ybs_context_budget::SendError;
use ybs_core::{ErrorKind, Role};
use ybs_providers::ProviderKind;

use self::chat_file::ChatFile;
use crate::cli::Cli;
use crate::render::LineUi;
use crate::startup::exit::Failed;
use crate::startup::{load, model};
use ybs_agent::confirm::ConfirmMode;
use ybs_agent::host::Host;
use ybs_agent::{AgentError, ResponseChain, Stop};

/// `ybs ask --chat FILE [QUESTION]`.
///
/// The file is read and expanded as it would read with the question appended, but nothing
/// is written until the model has replied: then the question, the reply (with its tool-call
/// trace) and, from the Responses API, the reply's `previous_response_id` are appended in one
/// atomic write that `ybs undo` takes back. A failed turn writes nothing; a file with no user
/// message after its last reply sends nothing.
pub fn run(
    cli: &Cli,
    host: &Host,
    chat: &Path,
    question: Option<&str>,
    yes: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, Failed> {
    let loaded = load::load(cli, host, err)?;
    let mut config = loaded.config.clone();
    let cwd = &host.locations.cwd;
    let chat_file = ChatFile::new(cwd, chat);
    let path = chat_file.path().to_owned();
    // The chat file is one of the files the turn writes: `ybs undo` puts it back too.
    let chat_before = ybs_agent::session::undo::FileRecord::now(&path);
    let old = match chat_file.read() {
        Ok(text) => text,
        Err(error) if error.kind() == io::ErrorKind::NotFound && question.is_some() => {
            String::new()
        }
        Err(error) => return Err(Failed(format!("cannot read {}: {error}", chat.display()))),
    };
    let asked: Vec<ChatMessage> = question
        .map(|question| vec![ChatMessage::new("user", question)])
        .unwrap_or_default();
    let text = if asked.is_empty() {
        old.clone()
    } else {
        appended_text(&path, &old, &asked).map_err(|e| Failed(e.to_string()))?
    };
    let around = host.surroundings();
    let mut expansion = Expander::new(cwd)
        .with_access(trust::access(&config, &around)?)
        .expand_text(&text, &path)
        .map_err(|e| Failed(e.to_string()))?;
    let run_trust = load::run_trust(cli, host);
    for warning in trust::withhold_untrusted(&mut expansion, &config, &path, &run_trust) {
        let _ = writeln!(
            err,
            "ybs: warning: {}",
            crate::render::inert_lines(&warning.to_string())
        );
    }
    if !awaits_reply(&expansion) {
        let _ = writeln!(
            err,
            "ybs: nothing to send: {} has no user message after its last reply; write one \
             below it (or give a QUESTION)",
            chat.display()
        );
        return Ok(0);
    }
    let options = expansion.options.effective();
    let target = target::apply(&mut config, &loaded.sources, &options)
        .map_err(|error| Failed(format!("{}: {error}", chat.display())))?;
    let endpoint_options = target.options;
    // A model configured for one endpoint does not follow the chat to another.
    let chooser = match (target.model_chosen, target.moved) {
        (true, _) => model::Chooser::Someone,
        (false, true) => model::Chooser::NobodyHere,
        (false, false) => model::Chooser::Nobody,
    };
    if let Some(error) = model::settle(&mut config, chooser, &host.env) {
        let warning = model::unanswered(&config, &error);
        let _ = writeln!(
            err,
            "ybs: warning: {}",
            crate::render::inert_lines(&warning)
        );
    }
    for warning in target.warnings {
        let _ = writeln!(
            err,
            "ybs: warning: {}",
            crate::render::inert_lines(&format!("{}: {warning}", chat.display()))
        );
    }
    let kind = config.llm.provider.parse::<ProviderKind>().ok();
    check_documents(&expansion, kind)?;
    let format = match options.get("format") {
        Some(format) => Some(response_format(format).map_err(Failed)?),
        None => None,
    };
    let mode = if yes {
        ConfirmMode::AssumeYes
    } else {
        ConfirmMode::Deny
    };
    tool_lines::keep_named_servers(&expansion, &mut config);
    let mut agent = load::build_agent((&config, &loaded), host, ("ask", mode), &cli.options, err)?;
    agent.journal.before_next_turn(chat_before);
    // The model may not change the chat it answers (it would become the next ask's input).
    agent.tool_context.sandbox.protect(&path);
    let configured = agent.registry.names();
    let failures = tool_lines::offer_tools(&expansion, &mut agent, cwd).map_err(Failed)?;
    load::warn_mcp(&failures, err);
    let responses = kind.is_some_and(|kind| kind.capabilities().continues_stored_replies);
    let previous = options
        .get("previous_response_id")
        .map(|id| id.trim().to_owned());
    let continued = match (&previous, expansion.previous_response_at) {
        (Some(id), Some(at)) if responses && !id.is_empty() => Some((id.clone(), at)),
        (Some(_), _) => {
            let _ = writeln!(
                err,
                "ybs: warning: {}: previous_response_id continues a stored reply of the \
                 Responses API only; {} gets the whole conversation",
                chat.display(),
                config.llm.provider
            );
            None
        }
        (None, _) => None,
    };
    if let Some((_, at)) = &continued {
        // The stored reply holds everything before the id, tasks run then included.
        expansion.messages.drain(..*at);
        expansion.tools.retain(|request| request.position >= *at);
        for request in &mut expansion.tools {
            request.position -= at;
        }
    }
    tool_lines::run_tasks(&mut expansion, &mut agent, &configured).map_err(Failed)?;
    agent.settings.response_format = format;
    let settings = &mut agent.settings;
    for (key, value) in endpoint_options {
        let value = match value {
            serde_json::Value::String(text) => text,
            other => other.to_string(),
        };
        let mut one = ybs_chatfile::Options::default();
        one.sticky.insert(key, value);
        for warning in options::apply(&one, chat, "", settings) {
            let _ = writeln!(err, "ybs: warning: endpoint option: {warning}");
        }
    }
    for warning in options::apply(&expansion.options, chat, &text, settings) {
        let _ = writeln!(
            err,
            "ybs: warning: {}",
            crate::render::inert_lines(&warning.to_string())
        );
    }
    let hosted = kind.is_some_and(|kind| kind.capabilities().hosted_web_search);
    if settings.extras.web_search && !hosted {
        let _ = writeln!(
            err,
            "ybs: warning: {}: websearch needs a provider with a hosted search (responses, \
             anthropic, openrouter); {} has none (ignored)",
            chat.display(),
            config.llm.provider
        );
        settings.extras.web_search = false;
    }
    agent.conversation = expansion
        .to_core_messages()
        .map_err(|e| Failed(e.to_string()))?;
    ybs_agent::prepare::chat(&mut agent);
    if let Some((id, _)) = continued {
        agent.settings.extras.chain = Some(ResponseChain { id, held: 0 });
    }
    let start = (agent.conversation.iter())
        .rposition(|message| message.role == Role::User)
        .unwrap_or(0);
    // Messages after the question (task traces) are in the file already.
    let already = agent.conversation.len().saturating_sub(start + 1);
    let terminal = io::stdout().is_terminal();
    let mut no_input = io::empty();
    let mut retried = false;
    let result = loop {
        let before = agent.conversation.len();
        let result = {
            let mut ui = LineUi::new(
                load::renderer(&config, terminal).with_tools(agent.registry.clone()),
                &mut *out,
                &mut *err,
                &mut no_input,
            );
            let runtime = load::runtime()?;
            runtime.block_on(load::cancellable(async |token| {
                agent.run_from(start, &mut ui, &token).await
            }))
        };
        // An `option:` passed through as it is that the provider refuses is a warning, and
        // the question is asked again once without it.
        let refused = match &result {
            Err(AgentError::Send(SendError::Provider(error)))
                if !retried
                    && error.kind == ErrorKind::BadRequest
                    && agent.conversation.len() == before =>
            {
                options::refused(&agent.settings.extras.body, &error.message)
            }
            _ => Vec::new(),
        };
        if refused.is_empty() {
            break result;
        }
        retried = true;
        for key in &refused {
            agent.settings.extras.body.remove(key);
        }
        let message = match &result {
            Err(error) => error.to_string(),
            Ok(_) => String::new(),
        };
        let _ = writeln!(
            err,
            "ybs: warning: {}: the provider refused option {} ({}); asked again without it",
            chat.display(),
            crate::render::inert(&refused.join(", ")),
            crate::render::inert_lines(message.trim())
        );
    };
    let report = result.map_err(|error| {
        let unwritten = if asked.is_empty() {
            String::new()
        } else {
            format!(
                " ({} is unchanged; the question was not written)",
                chat.display()
            )
        };
        Failed(format!("{}{unwritten}", load::describe(&error, &config)))
    })?;
    let added = agent
        .conversation
        .get(report.start + 1 + already..)
        .unwrap_or_default();
    let mut written = asked;
    written.extend(from_core(added));
    if let Some(id) = agent.settings.extras.last_response_id.take() {
        written.push(ChatMessage::new("previous_response_id", id));
    }
    let appended = chat_file
        .append(&written)
        .map_err(|e| Failed(e.to_string()));
    agent.journal.refresh_last();
    if let Some(error) = agent.journal.disk_error.take() {
        let _ = writeln!(
            err,
            "ybs: warning: {}",
            crate::render::inert_lines(&error.to_string())
        );
    }
    appended?;
    Ok(if report.stop == Stop::Finished { 0 } else { 1 })
}

/// Whether the conversation ends with something for the model to answer: a user message
/// (or an image or PDF of one) after the last reply.
fn awaits_reply(expansion: &Expansion) -> bool {
    let last = expansion.messages.iter().rev().find(|message| {
        matches!(
            message.role.as_str(),
            "user" | "image" | "pdf" | "assistant" | "function_call" | "function_call_output"
        )
    });
    last.is_some_and(|message| matches!(message.role.as_str(), "user" | "image" | "pdf"))
}

/// A `pdf:` line reaches the model as a document (Responses `input_file`, Anthropic
/// `document`); for any other provider it is an error naming the line, never dropped.
fn check_documents(expansion: &Expansion, kind: Option<ProviderKind>) -> Result<(), Failed> {
    if kind.is_some_and(|kind| kind.capabilities().document_input) {
        return Ok(());
    }
    match expansion
        .messages
        .iter()
        .find(|message| message.role == "pdf")
    {
        Some(pdf) => Err(Failed(format!(
            "{}: pdf {}: {} cannot take PDF documents; use the responses or anthropic provider",
            pdf.source,
            pdf.content,
            kind.map_or("this provider", ProviderKind::display_name)
        ))),
        None => Ok(()),
    }
}

/// A chat file's `format:` option: `json`, `:json` or `json_object` for any JSON object, or
/// a JSON Schema object.
fn response_format(format: &str) -> Result<ybs_core::ResponseFormat, String> {
    let format = format.trim();
    match format {
        "json" | ":json" | "json_object" => Ok(ybs_core::ResponseFormat::Json),
        "text" | ":text" => Ok(ybs_core::ResponseFormat::Text),
        _ => match serde_json::from_str::<serde_json::Value>(format) {
            Ok(schema) if schema.is_object() => Ok(ybs_core::ResponseFormat::JsonSchema {
                name: "response".into(),
                schema,
                strict: false,
            }),
            _ => Err(format!(
                "format `{format}` is not json, json_object, text or a JSON Schema object"
            )),
        },
    }
}
