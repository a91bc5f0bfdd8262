//! The system prompt of a session, in named sections: ybs's own instructions
//! (`system.md`), the environment block ([`env_block`]), the project's instruction files
//! ([`instructions`]), and the repository map ([`repo_map`], kept between turns and rebuilt
//! when the files change). It is assembled once per session, and again only when the repo map
//! changes, so every request of a session starts with the same bytes.

pub mod repo_map;

pub mod env_block;
pub mod instructions;

use std::path::PathBuf;

pub use env_block::Environment;
pub use instructions::Instructions;

/// ybs's own part of the system prompt: its role, the tools, the sandbox, ending a turn.
pub const BASE: &str = include_str!("system.md");

/// The sections of a session's system prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionPrompt {
    /// ybs's own instructions; `None` when a chat file brings its own system prompt.
    pub base: Option<String>,
    /// The environment block, gathered when the session started.
    pub environment: String,
    /// The project's and the user's instruction files.
    pub instructions: Instructions,
    /// The names and descriptions of the skills and custom sub-agents, when there are any.
    pub extensions: Option<String>,
    /// The repository map, if the caller has one.
    pub repo_map: Option<String>,
}

impl SessionPrompt {
    /// The prompt's text: base, environment, instructions, skills and sub-agents, then the repo map.
    pub fn text(&self) -> String {
        let mut sections: Vec<String> = Vec::new();
        if let Some(base) = &self.base {
            sections.push(base.trim_end().to_owned());
        }
        sections.push(self.environment.trim_end().to_owned());
        if !self.instructions.text.is_empty() {
            sections.push(format!(
                "# Project instructions\n\nThe user and the project's maintainers wrote these \
                 for agents working here; follow them (later, more specific files win when \
                 they disagree).\n\n{}",
                self.instructions.text.trim_end()
            ));
        }
        if let Some(extensions) = &self.extensions {
            sections.push(extensions.trim_end().to_owned());
        }
        if let Some(map) = self
            .repo_map
            .as_deref()
            .filter(|map| !map.trim().is_empty())
        {
            sections.push(format!("# Repository map\n\n{}", map.trim_end()));
        }
        let mut text = sections.join("\n\n");
        text.push('\n');
        text
    }
}

/// What a session prompt is gathered from.
#[derive(Debug, Clone)]
pub struct PromptInputs {
    /// The working directory.
    pub cwd: PathBuf,
    /// ybs's configuration directory (for the user's `AGENTS.md`).
    pub user_dir: Option<PathBuf>,
    /// `context.instructions_max_chars`.
    pub instructions_max_chars: usize,
    /// The shell `run_shell` uses.
    pub shell: PathBuf,
    /// Whether commands are sandboxed.
    pub sandbox: bool,
    /// Where the tools may write.
    pub writable: Vec<PathBuf>,
    /// The sandbox's blocked paths, resolved: no project file is read there.
    pub blocked: Vec<PathBuf>,
}

/// Gathers the environment and reads the instruction files now.
pub fn gather(inputs: &PromptInputs) -> SessionPrompt {
    let environment = Environment::gather(
        &inputs.cwd,
        &inputs.shell,
        inputs.sandbox,
        inputs.writable.clone(),
    );
    let sources = instructions::Sources {
        project_dirs: crate::project::root_to_cwd(&inputs.cwd),
        user_dir: inputs.user_dir.clone(),
        blocked: inputs.blocked.clone(),
    };
    SessionPrompt {
        base: Some(BASE.to_owned()),
        environment: environment.render(),
        instructions: instructions::load(&sources, inputs.instructions_max_chars),
        extensions: None,
        repo_map: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_come_in_order_and_empty_ones_are_left_out() {
        let mut prompt = SessionPrompt {
            base: Some("BASE\n".into()),
            environment: "# Environment\n- x\n".into(),
            instructions: Instructions::default(),
            extensions: None,
            repo_map: None,
        };
        assert_eq!(prompt.text(), "BASE\n\n# Environment\n- x\n");
        prompt.instructions.text = "<instructions source=\"/a\">\nhi\n</instructions>\n".into();
        prompt.repo_map = Some("src/main.rs\n  fn main\n".into());
        prompt.extensions = Some("# Skills\n\n- pdf: PDFs\n".into());
        let text = prompt.text();
        let at = |needle: &str| text.find(needle).unwrap_or(usize::MAX);
        assert!(at("BASE") < at("# Environment"));
        assert!(at("# Environment") < at("# Project instructions"));
        assert!(at("</instructions>") < at("# Skills\n\n- pdf: PDFs"));
        assert!(at("- pdf: PDFs") < at("# Repository map\n\nsrc/main.rs"));
        prompt.base = None;
        prompt.repo_map = Some("  \n".into());
        assert!(prompt.text().starts_with("# Environment"));
        assert!(!prompt.text().contains("Repository map"));
    }

    #[test]
    fn the_base_prompt_covers_tools_sandbox_and_finishing() {
        for needle in [
            "edit_file",
            "write_file",
            "search_files",
            "list_files",
            "run_shell",
            "read_file",
            "no network",
            "only inside the project",
            "# Finishing a turn",
        ] {
            assert!(BASE.contains(needle), "{needle}");
        }
    }
}
