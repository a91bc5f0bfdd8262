//! The configured keys (`ui.keys`) and editing mode (`ui.editing_mode`, `/vim`) given to the
//! line editor, and the `/help` line that says which keys are in use.

use rustyline::{Cmd, EditMode, KeyCode, KeyEvent, Modifiers};
use ybs_agent::config::{EditingMode, Key, KeyAction, KeyBindings};

/// The line editor's mode for `mode`.
pub fn edit_mode(mode: EditingMode) -> EditMode {
    match mode {
        EditingMode::Emacs => EditMode::Emacs,
        EditingMode::Vi => EditMode::Vi,
    }
}

/// The other mode: what `/vim` switches to.
pub fn toggled(mode: EditingMode) -> EditingMode {
    match mode {
        EditingMode::Emacs => EditingMode::Vi,
        EditingMode::Vi => EditingMode::Emacs,
    }
}

/// The line editor's event for `key`.
pub fn key_event(key: Key) -> KeyEvent {
    let mut modifiers = Modifiers::NONE;
    for (held, modifier) in [
        (key.ctrl, Modifiers::CTRL),
        (key.alt, Modifiers::ALT),
        (key.shift, Modifiers::SHIFT),
    ] {
        if held {
            modifiers |= modifier;
        }
    }
    use ybs_agent::config::KeyCode as Code;
    let code = match key.code {
        // The editor reads Ctrl with a letter as the upper-case letter.
        Code::Char(c) if key.ctrl => return KeyEvent::new(c.to_ascii_uppercase(), modifiers),
        Code::Char(c) => return KeyEvent::new(c, modifiers),
        Code::Enter => KeyCode::Enter,
        Code::Tab if key.shift => return KeyEvent(KeyCode::BackTab, Modifiers::NONE),
        Code::Tab => KeyCode::Tab,
        Code::Esc => KeyCode::Esc,
        Code::Backspace => KeyCode::Backspace,
        Code::Delete => KeyCode::Delete,
        Code::Up => KeyCode::Up,
        Code::Down => KeyCode::Down,
        Code::Left => KeyCode::Left,
        Code::Right => KeyCode::Right,
        Code::Home => KeyCode::Home,
        Code::End => KeyCode::End,
        Code::PageUp => KeyCode::PageUp,
        Code::PageDown => KeyCode::PageDown,
        Code::F(number) => KeyCode::F(number),
    };
    KeyEvent(code, modifiers)
}

/// What each action's keys do in the editor; `None` for the editor and paste keys, which
/// need the REPL's slot (the caller binds them).
pub fn command(action: KeyAction) -> Option<Cmd> {
    Some(match action {
        KeyAction::Submit => Cmd::AcceptLine,
        KeyAction::Newline => Cmd::Newline,
        KeyAction::HistoryPrevious => Cmd::LineUpOrPreviousHistory(1),
        KeyAction::HistoryNext => Cmd::LineDownOrNextHistory(1),
        KeyAction::Cancel => Cmd::Interrupt,
        KeyAction::Editor | KeyAction::Paste => return None,
    })
}

/// The bindings to make: every configured action's keys, and the defaults the editor does
/// not have by itself (newline, editor and paste keys); submit, history and cancel keep the
/// editor's own defaults unless configured.
pub fn to_bind(bindings: &KeyBindings) -> Vec<(KeyAction, Key)> {
    let own_default = |action| {
        matches!(
            action,
            KeyAction::Newline | KeyAction::Editor | KeyAction::Paste
        )
    };
    (bindings.in_use().into_iter())
        .filter(|(action, _)| bindings.configured(*action).is_some() || own_default(*action))
        .flat_map(|(action, keys)| keys.into_iter().map(move |key| (action, key)))
        .collect()
}

/// `ctrl-j` as `/help` writes it: `Ctrl-J`.
pub fn shown(key: Key) -> String {
    let name = key.to_string();
    let parts: Vec<String> = (name.split_inclusive('-'))
        .map(|part| {
            let mut chars = part.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect(),
                None => String::new(),
            }
        })
        .collect();
    parts.concat()
}

/// The keys of `action` in use, as `/help` writes them: `Alt-Enter or Ctrl-J`.
fn keys_of(bindings: &KeyBindings, action: KeyAction) -> String {
    let in_use = bindings.in_use();
    let keys = (in_use.iter())
        .find(|(each, _)| *each == action)
        .map(|(_, keys)| keys.iter().map(|key| shown(*key)).collect::<Vec<_>>())
        .unwrap_or_default();
    keys.join(" or ")
}

/// The `/help` lines of the editor's keys, as bound now.
pub fn help(bindings: &KeyBindings, mode: EditingMode) -> String {
    let key = |action| keys_of(bindings, action);
    let mode = match mode {
        EditingMode::Emacs => "emacs keys (/vim for vi keys)",
        EditingMode::Vi => "vi keys, Esc for normal mode (/vim for emacs keys)",
    };
    format!(
        "Keys: {} or /edit opens $VISUAL/$EDITOR on the input; {} inserts a newline; {} sends; \
         {} and {} go through the history; {} drops the input or cancels the turn; {} or \
         /paste attaches the clipboard's image (or pastes its text); editing with {mode}. \
         During a turn, Enter queues what you type and Alt-Enter gives it to the model with its \
         next request. \
         @PATH attaches a file, @DIR/ a listing; Tab completes @PATH and /COMMAND.\n",
        key(KeyAction::Editor),
        key(KeyAction::Newline),
        key(KeyAction::Submit),
        key(KeyAction::HistoryPrevious),
        key(KeyAction::HistoryNext),
        key(KeyAction::Cancel),
        key(KeyAction::Paste),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use ybs_agent::config::Keys;

    #[test]
    fn keys_become_the_editors_events() {
        let event = |name: &str| key_event(name.parse().unwrap());
        assert_eq!(event("ctrl-j"), KeyEvent::ctrl('J'));
        assert_eq!(event("alt-enter"), KeyEvent(KeyCode::Enter, Modifiers::ALT));
        assert_eq!(event("alt-x"), KeyEvent::alt('x'));
        assert_eq!(event("up"), KeyEvent(KeyCode::Up, Modifiers::NONE));
        assert_eq!(
            event("shift-tab"),
            KeyEvent(KeyCode::BackTab, Modifiers::NONE)
        );
    }

    #[test]
    fn help_follows_the_bindings() {
        let defaults = help(&KeyBindings::default(), EditingMode::Emacs);
        assert!(defaults.starts_with("Keys: Ctrl-G or /edit"), "{defaults}");
        assert!(
            defaults.contains("Alt-Enter or Ctrl-J inserts a newline; Enter sends"),
            "{defaults}"
        );
        let bindings = KeyBindings {
            submit: Some(Keys::One("alt-enter".parse().unwrap())),
            newline: Some(Keys::One("enter".parse().unwrap())),
            ..KeyBindings::default()
        };
        let swapped = help(&bindings, EditingMode::Vi);
        assert!(
            swapped.contains("Enter inserts a newline; Alt-Enter sends"),
            "{swapped}"
        );
        assert!(swapped.contains("vi keys"), "{swapped}");
        let bound: Vec<String> = (to_bind(&bindings).into_iter())
            .map(|(action, key)| format!("{}={key}", action.name()))
            .collect();
        assert_eq!(
            bound,
            [
                "submit=alt-enter",
                "newline=enter",
                "editor=ctrl-g",
                "paste=ctrl-v"
            ]
        );
    }
}
