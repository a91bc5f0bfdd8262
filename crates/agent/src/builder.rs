//! The one way to make an [`Agent`]: [`AgentBuilder`] gathers what the agent is built from
//! (the configuration, the project directory, how confirmations are settled, the session's
//! place on disk, the rule files, extra MCP servers) and [`AgentBuilder::build`] makes it
//! whole at once: provider and limits, tools and sandbox, confirmation policy, permission
//! rules, the session's system prompt and its undo journal. What building had to say without
//! failing is in the [`SetupReport`], for the caller to show as it shows things.

use std::path::PathBuf;
use std::sync::Arc;

use ybs_providers::Provider;
use ybs_tools::ReloadReport;

use crate::Agent;
use crate::config::{Config, ConfigLocations, FileStatus, LoadedConfig, OwnEdits, Sources};
use crate::confirm::ConfirmMode;
use crate::extensions::Extensions;
use crate::mcp::{McpFailure, McpServerSpec};
use crate::permissions::{Permissions, RuleFiles};
use crate::prompt::{self, PromptInputs, instructions};
use crate::session::undo::{self, Journal};
use crate::setup::{self, SetupError, Surroundings};

/// What building an agent had to report without failing, in the order it happened.
#[derive(Debug, Default)]
pub struct SetupReport {
    /// Instruction files cut or unreadable.
    pub instructions: Vec<String>,
    /// The external tools that loaded and those that did not.
    pub tools: ReloadReport,
    /// The MCP servers that could not be used.
    pub mcp: Vec<McpFailure>,
    /// Rule files whose permission rules are not used, and why.
    pub rules: Vec<String>,
    /// Why `run_shell` cannot run commands sandboxed here, when it cannot.
    pub shell: Option<ybs_tools::ShellError>,
}

/// Where a session keeps its journal and what it is called there.
struct SessionPlace {
    locations: ConfigLocations,
    data_home: Option<PathBuf>,
    command: String,
}

/// The rule layers to load: the configuration files considered and whether the project's
/// may be used.
struct RuleSources {
    files: Vec<FileStatus>,
    project_trusted: bool,
    rule_files: RuleFiles,
}

/// Builds an [`Agent`] from the effective configuration.
///
/// Without [`session`](AgentBuilder::session) the agent has ybs's own instructions as its
/// system prompt and keeps its undo journal in memory; without
/// [`rules`](AgentBuilder::rules) it has no allow or deny rules beyond the session's.
pub struct AgentBuilder<'a> {
    config: &'a Config,
    sources: Option<&'a Sources>,
    around: Surroundings,
    confirm: ConfirmMode,
    dry_run: bool,
    provider: Option<Arc<dyn Provider>>,
    session: Option<SessionPlace>,
    rules: Option<RuleSources>,
    own_edits: Option<OwnEdits>,
    mcp: Vec<McpServerSpec>,
    extensions: Option<&'a Extensions>,
}

impl<'a> AgentBuilder<'a> {
    /// An agent of `config` working in `around` (its project directory, home and the
    /// variables the provider may read keys from); confirmations are denied until
    /// [`confirm`](AgentBuilder::confirm) says otherwise.
    pub fn new(config: &'a Config, around: Surroundings) -> Self {
        AgentBuilder {
            config,
            sources: None,
            around,
            confirm: ConfirmMode::Deny,
            dry_run: false,
            provider: None,
            session: None,
            rules: None,
            own_edits: None,
            mcp: Vec::new(),
            extensions: None,
        }
    }

    /// Builds from what [`config::load`](crate::config::load) returned: its configuration,
    /// where each value came from (the model limits a file set win over what the server
    /// says) and, with the files of `locations`, the permission rules the files hold.
    pub fn loaded(
        loaded: &'a LoadedConfig,
        locations: &ConfigLocations,
        env: Surroundings,
    ) -> Self {
        AgentBuilder::new(&loaded.config, env)
            .sources(&loaded.sources)
            .rules(loaded, locations)
            .extensions(&loaded.extensions)
    }

    /// The skills the session offers the model (listed in its system prompt, read through
    /// the `skill` tool) and the custom sub-agents its `task` tool runs.
    pub fn extensions(mut self, extensions: &'a Extensions) -> Self {
        self.extensions = Some(extensions);
        self
    }

    /// Where each configuration value came from.
    pub fn sources(mut self, sources: &'a Sources) -> Self {
        self.sources = Some(sources);
        self
    }

    /// How confirmations are settled.
    pub fn confirm(mut self, confirm: ConfirmMode) -> Self {
        self.confirm = confirm;
        self
    }

    /// With `dry_run`, tool calls are shown and none is executed.
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.dry_run = dry_run;
        self
    }

    /// Talks to `provider` instead of the one `llm.*` describes.
    pub fn provider(mut self, provider: Arc<dyn Provider>) -> Self {
        self.provider = Some(provider);
        self
    }

    /// A session of the run `command` (`repl`, `exec`, `ask`, ...): its system prompt adds
    /// the environment and the instruction files (gathered once, at build), and its undo
    /// journal is kept in the project's undo directory under `data_home`.
    pub fn session(
        mut self,
        locations: &ConfigLocations,
        data_home: Option<PathBuf>,
        command: &str,
    ) -> Self {
        self.session = Some(SessionPlace {
            locations: locations.clone(),
            data_home,
            command: command.to_owned(),
        });
        self
    }

    /// The allow and deny rules of the user's and the project's files of `loaded`; the
    /// project's are left out while its file has settings waiting for trust (its rules are
    /// among them). "Always" answers are saved to the files of `locations`.
    pub fn rules(mut self, loaded: &LoadedConfig, locations: &ConfigLocations) -> Self {
        self.rules = Some(RuleSources {
            files: loaded.files.clone(),
            project_trusted: crate::permissions::store::project_trusted(loaded),
            rule_files: RuleFiles::of(locations),
        });
        self
    }

    /// A rule saved to (or removed from) the project's file by the user keeps the file's
    /// trust, judged as a start with these places, environment and flags would judge it.
    pub fn own_edits(mut self, edits: OwnEdits) -> Self {
        self.own_edits = Some(edits);
        self
    }

    /// MCP servers to connect besides the configured ones.
    pub fn mcp(mut self, servers: Vec<McpServerSpec>) -> Self {
        self.mcp = servers;
        self
    }

    /// The agent, with what building it had to report.
    pub fn build(self) -> Result<(Agent, SetupReport), SetupError> {
        let AgentBuilder {
            config,
            sources,
            around,
            confirm,
            dry_run,
            provider,
            session,
            rules,
            own_edits,
            mcp,
            extensions,
        } = self;
        let default_sources = Sources::default();
        let sources = sources.unwrap_or(&default_sources);
        let (mut parts, (tools, mut mcp_failures)) =
            setup::parts((config, sources), &around, confirm, dry_run, provider)?;
        if !mcp.is_empty() {
            let (servers, failures) =
                setup::connect_mcp(mcp, &mut parts.registry, &mut parts.policy);
            parts.mcp.extend(servers);
            mcp_failures.extend(failures);
        }
        let skills = extensions
            .map(|found| found.skills.clone())
            .unwrap_or_default();
        if !skills.is_empty() {
            let tool = crate::extensions::skill_tool::SkillTool::new(skills);
            // The name is ours: a clash is with an external tool the user named `skill`,
            // which then keeps it (and the skills are listed but not readable).
            let _ = parts.registry.register(Arc::new(tool));
        }
        let mut report = SetupReport {
            tools,
            mcp: mcp_failures,
            ..SetupReport::default()
        };
        if let Some(place) = &session {
            let inputs = PromptInputs {
                cwd: place.locations.cwd.clone(),
                user_dir: instructions::user_dir(&place.locations),
                instructions_max_chars: config.context.instructions_max_chars,
                shell: parts.tool_context.shell.shell.clone(),
                sandbox: config.safety.sandbox_enabled,
                writable: parts.tool_context.sandbox.roots().to_vec(),
                blocked: parts.tool_context.sandbox.blocked().to_vec(),
            };
            let mut prompt = prompt::gather(&inputs);
            prompt.extensions = extensions.and_then(Extensions::prompt);
            report.instructions = (prompt.instructions.warnings.iter())
                .map(ToString::to_string)
                .collect();
            parts.prompt = Some(prompt);
            if let Some(data_home) = &place.data_home {
                let project = undo::store::project_dir(data_home, &place.locations.cwd);
                let info = undo::RunInfo {
                    command: place.command.clone(),
                };
                parts.journal = Journal::persistent(undo::store::new_run_dir(&project), info);
            }
        }
        if let Some(rules) = rules {
            let (layers, errors) =
                crate::permissions::store::load_layers(&rules.files, rules.project_trusted);
            report.rules = errors.iter().map(ToString::to_string).collect();
            parts.permissions = Permissions::new(layers);
            parts.rule_files = rules.rule_files;
            parts.rule_files.own_edits = own_edits;
        }
        // Said now, not at the model's first command, when commands cannot run sandboxed.
        if parts.registry.is_enabled("run_shell") && !dry_run {
            let context = &parts.tool_context;
            report.shell = ybs_tools::shell::probe(&context.shell, &context.sandbox).err();
        }
        let mut agent = Agent::from_parts(parts);
        // Nothing starts here: a server starts on the first change of a file it checks.
        agent.lsp = self.config.lsp.enabled.then(|| {
            let context = &agent.tool_context;
            crate::lsp::LanguageServers::new(
                &self.config.lsp,
                &context.working_dir,
                &context.shell,
                &context.sandbox,
            )
        });
        agent.agents = extensions
            .map(|found| found.agents.clone())
            .unwrap_or_default();
        Ok((agent, report))
    }
}
