//! The names MCP tools are offered under.

/// The longest tool name the providers accept (OpenAI's `^[a-zA-Z0-9_-]{1,64}$`).
const MAX_NAME: usize = 64;

/// Between the server's name and the tool's (as codex and others write it).
const SEPARATOR: &str = "__";

/// `SERVER__TOOL`, with characters providers refuse in tool names replaced by `_`. A name
/// longer than 64 characters is cut and ends in a hash of the whole, so it stays unique.
pub fn qualified_name(server: &str, tool: &str) -> String {
    let name = format!("{}{SEPARATOR}{}", sanitize(server), sanitize(tool));
    if name.len() <= MAX_NAME {
        return name;
    }
    let hash = ybs_core::file_id(&name, "");
    let suffix = &hash[..hash.len().min(8)];
    let keep = MAX_NAME - suffix.len() - 1;
    format!("{}_{suffix}", &name[..keep])
}

/// `SERVER__`: how every tool name of `server` begins.
pub fn tool_prefix(server: &str) -> String {
    format!("{}{SEPARATOR}", sanitize(server))
}

/// Keeps ASCII letters, digits, `_` and `-`; anything else becomes `_`.
pub(super) fn sanitize(text: &str) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "mcp".to_owned()
    } else {
        cleaned
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_server_and_tool() {
        assert_eq!(qualified_name("git", "status"), "git__status");
        assert!(qualified_name("my server", "x").starts_with(&tool_prefix("my server")));
    }

    #[test]
    fn replaces_what_providers_refuse() {
        assert_eq!(
            qualified_name("my server", "read.file"),
            "my_server__read_file"
        );
        assert_eq!(qualified_name("", "x"), "mcp__x");
    }

    #[test]
    fn long_names_are_cut_and_stay_distinct() {
        let long = "t".repeat(80);
        let a = qualified_name("server", &format!("{long}a"));
        let b = qualified_name("server", &format!("{long}b"));
        assert_eq!(a.len(), MAX_NAME);
        assert_eq!(b.len(), MAX_NAME);
        assert_ne!(a, b);
        assert!(a.starts_with("server__ttt"));
    }
}
