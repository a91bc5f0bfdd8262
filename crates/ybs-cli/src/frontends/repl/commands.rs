//! Running a slash command the line editor read (`/help`, `/config`, `/usage`, `/model`,
//! ...): each command's work is here or in the module named after it.

use std::io::{self, Write};
use std::path::PathBuf;

use ybs_providers::ProviderKind;

use super::slash::{ProviderAction, SlashCommand, help_text};
use super::{jobs, last, sessions, status, switch, undo};
use crate::render::{LineUi, wrap};
use crate::startup::load;
use ybs_agent::Agent;
use ybs_agent::Notice;
use ybs_agent::config::{Config, LoadedConfig};
use ybs_agent::host::Host;
use ybs_agent::session;

/// What a command may need besides the agent and the configuration.
pub(super) struct Context<'a> {
    pub(super) host: &'a Host,
    pub(super) loaded: &'a LoadedConfig,
    pub(super) runtime: &'a tokio::runtime::Runtime,
    /// The sandbox probed at start (`None` when `run_shell` is off).
    pub(super) sandbox: Option<&'a ybs_tools::shell::status::SandboxStatus>,
    /// The MCP servers that could not be used at start.
    pub(super) mcp_failures: &'a [ybs_agent::mcp::McpFailure],
}

pub(super) fn slash(
    command: SlashCommand,
    context: &Context<'_>,
    agent: &mut Agent,
    config: &mut Config,
    session_file: &mut Option<PathBuf>,
    out: &mut dyn Write,
) {
    let info = |out: &mut dyn Write, text: &str| {
        let _ = writeln!(out, "{text}");
    };
    match command {
        SlashCommand::Help => {
            info(out, &help_text(wrap::terminal_width()));
            // The servers' words: made inert first, then wrapped between words like ybs's own.
            for line in super::mcp_prompts::help_lines(&agent.mcp) {
                let line = crate::render::inert(&line);
                info(out, &wrap::wrap(&line, wrap::terminal_width()));
            }
        }
        SlashCommand::Status => {
            let sources = status::Sources {
                loaded: context.loaded,
                sandbox: context.sandbox,
                mcp_failures: context.mcp_failures,
            };
            info(
                out,
                &status::text(agent, config, &sources, wrap::terminal_width()),
            );
        }
        SlashCommand::Jobs => info(
            out,
            &jobs::listing(&agent.tool_context.jobs, wrap::terminal_width()),
        ),
        SlashCommand::Config => {
            let shown = ybs_agent::config::with_session_changes(context.loaded, config);
            info(out, ybs_agent::config::show(&shown).trim_end());
            if let Some(prompt) = &agent.prompt {
                info(
                    out,
                    ybs_agent::prompt::instructions::describe(&prompt.instructions).trim_end(),
                );
            }
        }
        SlashCommand::Tools => {
            for spec in agent.registry.specs() {
                let source = ybs_agent::setup::tool_source(&agent.registry, &spec.name);
                info(out, &format!("{}  ({source})", spec.name));
            }
        }
        SlashCommand::Skills => info(out, &skills_listing(&context.loaded.extensions)),
        SlashCommand::Agents => info(out, &agents_listing(&agent.agents)),
        SlashCommand::Clear => {
            agent.clear();
            *session_file = context.host.session_file(None);
            info(out, "conversation cleared");
        }
        SlashCommand::Usage => {
            let lines = load::renderer(config, false).usage(
                &agent.last_turn_usage,
                &agent.session_usage,
                agent.context_fill(),
            );
            for line in lines {
                info(out, &line);
            }
            info(
                out,
                &format!(
                    "model limits: {} ({} from {}; output from {})",
                    agent.limits.short(),
                    config.llm.model,
                    agent.limits.window.source,
                    agent.limits.output.source
                ),
            );
        }
        SlashCommand::Save(file) => {
            let target = file
                .map(|file| context.host.locations.cwd.join(file))
                .or_else(|| session_file.clone());
            match target.map(|path| session::save(&path, &agent.conversation).map(|()| path)) {
                Some(Ok(path)) => info(out, &format!("saved to {}", path.display())),
                Some(Err(error)) => load::notice(config, Notice::Error, &error.to_string(), out),
                None => load::notice(config, Notice::Error, "/save needs a FILE here", out),
            }
        }
        SlashCommand::ReloadTools => {
            let report = agent.registry.reload();
            info(
                out,
                &format!("external tools: {}", report.loaded.join(", ")),
            );
            for error in report.errors {
                load::notice(config, Notice::Warning, &error.to_string(), out);
            }
        }
        SlashCommand::Compact => {
            let mut stdin = io::stdin().lock();
            let mut log = io::stdout();
            let renderer = load::renderer(config, false).with_tools(agent.registry.clone());
            let mut ui = LineUi::new(renderer, out, &mut log, &mut stdin);
            let token = tokio_util::sync::CancellationToken::new();
            if let Err(error) = context.runtime.block_on(agent.compact(&mut ui, &token)) {
                let _ = writeln!(
                    log,
                    "ybs: error: {}",
                    crate::render::inert_lines(&error.to_string())
                );
            }
        }
        SlashCommand::Effort(None) => {
            let effort = agent.settings.reasoning_effort;
            let shown = effort.map_or("not set (the model's default)".to_owned(), |e| {
                e.to_string()
            });
            info(out, &format!("reasoning effort: {shown}"));
        }
        SlashCommand::Effort(Some(effort)) => {
            agent.settings.reasoning_effort = effort;
            config.llm.reasoning_effort = effort;
            let shown = effort.map_or("off (the model's default)".to_owned(), |e| e.to_string());
            info(out, &format!("reasoning effort: {shown}"));
        }
        SlashCommand::Approval(None) => {
            info(out, &format!("approval: {}", agent.approval.name()));
        }
        SlashCommand::Approval(Some(mode)) => match ybs_agent::config::Approval::parse(&mode) {
            Some(approval) => {
                agent.approval = approval;
                config.safety.approval = approval;
                info(out, &format!("approval: {}", approval.name()));
            }
            None => load::notice(
                config,
                Notice::Error,
                &format!("unknown approval mode `{mode}`: ask, auto-edit or full-auto"),
                out,
            ),
        },
        SlashCommand::Permissions(None) => {
            let rules = agent.permissions.list();
            if rules.is_empty() {
                info(
                    out,
                    "no permission rules (answer [a]lways to a question to add one)",
                );
            }
            for (number, (layer, kind, rule)) in rules.iter().enumerate() {
                info(
                    out,
                    &format!("{:>3}. {kind:<5} {rule}  ({layer})", number + 1),
                );
            }
        }
        SlashCommand::Permissions(Some(number)) => {
            match number
                .checked_sub(1)
                .and_then(|index| agent.permissions.remove(index))
            {
                Some((layer, kind, rule)) => {
                    let file = match layer {
                        ybs_agent::permissions::Layer::Project => agent.rule_files.project.clone(),
                        ybs_agent::permissions::Layer::User => agent.rule_files.user.clone(),
                        ybs_agent::permissions::Layer::Session => None,
                    };
                    if let Some(path) = file {
                        let remove =
                            || ybs_agent::permissions::store::remove_rule(&path, kind, &rule);
                        // Removing the user's own rule keeps the trust the project's file had.
                        let removed = match (layer, &agent.rule_files.own_edits) {
                            (ybs_agent::permissions::Layer::Project, Some(edits)) => {
                                edits.edit(&path, remove).map(|_| ())
                            }
                            _ => remove(),
                        };
                        if let Err(error) = removed {
                            load::notice(config, Notice::Warning, &error.to_string(), out);
                        }
                    }
                    info(out, &format!("removed {kind} {rule} ({layer})"));
                }
                None => load::notice(
                    config,
                    Notice::Error,
                    &format!("there is no rule {number}"),
                    out,
                ),
            }
        }
        SlashCommand::Plan(on) => {
            agent.plan_mode = on.unwrap_or(!agent.plan_mode);
            info(
                out,
                if agent.plan_mode {
                    "plan mode on: the model can only read, and proposes a plan for you to approve"
                } else {
                    "plan mode off: the model acts again"
                },
            );
        }
        SlashCommand::Last => {
            let painter = load::renderer(config, false).painter();
            match last::lines(&agent.conversation, &agent.registry, painter) {
                Some(lines) => info(out, &lines.join("\n")),
                None => info(out, "no tool has run in this conversation yet"),
            }
        }
        SlashCommand::Fork => {
            let current = sessions::Current {
                agent,
                file: session_file,
            };
            if let Err(error) = sessions::fork(context.host, current, out) {
                load::notice(config, Notice::Error, &error, out);
            }
        }
        // Handled where the line is read.
        SlashCommand::Init
        | SlashCommand::Resume(_)
        | SlashCommand::Image(_)
        | SlashCommand::Edit
        | SlashCommand::Vim
        | SlashCommand::Paste
        | SlashCommand::Review(_)
        | SlashCommand::Exit => {}
        SlashCommand::Undo | SlashCommand::Diff => {
            let session = session_file.as_deref();
            undo::run(&command, agent, (config, session), out);
        }
        SlashCommand::Model(model) => switch::switch(
            (context.host, context.runtime, context.loaded),
            agent,
            config,
            None,
            Some(model),
            out,
        ),
        SlashCommand::Provider(ProviderAction::List) => {
            let names: Vec<&str> = ProviderKind::ALL
                .iter()
                .filter(|kind| kind.is_available())
                .map(|kind| kind.name())
                .collect();
            info(out, &names.join("\n"));
        }
        SlashCommand::Provider(ProviderAction::Current) => info(
            out,
            &format!(
                "{} {} at {} ({})",
                config.llm.provider,
                config.llm.model,
                ybs_agent::setup::endpoint(config),
                agent.limits.short()
            ),
        ),
        SlashCommand::Provider(ProviderAction::Switch { name, model }) => switch::switch(
            (context.host, context.runtime, context.loaded),
            agent,
            config,
            Some(name),
            model,
            out,
        ),
    }
}

/// `/skills`: each skill with where it is and its description, or how to add one.
fn skills_listing(extensions: &ybs_agent::extensions::Extensions) -> String {
    use crate::render::inert;
    if extensions.skills.is_empty() {
        return "no skills: add a folder with a SKILL.md to ~/.ybs/skills/ (or the project's \
                .ybs/skills/, once trusted)"
            .to_owned();
    }
    let mut text = String::new();
    for skill in &extensions.skills {
        let origin = if skill.project { "project" } else { "user" };
        text.push_str(&format!(
            "{}  ({origin}, {})\n  {}\n",
            inert(&skill.name),
            inert(&skill.dir.display().to_string()),
            inert(&skill.description)
        ));
    }
    text.trim_end().to_owned()
}

/// `/agents`: each custom sub-agent with its file, model, tools and description.
fn agents_listing(agents: &[ybs_agent::extensions::AgentFile]) -> String {
    use crate::render::inert;
    if agents.is_empty() {
        return "no custom sub-agents: add NAME.md with front matter name and description to \
                ~/.ybs/agents/ (or the project's .ybs/agents/, once trusted)"
            .to_owned();
    }
    let mut text = String::new();
    for agent in agents {
        let origin = if agent.project { "project" } else { "user" };
        let model = agent.model.as_deref().unwrap_or("the session's model");
        let tools = match &agent.tools {
            Some(tools) => tools.join(", "),
            None => "all a sub-agent may have".to_owned(),
        };
        text.push_str(&format!(
            "{}  ({origin}, {})\n  {}\n  model: {}; tools: {}\n",
            inert(&agent.name),
            inert(&agent.path.display().to_string()),
            inert(&agent.description),
            inert(model),
            inert(&tools)
        ));
    }
    text.trim_end().to_owned()
}
