//! Session modes, chosen in the editor (`session/set_mode`): ybs's approval modes (what runs
//! without asking the editor: `ask`, `auto-edit`, `full-auto`, as `safety.approval` and
//! `/approval`) and plan mode (the model only reads and proposes a plan, as `/plan`).

use agent_client_protocol::v1::schema::{SessionMode, SessionModeState};

use ybs_agent::config::Approval;

/// A session's mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Acting, with calls settled by this approval mode.
    Act(Approval),
    /// Plan mode: only reading tools run, the reply is a plan.
    Plan,
}

/// Each mode's id, name and description, in the order the editor lists them.
const MODES: [(Mode, &str, &str, &str); 4] = [
    (
        Mode::Act(Approval::Ask),
        "ask",
        "Ask",
        "Ask before edits, commands and untrusted tools",
    ),
    (
        Mode::Act(Approval::AutoEdit),
        "auto-edit",
        "Auto-edit",
        "Edit files inside the project without asking; commands still ask",
    ),
    (
        Mode::Act(Approval::FullAuto),
        "full-auto",
        "Full auto",
        "Run everything without asking (still in the sandbox; deny rules still refuse)",
    ),
    (
        Mode::Plan,
        "plan",
        "Plan",
        "Only read and propose a plan; switch to another mode to carry it out",
    ),
];

/// The mode of `id`.
pub fn parse(id: &str) -> Option<Mode> {
    (MODES.iter())
        .find(|(_, mode_id, _, _)| *mode_id == id)
        .map(|(mode, ..)| *mode)
}

/// The id of `mode`.
pub fn id(mode: Mode) -> &'static str {
    (MODES.iter())
        .find(|(each, ..)| *each == mode)
        .map_or("ask", |(_, id, ..)| id)
}

/// The mode a session is in.
pub fn current(approval: Approval, plan: bool) -> Mode {
    if plan {
        Mode::Plan
    } else {
        Mode::Act(approval)
    }
}

/// The modes with `current` selected.
pub fn state(current: Mode) -> SessionModeState {
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
        assert_eq!(current(Approval::FullAuto, true), Mode::Plan);
        assert_eq!(
            current(Approval::AutoEdit, false),
            Mode::Act(Approval::AutoEdit)
        );
        let state = state(Mode::Act(Approval::AutoEdit));
        assert_eq!(&*state.current_mode_id.0, "auto-edit");
        assert_eq!(state.available_modes.len(), 4);
    }
}
