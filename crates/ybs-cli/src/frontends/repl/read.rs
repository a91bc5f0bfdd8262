//! Reading one message at the prompt: the prompt's words, lines continued with `\`, and the
//! keys that interrupt the prompt to open the editor or read the clipboard.

use rustyline::error::ReadlineError;
use ybs_agent::config::EditingMode;

use super::line_editor::{EditSlot, KeyRequest, LineEditor};

/// The prompt's words: `plan` in plan mode, and `vi` with vi keys (the line editor does not
/// tell whether vi is in normal or insert mode).
pub fn prompt(plan: bool, mode: EditingMode) -> &'static str {
    match (plan, mode) {
        (false, EditingMode::Emacs) => "ybs> ",
        (true, EditingMode::Emacs) => "plan> ",
        (false, EditingMode::Vi) => "ybs vi> ",
        (true, EditingMode::Vi) => "plan vi> ",
    }
}

/// One message: lines ending in `\` continue on the next line; the editor key opens the
/// editor on the input so far; the paste key calls `paste`, which attaches an image itself
/// or gives text to insert at the cursor. The first line starts with `initial` when given.
/// `None` on Ctrl-D.
pub fn message(
    editor: &mut LineEditor,
    slot: &EditSlot,
    (first_prompt, initial): (&str, Option<String>),
    paste: &mut dyn FnMut() -> Option<String>,
) -> Result<Option<String>, ReadlineError> {
    let mut text = String::new();
    // The line to go on editing (after a paste): before and after the cursor.
    let mut resumed: Option<(String, String)> = initial.map(|line| (line, String::new()));
    loop {
        let prompt = if text.is_empty() {
            first_prompt
        } else {
            "...> "
        };
        let read = match resumed.take() {
            Some((left, right)) => editor.readline_with_initial(prompt, (&left, &right)),
            None => editor.readline(prompt),
        };
        match read {
            Ok(line) => match line.strip_suffix('\\') {
                Some(head) => {
                    text.push_str(head);
                    text.push('\n');
                }
                None => {
                    text.push_str(&line);
                    return Ok(Some(text));
                }
            },
            Err(ReadlineError::Interrupted) => {
                match slot.lock().ok().and_then(|mut slot| slot.take()) {
                    Some(KeyRequest::Editor(line)) => {
                        text.push_str(&line);
                        match super::line_editor::edit(&text) {
                            Ok(edited) => return Ok(Some(edited)),
                            Err(error) => eprintln!(
                                "ybs: error: {}",
                                crate::render::inert_lines(&error.to_string())
                            ),
                        }
                    }
                    Some(KeyRequest::Paste { line, pos }) => {
                        let at = if line.is_char_boundary(pos) {
                            pos
                        } else {
                            line.len()
                        };
                        let (left, right) = line.split_at(at);
                        let mut left = left.to_owned();
                        left.push_str(&paste().unwrap_or_default());
                        resumed = Some((left, right.to_owned()));
                        continue;
                    }
                    None => {}
                }
                // Ctrl-C at the prompt drops what was typed.
                text.clear();
            }
            Err(ReadlineError::Eof) => return Ok(None),
            Err(error) => return Err(error),
        }
    }
}
