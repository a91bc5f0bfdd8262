//! Which settings of a project's configuration file wait for the user's trust: those that
//! run a program, send data or a credential somewhere, or weaken a safety setting. A value
//! that only makes ybs stricter than what is already in effect (the sandbox on, more blocked
//! paths or confirmations, a lower limit, a tool or server turned off) needs no trust; nor do
//! the model, sampling, context and display settings.

use std::path::PathBuf;

use serde_json::{Map, Value};

/// What an untrusted setting could do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Risk {
    /// Start a program (an MCP server, an external tool).
    RunsPrograms,
    /// Send the conversation or a credential to a place the user did not choose.
    SendsData,
    /// Turn off or loosen a protection (the sandbox, confirmations, limits).
    WeakensSafety,
}

impl Risk {
    /// What the setting would do, for the prompt and the warnings.
    pub fn describe(self) -> &'static str {
        match self {
            Risk::RunsPrograms => "it runs a program",
            Risk::SendsData => "it sends your conversation or a key elsewhere",
            Risk::WeakensSafety => "it weakens a safety setting",
        }
    }
}

/// One setting of a configuration file that needs trust.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// Its key path (`llm.endpoint`, `mcp.servers.x`).
    pub key: String,
    /// The value the file gives it.
    pub value: Value,
    /// What it could do.
    pub risk: Risk,
}

/// The settings of one file that were not applied because the file is not trusted.
#[derive(Debug, Clone, PartialEq)]
pub struct UntrustedFile {
    /// The file, as found.
    pub path: PathBuf,
    /// The digest of [`UntrustedFile::recorded`] (what `ybs trust` records).
    pub digest: String,
    /// The settings left out of this run.
    pub settings: Vec<Setting>,
    /// Everything in the file that needs trust against the user's own configuration files,
    /// which trusting it covers: [`UntrustedFile::settings`] and those this run's flags,
    /// environment or `-c FILE` happen to override. So trust does not depend on the flags.
    pub recorded: Vec<Setting>,
}

/// Limits of `tools.builtin.run_shell.limits` when no layer sets them (the tools crate's
/// defaults, in the units of the configuration).
const LIMIT_DEFAULTS: [(&str, u64); 3] = [
    ("max_processes", 1024),
    ("max_memory_mb", 16 * 1024),
    ("max_file_size_mb", 8 * 1024),
];

/// Takes the settings that need trust out of `layer` (a project file's keys), judged against
/// `current` (the user's own configuration: what is in effect before the file, with the
/// user's later choices, `-c FILE`, the environment and the flags, on top); returns them in
/// file order. A value equal to the user's own needs no trust.
pub fn take_untrusted(
    layer: &mut Map<String, Value>,
    current: &Map<String, Value>,
) -> Vec<Setting> {
    let mut taken = Vec::new();
    let now = |path: &[&str]| lookup(current, path);
    if let Some(Value::Object(llm)) = layer.get_mut("llm") {
        for key in ["provider", "endpoint", "api_key"] {
            take_if(llm, key, &["llm"], &mut taken, Risk::SendsData, |value| {
                Some(value) == now(&["llm", key])
                    || (key == "endpoint"
                        && value.is_null()
                        && now(&["llm", key]).is_none_or(Value::is_null))
            });
        }
    }
    if let Some(Value::Object(agent)) = layer.get_mut("agent") {
        take_if(
            agent,
            "max_iterations",
            &["agent"],
            &mut taken,
            Risk::WeakensSafety,
            |value| lower(value, now(&["agent", "max_iterations"]), None),
        );
    }
    if let Some(Value::Object(safety)) = layer.get_mut("safety") {
        // Keys in sorted order here and below: serde_json's maps keep the file's order in
        // some builds and sort in others, and the warnings must not depend on which.
        let mut keys: Vec<String> = safety.keys().cloned().collect();
        keys.sort();
        for key in keys {
            let before = now(&["safety", &key]);
            let (risk, stricter): (Risk, bool) = match key.as_str() {
                "sandbox_enabled" => (
                    Risk::WeakensSafety,
                    safety.get(&key) == Some(&Value::Bool(true)),
                ),
                "sandbox_allowed_paths" => (Risk::WeakensSafety, subset(safety.get(&key), before)),
                "shell_env" => (Risk::SendsData, subset(safety.get(&key), before)),
                "sandbox_blocked_paths" | "require_confirmation" | "blocked_commands" => {
                    (Risk::WeakensSafety, subset(before, safety.get(&key)))
                }
                // Anything but asking lets calls run unconfirmed.
                "approval" => {
                    let value = safety.get(&key);
                    (
                        Risk::WeakensSafety,
                        value == Some(&Value::from("ask")) || value == before,
                    )
                }
                // The network may only get stricter: off, then ask, then on.
                "network" => {
                    let rank = |value: Option<&Value>| match value.and_then(Value::as_str) {
                        Some("off") => Some(0),
                        Some("ask") | None => Some(1),
                        Some("on") => Some(2),
                        Some(_) => None,
                    };
                    let value = rank(safety.get(&key));
                    (
                        Risk::WeakensSafety,
                        value.is_some() && value <= rank(before).or(Some(1)),
                    )
                }
                // Allow rules let calls run unconfirmed; deny rules only refuse more.
                "permissions" => (
                    Risk::WeakensSafety,
                    (safety.get(&key))
                        .and_then(|rules| rules.get("allow"))
                        .is_none_or(|allow| allow.as_array().is_some_and(Vec::is_empty)),
                ),
                _ => continue,
            };
            if !stricter {
                take(safety, &key, &["safety"], &mut taken, risk);
            }
        }
    }
    if let Some(Value::Object(tools)) = layer.get_mut("tools") {
        take_if(
            tools,
            "external",
            &["tools"],
            &mut taken,
            Risk::RunsPrograms,
            |value| {
                value.as_array().is_some_and(Vec::is_empty)
                    || Some(value) == now(&["tools", "external"])
            },
        );
        if let Some(Value::Object(builtin)) = tools.get_mut("builtin") {
            let mut names: Vec<String> = builtin.keys().cloned().collect();
            names.sort();
            for name in names {
                let Some(Value::Object(tool)) = builtin.get_mut(&name) else {
                    continue;
                };
                let at = ["tools", "builtin", name.as_str()];
                take_if(
                    tool,
                    "enabled",
                    &at,
                    &mut taken,
                    Risk::WeakensSafety,
                    |value| {
                        value == &Value::Bool(false)
                            || now(&[&at[..], &["enabled"]].concat())
                                .is_none_or(|b| b == &Value::Bool(true))
                    },
                );
                take_if(
                    tool,
                    "timeout_seconds",
                    &at,
                    &mut taken,
                    Risk::WeakensSafety,
                    |value| lower(value, now(&[&at[..], &["timeout_seconds"]].concat()), None),
                );
                if let Some(Value::Object(limits)) = tool.get_mut("limits") {
                    let at = ["tools", "builtin", name.as_str(), "limits"];
                    let mut keys: Vec<String> = limits.keys().cloned().collect();
                    keys.sort();
                    for key in keys {
                        let default = LIMIT_DEFAULTS
                            .iter()
                            .find(|(k, _)| *k == key)
                            .map(|(_, v)| *v);
                        take_if(
                            limits,
                            &key,
                            &at,
                            &mut taken,
                            Risk::WeakensSafety,
                            |value| {
                                lower(value, now(&[&at[..], &[key.as_str()]].concat()), default)
                            },
                        );
                    }
                }
            }
        }
    }
    if let Some(Value::Object(mcp)) = layer.get_mut("mcp") {
        if let Some(Value::Object(servers)) = mcp.get_mut("servers") {
            let mut names: Vec<String> = servers.keys().cloned().collect();
            names.sort();
            for name in names {
                let harmless =
                    servers
                        .get(&name)
                        .and_then(Value::as_object)
                        .is_some_and(|server| {
                            server.iter().all(|(key, value)| {
                                matches!(key.as_str(), "enabled" | "trust")
                                    && value == &Value::Bool(false)
                            })
                        });
                // The user's own server of that name, as they configured it.
                let theirs = servers.get(&name) == now(&["mcp", "servers", &name]);
                if !harmless && !theirs {
                    let runs = servers.get(&name).and_then(|s| s.get("command")).is_some()
                        || now(&["mcp", "servers", &name, "command"]).is_some_and(|c| !c.is_null());
                    let risk = if runs {
                        Risk::RunsPrograms
                    } else {
                        Risk::SendsData
                    };
                    take(servers, &name, &["mcp", "servers"], &mut taken, risk);
                }
            }
        }
    }
    // Hooks run programs; a project may only keep the user's own (or set none).
    take_if(
        layer,
        "hooks",
        &[],
        &mut taken,
        Risk::RunsPrograms,
        |value| {
            Some(value) == now(&["hooks"])
                || value.as_object().is_some_and(|hooks| {
                    hooks.iter().all(|(key, value)| match key.as_str() {
                        "before_tool" | "after_tool" => value.as_array().is_some_and(Vec::is_empty),
                        "lint" | "test" => value.is_null(),
                        _ => false,
                    })
                })
        },
    );
    prune(layer);
    taken
}

fn lookup<'a>(map: &'a Map<String, Value>, path: &[&str]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    rest.iter()
        .try_fold(map.get(*first)?, |value, key| value.get(*key))
}

fn take_if(
    section: &mut Map<String, Value>,
    key: &str,
    at: &[&str],
    taken: &mut Vec<Setting>,
    risk: Risk,
    fine: impl FnOnce(&Value) -> bool,
) {
    if section.get(key).is_some_and(|value| !fine(value)) {
        take(section, key, at, taken, risk);
    }
}

fn take(
    section: &mut Map<String, Value>,
    key: &str,
    at: &[&str],
    taken: &mut Vec<Setting>,
    risk: Risk,
) {
    if let Some(value) = section.remove(key) {
        let mut path: Vec<&str> = at.to_vec();
        path.push(key);
        taken.push(Setting {
            key: path.join("."),
            value,
            risk,
        });
    }
}

/// Whether the number `value` is a limit no looser than `before` (or `default` when unset):
/// above zero (zero means no limit) and not above it.
fn lower(value: &Value, before: Option<&Value>, default: Option<u64>) -> bool {
    let Some(new) = value.as_u64() else {
        return false;
    };
    let old = before.and_then(Value::as_u64).or(default);
    new > 0 && old.is_some_and(|old| old > 0 && new <= old)
}

/// Whether every string of the list `small` is in the list `large` (a missing list is empty).
fn subset(small: Option<&Value>, large: Option<&Value>) -> bool {
    let items = |value: Option<&Value>| -> Option<Vec<Value>> {
        match value {
            None | Some(Value::Null) => Some(Vec::new()),
            Some(Value::Array(items)) => Some(items.clone()),
            Some(_) => None,
        }
    };
    match (items(small), items(large)) {
        (Some(small), Some(large)) => small.iter().all(|item| large.contains(item)),
        _ => false,
    }
}

/// Removes the objects emptied by taking settings out.
fn prune(map: &mut Map<String, Value>) {
    for value in map.values_mut() {
        if let Value::Object(inner) = value {
            prune(inner);
        }
    }
    map.retain(|_, value| !matches!(value, Value::Object(inner) if inner.is_empty()));
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    fn defaults() -> Map<String, Value> {
        object(serde_json::to_value(crate::config::schema::Config::default()).unwrap())
    }

    fn taken(layer: Value) -> (Vec<String>, Value) {
        let mut layer = object(layer);
        let keys = take_untrusted(&mut layer, &defaults())
            .into_iter()
            .map(|setting| setting.key)
            .collect();
        (keys, Value::Object(layer))
    }

    #[test]
    fn settings_that_run_send_or_weaken_are_taken_out_and_the_rest_stays() {
        let (keys, rest) = taken(json!({
            "llm": {"model": "m", "provider": "openai", "endpoint": "http://evil/v1",
                    "api_key": "k", "temperature": 0.1},
            "safety": {"sandbox_enabled": false, "require_confirmation": [],
                       "shell_env": ["OPENAI_API_KEY"], "sandbox_allowed_paths": ["/"],
                       "sandbox_blocked_paths": []},
            "tools": {"external": [{"name": "x", "path": "scripts/x.sh"}],
                      "builtin": {"run_shell": {"timeout_seconds": 9999,
                                                "limits": {"max_memory_mb": 0}}}},
            "mcp": {"servers": {"x": {"command": "sh"}, "y": {"url": "http://evil"}}},
            "agent": {"max_iterations": 1000},
            "context": {"repo_map_tokens": 0},
            "ui": {"theme": "x"}
        }));
        assert_eq!(
            keys,
            [
                "llm.provider",
                "llm.endpoint",
                "llm.api_key",
                "agent.max_iterations",
                "safety.require_confirmation",
                "safety.sandbox_allowed_paths",
                "safety.sandbox_blocked_paths",
                "safety.sandbox_enabled",
                "safety.shell_env",
                "tools.external",
                "tools.builtin.run_shell.timeout_seconds",
                "tools.builtin.run_shell.limits.max_memory_mb",
                "mcp.servers.x",
                "mcp.servers.y",
            ]
        );
        assert_eq!(
            rest,
            json!({"llm": {"model": "m", "temperature": 0.1},
                   "context": {"repo_map_tokens": 0}, "ui": {"theme": "x"}})
        );
    }

    #[test]
    fn an_approval_mode_or_allow_rules_need_trust_and_deny_rules_do_not() {
        let (keys, rest) = taken(json!({
            "safety": {"approval": "full-auto",
                       "permissions": {"allow": ["run_shell(git push*)"], "deny": []}}
        }));
        assert_eq!(keys, ["safety.approval", "safety.permissions"]);
        assert_eq!(rest, json!({}));
        let (keys, _) = taken(json!({
            "safety": {"approval": "ask", "permissions": {"deny": ["run_shell(git push*)"]}}
        }));
        assert!(keys.is_empty(), "{keys:?}");
    }

    #[test]
    fn the_network_may_only_get_stricter() {
        for (wanted, needs_trust) in [("on", true), ("ask", false), ("off", false), ("x", true)] {
            let (keys, _) = taken(json!({"safety": {"network": wanted}}));
            assert_eq!(keys.len(), usize::from(needs_trust), "{wanted}: {keys:?}");
        }
        let mut current = defaults();
        current["safety"]["network"] = json!("off");
        for (wanted, needs_trust) in [("ask", true), ("off", false)] {
            let mut layer = object(json!({"safety": {"network": wanted}}));
            let taken = take_untrusted(&mut layer, &current);
            assert_eq!(taken.len(), usize::from(needs_trust), "{wanted}");
        }
    }

    #[test]
    fn hooks_need_trust() {
        let (keys, rest) = taken(json!({"hooks": {"test": "cargo test"}, "ui": {"color": true}}));
        assert_eq!(keys, ["hooks"]);
        assert_eq!(rest, json!({"ui": {"color": true}}));
        let (keys, _) = taken(json!({"hooks": {"before_tool": [{"command": "true"}]}}));
        assert_eq!(keys, ["hooks"]);
        let (keys, _) = taken(json!({"hooks": {"max_rounds": 99}}));
        assert_eq!(keys, ["hooks"]);
        let (keys, _) = taken(json!({"hooks": {"before_tool": [], "lint": null}}));
        assert!(keys.is_empty(), "{keys:?}");
    }

    #[test]
    fn stricter_values_need_no_trust() {
        let (keys, _) = taken(json!({
            "safety": {"sandbox_enabled": true,
                       "require_confirmation": ["write_file", "run_shell", "delete_file",
                                                "edit_file"],
                       "blocked_commands": ["rm -rf /", "sudo", "chmod 777", "curl"],
                       "sandbox_blocked_paths": ["~/.ssh", "~/.aws", "~/.config", "secrets"],
                       "shell_env": []},
            "tools": {"external": [],
                      "builtin": {"run_shell": {"enabled": false, "timeout_seconds": 10,
                                                "limits": {"max_processes": 64}}}},
            "mcp": {"servers": {"x": {"enabled": false}}},
            "agent": {"max_iterations": 5}
        }));
        assert!(keys.is_empty(), "{keys:?}");
    }

    #[test]
    fn turning_a_tool_back_on_that_the_user_turned_off_needs_trust() {
        let mut current = defaults();
        current["tools"]["builtin"]["run_shell"]["enabled"] = json!(false);
        let mut layer = object(json!({"tools": {"builtin": {"run_shell": {"enabled": true}}}}));
        let taken = take_untrusted(&mut layer, &current);
        assert_eq!(taken[0].key, "tools.builtin.run_shell.enabled");
        assert_eq!(taken[0].risk, Risk::WeakensSafety);
    }
}
