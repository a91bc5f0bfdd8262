//! Session modes: how ybs settles the calls that need approval, chosen in the editor
//! (`session/set_mode`). Until approval modes and plan mode land, these are the three
//! confirmation modes ybs has: ask (the editor is asked), auto (like `exec --yes`) and refuse
//! (like `exec` without `--yes`: nobody is asked, such calls are refused).

use agent_client_protocol::v1::schema::{SessionMode, SessionModeState};

use crate::agent::confirm::ConfirmMode;

/// Each mode's id, name and description, in the order the editor lists them.
const MODES: [(ConfirmMode, &str, &str, &str); 3] = [
    (
        ConfirmMode::Ask,
        "ask",
        "Ask",
        "Ask before edits, commands and untrusted tools",
    ),
    (
        ConfirmMode::AssumeYes,
        "auto",
        "Auto",
        "Allow every call without asking (the sandbox still applies)",
    ),
    (
        ConfirmMode::Deny,
        "refuse",
        "Refuse",
        "Refuse the calls that need approval without asking (read-only in practice)",
    ),
];

/// The mode of `id`.
pub fn parse(id: &str) -> Option<ConfirmMode> {
    (MODES.iter())
        .find(|(_, mode_id, _, _)| *mode_id == id)
        .map(|(mode, ..)| *mode)
}

/// The id of `mode`.
pub fn id(mode: ConfirmMode) -> &'static str {
    (MODES.iter())
        .find(|(each, ..)| *each == mode)
        .map_or("ask", |(_, id, ..)| id)
}

/// The modes with `current` selected.
pub fn state(current: ConfirmMode) -> SessionModeState {
    let modes = (MODES.iter())
        .map(|(_, id, name, description)| {
            SessionMode::new(*id, *name).description(description.to_string())
        })
        .collect();
    SessionModeState::new(id(current), modes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_round_trips_through_its_id() {
        for (mode, ..) in MODES {
            assert_eq!(parse(id(mode)), Some(mode));
        }
        assert_eq!(parse("yolo"), None);
        let state = state(ConfirmMode::Deny);
        assert_eq!(&*state.current_mode_id.0, "refuse");
        assert_eq!(state.available_modes.len(), 3);
    }
}
