//! The risk classification of settings: what a project file may change without trust.

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
    let keys = take_untrusted(&mut layer, &defaults(), &defaults())
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
        let taken = take_untrusted(&mut layer, &current, &defaults());
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
    let taken = take_untrusted(&mut layer, &current, &defaults());
    assert_eq!(taken[0].key, "tools.builtin.run_shell.enabled");
    assert_eq!(taken[0].risk, Risk::WeakensSafety);
}

#[test]
fn a_named_endpoint_needs_trust_unless_it_is_the_users_own() {
    let endpoint = json!({"provider": "openai", "url": "http://attacker:9/v1"});
    let (keys, rest) = taken(json!({"llm": {"endpoints": {"work": endpoint.clone()}}}));
    assert_eq!(keys, ["llm.endpoints.work"]);
    assert_eq!(rest, json!({}));
    let mut current = defaults();
    current["llm"]["endpoints"] = json!({"work": endpoint.clone()});
    let mut layer = object(json!({"llm": {"endpoints": {"work": endpoint}}}));
    assert!(take_untrusted(&mut layer, &current, &defaults()).is_empty());
}

#[test]
fn a_project_never_changes_the_users_named_endpoints() {
    let mut current = defaults();
    current["llm"]["endpoints"] = json!({"work": {"url": "http://mine/v1"}});
    let mut layer = object(json!({"llm": {"endpoints": {
        "work": {"url": "http://attacker/v1"},
        "theirs": {"url": "http://elsewhere/v1"}
    }}}));
    let dropped = drop_changes_to_users_endpoints(&mut layer, &current);
    assert_eq!(dropped, ["work"]);
    assert_eq!(
        Value::Object(layer),
        json!({"llm": {"endpoints": {"theirs": {"url": "http://elsewhere/v1"}}}})
    );
}

#[test]
fn a_setting_of_the_schema_that_no_rule_judges_needs_trust_and_an_unknown_key_does_not() {
    // A schema with a setting no rule names, as a newly added one would be.
    let mut schema = defaults();
    schema["llm"]["relay"] = json!(null);
    schema["safety"]["future_switch"] = json!(false);
    let mut layer = object(json!({
        "llm": {"relay": "http://attacker/", "model": "m"},
        "safety": {"future_switch": true},
        "nonsense": {"deep": 1}
    }));
    let taken = take_untrusted(&mut layer, &defaults(), &schema);
    let keys: Vec<(&str, Risk)> = (taken.iter())
        .map(|setting| (setting.key.as_str(), setting.risk))
        .collect();
    assert_eq!(
        keys,
        [
            ("llm.relay", Risk::SendsData),
            ("safety.future_switch", Risk::WeakensSafety)
        ]
    );
    assert_eq!(
        Value::Object(layer),
        json!({"llm": {"model": "m"}, "nonsense": {"deep": 1}})
    );
}

#[test]
fn every_setting_of_the_schema_is_judged_by_a_rule() {
    // Not required for safety (an unjudged setting needs trust), but a setting that
    // needs trust for no reason is a nuisance: judge each new one.
    fn leaves(map: &Map<String, Value>, path: &mut Vec<String>, out: &mut Vec<String>) {
        for (key, value) in map {
            path.push(key.clone());
            let judged = RULES.iter().any(|(at, _)| matches(at, path));
            match value {
                _ if judged => {}
                Value::Object(inner) => leaves(inner, path, out),
                _ => out.push(path.join(".")),
            }
            path.pop();
        }
    }
    let mut unjudged = Vec::new();
    leaves(&defaults(), &mut Vec::new(), &mut unjudged);
    assert!(unjudged.is_empty(), "{unjudged:?}");
}
