//! Which settings of a project's configuration file wait for the user's trust. Settings are
//! judged by what they can do, against an allow-list: a setting needs no trust only when a
//! rule below says its value cannot run a program, send data or a credential somewhere, read
//! a file, or loosen a limit beyond the user's own configuration (the model, sampling,
//! context and display settings; a sandbox turned on, more blocked paths or confirmations, a
//! lower limit, a tool or server turned off). Any other setting of the schema needs trust,
//! whatever it is. A project never changes the user's own named endpoints, trusted or not.

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
    /// Give the model instructions it would follow as the user's (a skill).
    Instructs,
}

impl Risk {
    /// What the setting would do, for the prompt and the warnings.
    pub fn describe(self) -> &'static str {
        match self {
            Risk::RunsPrograms => "it runs a program",
            Risk::SendsData => "it sends your conversation or a key elsewhere",
            Risk::WeakensSafety => "it weakens a safety setting",
            Risk::Instructs => "it gives the model instructions as if from you",
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

/// How a project's value at a key is judged against the user's own.
#[derive(Debug, Clone, Copy)]
enum Judge {
    /// Whatever the value, it cannot run a program, send anything elsewhere, read a file or
    /// loosen a limit: the model's name, sampling, display, how much context is kept.
    Harmless,
    /// Only the user's own value needs no trust.
    Theirs(Risk),
    /// `llm.endpoint`: the user's own, or `null` where the user left it unset.
    Endpoint,
    /// A limit no looser than the user's (or the default of the limit named by the key).
    Limit,
    /// `true` only.
    OnlyOn,
    /// `false` only.
    OnlyOff,
    /// A list holding nothing the user's does not.
    FewerThanTheirs(Risk),
    /// A list holding everything the user's holds.
    MoreThanTheirs,
    /// `safety.approval`: `ask` or the user's own.
    Approval,
    /// `safety.network`: no looser than the user's (off, then ask, then on).
    Network,
    /// `safety.permissions`: deny rules only.
    DenyRulesOnly,
    /// `tools.external`: none, or the user's own.
    NoExternalTools,
    /// `tools.builtin.NAME.enabled`: off, or on where the user has it on.
    ToolEnabled,
    /// `mcp.servers.NAME`: turned off, or the user's own server as they configured it.
    McpServer,
    /// `hooks`: none, or the user's own.
    Hooks,
}

/// What each setting a project may set is judged by, in the order the settings are listed.
/// A key path's segments are matched one by one, `*` matching any; the first rule matching a
/// key judges its whole value. A setting of the schema that no rule names needs trust: a new
/// setting is safe to add, whatever it does, until it is judged here.
const RULES: &[(&str, Judge)] = &[
    ("version", Judge::Harmless),
    ("llm.provider", Judge::Theirs(Risk::SendsData)),
    ("llm.endpoint", Judge::Endpoint),
    ("llm.api_key", Judge::Theirs(Risk::SendsData)),
    // A named endpoint chooses where a chat that names it goes, and with which key.
    ("llm.endpoints.*", Judge::Theirs(Risk::SendsData)),
    ("llm.model", Judge::Harmless),
    ("llm.temperature", Judge::Harmless),
    ("llm.max_tokens", Judge::Harmless),
    ("llm.timeout_seconds", Judge::Harmless),
    ("llm.prompt_cache", Judge::Harmless),
    ("llm.reasoning_effort", Judge::Harmless),
    ("llm.prices", Judge::Harmless),
    ("context", Judge::Harmless),
    ("agent.max_iterations", Judge::Limit),
    ("agent.retry_attempts", Judge::Harmless),
    ("agent.retry_backoff_base_ms", Judge::Harmless),
    ("safety.allow_home_as_project", Judge::OnlyOff),
    ("safety.approval", Judge::Approval),
    ("safety.blocked_commands", Judge::MoreThanTheirs),
    ("safety.network", Judge::Network),
    ("safety.permissions", Judge::DenyRulesOnly),
    ("safety.require_confirmation", Judge::MoreThanTheirs),
    (
        "safety.sandbox_allowed_paths",
        Judge::FewerThanTheirs(Risk::WeakensSafety),
    ),
    ("safety.sandbox_blocked_paths", Judge::MoreThanTheirs),
    ("safety.sandbox_enabled", Judge::OnlyOn),
    ("safety.shell_env", Judge::FewerThanTheirs(Risk::SendsData)),
    ("tools.external", Judge::NoExternalTools),
    ("tools.builtin.*.enabled", Judge::ToolEnabled),
    ("tools.builtin.*.timeout_seconds", Judge::Limit),
    ("tools.builtin.*.limits.*", Judge::Limit),
    ("mcp.servers.*", Judge::McpServer),
    ("hooks", Judge::Hooks),
    // A language server's command is a program ybs starts.
    ("lsp.servers.*", Judge::Theirs(Risk::RunsPrograms)),
    ("lsp.enabled", Judge::OnlyOff),
    ("lsp.wait_seconds", Judge::Harmless),
    // Commits run git with the repository's hooks and filters turned off.
    ("git", Judge::Harmless),
    ("ui", Judge::Harmless),
];

/// Takes the settings that need trust out of `layer` (a project file's keys), judged against
/// `current` (the user's own configuration: what is in effect before the file, with the
/// user's later choices, `-c FILE`, the environment and the flags, on top); returns them in
/// the order of the rules, then by key. A value equal to the user's own needs no trust; a key
/// the schema does not have does nothing (it is reported as unknown) and needs none.
/// `schema` is the defaults as JSON, which tells the schema's keys from unknown ones.
pub fn take_untrusted(
    layer: &mut Map<String, Value>,
    current: &Map<String, Value>,
    schema: &Map<String, Value>,
) -> Vec<Setting> {
    let mut found = Vec::new();
    find_judged(layer, &mut Vec::new(), &mut found);
    found.sort();
    let mut taken = Vec::new();
    for (rule, path) in found {
        let keys: Vec<&str> = path.iter().map(String::as_str).collect();
        let Some(value) = lookup(layer, &keys) else {
            continue;
        };
        let risk = match RULES.get(rule) {
            Some((_, judge)) => judged(*judge, value, &keys, current),
            None if lookup(schema, &keys).is_none() => None,
            None => Some(unlisted_risk(&keys)),
        };
        if let Some(risk) = risk {
            take_path(layer, &keys, &mut taken, risk);
        }
    }
    prune(layer);
    taken
}

/// Removes from `layer` (a project file's keys) every named endpoint the user's own
/// configuration `current` defines with another value, and returns their names: a project may
/// not redirect an endpoint the user chose by name, even when trusted.
pub fn drop_changes_to_users_endpoints(
    layer: &mut Map<String, Value>,
    current: &Map<String, Value>,
) -> Vec<String> {
    let Some(Value::Object(theirs)) = lookup(current, &["llm", "endpoints"]) else {
        return Vec::new();
    };
    let Some(Value::Object(llm)) = layer.get_mut("llm") else {
        return Vec::new();
    };
    let Some(Value::Object(endpoints)) = llm.get_mut("endpoints") else {
        return Vec::new();
    };
    let changed: Vec<String> = (endpoints.iter())
        .filter(|(name, value)| theirs.get(*name).is_some_and(|own| own != *value))
        .map(|(name, _)| name.clone())
        .collect();
    for name in &changed {
        endpoints.remove(name);
    }
    changed
}

/// Collects each key of `map` a rule judges, with the rule's index (`RULES.len()` for a
/// value no rule names), descending into objects no rule names.
fn find_judged(
    map: &Map<String, Value>,
    path: &mut Vec<String>,
    found: &mut Vec<(usize, Vec<String>)>,
) {
    for (key, value) in map {
        path.push(key.clone());
        let rule = RULES.iter().position(|(at, _)| matches(at, path));
        match (rule, value) {
            (Some(rule), _) => found.push((rule, path.clone())),
            (None, Value::Object(inner)) => find_judged(inner, path, found),
            (None, _) => found.push((RULES.len(), path.clone())),
        }
        path.pop();
    }
}

/// Whether the key path `path` is the one `pattern` names.
fn matches(pattern: &str, path: &[String]) -> bool {
    let parts: Vec<&str> = pattern.split('.').collect();
    parts.len() == path.len()
        && (parts.iter().zip(path)).all(|(part, key)| *part == "*" || part == key)
}

/// What a setting of the schema that no rule judges could do, by its section.
fn unlisted_risk(path: &[&str]) -> Risk {
    match path.first().copied() {
        Some("llm") => Risk::SendsData,
        Some("mcp" | "hooks" | "tools") => Risk::RunsPrograms,
        _ => Risk::WeakensSafety,
    }
}

/// What `value` at `path` could do that the user's own configuration `current` does not;
/// `None` when it needs no trust.
fn judged(
    judge: Judge,
    value: &Value,
    path: &[&str],
    current: &Map<String, Value>,
) -> Option<Risk> {
    let now = lookup(current, path);
    let fine = |fine: bool, risk: Risk| (!fine).then_some(risk);
    match judge {
        Judge::Harmless => None,
        Judge::Theirs(risk) => fine(Some(value) == now, risk),
        Judge::Endpoint => fine(
            Some(value) == now || (value.is_null() && now.is_none_or(Value::is_null)),
            Risk::SendsData,
        ),
        Judge::Limit => {
            let default = (path.last())
                .and_then(|key| LIMIT_DEFAULTS.iter().find(|(name, _)| name == key))
                .filter(|_| path.len() == 5)
                .map(|(_, default)| *default);
            fine(lower(value, now, default), Risk::WeakensSafety)
        }
        Judge::OnlyOn => fine(value == &Value::Bool(true), Risk::WeakensSafety),
        Judge::OnlyOff => fine(value == &Value::Bool(false), Risk::WeakensSafety),
        Judge::FewerThanTheirs(risk) => fine(subset(Some(value), now), risk),
        Judge::MoreThanTheirs => fine(subset(now, Some(value)), Risk::WeakensSafety),
        // Anything but asking lets calls run unconfirmed.
        Judge::Approval => fine(
            value == &Value::from("ask") || Some(value) == now,
            Risk::WeakensSafety,
        ),
        Judge::Network => {
            let rank = |value: Option<&Value>| match value.and_then(Value::as_str) {
                Some("off") => Some(0),
                Some("ask") | None => Some(1),
                Some("on") => Some(2),
                Some(_) => None,
            };
            let wanted = rank(Some(value));
            fine(
                wanted.is_some() && wanted <= rank(now).or(Some(1)),
                Risk::WeakensSafety,
            )
        }
        // Allow rules let calls run unconfirmed; deny rules only refuse more.
        Judge::DenyRulesOnly => fine(
            (value.get("allow")).is_none_or(|allow| allow.as_array().is_some_and(Vec::is_empty)),
            Risk::WeakensSafety,
        ),
        Judge::NoExternalTools => fine(
            value.as_array().is_some_and(Vec::is_empty) || Some(value) == now,
            Risk::RunsPrograms,
        ),
        Judge::ToolEnabled => fine(
            value == &Value::Bool(false) || now.is_none_or(|on| on == &Value::Bool(true)),
            Risk::WeakensSafety,
        ),
        Judge::McpServer => {
            let off = value.as_object().is_some_and(|server| {
                server.iter().all(|(key, value)| {
                    matches!(key.as_str(), "enabled" | "trust") && value == &Value::Bool(false)
                })
            });
            let runs = value.get("command").is_some()
                || now
                    .and_then(|server| server.get("command"))
                    .is_some_and(|command| !command.is_null());
            let risk = if runs {
                Risk::RunsPrograms
            } else {
                Risk::SendsData
            };
            fine(off || Some(value) == now, risk)
        }
        // Hooks run programs; a project may only keep the user's own (or set none).
        Judge::Hooks => fine(
            Some(value) == now
                || value.as_object().is_some_and(|hooks| {
                    hooks.iter().all(|(key, value)| match key.as_str() {
                        "before_tool" | "after_tool" => value.as_array().is_some_and(Vec::is_empty),
                        "lint" | "test" => value.is_null(),
                        _ => false,
                    })
                }),
            Risk::RunsPrograms,
        ),
    }
}

fn lookup<'a>(map: &'a Map<String, Value>, path: &[&str]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    rest.iter()
        .try_fold(map.get(*first)?, |value, key| value.get(*key))
}

/// Moves the value at `path` out of `layer` into `taken`.
fn take_path(layer: &mut Map<String, Value>, path: &[&str], taken: &mut Vec<Setting>, risk: Risk) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut section = layer;
    for key in parents {
        match section.get_mut(*key) {
            Some(Value::Object(inner)) => section = inner,
            _ => return,
        }
    }
    if let Some(value) = section.remove(*last) {
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
mod tests;
