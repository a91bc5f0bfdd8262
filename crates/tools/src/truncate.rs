//! Output limits: a tool result longer than `max_tool_output_chars` is cut in the middle with
//! a visible marker saying how much was cut.

/// Cuts `text` to at most `max_chars` characters plus a marker, keeping the head and the tail
/// (errors and summaries are often at the end). Returns the text unchanged when it fits.
pub fn truncate_output(text: &str, max_chars: usize) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_string();
    }
    let cut = total - max_chars;
    let head_chars = max_chars - max_chars / 4;
    let tail_chars = max_chars - head_chars;
    let head: String = text.chars().take(head_chars).collect();
    let tail: String = text.chars().skip(total - tail_chars).collect();
    format!("{head}\n[... output truncated: {cut} of {total} characters cut ...]\n{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_unchanged() {
        assert_eq!(truncate_output("héllo", 5), "héllo");
    }

    #[test]
    fn long_text_keeps_head_and_tail_with_marker() {
        let text: String = ('a'..='z').collect();
        assert_eq!(
            truncate_output(&text, 8),
            "abcdef\n[... output truncated: 18 of 26 characters cut ...]\nyz"
        );
    }

    #[test]
    fn counts_characters_not_bytes() {
        let text = "ééééé";
        assert_eq!(
            truncate_output(text, 4),
            "ééé\n[... output truncated: 1 of 5 characters cut ...]\né"
        );
    }
}
