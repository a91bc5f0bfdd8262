//! The system message: the built-in prompt (embedded from `system_prompt.txt`, or the user's
//! non-empty `~/.config/bb7/system_prompt.txt` instead), then the global and project
//! instructions each wrapped in `<user-instructions source="...">`, then the rules of the
//! configured `diff_mode` (not for global chats, which get no file tools).

use std::path::Path;

use ybs_tools::bb7_edit::DiffMode;

use crate::protocol::error::Result;
use crate::store::global::Home;
use crate::store::instructions;

/// The built-in system prompt.
pub const BUILTIN: &str = include_str!("system_prompt.txt");

/// Where the global instructions are said to come from.
pub const GLOBAL_SOURCE: &str = "~/.config/bb7/instructions.md";
/// Where the project instructions are said to come from.
pub const PROJECT_SOURCE: &str = ".bb7/instructions";

/// The rules for each `diff_mode`.
pub fn diff_mode_prompt(mode: DiffMode) -> &'static str {
    match mode {
        DiffMode::SearchReplaceMulti => {
            "# edit_file (search_replace_multi)\n\
             edit_file takes {edits: [{path, file_id, old_string, new_string, replace_all?}]}. \
             Edits are applied in order and later edits see the results of earlier ones; one \
             call may touch several files. old_string must match the current content exactly \
             and uniquely (include enough surrounding lines), unless replace_all is true. \
             file_id is the id of the file as shown in <writable-files>. Prefer edit_file for \
             small changes and write_file for new files or rewrites of most of a file.\n"
        }
        DiffMode::SearchReplace => {
            "# edit_file (search_replace)\n\
             edit_file takes {path, file_id, old_string, new_string, replace_all?}: one edit \
             per call. old_string must match the current content exactly and uniquely \
             (include enough surrounding lines), unless replace_all is true. file_id is the \
             id of the file as shown in <writable-files>. Prefer edit_file for small changes \
             and write_file for new files or rewrites of most of a file.\n"
        }
        DiffMode::Anchored => {
            "# edit_file (anchored)\n\
             edit_file takes {path, file_id, changes: [{start: [lines], end?: [lines], \
             content: [lines]}]}. start (and end) are 1 to 10 consecutive lines copied exactly \
             from the file; each must be unique, end is searched after start. Without end the \
             region is the start lines. content replaces the whole region; null content \
             deletes it. Regions must not overlap. file_id is the id of the file as shown in \
             <writable-files>.\n"
        }
        DiffMode::Off => {
            "# Files\nOnly write_file is available: send the complete new content of every \
             file you change.\n"
        }
    }
}

/// The system message for a chat. `project_root` is `None` for global chats. A project
/// instruction file that does not parse blocks the send with its error.
pub fn system_message(
    home: &Home,
    project_root: Option<&Path>,
    mode: Option<DiffMode>,
) -> Result<String> {
    let mut out = base_prompt(home);
    for block in instruction_blocks(home, project_root)? {
        ensure_blank_line(&mut out);
        out.push_str(&block);
    }
    if let Some(mode) = mode {
        ensure_blank_line(&mut out);
        out.push_str(diff_mode_prompt(mode));
    }
    Ok(out)
}

/// The built-in prompt, or the user's override when it has content.
pub fn base_prompt(home: &Home) -> String {
    read_override(&home.system_prompt_path()).unwrap_or_else(|| BUILTIN.to_owned())
}

/// The wrapped instruction blocks: global, then project (each only when it has content).
pub fn instruction_blocks(home: &Home, project_root: Option<&Path>) -> Result<Vec<String>> {
    let mut blocks = Vec::new();
    if let Ok(text) = std::fs::read_to_string(home.global_instructions_path()) {
        blocks.extend(wrap(GLOBAL_SOURCE, &instructions::strip_comments(&text)));
    }
    if let Some(root) = project_root {
        blocks.extend(wrap(PROJECT_SOURCE, &instructions::load_project(root)?));
    }
    Ok(blocks)
}

/// The override's text when it has content besides `@@` comments.
fn read_override(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let text = instructions::strip_comments(&text);
    (!text.trim().is_empty()).then(|| text.trim().to_owned() + "\n")
}

fn wrap(source: &str, text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty())
        .then(|| format!("<user-instructions source=\"{source}\">\n{text}\n</user-instructions>\n"))
}

fn ensure_blank_line(out: &mut String) {
    if !out.is_empty() && !out.ends_with("\n\n") {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn instructions_are_wrapped_and_the_override_replaces_the_builtin() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path().join("home"), None);
        let root = dir.path().join("project");
        std::fs::create_dir_all(root.join(".bb7")).unwrap();
        std::fs::create_dir_all(&home.config_dir).unwrap();

        let plain = system_message(&home, Some(&root), None).unwrap();
        assert_eq!(plain, BUILTIN);

        std::fs::write(home.global_instructions_path(), "@@ comment\nUse tabs.\n").unwrap();
        std::fs::write(root.join(".bb7/instructions"), "Be brief.\n").unwrap();
        let full = system_message(&home, Some(&root), Some(DiffMode::Anchored)).unwrap();
        let global = "<user-instructions source=\"~/.config/bb7/instructions.md\">\nUse tabs.\n</user-instructions>\n";
        let project =
            "<user-instructions source=\".bb7/instructions\">\nBe brief.\n</user-instructions>\n";
        assert!(full.starts_with(BUILTIN));
        let (g, p, m) = (
            full.find(global).unwrap(),
            full.find(project).unwrap(),
            full.find("# edit_file (anchored)").unwrap(),
        );
        assert!(g < p && p < m);
        // Global chats: no project instructions, no file rules.
        let global_chat = system_message(&home, None, None).unwrap();
        assert!(!global_chat.contains(".bb7/instructions") && !global_chat.contains("# edit_file"));

        std::fs::write(home.system_prompt_path(), "@@ only a comment\n").unwrap();
        assert!(
            system_message(&home, None, None)
                .unwrap()
                .starts_with(BUILTIN)
        );
        std::fs::write(home.system_prompt_path(), "You are mine.\n").unwrap();
        assert!(
            system_message(&home, None, None)
                .unwrap()
                .starts_with("You are mine.\n\n<user-instructions")
        );
    }

    #[test]
    fn a_broken_project_file_blocks_the_send() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path().join("home"), None);
        let root = dir.path().join("project");
        std::fs::create_dir_all(root.join(".bb7")).unwrap();
        std::fs::write(root.join(".bb7/instructions"), "@include /etc/passwd\n").unwrap();
        assert!(system_message(&home, Some(&root), None).is_err());
    }
}
