//! Readying a built agent for a chat file, and the instruction files as `ybs config`
//! describes them.

use ybs_core::Role;

use crate::Agent;
use crate::config::{Config, ConfigLocations};
use crate::prompt::instructions;

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
