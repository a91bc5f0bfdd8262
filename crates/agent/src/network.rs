//! A call of a tool that uses the network only when asked ([`NetworkUse::WhenAsked`], as
//! `run_shell` does) that asks for it (`network: true`, with a `reason`): refused
//! when `safety.network` is `off`, a question for the user when it is `ask` (rules and the
//! approval mode settle it as for other calls), an ordinary command when it is `on`. The
//! command then runs with the network and every other layer of the sandbox.

use serde_json::Value;
use ybs_core::ToolCall;
use ybs_tools::NetworkUse;

use crate::config::Network;

/// The most characters of the model's reason shown in the question.
const REASON_CHARS: usize = 200;

/// Whether `call`, of a tool whose network use is `declared`, asks for the network (only a
/// JSON `true` does, as for the tool).
pub fn asks(call: &ToolCall, declared: NetworkUse) -> bool {
    declared == NetworkUse::WhenAsked && call.arguments.get("network") == Some(&Value::Bool(true))
}

/// What the user is asked about a call that asks for the network while `setting` is `ask`:
/// the model's reason on one line, cut short; `None` for other calls and settings.
pub fn question(call: &ToolCall, declared: NetworkUse, setting: Network) -> Option<String> {
    if setting != Network::Ask || !asks(call, declared) {
        return None;
    }
    let given = call.arguments.get("reason").and_then(Value::as_str);
    let words: Vec<&str> = given.unwrap_or("").split_whitespace().collect();
    let mut reason: String = words.join(" ");
    if reason.chars().count() > REASON_CHARS {
        reason = reason.chars().take(REASON_CHARS).collect::<String>() + "…";
    }
    Some(if reason.is_empty() {
        "it asks for the network and gives no reason (safety.network: ask)".to_owned()
    } else {
        format!("it asks for the network: \"{reason}\" (safety.network: ask)")
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// How `run_shell` uses the network.
    const SHELL: NetworkUse = NetworkUse::WhenAsked;

    fn call(args: Value) -> ToolCall {
        ToolCall::new("c", "run_shell", args)
    }

    #[test]
    fn only_a_true_network_asks_and_the_reason_is_one_short_line() {
        assert!(!asks(&call(json!({"command": "ls"})), SHELL));
        assert!(!asks(
            &call(json!({"command": "ls", "network": "true"})),
            SHELL
        ));
        let read = ToolCall::new("c", "read_file", json!({"network": true}));
        assert!(!asks(&read, NetworkUse::Never));
        let asking = call(json!({"command": "cargo fetch", "network": true,
                                 "reason": "download\nthe   crates"}));
        assert!(asks(&asking, SHELL));
        assert_eq!(
            question(&asking, SHELL, Network::Ask).as_deref(),
            Some("it asks for the network: \"download the crates\" (safety.network: ask)")
        );
        assert_eq!(question(&asking, SHELL, Network::On), None);
        let long = call(json!({"command": "x", "network": true, "reason": "y".repeat(500)}));
        let text = question(&long, SHELL, Network::Ask).unwrap_or_default();
        assert!(
            text.contains(&format!("{}…\"", "y".repeat(REASON_CHARS))),
            "{text}"
        );
        let bare = call(json!({"command": "x", "network": true}));
        assert!(
            (question(&bare, SHELL, Network::Ask).unwrap_or_default()).contains("gives no reason")
        );
    }
}
