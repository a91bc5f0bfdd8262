//! `ybs tools` lists the tools a session would offer; `ybs tool NAME 'JSON'` runs one of them
//! without the model, through the sandbox and the agent's own decision (permission rules,
//! confirmation policy, approval mode).

use std::io::{self, BufRead, IsTerminal, Write};

use crate::cli::Cli;
use crate::startup::exit::Failed;
use crate::startup::load::{load, warn_mcp};
use ybs_agent::approve::Approver;
use ybs_agent::confirm::{Answer, ConfirmMode, prompt};
use ybs_agent::host::Host;
use ybs_agent::setup;

/// `ybs tools`: name, source and the first line of the description of each enabled tool.
/// MCP servers are started only with `connect` (`--connect`): listing starts nothing.
pub fn list(
    cli: &Cli,
    host: &Host,
    connect: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, Failed> {
    let loaded = load(cli, host, err)?;
    let config = &loaded.config;
    let (mut registry, report) = setup::registry(config, host.locations.home.as_deref());
    for error in &report.errors {
        let _ = writeln!(
            err,
            "ybs: warning: {}",
            crate::render::inert_lines(&error.to_string())
        );
    }
    let mut rows: Vec<(String, &str, String)> = Vec::new();
    if connect {
        let mut policy = ybs_tools::ConfirmationPolicy::default();
        let cwd = &host.locations.cwd;
        warn_mcp(
            &setup::add_config_mcp_tools(config, cwd, &mut registry, &mut policy),
            err,
        );
    } else {
        for (name, _) in (config.mcp.servers.iter()).filter(|(_, server)| server.enabled) {
            rows.push((
                format!("{}*", ybs_agent::mcp::tool_prefix(name)),
                "mcp",
                format!("the tools of MCP server `{name}` (not started; `ybs tools --connect` lists them)"),
            ));
        }
    }
    let mut listed: Vec<(String, &str, String)> = (registry.specs().into_iter())
        .map(|spec| {
            let source = setup::tool_source(&registry, &spec.name);
            let description = spec
                .description
                .lines()
                .next()
                .unwrap_or_default()
                .to_owned();
            (spec.name.clone(), source, description)
        })
        .collect();
    listed.extend(rows);
    // The hosted search is the provider's, not a tool of the registry; listed when enabled.
    if config.tools.builtin.web_search.enabled {
        let provider = &config.llm.provider;
        let offered =
            setup::provider_kind(config).is_ok_and(|kind| setup::web_search_on(config, kind));
        let description = if offered {
            format!("the provider's hosted web search ({provider} runs it)")
        } else {
            format!("enabled, but provider {provider} has no hosted search: not offered")
        };
        listed.push(("web_search".to_owned(), "hosted", description));
    }
    let width = listed
        .iter()
        .map(|(name, ..)| name.len())
        .max()
        .unwrap_or(0);
    for (name, source, description) in listed {
        let _ = writeln!(out, "{name:width$}  {source:8}  {description}");
    }
    Ok(0)
}

/// `ybs tool NAME 'JSON'`: one call through the sandbox and the confirmation policy.
pub fn call(
    cli: &Cli,
    host: &Host,
    name: &str,
    json: &str,
    yes: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, Failed> {
    let loaded = load(cli, host, err)?;
    let arguments: serde_json::Value = serde_json::from_str(json)
        .map_err(|e| Failed(format!("the arguments of {name} are not valid JSON: {e}")))?;
    let config = &loaded.config;
    let (mut registry, report) = setup::registry(config, host.locations.home.as_deref());
    for error in &report.errors {
        let _ = writeln!(
            err,
            "ybs: warning: {}",
            crate::render::inert_lines(&error.to_string())
        );
    }
    let context =
        setup::tool_context(config, &host.surroundings()).map_err(|e| Failed(e.to_string()))?;
    let mut policy =
        ybs_tools::ConfirmationPolicy::new(config.safety.require_confirmation.iter().cloned());
    // MCP servers are started only for a tool that is not a built-in or external one.
    if registry.source(name).is_none() {
        let cwd = &host.locations.cwd;
        warn_mcp(
            &setup::add_config_mcp_tools(config, cwd, &mut registry, &mut policy),
            err,
        );
    }
    let stdin = io::stdin();
    let confirm = if yes {
        ConfirmMode::AssumeYes
    } else if stdin.is_terminal() {
        ConfirmMode::Ask
    } else {
        ConfirmMode::Deny
    };
    // The permission rules and the decision are the agent's: a call a rule allows runs, one
    // a rule denies does not, whatever --yes says.
    let (layers, errors) = ybs_agent::permissions::store::load_layers(
        &loaded.files,
        ybs_agent::permissions::store::project_trusted(&loaded),
    );
    for error in &errors {
        let _ = writeln!(
            err,
            "ybs: warning: permission rules not used: {}",
            crate::render::inert_lines(&error.to_string())
        );
    }
    let mut permissions = ybs_agent::permissions::Permissions::new(layers);
    let rule_files = ybs_agent::permissions::RuleFiles::of(&host.locations);
    let call = ybs_core::ToolCall::new("ybs-tool", name, arguments.clone());
    let mut ui = OneCallUi {
        err: &mut *err,
        refusal: None,
    };
    let allowed = Approver {
        registry: &registry,
        tool_context: &context,
        permissions: &mut permissions,
        policy: &mut policy,
        network: config.safety.network,
        approval: config.safety.approval,
        confirm,
        rule_files: &rule_files,
        notify: None,
    }
    .allowed(&call, &mut ui);
    let warned = ui.refusal.take();
    if !allowed {
        return Err(Failed(
            warned.unwrap_or_else(|| format!("{name} was not run: denied")),
        ));
    }
    if let Some(warning) = warned {
        let _ = writeln!(
            err,
            "ybs: warning: {}",
            crate::render::inert_lines(&warning)
        );
    }
    if cli.options.dry_run {
        let _ = writeln!(err, "ybs: dry run: {name} was not executed");
        return Ok(0);
    }
    match registry.invoke(name, &arguments, &context) {
        Ok(value) => {
            let text = serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string());
            let _ = writeln!(out, "{text}");
            Ok(0)
        }
        Err(error) => {
            let _ = writeln!(out, "{}", error.to_json());
            Err(Failed(error.to_string()))
        }
    }
}

/// The terminal of `ybs tool`: its question on stderr, answered on stdin; what ybs says goes
/// to stderr, and the warning that refused the call becomes the command's error.
struct OneCallUi<'a> {
    err: &'a mut dyn Write,
    refusal: Option<String>,
}

impl ybs_agent::Ui for OneCallUi<'_> {
    fn stream_event(&mut self, _event: &ybs_core::StreamEvent) {}

    fn reply_done(&mut self) {}

    fn tool_call(&mut self, _call: &ybs_core::ToolCall) {}

    fn tool_result(&mut self, _tool: &str, _result: &ybs_core::ToolResult) {}

    fn notice(&mut self, kind: ybs_agent::Notice, message: &str) {
        if kind == ybs_agent::Notice::Warning {
            if let Some(earlier) = self.refusal.replace(message.to_owned()) {
                let _ = writeln!(
                    self.err,
                    "ybs: warning: {}",
                    crate::render::inert_lines(&earlier)
                );
            }
        } else {
            let _ = writeln!(self.err, "ybs: {}", crate::render::inert_lines(message));
        }
    }

    fn usage(
        &mut self,
        _turn: &ybs_core::Usage,
        _session: &ybs_core::Usage,
        _fill: Option<(u64, u64)>,
    ) {
    }

    fn confirm(&mut self, _call: &ybs_core::ToolCall, reason: &str) -> Answer {
        let _ = write!(self.err, "{}", prompt(reason));
        let _ = self.err.flush();
        let mut line = String::new();
        let _ = io::stdin().lock().read_line(&mut line);
        // No rule can be picked here: "always" runs this call.
        match Answer::parse(&line) {
            Answer::No => Answer::No,
            Answer::Yes | Answer::Always => Answer::Yes,
        }
    }
}
