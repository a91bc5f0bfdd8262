//! Rules on values that their types cannot express.

use serde_json::Value;

use super::error::ConfigError;
use super::schema::{Config, EXTERNAL_TOOL_KIND};
use super::source::Sources;

/// Checks `config`; the error names the key, its value and where it was set.
pub fn validate(config: &Config, sources: &Sources) -> Result<(), ConfigError> {
    let fail = |key: &str, value: Value, rule: &str| ConfigError::Invalid {
        key: key.to_owned(),
        value: value.to_string(),
        origin: sources.of(key).clone(),
        rule: rule.to_owned(),
    };
    let llm = &config.llm;
    if llm.provider.trim().is_empty() {
        return Err(fail(
            "llm.provider",
            llm.provider.clone().into(),
            "name a provider, such as \"ollama\"",
        ));
    }
    if llm.model.trim().is_empty() {
        return Err(fail("llm.model", llm.model.clone().into(), "name a model"));
    }
    if !(0.0..=2.0).contains(&llm.temperature) {
        return Err(fail(
            "llm.temperature",
            llm.temperature.into(),
            "it must be between 0 and 2",
        ));
    }
    for (key, value) in [
        ("llm.max_tokens", llm.max_tokens.map_or(1, u64::from)),
        ("llm.timeout_seconds", llm.timeout_seconds),
        ("context.max_tokens", config.context.max_tokens.unwrap_or(1)),
        (
            "agent.max_iterations",
            u64::from(config.agent.max_iterations),
        ),
    ] {
        if value == 0 {
            return Err(fail(key, value.into(), "it must be at least 1"));
        }
    }
    let threshold = config.context.compaction_threshold;
    if !(threshold > 0.0 && threshold <= 1.0) {
        return Err(fail(
            "context.compaction_threshold",
            threshold.into(),
            "it must be above 0 and at most 1 (a fraction of context.max_tokens)",
        ));
    }
    for (index, tool) in config.tools.external.iter().enumerate() {
        let key = |field: &str| format!("tools.external[{index}].{field}");
        if tool.name.trim().is_empty() {
            return Err(fail(
                &key("name"),
                tool.name.clone().into(),
                "every external tool needs a name",
            ));
        }
        if tool.kind != EXTERNAL_TOOL_KIND {
            return Err(fail(
                &key("type"),
                tool.kind.clone().into(),
                "the only type is \"executable\"",
            ));
        }
        if tool.path.trim().is_empty() {
            return Err(fail(
                &key("path"),
                tool.path.clone().into(),
                "name the tool's executable",
            ));
        }
        if config.tools.external[..index]
            .iter()
            .any(|other| other.name == tool.name)
        {
            return Err(fail(
                &key("name"),
                tool.name.clone().into(),
                "another external tool has this name",
            ));
        }
    }
    if let Some((key, first, second)) = config.ui.keys.conflict() {
        // Name the action the user configured: the other may be a default.
        let named = match config.ui.keys.configured(first) {
            Some(_) => first,
            None => second,
        };
        let path = format!("ui.keys.{}", named.name());
        let rule = format!(
            "{key} is bound to both {} and {}; give each key one action",
            first.name(),
            second.name()
        );
        return Err(fail(&path, Value::String(key.to_string()), &rule));
    }
    for (name, server) in &config.mcp.servers {
        if server.command.is_some() == server.url.is_some() {
            let key = format!("mcp.servers.{name}");
            return Err(fail(
                &key,
                Value::String(name.clone()),
                "an MCP server needs exactly one of \"command\" (stdio) or \"url\" (HTTP)",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::schema::{ExternalTool, McpServer};
    use crate::config::source::Source;

    fn check(config: &Config) -> Result<(), String> {
        let mut sources = Sources::default();
        sources.set("llm.temperature", Source::File("/p/.ybs.json".into()));
        validate(config, &sources).map_err(|err| err.to_string())
    }

    #[test]
    fn the_defaults_are_valid() {
        assert_eq!(check(&Config::default()), Ok(()));
    }

    #[test]
    #[allow(clippy::unwrap_used)]
    fn a_key_bound_to_two_actions_names_the_configured_one() {
        let mut config = Config::default();
        config.ui.keys.submit = Some(crate::config::Keys::One("ctrl-j".parse().unwrap()));
        assert_eq!(
            check(&config),
            Err(
                "ui.keys.submit = \"ctrl-j\" (from default) is invalid: ctrl-j is bound to \
                 both submit and newline; give each key one action"
                    .to_owned()
            )
        );
    }

    #[test]
    fn out_of_range_values_name_key_value_and_source() {
        let mut config = Config::default();
        config.llm.temperature = 2.5;
        assert_eq!(
            check(&config),
            Err(
                "llm.temperature = 2.5 (from /p/.ybs.json) is invalid: it must be between 0 and 2"
                    .into()
            )
        );
        let mut config = Config::default();
        config.context.compaction_threshold = 0.0;
        assert_eq!(
            check(&config),
            Err(
                "context.compaction_threshold = 0.0 (from default) is invalid: it must be above 0 \
                 and at most 1 (a fraction of context.max_tokens)"
                    .into()
            )
        );
        let mut config = Config::default();
        config.agent.max_iterations = 0;
        assert_eq!(
            check(&config),
            Err("agent.max_iterations = 0 (from default) is invalid: it must be at least 1".into())
        );
        let mut config = Config::default();
        config.llm.model = " ".into();
        assert_eq!(
            check(&config),
            Err("llm.model = \" \" (from default) is invalid: name a model".into())
        );
    }

    #[test]
    fn external_tools_need_a_name_an_executable_and_a_unique_name() {
        let tool = ExternalTool {
            name: "w".into(),
            path: "/bin/w".into(),
            ..ExternalTool::default()
        };
        let mut config = Config::default();
        config.tools.external = vec![
            tool.clone(),
            ExternalTool {
                path: String::new(),
                ..tool.clone()
            },
        ];
        assert_eq!(
            check(&config),
            Err("tools.external[1].path = \"\" (from default) is invalid: name the tool's executable".into())
        );
        config.tools.external = vec![tool.clone(), tool.clone()];
        assert_eq!(
            check(&config),
            Err("tools.external[1].name = \"w\" (from default) is invalid: another external tool has this name".into())
        );
        config.tools.external = vec![ExternalTool {
            kind: "docker".into(),
            ..tool
        }];
        assert_eq!(
            check(&config),
            Err("tools.external[0].type = \"docker\" (from default) is invalid: the only type is \"executable\"".into())
        );
    }

    #[test]
    fn mcp_servers_need_exactly_one_transport() {
        let mut config = Config::default();
        config
            .mcp
            .servers
            .insert("git".into(), McpServer::default());
        assert_eq!(
            check(&config),
            Err(
                "mcp.servers.git = \"git\" (from default) is invalid: an MCP server needs exactly \
                 one of \"command\" (stdio) or \"url\" (HTTP)"
                    .into()
            )
        );
    }
}
