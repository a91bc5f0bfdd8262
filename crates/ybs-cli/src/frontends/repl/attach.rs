//! `@path` in a REPL message attaches the file, as a `file:` line does in a chat file;
//! `@dir/` attaches a listing of the directory. Files are read through the `read_file` and
//! `list_files` tools, so the sandbox refuses what it refuses to the model. `@SERVER:URI`
//! attaches a resource of a connected MCP server, read through the `mcp_resource` tool so
//! its text is limited as the model's reads are.

use serde_json::{Value, json};
use ybs_tools::{ToolContext, ToolRegistry};

/// The words of `message` that name attachments: `@` at the start of a word, then a path.
pub fn mentions(message: &str) -> Vec<&str> {
    (message.split_whitespace())
        .filter_map(|word| word.strip_prefix('@'))
        .map(|path| path.trim_end_matches([',', ';', ')', '?', '!']))
        .filter(|path| !path.is_empty() && !path.starts_with('@'))
        .collect()
}

/// `message` with the content of each `@path` appended, and for each mention that cannot be
/// attached what went wrong (it stays in the message as typed, as a plain word: the message
/// is still sent, and the model can look for the file itself).
pub fn expand(
    message: &str,
    registry: &ToolRegistry,
    context: &ToolContext,
) -> (String, Vec<String>) {
    let mut text = message.to_owned();
    let mut unattached = Vec::new();
    for path in mentions(message) {
        if let Some(resource) = resource_attachment(path, registry, context) {
            match resource {
                Ok(attached) => text.push_str(&attached),
                Err(error) => {
                    unattached.push(format!("cannot attach @{path}: {error}; sent without it"));
                }
            }
            continue;
        }
        match attachment(path, registry, context) {
            Ok(attached) => text.push_str(&format!(
                "\n\n<file path=\"{path}\">\n{}\n</file>",
                attached.trim_end()
            )),
            Err(error) => {
                unattached.push(format!("cannot attach @{path}: {error}; sent without it"));
            }
        }
    }
    (text, unattached)
}

/// The text of `@SERVER:URI` as an attachment; `None` when `mention` is not one (no MCP
/// server offers resources, or the part before `:` is a path, or no file by that name exists
/// while one does).
fn resource_attachment(
    mention: &str,
    registry: &ToolRegistry,
    context: &ToolContext,
) -> Option<Result<String, ybs_tools::ToolError>> {
    registry.tool(ybs_agent::mcp::RESOURCE_TOOL)?;
    let (server, uri) = mention.split_once(':')?;
    if server.is_empty() || uri.is_empty() || server.contains(['/', '.']) {
        return None;
    }
    let read = registry.invoke(
        ybs_agent::mcp::RESOURCE_TOOL,
        &json!({"server": server, "uri": uri}),
        context,
    );
    Some(read.map(|read| {
        let text = read["text"].as_str().unwrap_or_default();
        let text = ybs_tools::truncate_output(text, registry.max_output_chars());
        format!(
            "\n\n<resource server=\"{server}\" uri=\"{uri}\">\n{}\n</resource>",
            text.trim_end()
        )
    }))
}

/// The content of `path`, or the listing of a `dir/`, through the tools' sandbox.
fn attachment(
    path: &str,
    registry: &ToolRegistry,
    context: &ToolContext,
) -> Result<String, ybs_tools::ToolError> {
    if path.ends_with('/') {
        let listing = registry.invoke(
            "list_files",
            &json!({"pattern": "*", "path": path}),
            context,
        )?;
        let files: Vec<&str> = (listing["files"].as_array().into_iter().flatten())
            .filter_map(Value::as_str)
            .collect();
        Ok(files.join("\n"))
    } else {
        let read = registry.invoke("read_file", &json!({"path": path}), context)?;
        Ok(read["content"].as_str().unwrap_or_default().to_owned())
    }
}

/// `SERVER:URI` of each resource the connected MCP servers list, for Tab completion after
/// `@`. One with a control character or a space is left out: the editor writes a completion
/// to the terminal as it is, and a mention ends at a space.
pub fn resource_mentions(servers: &ybs_agent::mcp::McpServers) -> Vec<String> {
    if !servers.any_resources() {
        return Vec::new();
    }
    (servers.resources(None).unwrap_or_default().into_iter())
        .map(|resource| format!("{}:{}", resource.server, resource.uri))
        .filter(|mention| !mention.chars().any(|c| c.is_control() || c.is_whitespace()))
        .collect()
}

/// The project's files whose path starts with `prefix`, for Tab completion of `@prefix`.
pub fn complete(prefix: &str, registry: &ToolRegistry, context: &ToolContext) -> Vec<String> {
    let (dir, _) = prefix.rsplit_once('/').unwrap_or(("", prefix));
    let base = if dir.is_empty() { "." } else { dir };
    let Ok(listing) = registry.invoke(
        "list_files",
        &json!({"pattern": "*", "path": base}),
        context,
    ) else {
        return Vec::new();
    };
    let mut found: Vec<String> = (listing["files"].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .map(|file| file.trim_start_matches("./").to_owned())
        .filter(|file| file.starts_with(prefix))
        .collect();
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use ybs_tools::{PathSandbox, ShellPolicy};

    use super::*;

    fn context(dir: &std::path::Path) -> ToolContext {
        let sandbox = PathSandbox::new([dir.display().to_string()], Vec::<String>::new()).unwrap();
        let mut context = ToolContext::new(sandbox, ShellPolicy::default()).unwrap();
        context.set_working_dir(dir).unwrap();
        context
    }

    #[test]
    fn mentions_are_words_that_start_with_at() {
        assert_eq!(
            mentions("see @src/a.rs, and @docs/ but not me@x.org or @"),
            ["src/a.rs", "docs/"]
        );
    }

    #[test]
    fn files_and_listings_are_attached_and_the_sandbox_holds() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        std::fs::write(dir.path().join("d/x.txt"), "secret sauce\n").unwrap();
        let (registry, context) = (ToolRegistry::new(), context(dir.path()));
        let (text, unattached) = expand("look at @d/x.txt", &registry, &context);
        assert!(unattached.is_empty(), "{unattached:?}");
        assert!(
            text.starts_with("look at @d/x.txt\n\n<file path=\"d/x.txt\">\n"),
            "{text}"
        );
        assert!(text.contains("secret sauce"), "{text}");
        let (listing, _) = expand("what is in @d/", &registry, &context);
        assert!(listing.contains("x.txt"), "{listing}");
        let (sent, errors) = expand("@/etc/passwd", &registry, &context);
        assert_eq!(
            sent, "@/etc/passwd",
            "nothing outside the sandbox is attached"
        );
        assert!(
            errors[0].starts_with("cannot attach @/etc/passwd: "),
            "{errors:?}"
        );
        let (sent, errors) = expand("fix @nope.txt and @d/x.txt", &registry, &context);
        assert!(
            errors[0].starts_with("cannot attach @nope.txt"),
            "{errors:?}"
        );
        assert!(errors[0].ends_with("; sent without it"), "{errors:?}");
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(sent.starts_with("fix @nope.txt and @d/x.txt\n\n<file path=\"d/x.txt\">"));
        assert_eq!(complete("d/", &registry, &context), ["d/x.txt"]);
    }
}
