//! The prompts of the connected MCP servers as commands: `/SERVER:PROMPT ARGS` gets the
//! prompt with its arguments (in order, or `name=value`) and sends its messages as the
//! user's turn. `/help` lists them.

use std::collections::BTreeMap;

use ybs_agent::mcp::{McpServers, PromptInfo};

/// The message of `/SERVER:PROMPT ARGS`; `None` when `text` names no prompt of a server
/// (a plain command or message), an error in words when its arguments do not fit or the
/// server fails.
pub fn invoke(text: &str, servers: &McpServers) -> Option<Result<String, String>> {
    let line = text.trim();
    let command = line.strip_prefix('/')?;
    if command.starts_with('/') {
        return None;
    }
    let (name, rest) = command
        .split_once(char::is_whitespace)
        .unwrap_or((command, ""));
    let (server, prompt) = name.split_once(':')?;
    let prompts = servers.prompts();
    let info = (prompts.iter()).find(|info| info.server == server && info.name == prompt)?;
    Some(
        arguments(info, rest)
            .and_then(|arguments| {
                (servers.get_prompt(server, prompt, &arguments)).map_err(|e| e.to_string())
            })
            .map(|messages| {
                (messages.into_iter())
                    .map(|(_, text)| text)
                    .collect::<Vec<_>>()
                    .join("\n\n")
            }),
    )
}

/// The arguments of `rest` by name: `name=value` words for the arguments the prompt has,
/// the other words in the order of its arguments; a required one missing is an error.
fn arguments(info: &PromptInfo, rest: &str) -> Result<BTreeMap<String, String>, String> {
    let usage = usage(info);
    let words = shell_words::split(rest)
        .map_err(|error| format!("cannot split the arguments: {error}; usage: {usage}"))?;
    let mut named = BTreeMap::new();
    let mut positional = Vec::new();
    for word in words {
        match word.split_once('=') {
            Some((key, value)) if info.arguments.iter().any(|(name, _)| name == key) => {
                named.insert(key.to_owned(), value.to_owned());
            }
            _ => positional.push(word),
        }
    }
    let mut positional = positional.into_iter();
    for (name, _) in &info.arguments {
        if named.contains_key(name) {
            continue;
        }
        match positional.next() {
            Some(value) => {
                named.insert(name.clone(), value);
            }
            None => break,
        }
    }
    if positional.next().is_some() {
        return Err(format!("too many arguments; usage: {usage}"));
    }
    if let Some((missing, _)) =
        (info.arguments.iter()).find(|(name, required)| *required && !named.contains_key(name))
    {
        return Err(format!("`{missing}` is required; usage: {usage}"));
    }
    Ok(named)
}

/// `/server:prompt FILE [FOCUS]`.
fn usage(info: &PromptInfo) -> String {
    let mut text = format!("/{}:{}", info.server, info.name);
    for (name, required) in &info.arguments {
        let name = name.to_uppercase();
        if *required {
            text.push_str(&format!(" {name}"));
        } else {
            text.push_str(&format!(" [{name}]"));
        }
    }
    text
}

/// The lines `/help` adds: each prompt with its usage and description.
pub fn help_lines(servers: &McpServers) -> Vec<String> {
    let prompts = servers.prompts();
    if prompts.is_empty() {
        return Vec::new();
    }
    let mut lines = vec!["Prompts of MCP servers (arguments in order or NAME=VALUE):".to_owned()];
    for info in &prompts {
        let what = info.description.as_deref().unwrap_or_default();
        lines.push(format!("  {}  {what}", usage(info)));
    }
    lines
}

/// The names Tab completes after `/`: `server:prompt`.
pub fn names(servers: &McpServers) -> Vec<String> {
    (servers.prompts().into_iter())
        .map(|info| format!("{}:{}", info.server, info.name))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn review() -> PromptInfo {
        PromptInfo {
            server: "docs".into(),
            name: "review".into(),
            description: None,
            arguments: vec![("file".into(), true), ("focus".into(), false)],
        }
    }

    #[test]
    fn arguments_go_by_position_and_by_name() {
        let by_position = arguments(&review(), "a.rs 'error handling'").unwrap();
        assert_eq!(by_position["file"], "a.rs");
        assert_eq!(by_position["focus"], "error handling");
        let by_name = arguments(&review(), "focus=speed a.rs").unwrap();
        assert_eq!(by_name["file"], "a.rs");
        assert_eq!(by_name["focus"], "speed");
    }

    #[test]
    fn a_missing_required_argument_or_one_too_many_is_said() {
        assert_eq!(
            arguments(&review(), "").unwrap_err(),
            "`file` is required; usage: /docs:review FILE [FOCUS]"
        );
        assert_eq!(
            arguments(&review(), "a b c").unwrap_err(),
            "too many arguments; usage: /docs:review FILE [FOCUS]"
        );
    }
}
