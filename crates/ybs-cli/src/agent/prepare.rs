//! Readying a built agent for a session: its system prompt (ybs's instructions, the
//! environment block and the instruction files, gathered once now) and its undo journal
//! under ybs's state directory.

use std::io::Write;
use std::path::Path;

use ybs_core::Role;

use crate::agent::Agent;
use crate::config::{Config, ConfigLocations};
use crate::prompt::{self, PromptInputs, instructions};
use crate::session::undo::{self, Journal};

/// Gathers the session prompt into `agent` and gives it a journal of the run `command` in
/// the project's undo directory under `data_home`; warnings (instruction files cut or
/// unreadable) go to `err`.
pub fn session(
    agent: &mut Agent,
    config: &Config,
    locations: &ConfigLocations,
    data_home: Option<&Path>,
    command: &str,
    err: &mut dyn Write,
) {
    let inputs = PromptInputs {
        cwd: locations.cwd.clone(),
        user_dir: instructions::user_dir(locations),
        instructions_max_chars: config.context.instructions_max_chars,
        shell: agent.tool_context.shell.shell.clone(),
        sandbox: config.safety.sandbox_enabled,
        writable: agent.tool_context.sandbox.roots().to_vec(),
        blocked: agent.tool_context.sandbox.blocked().to_vec(),
    };
    let prompt = prompt::gather(&inputs);
    for warning in &prompt.instructions.warnings {
        let _ = writeln!(
            err,
            "ybs: warning: {}",
            crate::agent::inert::inert_lines(&warning.to_string())
        );
    }
    agent.set_prompt(prompt);
    if let Some(data_home) = data_home {
        let project = undo::store::project_dir(data_home, &locations.cwd);
        let info = undo::RunInfo {
            command: command.to_owned(),
        };
        agent.journal = Journal::persistent(undo::store::new_run_dir(&project), info);
    }
}

/// For `ask`: a chat file that has its own system prompt keeps it in place of ybs's own
/// instructions; the environment and the instruction files are still sent.
pub fn chat(agent: &mut Agent) {
    let own = (agent.conversation.iter()).any(|message| message.role == Role::System);
    if let Some(mut prompt) = agent.prompt.clone() {
        if own {
            prompt.base = None;
        }
        agent.set_prompt(prompt);
    }
}

/// The instruction files lines for `ybs config` (read now, as a session would).
pub fn describe_instructions(config: &Config, locations: &ConfigLocations) -> String {
    let sources = instructions::Sources {
        project_dirs: crate::project::root_to_cwd(&locations.cwd),
        user_dir: instructions::user_dir(locations),
        blocked: ybs_tools::PathSandbox::with_home(
            [locations.cwd.display().to_string()],
            &config.safety.sandbox_blocked_paths,
            locations.home.clone(),
        )
        .map(|sandbox| sandbox.blocked().to_vec())
        .unwrap_or_default(),
    };
    instructions::describe(&instructions::load(
        &sources,
        config.context.instructions_max_chars,
    ))
}
