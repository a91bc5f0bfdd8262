//! The tool lines of a chat file for `ybs ask`: `tool:` picks the tools the model is offered,
//! `mcp:` connects a server and offers its tools, and `task:`, `inline_task:` and `exec_task:`
//! run a tool before the model is asked, their output placed where the line stood.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Map, Value, json};
use ybs_chatfile::{ExpandedMessage, Expansion, ToolRequest, ToolRequestKind};
use ybs_core::ToolCall;
use ybs_tools::Confirmation;

use ybs_agent::Agent;
use ybs_agent::config::Config;
use ybs_agent::confirm::Settle;
use ybs_agent::mcp::{self, McpFailure};
use ybs_agent::setup;

/// Drops the configured MCP servers none of whose tools the chat names in a `tool:` line, so
/// `ask` does not start servers only to hide their tools.
pub fn keep_named_servers(expansion: &Expansion, config: &mut Config) {
    let named: Vec<&str> = requests(expansion, &[ToolRequestKind::Tool])
        .flat_map(|request| request.args.iter().map(String::as_str))
        .collect();
    (config.mcp.servers).retain(|server, _| {
        let prefix = mcp::tool_prefix(server);
        named.iter().any(|name| name.starts_with(&prefix))
    });
}

/// Connects the chat's `mcp:` servers and leaves enabled only the tools the chat offers: those
/// of its `tool:` lines and of its servers. Servers that fail are returned, not fatal; a line
/// that names no server is an error naming the line.
pub fn offer_tools(
    expansion: &Expansion,
    agent: &mut Agent,
    cwd: &Path,
) -> Result<Vec<McpFailure>, String> {
    let mut specs = Vec::new();
    let mut taken = BTreeSet::new();
    for request in requests(expansion, &[ToolRequestKind::Mcp]) {
        let mut spec = mcp::from_chat_line(&request.args, cwd)
            .map_err(|error| format!("{}: {error}", request.source))?;
        // Two servers of one host or program still get distinct prefixes.
        let base = spec.name.clone();
        let mut n = 1;
        while !taken.insert(spec.name.clone()) {
            n += 1;
            spec.name = format!("{base}{n}");
        }
        specs.push(spec);
    }
    let before: BTreeSet<String> = agent.registry.names().into_iter().collect();
    let (servers, failures) = setup::connect_mcp(specs, &mut agent.registry, &mut agent.policy);
    agent.mcp.extend(servers);
    // Every word of a `tool:` line names a tool; a name ybs does not have is an error.
    let known = agent.registry.names();
    let mut named: Vec<&str> = Vec::new();
    for request in requests(expansion, &[ToolRequestKind::Tool]) {
        for word in &request.args {
            if !known.contains(word) {
                return Err(format!(
                    "{}: unknown tool `{word}`; ybs has {}",
                    request.source,
                    known.join(", ")
                ));
            }
            named.push(word);
        }
    }
    for name in agent.registry.names() {
        let from_chat_server = !before.contains(&name);
        let on = from_chat_server || named.contains(&name.as_str());
        agent.registry.set_enabled(&name, on);
    }
    Ok(failures)
}

/// Runs the chat's tasks in file order and puts their output into the conversation: a
/// `task` as a tool call and its result, an `exec_task` as a user message, an `inline_task`
/// as a file. Calls that need confirmation are settled like the model's; a task that fails
/// or is refused is an error naming its line.
///
/// A task runs its tool whether or not a `tool:` line offers it to the model, as long as the
/// configuration enables it (`configured`: the tools enabled before the chat chose).
pub fn run_tasks(
    expansion: &mut Expansion,
    agent: &mut Agent,
    configured: &[String],
) -> Result<(), String> {
    let kinds = [
        ToolRequestKind::Task,
        ToolRequestKind::InlineTask,
        ToolRequestKind::ExecTask,
    ];
    let tasks: Vec<ToolRequest> = requests(expansion, &kinds).cloned().collect();
    let mut outputs = Vec::new();
    for (index, task) in tasks.iter().enumerate() {
        let at = &task.source;
        let (name, arguments) = task_call(&task.args).map_err(|error| format!("{at}: {error}"))?;
        let call = ToolCall::new(format!("task_{index}"), name.clone(), arguments);
        if let Confirmation::Required { reason } = (agent.policy).check(
            &name,
            &agent.registry.declaration(&name),
            &call.arguments,
            &agent.tool_context,
        ) {
            match agent.settings.confirm.settle(&name, true) {
                Settle::Run => {}
                Settle::Deny(_) | Settle::Ask => {
                    return Err(format!(
                        "{at}: task `{name}` needs confirmation ({reason}); run `ybs ask --yes` \
                         to allow it"
                    ));
                }
            }
        }
        let offered = agent.registry.is_enabled(&name);
        agent
            .registry
            .set_enabled(&name, offered || configured.contains(&name));
        let result = agent.registry.invoke_call(&call, &agent.tool_context);
        agent.registry.set_enabled(&name, offered);
        if result.is_error {
            return Err(format!("{at}: task `{name}` failed: {}", result.content));
        }
        outputs.push(task_messages(task, &call, &result.content));
    }
    // Inserted from the last so the earlier positions still hold.
    for (task, messages) in tasks.iter().zip(outputs).rev() {
        let position = task.position.min(expansion.messages.len());
        expansion.messages.splice(position..position, messages);
    }
    Ok(())
}

fn requests<'a>(
    expansion: &'a Expansion,
    kinds: &'a [ToolRequestKind],
) -> impl Iterator<Item = &'a ToolRequest> {
    (expansion.tools.iter()).filter(move |request| kinds.contains(&request.kind))
}

/// `TOOL [key=value...]`: the tool and its arguments, each value JSON when it parses as JSON
/// (`n=2`, `flag=true`, `list=[1,2]`) and a string otherwise.
fn task_call(words: &[String]) -> Result<(String, Value), String> {
    let (name, rest) = words
        .split_first()
        .ok_or_else(|| "a task needs a tool name: `task: TOOL key=value...`".to_owned())?;
    let mut arguments = Map::new();
    for word in rest {
        let (key, value) = word.split_once('=').ok_or_else(|| {
            format!(
                "`{word}` is not key=value; ybs runs tools, not Scout workflows: \
                 `task: TOOL key=value...`"
            )
        })?;
        let value = serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.into()));
        arguments.insert(key.to_owned(), value);
    }
    Ok((name.clone(), Value::Object(arguments)))
}

fn task_messages(task: &ToolRequest, call: &ToolCall, output: &str) -> Vec<ExpandedMessage> {
    let message = |role: &str, content: String| ExpandedMessage {
        role: role.to_owned(),
        content,
        source: task.source.clone(),
    };
    match task.kind {
        ToolRequestKind::ExecTask => vec![message("user", output.to_owned())],
        ToolRequestKind::InlineTask => vec![message(
            "user",
            format!("<file name=\"{}\">\n{output}\n</file>", call.name),
        )],
        _ => vec![
            message(
                "function_call",
                json!({"name": call.name, "arguments": call.arguments, "id": call.id}).to_string(),
            ),
            message(
                "function_call_output",
                json!({"id": call.id, "content": output}).to_string(),
            ),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn task_values_are_json_when_they_parse_and_text_otherwise() {
        let (name, arguments) =
            task_call(&words("list_files path=src recursive=true n=2")).unwrap();
        assert_eq!(name, "list_files");
        assert_eq!(arguments, json!({"path": "src", "recursive": true, "n": 2}));
    }

    #[test]
    fn a_workflow_task_says_what_ybs_runs_instead() {
        assert_eq!(
            task_call(&words("Baking bake")).unwrap_err(),
            "`bake` is not key=value; ybs runs tools, not Scout workflows: `task: TOOL key=value...`"
        );
        assert_eq!(
            task_call(&[]).unwrap_err(),
            "a task needs a tool name: `task: TOOL key=value...`"
        );
    }
}
