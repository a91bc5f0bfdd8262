//! The system message: the built-in prompt (embedded from `prompts/system.txt`, or the
//! user's non-empty `~/.config/bb7/system_prompt.txt` instead), then the global instructions
//! wrapped in `<user-instructions source="...">` and the project instructions wrapped in
//! `<project-instructions source="...">` (as the first bb7 wraps them, content kept as
//! written), then the file tools of the configured `diff_mode` (not for global chats, which
//! get no file tools).

use std::path::Path;

use ybs_edit::DiffMode;

use crate::store::global::Home;
use crate::store::instructions;
use crate::wire::error::Result;

/// The built-in system prompt.
pub const BUILTIN: &str = include_str!("prompts/system.txt");

/// Where the global instructions are said to come from.
pub const GLOBAL_SOURCE: &str = "~/.config/bb7/instructions.md";
/// Where the project instructions are said to come from.
pub const PROJECT_SOURCE: &str = ".bb7/instructions";

/// `diff_mode` `off`: `write_file` only.
const OFF: &str = concat!(
    include_str!("prompts/off.txt"),
    "\n",
    include_str!("prompts/common.txt"),
);
/// `diff_mode` `search_replace`.
const SEARCH_REPLACE: &str = concat!(
    include_str!("prompts/edit_intro.txt"),
    include_str!("prompts/common.txt"),
    include_str!("prompts/search_replace.txt"),
    include_str!("prompts/search_replace_rules.txt"),
    include_str!("prompts/retry_note.txt"),
);
/// `diff_mode` `search_replace_multi`.
const SEARCH_REPLACE_MULTI: &str = concat!(
    include_str!("prompts/edit_intro.txt"),
    include_str!("prompts/common.txt"),
    include_str!("prompts/search_replace_multi.txt"),
    include_str!("prompts/search_replace_rules.txt"),
    include_str!("prompts/retry_note.txt"),
);
/// `diff_mode` `anchored`.
const ANCHORED: &str = concat!(
    include_str!("prompts/edit_intro.txt"),
    include_str!("prompts/common.txt"),
    include_str!("prompts/anchored.txt"),
    include_str!("prompts/retry_note.txt"),
);

/// The file tools and their rules for each `diff_mode`.
pub fn diff_mode_prompt(mode: DiffMode) -> &'static str {
    match mode {
        DiffMode::SearchReplaceMulti => SEARCH_REPLACE_MULTI,
        DiffMode::SearchReplace => SEARCH_REPLACE,
        DiffMode::Anchored => ANCHORED,
        DiffMode::Off => OFF,
    }
}

/// The system message for a chat. `project_root` is `None` for global chats. A project
/// instruction file that does not parse blocks the send with its error.
pub fn system_message(
    home: &Home,
    project_root: Option<&Path>,
    allowed: &[crate::store::consent::IncludeConsent],
    mode: Option<DiffMode>,
) -> Result<String> {
    let mut out = base_prompt(home);
    for block in instruction_blocks(home, project_root, allowed)? {
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

/// The wrapped instruction blocks: global, then project (each only when it has content);
/// `allowed`: the includes the user allowed although git does not vouch for them.
pub fn instruction_blocks(
    home: &Home,
    project_root: Option<&Path>,
    allowed: &[crate::store::consent::IncludeConsent],
) -> Result<Vec<String>> {
    let mut blocks = Vec::new();
    if let Ok(text) = std::fs::read_to_string(home.global_instructions_path()) {
        blocks.extend(wrap(
            "user-instructions",
            GLOBAL_SOURCE,
            &instructions::strip_comments(&text),
        ));
    }
    if let Some(root) = project_root {
        blocks.extend(wrap(
            "project-instructions",
            PROJECT_SOURCE,
            &instructions::load_project(root, allowed)?,
        ));
    }
    Ok(blocks)
}

/// The override's text when it has content besides `@@` comments.
fn read_override(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let text = instructions::strip_comments(&text);
    (!text.trim().is_empty()).then(|| text.trim().to_owned() + "\n")
}

/// `text` in a `<tag source="...">` element, as written (a newline added when it has none at
/// its end); `None` when it is only whitespace.
fn wrap(tag: &str, source: &str, text: &str) -> Option<String> {
    if text.trim().is_empty() {
        return None;
    }
    let newline = if text.ends_with('\n') { "" } else { "\n" };
    Some(format!(
        "<{tag} source=\"{source}\">\n{text}{newline}</{tag}>\n"
    ))
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

        let plain = system_message(&home, Some(&root), &[], None).unwrap();
        assert_eq!(plain, BUILTIN);

        std::fs::write(home.global_instructions_path(), "@@ comment\nUse tabs.\n").unwrap();
        std::fs::write(root.join(".bb7/instructions"), "Be brief.\n").unwrap();
        let full = system_message(&home, Some(&root), &[], Some(DiffMode::Anchored)).unwrap();
        let global = "<user-instructions source=\"~/.config/bb7/instructions.md\">\nUse tabs.\n</user-instructions>\n";
        let project = "<project-instructions source=\".bb7/instructions\">\nBe brief.\n</project-instructions>\n";
        assert!(full.starts_with(BUILTIN));
        let (g, p, m) = (
            full.find(global).unwrap(),
            full.find(project).unwrap(),
            full.find(ANCHORED).unwrap(),
        );
        assert!(g < p && p < m);
        // Global chats: no project instructions, no file rules.
        let global_chat = system_message(&home, None, &[], None).unwrap();
        assert!(
            !global_chat.contains(".bb7/instructions") && !global_chat.contains("# File tools")
        );

        std::fs::write(home.system_prompt_path(), "@@ only a comment\n").unwrap();
        assert!(
            system_message(&home, None, &[], None)
                .unwrap()
                .starts_with(BUILTIN)
        );
        std::fs::write(home.system_prompt_path(), "You are mine.\n").unwrap();
        assert!(
            system_message(&home, None, &[], None)
                .unwrap()
                .starts_with("You are mine.\n\n<user-instructions")
        );
    }

    #[test]
    fn project_instructions_are_sent_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path().join("home"), None);
        let root = dir.path().join("project");
        std::fs::create_dir_all(root.join(".bb7")).unwrap();
        std::fs::write(root.join(".bb7/instructions"), "\n    indented\nlast").unwrap();
        let blocks = instruction_blocks(&home, Some(&root), &[]).unwrap();
        assert_eq!(
            blocks,
            [
                "<project-instructions source=\".bb7/instructions\">\n\n    indented\nlast\n</project-instructions>\n"
            ]
        );
        std::fs::write(root.join(".bb7/instructions"), " \n\t\n").unwrap();
        assert!(
            instruction_blocks(&home, Some(&root), &[])
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn every_mode_states_the_rules_of_its_tools() {
        for mode in DiffMode::ALL {
            let text = diff_mode_prompt(mode);
            // Rules every mode shares.
            for rule in [
                "<writable-files>",
                "refused",
                "never both edit_file and write_file",
                "Never write_file the same path twice",
                "make all\n  the calls now",
                "complete file",
            ] {
                assert!(text.contains(rule), "{mode}: {rule:?} missing");
            }
            let edits = mode != DiffMode::Off;
            assert_eq!(text.contains("# edit_file"), edits, "{mode}");
            assert_eq!(text.contains("file_id"), edits, "{mode}");
            assert_eq!(text.contains("status=pending_output"), edits, "{mode}");
            assert_eq!(text.contains("<retry-context>"), edits, "{mode}");
        }
        let multi = diff_mode_prompt(DiffMode::SearchReplaceMulti);
        assert!(multi.contains("one edit_file call per reply") && multi.contains("edits:"));
        let single = diff_mode_prompt(DiffMode::SearchReplace);
        assert!(single.contains("Several edit_file calls for the same file are allowed"));
        let anchored = diff_mode_prompt(DiffMode::Anchored);
        assert!(anchored.contains("as it is before this call") && anchored.contains("overlap"));
        // The built-in prompt describes the layout the user message really has.
        for tag in [
            "<read-only-files>",
            "<history>",
            "<latest-message>",
            "<retry-context>",
            "<writable-files>",
            "status",
            "kind=\"reasoning\"",
            "Response aborted by user.",
        ] {
            assert!(BUILTIN.contains(tag), "{tag}");
        }
    }

    #[test]
    fn a_broken_project_file_blocks_the_send() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path().join("home"), None);
        let root = dir.path().join("project");
        std::fs::create_dir_all(root.join(".bb7")).unwrap();
        std::fs::write(root.join(".bb7/instructions"), "@include /etc/passwd\n").unwrap();
        assert!(system_message(&home, Some(&root), &[], None).is_err());
    }
}
