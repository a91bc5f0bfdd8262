//! Custom sub-agents: Markdown files whose front matter names the agent and says when to
//! use it (`name`, `description`) and what it runs with (`tools`, `model`, `approval`), and
//! whose body is its system prompt, as Claude Code's `.claude/agents/` files are written.
//! The `task` tool runs one by name. A sub-agent has at most the parent's tools (the ones
//! fit for sub-agents, which only look) and permissions: `tools` can only narrow them,
//! `approval` can only make it ask more.

use std::path::PathBuf;

use super::front_matter::FrontMatter;
use super::place::{Place, is_plain_name};
use crate::config::Approval;

/// The most bytes of an agent file read.
const MAX_AGENT_FILE_BYTES: u64 = 256 * 1024;

/// One sub-agent defined by a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentFile {
    /// Its name, as the `task` tool's `agent` argument gives it.
    pub name: String,
    /// When to use it.
    pub description: String,
    /// The tools it may use (ybs's names); `None`: all the parent gives sub-agents.
    pub tools: Option<Vec<String>>,
    /// The tools its file names that ybs does not have, said when it runs.
    pub unknown_tools: Vec<String>,
    /// Its model; `None`: the parent's (`inherit`, or Claude Code's aliases `sonnet`,
    /// `opus`, `haiku`, which name no model of another provider).
    pub model: Option<String>,
    /// Its approval mode, when stricter than the parent's is wanted.
    pub approval: Option<Approval>,
    /// Its system prompt.
    pub prompt: String,
    /// Where it is.
    pub path: PathBuf,
    /// Whether a project supplied it.
    pub project: bool,
}

/// An agent file found: its path, text and the agent (or why not).
pub(super) struct Found {
    pub path: PathBuf,
    pub text: String,
    pub agent: Result<AgentFile, String>,
}

/// The agent files (`*.md`) of `place`, in name order.
pub(super) fn find(place: &Place, warnings: &mut Vec<String>) -> Vec<Found> {
    let fs = ybs_fsguard::Confined::new(&place.anchor);
    let Ok(entries) = fs.list(&place.dir) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for (file, _) in entries {
        let Some(stem) = file.strip_suffix(".md") else {
            continue;
        };
        let path = place.dir.join(&file);
        let text = match fs.read_capped(&path, MAX_AGENT_FILE_BYTES) {
            Ok(read) if !read.truncated => String::from_utf8_lossy(&read.bytes).into_owned(),
            Ok(_) => {
                warnings.push(format!(
                    "agent {} is not used: it is larger than {MAX_AGENT_FILE_BYTES} bytes",
                    path.display()
                ));
                continue;
            }
            Err(error) => {
                warnings.push(format!("cannot read agent {}: {error}", path.display()));
                continue;
            }
        };
        let agent = parse(&text, stem, &path, place.project);
        found.push(Found { path, text, agent });
    }
    found
}

fn parse(
    text: &str,
    stem: &str,
    path: &std::path::Path,
    project: bool,
) -> Result<AgentFile, String> {
    let front = FrontMatter::parse(text);
    let name = front.get("name").unwrap_or(stem).trim().to_owned();
    if !is_plain_name(&name) {
        return Err(format!(
            "its name {name:?} is not letters, digits, `-`, `_`, `.` or `:`"
        ));
    }
    let Some(description) = front.get("description") else {
        return Err("its front matter has no `description`".to_owned());
    };
    let mut unknown_tools = Vec::new();
    let tools = front.list("tools").map(|names| {
        let mut tools: Vec<String> = Vec::new();
        for name in names {
            match super::tool_names::tool(&name) {
                Some(ours) if !tools.iter().any(|known| known == ours) => {
                    tools.push(ours.to_owned())
                }
                Some(_) => {}
                None => unknown_tools.push(name),
            }
        }
        tools
    });
    let model = (front.get("model"))
        .filter(|model| !["inherit", "sonnet", "opus", "haiku"].contains(model))
        .map(str::to_owned);
    let approval =
        match front.get("approval") {
            Some(text) => Some(Approval::parse(text).ok_or_else(|| {
                format!("its approval {text:?} is not ask, auto-edit or full-auto")
            })?),
            None => None,
        };
    Ok(AgentFile {
        name,
        description: description.to_owned(),
        tools,
        unknown_tools,
        model,
        approval,
        prompt: front.body.trim().to_owned(),
        path: path.to_owned(),
        project,
    })
}

/// The stricter of two approval modes: a sub-agent never asks less than its parent.
pub fn stricter(parent: Approval, asked: Option<Approval>) -> Approval {
    let rank = |mode: Approval| match mode {
        Approval::Ask => 0,
        Approval::AutoEdit => 1,
        Approval::FullAuto => 2,
    };
    match asked {
        Some(asked) if rank(asked) < rank(parent) => asked,
        _ => parent,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn claude_codes_agent_file_reads_with_ybs_tool_names_and_the_sessions_model() {
        let text = "---\nname: code-reviewer\ndescription: Reviews code.\ntools: Read, Grep, \
                    Glob, Bash, NotebookEdit\nmodel: sonnet\n---\nYou review code.\n";
        let agent = parse(text, "file-name", std::path::Path::new("/a.md"), false).unwrap();
        assert_eq!(agent.name, "code-reviewer");
        assert_eq!(
            agent.tools.unwrap(),
            ["read_file", "search_files", "list_files", "run_shell"]
        );
        assert_eq!(agent.unknown_tools, ["NotebookEdit"]);
        assert_eq!(agent.model, None);
        assert_eq!(agent.prompt, "You review code.");
        let own = parse(
            "---\ndescription: d\nmodel: small\napproval: ask\n---\nx",
            "mine",
            std::path::Path::new("/m.md"),
            true,
        )
        .unwrap();
        assert_eq!(own.name, "mine");
        assert_eq!(own.tools, None);
        assert_eq!(own.model.as_deref(), Some("small"));
        assert_eq!(own.approval, Some(Approval::Ask));
        assert!(
            parse(
                "---\nname: x\n---\n",
                "x",
                std::path::Path::new("/x.md"),
                false
            )
            .is_err()
        );
        assert!(
            parse(
                "---\nname: a b\ndescription: d\n---\n",
                "x",
                std::path::Path::new("/x.md"),
                false
            )
            .is_err()
        );
    }

    #[test]
    fn a_sub_agent_never_asks_less_than_its_parent() {
        assert_eq!(
            stricter(Approval::Ask, Some(Approval::FullAuto)),
            Approval::Ask
        );
        assert_eq!(
            stricter(Approval::FullAuto, Some(Approval::Ask)),
            Approval::Ask
        );
        assert_eq!(stricter(Approval::AutoEdit, None), Approval::AutoEdit);
    }
}
