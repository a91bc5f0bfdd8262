//! What users add to ybs as Markdown files, in the formats the other agents read so that
//! existing files work unchanged: Agent Skills ([`skills`]) and custom sub-agents
//! ([`agents`]). The user's own are read from
//! `~/.ybs/`, `~/.claude/` and `~/.agents/`; a project's from its `.ybs/`, `.claude/` and
//! `.agents/` only once the user trusts each file (a cloned repository's skill is input
//! that would steer the model), through the same trust record as the project's settings.
//! Every file is read without following a link below the folder it was found in.

pub mod agents;
pub mod front_matter;
mod place;
pub mod skill_tool;
pub mod skills;
pub mod tool_names;

use crate::config::{ConfigLocations, Risk, Setting, Trust, UntrustedFile, digest};
pub use agents::AgentFile;
use place::places;
pub use skills::Skill;

/// The extensions of a session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extensions {
    /// The skills, by name.
    pub skills: Vec<Skill>,
    /// The custom sub-agents, by name.
    pub agents: Vec<AgentFile>,
    /// Files that could not be used, and why.
    pub warnings: Vec<String>,
}

/// Finds the extensions of `locations`; a project's file that `trust` does not cover is
/// left out and returned as waiting for trust, keyed by its path and the digest of its text.
pub fn discover(locations: &ConfigLocations, trust: &Trust) -> (Extensions, Vec<UntrustedFile>) {
    let mut extensions = Extensions::default();
    let mut untrusted = Vec::new();
    for place in places(locations, "skills") {
        for found in skills::find(&place, &mut extensions.warnings) {
            let skill = match found.skill {
                Ok(skill) => skill,
                Err(why) => {
                    (extensions.warnings)
                        .push(format!("skill {} is not used: {why}", found.path.display()));
                    continue;
                }
            };
            if extensions
                .skills
                .iter()
                .any(|known| known.name == skill.name)
            {
                continue;
            }
            if place.project && !trust.allows(&found.path, &skill.digest) {
                untrusted.push(waiting(
                    &found.path,
                    &found.text,
                    "skill",
                    &skill.name,
                    &skill.description,
                ));
                continue;
            }
            extensions.skills.push(skill);
        }
    }
    extensions.skills.sort_by(|a, b| a.name.cmp(&b.name));
    for place in places(locations, "agents") {
        for found in agents::find(&place, &mut extensions.warnings) {
            let agent = match found.agent {
                Ok(agent) => agent,
                Err(why) => {
                    (extensions.warnings)
                        .push(format!("agent {} is not used: {why}", found.path.display()));
                    continue;
                }
            };
            if extensions
                .agents
                .iter()
                .any(|known| known.name == agent.name)
            {
                continue;
            }
            let digest = digest(&found.text);
            if place.project && !trust.allows(&found.path, &digest) {
                untrusted.push(waiting(
                    &found.path,
                    &found.text,
                    "agent",
                    &agent.name,
                    &agent.description,
                ));
                continue;
            }
            extensions.agents.push(agent);
        }
    }
    extensions.agents.sort_by(|a, b| a.name.cmp(&b.name));
    (extensions, untrusted)
}

/// A project's extension file waiting for trust, as the trust question and `ybs trust` show
/// it: `skill NAME = "description"`, `agent NAME = "description"`.
fn waiting(
    path: &std::path::Path,
    text: &str,
    kind: &str,
    name: &str,
    description: &str,
) -> UntrustedFile {
    let setting = Setting {
        key: format!("{kind} {name}"),
        value: serde_json::Value::String(description.to_owned()),
        risk: Risk::Instructs,
    };
    UntrustedFile {
        path: path.to_owned(),
        digest: digest(text),
        settings: vec![setting.clone()],
        recorded: vec![setting],
    }
}

impl Extensions {
    /// The system prompt's sections naming the skills and the sub-agents, `None` without
    /// either.
    pub fn prompt(&self) -> Option<String> {
        let sections: Vec<String> = [self.skills_prompt(), self.agents_prompt()]
            .into_iter()
            .flatten()
            .collect();
        (!sections.is_empty()).then(|| sections.join("\n"))
    }

    /// The system prompt's section naming the skills, `None` without any.
    pub fn skills_prompt(&self) -> Option<String> {
        if self.skills.is_empty() {
            return None;
        }
        let mut text = String::from(
            "# Skills\n\nThese skills hold instructions and files for particular tasks. When a \
             task matches a skill's description, call the `skill` tool with its name first \
             and follow what it says; read its other files with the same tool (`file`), and \
             run its scripts with `run_shell`.\n\n",
        );
        for skill in &self.skills {
            let description = skill.description.replace(['\n', '\r'], " ");
            text.push_str(&format!("- {}: {}\n", skill.name, description));
        }
        Some(text)
    }

    /// The system prompt's section naming the custom sub-agents, `None` without any.
    pub fn agents_prompt(&self) -> Option<String> {
        if self.agents.is_empty() {
            return None;
        }
        let mut text = String::from(
            "# Sub-agents\n\nBesides the general sub-agent, the `task` tool runs these by \
             name (its `agent` argument); hand one a task that matches its description.\n\n",
        );
        for agent in &self.agents {
            let description = agent.description.replace(['\n', '\r'], " ");
            text.push_str(&format!("- {}: {description}\n", agent.name));
        }
        Some(text)
    }

    /// The skill named `name`.
    pub fn skill(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|skill| skill.name == name)
    }
}
