//! bb7's token estimate breakdown: the `token_estimate` reply of `estimate_tokens` in the bb7
//! protocol, computed from plain inputs.

use serde::Serialize;
use ybs_core::Message;

use crate::counter::TokenCounter;
use crate::message::count_message;

/// A context file as the estimate sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileInput<'a> {
    /// The path shown to the user.
    pub path: &'a str,
    /// The content in context (the snapshot, or a section's lines); `None` for a file that is
    /// only in the output (status `A`).
    pub context: Option<&'a str>,
    /// The pending output the model wrote for the file, if any.
    pub output: Option<&'a str>,
}

/// Everything a `token_estimate` is computed from.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EstimateInput<'a> {
    /// The system prompt.
    pub system_prompt: &'a str,
    /// The instruction files (global, project), in any order.
    pub instructions: &'a [&'a str],
    /// The chat's messages.
    pub history: &'a [Message],
    /// The context files and files with pending output.
    pub files: &'a [FileInput<'a>],
}

/// One entry of `files`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileEstimate {
    /// The file's path.
    pub path: String,
    /// Context tokens plus output tokens.
    pub tokens: usize,
    /// Whether the file has pending output.
    pub has_output: bool,
    /// The tokens of the content in context, for a file in context with pending output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original_tokens: Option<usize>,
    /// The tokens of the pending output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<usize>,
}

/// The breakdown of a `token_estimate` reply, with the protocol's field names and order
/// (`{"total", "context_files", "history", "instructions", "system_prompt", "files",
/// "potential_savings"}`); the daemon adds `type` and `request_id` around it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TokenEstimate {
    /// The sum of the four parts below.
    pub total: usize,
    /// All files' tokens (context plus pending output).
    pub context_files: usize,
    /// The chat history's tokens (every message with its per-message overhead).
    pub history: usize,
    /// The instruction files' tokens.
    pub instructions: usize,
    /// The system prompt's tokens.
    pub system_prompt: usize,
    /// Per-file figures, in input order.
    pub files: Vec<FileEstimate>,
    /// Output tokens that applying the pending changes would remove from the prompt.
    pub potential_savings: usize,
}

/// Computes the breakdown. bb7 counts with `cl100k_base`; pass a
/// [`CachedCounter`](crate::CachedCounter) over [`Bpe::cl100k`](crate::Bpe::cl100k) so the same
/// files are not re-encoded on every estimate.
pub fn estimate_tokens(counter: &dyn TokenCounter, input: &EstimateInput<'_>) -> TokenEstimate {
    let files: Vec<FileEstimate> = input
        .files
        .iter()
        .map(|file| {
            let context = file.context.map_or(0, |text| counter.count(text));
            let output = file.output.map(|text| counter.count(text));
            FileEstimate {
                path: file.path.to_owned(),
                tokens: context + output.unwrap_or(0),
                has_output: output.is_some(),
                original_tokens: output.and(file.context.map(|_| context)),
                output_tokens: output,
            }
        })
        .collect();
    let context_files = files.iter().map(|file| file.tokens).sum();
    let potential_savings = files.iter().filter_map(|file| file.output_tokens).sum();
    let history = input
        .history
        .iter()
        .map(|message| count_message(counter, message))
        .sum();
    let instructions = input
        .instructions
        .iter()
        .map(|text| counter.count(text))
        .sum();
    let system_prompt = counter.count(input.system_prompt);
    TokenEstimate {
        total: context_files + history + instructions + system_prompt,
        context_files,
        history,
        instructions,
        system_prompt,
        files,
        potential_savings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counter::Bpe;

    /// One token per byte.
    struct Bytes;
    impl TokenCounter for Bytes {
        fn count(&self, text: &str) -> usize {
            text.len()
        }
    }

    #[test]
    fn breakdown_adds_up() {
        let history = [Message::user("hi"), Message::assistant("hello")];
        let files = [
            FileInput {
                path: "main.go",
                context: Some("package main"),
                output: None,
            },
            FileInput {
                path: "utils.go",
                context: Some("old"),
                output: Some("newer"),
            },
            FileInput {
                path: "new.go",
                context: None,
                output: Some("fresh"),
            },
        ];
        let estimate = estimate_tokens(
            &Bytes,
            &EstimateInput {
                system_prompt: "sys",
                instructions: &["global", "proj"],
                history: &history,
                files: &files,
            },
        );
        assert_eq!(estimate.system_prompt, 3);
        assert_eq!(estimate.instructions, 10);
        assert_eq!(estimate.history, 4 + 2 + 4 + 5);
        assert_eq!(estimate.context_files, 12 + 8 + 5);
        assert_eq!(estimate.potential_savings, 10);
        assert_eq!(estimate.total, 3 + 10 + 15 + 25);
        assert_eq!(
            estimate.files[1],
            FileEstimate {
                path: "utils.go".into(),
                tokens: 8,
                has_output: true,
                original_tokens: Some(3),
                output_tokens: Some(5),
            }
        );
        assert_eq!(estimate.files[2].original_tokens, None);
        assert_eq!(estimate.files[0].output_tokens, None);
    }

    #[test]
    fn reply_shape_matches_the_protocol() {
        let files = [
            FileInput {
                path: "main.go",
                context: Some("package main\n\nfunc main() {}\n"),
                output: None,
            },
            FileInput {
                path: "utils.go",
                context: Some("package utils\n"),
                output: Some("package utils\n\nfunc Add(a, b int) int { return a + b }\n"),
            },
        ];
        let history = [Message::user("Add an Add function to utils.go")];
        let estimate = estimate_tokens(
            Bpe::cl100k(),
            &EstimateInput {
                system_prompt: "You are BB-7.",
                instructions: &["Use tabs."],
                history: &history,
                files: &files,
            },
        );
        insta::assert_json_snapshot!(estimate);
    }

    #[test]
    fn empty_input() {
        let estimate = estimate_tokens(&Bytes, &EstimateInput::default());
        assert_eq!(estimate.total, 0);
        assert!(estimate.files.is_empty());
    }
}
