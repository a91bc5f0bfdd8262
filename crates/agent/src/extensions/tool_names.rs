//! The tool names of Claude Code's files (`tools:` of a sub-agent, `allowed-tools:` of a
//! command or skill) in ybs's words, so a user's existing files keep their meaning:
//! `Read` is `read_file`, `Bash(git add:*)` is the rule `run_shell(git add *)`. ybs's own
//! names pass through unchanged.

/// Claude Code's tool names and ybs's tool for each.
const NAMES: [(&str, &str); 10] = [
    ("Bash", "run_shell"),
    ("Read", "read_file"),
    ("Edit", "edit_file"),
    ("MultiEdit", "edit_file"),
    ("Write", "write_file"),
    ("Grep", "search_files"),
    ("Glob", "list_files"),
    ("LS", "list_files"),
    ("WebFetch", "web_fetch"),
    ("TodoWrite", "todo_write"),
];

/// ybs's tool for the name `name` (Claude Code's or ybs's own); `None` for a tool ybs does
/// not have under either name (`Task`, `NotebookEdit`).
pub fn tool(name: &str) -> Option<&str> {
    let name = name.trim();
    if let Some((_, ours)) = NAMES.iter().find(|(theirs, _)| *theirs == name) {
        return Some(ours);
    }
    let ours = NAMES.iter().any(|(_, ours)| *ours == name)
        || ["task", "skill"].contains(&name)
        || name.contains("__");
    ours.then_some(name)
}

/// The permission rule text of an `allowed-tools` entry: `Bash(npm test:*)` is
/// `run_shell(npm test *)`, `WebFetch(domain:docs.rs)` is `web_fetch(docs.rs)`, `Read` is
/// `read_file`; `None` when ybs has no such tool.
pub fn rule(entry: &str) -> Option<String> {
    let entry = entry.trim();
    let (name, pattern) = match entry.split_once('(') {
        Some((name, rest)) => (name, Some(rest.strip_suffix(')')?)),
        None => (entry, None),
    };
    let tool = tool(name)?;
    let Some(pattern) = pattern
        .map(str::trim)
        .filter(|p| !p.is_empty() && *p != "*")
    else {
        return Some(tool.to_owned());
    };
    let pattern = match pattern.strip_prefix("domain:") {
        Some(host) => host.to_owned(),
        // Claude Code's `PREFIX:*` is a command starting with PREFIX's words.
        None => match pattern.strip_suffix(":*") {
            Some(prefix) => format!("{} *", prefix.trim()),
            None => pattern.to_owned(),
        },
    };
    Some(format!("{tool}({pattern})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_codes_names_and_patterns_become_ybs_rules() {
        assert_eq!(
            rule("Bash(git add:*)").as_deref(),
            Some("run_shell(git add *)")
        );
        assert_eq!(
            rule("Bash(npm test)").as_deref(),
            Some("run_shell(npm test)")
        );
        assert_eq!(rule("Read").as_deref(), Some("read_file"));
        assert_eq!(
            rule("WebFetch(domain:docs.rs)").as_deref(),
            Some("web_fetch(docs.rs)")
        );
        assert_eq!(
            rule("run_shell(cargo test *)").as_deref(),
            Some("run_shell(cargo test *)")
        );
        assert_eq!(rule("NotebookEdit"), None);
        assert_eq!(tool("Grep"), Some("search_files"));
        assert_eq!(tool("github__create_issue"), Some("github__create_issue"));
    }
}
