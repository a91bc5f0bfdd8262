//! What a call is about to do, computed before it is settled so the user can be shown it:
//! the new content of a file a `write_file` or `edit_file` call changes (against the file as
//! it is, read without following a link, only when it is a regular file of at most
//! [`MAX_PREVIEW_BYTES`]), or a command and where it runs. How it is drawn is the front
//! end's affair.

use serde_json::Value;
use ybs_core::ToolCall;
use ybs_tools::{Effect, Tool, ToolContext};

/// The largest file whose content a preview reads.
pub const MAX_PREVIEW_BYTES: u64 = 4 * 1024 * 1024;

/// What a call is about to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Preview {
    /// A file's content changes.
    File {
        /// The path as the model sees it.
        path: String,
        /// The content now; `None` for a new file.
        before: Option<String>,
        /// The content after the call.
        after: String,
    },
    /// A shell command.
    Shell {
        /// The command line.
        command: String,
        /// Where it runs.
        cwd: String,
    },
    /// A file whose content is not shown.
    Unshown {
        /// The path as the model sees it.
        path: String,
        /// Why.
        why: String,
    },
}

/// The preview of `call` of `tool`, when its effect can be shown (commands, or the file at
/// its `path` whose new text the tool can tell); `None` for other tools and for calls the
/// tool will refuse (an edit whose text is not in the file).
pub fn preview(call: &ToolCall, tool: &dyn Tool, context: &ToolContext) -> Option<Preview> {
    let text = |key: &str| call.arguments.get(key).and_then(Value::as_str);
    match tool.declaration().effect {
        Effect::Commands => {
            let mut cwd = context.working_dir.display().to_string();
            // The user approves a command that goes on running after the call returns.
            if call.arguments.get("background").and_then(Value::as_bool) == Some(true) {
                cwd.push_str(", as a background job (until stopped or the session ends)");
            }
            Some(Preview::Shell {
                command: text("command")?.to_owned(),
                cwd,
            })
        }
        Effect::FileAtPath => {
            let resolved = context.resolve(text("path")?).ok()?;
            let path = context.display_path(&resolved);
            let before = match ybs_fsguard::physical::read(&resolved, MAX_PREVIEW_BYTES) {
                // As the user's editor holds it, when the session has one.
                Ok(Some(file)) => Some(
                    (context.editor)
                        .text_or(&resolved, String::from_utf8_lossy(&file.bytes).into_owned()),
                ),
                Ok(None) => None,
                Err(error) => {
                    let why = unshown(&error);
                    return Some(Preview::Unshown { path, why });
                }
            };
            let after = tool.text_after(before.as_deref(), &call.arguments)?;
            Some(Preview::File {
                path,
                before,
                after,
            })
        }
        _ => None,
    }
}

/// Why a file's content is not previewed.
fn unshown(error: &ybs_fsguard::physical::NoFollowError) -> String {
    use ybs_fsguard::physical::NoFollowError;
    match error {
        NoFollowError::TooLarge { size, limit, .. } => {
            format!("it has {size} bytes, more than the {limit} a preview reads")
        }
        NoFollowError::NotRegular { kind, .. } => format!("it is {kind}, not a regular file"),
        NoFollowError::Link(_) => "it is reached through a symbolic link now".into(),
        other => other.to_string(),
    }
}
