//! `ybs ask --chat FILE [QUESTION]`: one turn on a chat file, the reply appended to it. The
//! file's options ([`options`]) set the request; its tool lines ([`tool_lines`]) choose the
//! tools offered, connect MCP servers and run tasks before the model is asked.

pub mod options;
pub mod tool_lines;
pub mod trust;

use std::io::{self, IsTerminal, Write};
use std::path::Path;

use ybs_chatfile::{ChatMessage, Expander, append, from_core};
use ybs_core::Role;

use crate::agent::confirm::ConfirmMode;
use crate::agent::{LineUi, Stop};
use crate::cli::Cli;
use crate::startup::exit::Failed;
use crate::startup::host::Host;
use crate::startup::load;

/// `ybs ask --chat FILE [QUESTION]`.
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
    let path = cwd.join(chat);
    // The chat file is one of the files the turn writes: `ybs undo` puts it back too.
    let chat_before = crate::session::undo::FileRecord::now(&path);
    if let Some(question) = question {
        append(&path, &[ChatMessage::new("user", question)]).map_err(|e| Failed(e.to_string()))?;
    }
    let around = load::surroundings(host);
    let mut expansion = Expander::new(cwd)
        .with_access(trust::access(&config, &around)?)
        .expand_file(&path)
        .map_err(|e| Failed(e.to_string()))?;
    let run_trust = load::run_trust(cli, host);
    for warning in trust::withhold_untrusted(&mut expansion, &config, &path, &run_trust) {
        let _ = writeln!(err, "ybs: warning: {warning}");
    }
    let options = expansion.options.effective();
    if let Some(model) = options.get("model") {
        config.llm.model = model.clone();
    }
    // Scout's `backend` and named `endpoint`s map to ybs providers where the names match;
    // an `endpoint` that is a URL is the endpoint itself.
    for key in ["backend", "endpoint"] {
        let Some(value) = options.get(key) else {
            continue;
        };
        if value.starts_with("http://") || value.starts_with("https://") {
            config.llm.endpoint = Some(value.clone());
        } else if value.parse::<ybs_providers::ProviderKind>().is_ok() {
            config.llm.provider = value.clone();
        } else {
            let _ = writeln!(
                err,
                "ybs: warning: {key} `{value}` of {} is not a ybs provider or URL; using {} \
                 from the configuration",
                chat.display(),
                config.llm.provider
            );
        }
    }
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
    let mut agent = load::build_agent(
        (&config, &loaded),
        host,
        ("ask", mode),
        cli.options.dry_run,
        err,
    )?;
    agent.journal.before_next_turn(chat_before);
    // The model may not change the chat it answers (it would become the next ask's input).
    agent.tool_context.sandbox.protect(&path);
    let failures = tool_lines::offer_tools(&expansion, &mut agent, cwd).map_err(Failed)?;
    load::warn_mcp(&failures, err);
    tool_lines::run_tasks(&mut expansion, &mut agent).map_err(Failed)?;
    agent.settings.response_format = format;
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let settings = &mut agent.settings;
    for warning in options::apply(&expansion.options, chat, &text, settings) {
        let _ = writeln!(
            err,
            "ybs: warning: {}",
            crate::render::inert_lines(&warning.to_string())
        );
    }
    agent.conversation = expansion
        .to_core_messages()
        .map_err(|e| Failed(e.to_string()))?;
    crate::agent::prepare::chat(&mut agent);
    let start = (agent.conversation.iter())
        .rposition(|message| message.role == Role::User)
        .unwrap_or(0);
    let terminal = io::stdout().is_terminal();
    let mut no_input = io::empty();
    let result = {
        let mut ui = LineUi::new(load::renderer(&config, terminal), out, err, &mut no_input);
        let runtime = load::runtime()?;
        runtime.block_on(load::cancellable(async |token| {
            agent.run_from(start, &mut ui, &token).await
        }))
    };
    let report = result.map_err(|error| Failed(load::describe(&error, &config)))?;
    let added = agent
        .conversation
        .get(report.start + 1..)
        .unwrap_or_default();
    let appended = append(&path, &from_core(added)).map_err(|e| Failed(e.to_string()));
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
