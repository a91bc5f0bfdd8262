//! `ui.editing_mode` and `ui.keys`: how the REPL's line editor edits and which keys do what.
//! Key names are checked as the file is read, so a misspelt name or action is an error that
//! names the key, not a binding that silently does nothing.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// `ui.editing_mode`: the line editor's key set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EditingMode {
    /// Emacs keys (Ctrl-A, Ctrl-E...), what most shells use.
    #[default]
    Emacs,
    /// Vi keys: insert mode, Esc for normal mode.
    Vi,
}

/// `ui.keys`: the keys of each action of the line editor; an action left out keeps its
/// default keys. An action the editor does not have is an error.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct KeyBindings {
    /// Sends the message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub submit: Option<Keys>,
    /// Inserts a newline into the message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newline: Option<Keys>,
    /// The previous message of the history.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history_previous: Option<Keys>,
    /// The next message of the history.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history_next: Option<Keys>,
    /// Drops the input at the prompt, and cancels a running turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancel: Option<Keys>,
    /// Opens `$VISUAL` or `$EDITOR` on the input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub editor: Option<Keys>,
    /// Attaches the clipboard's image (or pastes its text).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paste: Option<Keys>,
}

/// An action of the line editor that keys can be bound to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyAction {
    /// Send the message.
    Submit,
    /// Insert a newline.
    Newline,
    /// The previous history entry.
    HistoryPrevious,
    /// The next history entry.
    HistoryNext,
    /// Drop the input; cancel a running turn.
    Cancel,
    /// Open the external editor.
    Editor,
    /// Paste the clipboard's image or text.
    Paste,
}

impl KeyAction {
    /// Every action, in the order `/help` lists them.
    pub const ALL: [KeyAction; 7] = [
        KeyAction::Submit,
        KeyAction::Newline,
        KeyAction::HistoryPrevious,
        KeyAction::HistoryNext,
        KeyAction::Cancel,
        KeyAction::Editor,
        KeyAction::Paste,
    ];

    /// Its name under `ui.keys`.
    pub fn name(self) -> &'static str {
        match self {
            KeyAction::Submit => "submit",
            KeyAction::Newline => "newline",
            KeyAction::HistoryPrevious => "history_previous",
            KeyAction::HistoryNext => "history_next",
            KeyAction::Cancel => "cancel",
            KeyAction::Editor => "editor",
            KeyAction::Paste => "paste",
        }
    }

    /// The keys it has when `ui.keys` does not name it.
    pub fn default_keys(self) -> Vec<Key> {
        let names: &[&str] = match self {
            KeyAction::Submit => &["enter"],
            KeyAction::Newline => &["alt-enter", "ctrl-j"],
            KeyAction::HistoryPrevious => &["up"],
            KeyAction::HistoryNext => &["down"],
            KeyAction::Cancel => &["ctrl-c"],
            KeyAction::Editor => &["ctrl-g"],
            KeyAction::Paste => &["ctrl-v"],
        };
        names.iter().filter_map(|name| name.parse().ok()).collect()
    }
}

impl KeyBindings {
    /// The keys configured for `action`, if any.
    pub fn configured(&self, action: KeyAction) -> Option<&Keys> {
        match action {
            KeyAction::Submit => self.submit.as_ref(),
            KeyAction::Newline => self.newline.as_ref(),
            KeyAction::HistoryPrevious => self.history_previous.as_ref(),
            KeyAction::HistoryNext => self.history_next.as_ref(),
            KeyAction::Cancel => self.cancel.as_ref(),
            KeyAction::Editor => self.editor.as_ref(),
            KeyAction::Paste => self.paste.as_ref(),
        }
    }

    /// Each action with the keys in use: the configured ones, else the defaults.
    pub fn in_use(&self) -> Vec<(KeyAction, Vec<Key>)> {
        (KeyAction::ALL.into_iter())
            .map(|action| {
                let keys = match self.configured(action) {
                    Some(keys) => keys.list().to_vec(),
                    None => action.default_keys(),
                };
                (action, keys)
            })
            .collect()
    }

    /// A key bound to two actions, as `(key, first action, second action)`.
    pub fn conflict(&self) -> Option<(Key, KeyAction, KeyAction)> {
        let in_use = self.in_use();
        for (index, (action, keys)) in in_use.iter().enumerate() {
            for (other, other_keys) in &in_use[index + 1..] {
                if let Some(key) = keys.iter().find(|key| other_keys.contains(key)) {
                    return Some((*key, *action, *other));
                }
            }
        }
        None
    }
}

/// One key name or a list of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged, try_from = "KeyNames")]
pub enum Keys {
    /// `"ctrl-j"`.
    One(Key),
    /// `["alt-enter", "ctrl-j"]`.
    Many(Vec<Key>),
}

/// `ui.keys`' values as written, before their names are read: reading them through this
/// keeps the key name's own error (an untagged enum of keys would only say "did not match").
#[derive(Deserialize)]
#[serde(untagged)]
enum KeyNames {
    One(String),
    Many(Vec<String>),
}

impl TryFrom<KeyNames> for Keys {
    type Error = KeyNameError;

    fn try_from(names: KeyNames) -> Result<Self, Self::Error> {
        Ok(match names {
            KeyNames::One(name) => Keys::One(name.parse()?),
            KeyNames::Many(names) => Keys::Many(
                (names.iter())
                    .map(|name| name.parse())
                    .collect::<Result<_, _>>()?,
            ),
        })
    }
}

impl Keys {
    /// The keys as a list.
    pub fn list(&self) -> &[Key] {
        match self {
            Keys::One(key) => std::slice::from_ref(key),
            Keys::Many(keys) => keys,
        }
    }
}

/// A key with its modifiers, named like `ctrl-j`, `alt-enter`, `shift-tab` or `up`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Key {
    /// The key itself.
    pub code: KeyCode,
    /// Control held.
    pub ctrl: bool,
    /// Alt (Meta) held.
    pub alt: bool,
    /// Shift held (for keys other than characters, which are written as typed).
    pub shift: bool,
}

/// A key without its modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyCode {
    /// A printable character (letters lower-case).
    Char(char),
    /// Enter (Return).
    Enter,
    /// Tab.
    Tab,
    /// Escape.
    Esc,
    /// Backspace.
    Backspace,
    /// Delete.
    Delete,
    /// Up arrow.
    Up,
    /// Down arrow.
    Down,
    /// Left arrow.
    Left,
    /// Right arrow.
    Right,
    /// Home.
    Home,
    /// End.
    End,
    /// Page Up.
    PageUp,
    /// Page Down.
    PageDown,
    /// A function key, F1 to F12.
    F(u8),
}

/// The names of keys other than characters, as written in `ui.keys`.
const NAMED: &[(&str, KeyCode)] = &[
    ("enter", KeyCode::Enter),
    ("tab", KeyCode::Tab),
    ("esc", KeyCode::Esc),
    ("backspace", KeyCode::Backspace),
    ("delete", KeyCode::Delete),
    ("up", KeyCode::Up),
    ("down", KeyCode::Down),
    ("left", KeyCode::Left),
    ("right", KeyCode::Right),
    ("home", KeyCode::Home),
    ("end", KeyCode::End),
    ("pageup", KeyCode::PageUp),
    ("pagedown", KeyCode::PageDown),
    ("space", KeyCode::Char(' ')),
];

/// Why a key name was not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown key name \"{0}\": write a key as ctrl-, alt- or shift- followed by a letter, digit \
     or punctuation, or by enter, tab, esc, backspace, delete, up, down, left, right, home, end, \
     pageup, pagedown, space or f1 to f12 (for example \"ctrl-j\" or \"alt-enter\")"
)]
pub struct KeyNameError(String);

impl FromStr for Key {
    type Err = KeyNameError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let wrong = || KeyNameError(name.to_owned());
        let lower = name.trim().to_ascii_lowercase();
        let mut key = Key {
            code: KeyCode::Enter,
            ctrl: false,
            alt: false,
            shift: false,
        };
        let mut rest = lower.as_str();
        // A lone "-" is the key itself, not a modifier's separator.
        while let Some((modifier, after)) = rest.split_once('-').filter(|(_, a)| !a.is_empty()) {
            match modifier {
                "ctrl" | "control" | "c" => key.ctrl = true,
                "alt" | "meta" | "m" => key.alt = true,
                "shift" | "s" => key.shift = true,
                _ => return Err(wrong()),
            }
            rest = after;
        }
        key.code = if let Some((_, code)) = NAMED.iter().find(|(named, _)| *named == rest) {
            *code
        } else if let Some(number) = rest.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
            if !(1..=12).contains(&number) {
                return Err(wrong());
            }
            KeyCode::F(number)
        } else {
            let mut chars = rest.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) if c.is_ascii_graphic() => KeyCode::Char(c),
                _ => return Err(wrong()),
            }
        };
        if matches!(key.code, KeyCode::Char(_)) && (key.shift || !(key.ctrl || key.alt)) {
            // A plain character would no longer type itself, and a shifted one is written
            // as the character it types.
            return Err(wrong());
        }
        Ok(key)
    }
}

impl TryFrom<String> for Key {
    type Error = KeyNameError;

    fn try_from(name: String) -> Result<Self, Self::Error> {
        name.parse()
    }
}

impl From<Key> for String {
    fn from(key: Key) -> String {
        key.to_string()
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (held, name) in [
            (self.ctrl, "ctrl-"),
            (self.alt, "alt-"),
            (self.shift, "shift-"),
        ] {
            if held {
                f.write_str(name)?;
            }
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::F(number) => write!(f, "f{number}"),
            code => {
                let name = (NAMED.iter().find(|(_, named)| *named == code)).map_or("?", |n| n.0);
                f.write_str(name)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn key(name: &str) -> Key {
        name.parse().unwrap()
    }

    #[test]
    fn key_names_read_and_print_back() {
        for name in [
            "ctrl-j",
            "alt-enter",
            "ctrl-g",
            "up",
            "shift-tab",
            "f5",
            "ctrl-alt-x",
            "shift-up",
        ] {
            assert_eq!(key(name).to_string(), name);
        }
        assert_eq!(key("Ctrl-J"), key("ctrl-j"));
        assert_eq!(key("M-Enter"), key("alt-enter"));
        assert_eq!(key("ctrl--").code, KeyCode::Char('-'));
    }

    #[test]
    fn unknown_names_and_plain_characters_are_refused() {
        for name in [
            "ctrl-foo", "hyper-x", "f13", "", "ctrl-", "x", "shift-a", "enterr",
        ] {
            let error = name.parse::<Key>().unwrap_err().to_string();
            assert!(
                error.starts_with(&format!("unknown key name \"{name}\"")),
                "{error}"
            );
        }
    }

    #[test]
    fn an_unknown_action_or_key_fails_to_read() {
        let bindings: KeyBindings =
            serde_json::from_str(r#"{"submit": "ctrl-s", "newline": ["enter", "alt-enter"]}"#)
                .unwrap();
        assert_eq!(bindings.submit, Some(Keys::One(key("ctrl-s"))));
        let error = serde_json::from_str::<KeyBindings>(r#"{"sumbit": "ctrl-s"}"#).unwrap_err();
        assert!(
            error.to_string().contains("unknown field `sumbit`"),
            "{error}"
        );
        let error = serde_json::from_str::<KeyBindings>(r#"{"submit": "ctrl-foo"}"#).unwrap_err();
        assert!(error.to_string().contains("ctrl-foo"), "{error}");
    }

    #[test]
    fn the_keys_in_use_and_their_conflicts() {
        let mut bindings = KeyBindings::default();
        assert_eq!(bindings.conflict(), None);
        let in_use = bindings.in_use();
        assert_eq!(
            in_use[1],
            (KeyAction::Newline, vec![key("alt-enter"), key("ctrl-j")])
        );
        bindings.submit = Some(Keys::One(key("ctrl-j")));
        assert_eq!(
            bindings.conflict(),
            Some((key("ctrl-j"), KeyAction::Submit, KeyAction::Newline))
        );
        // Swapping Enter and Alt-Enter is no conflict.
        bindings.submit = Some(Keys::One(key("alt-enter")));
        bindings.newline = Some(Keys::Many(vec![key("enter"), key("ctrl-j")]));
        assert_eq!(bindings.conflict(), None);
    }
}
