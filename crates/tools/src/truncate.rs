//! Output limits: a tool result longer than `max_tool_output_chars` is cut in the middle with
//! a visible marker saying how much was cut; a JSON result inside its longest strings, so that
//! it stays JSON.

use serde_json::Value;

/// A string shorter than this is not worth cutting: the result is then cut as text.
const MIN_STRING_TO_CUT: usize = 200;

/// Room left for each marker [`truncate_output`] adds.
const MARKER_ROOM: usize = 80;

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

/// The text of a tool's JSON result, at most `max_chars` characters plus the markers: the
/// longest strings (a command's output, a file's content) are cut in their middle by
/// [`truncate_output`], so the result is still JSON that the model and a person's summary of
/// it can read. When its strings are not what makes it long (many short ones), the text
/// itself is cut.
pub fn truncate_json(mut value: Value, max_chars: usize) -> String {
    let mut text = value.to_string();
    let mut room = max_chars;
    // Each cut is sized from the serialized string, escapes included; a few rounds settle
    // what one misjudged.
    for _ in 0..4 {
        let total = text.chars().count();
        if total <= room {
            return text;
        }
        let Some(longest) = longest_string(&mut value) else {
            break;
        };
        let chars = longest.chars().count();
        if chars < MIN_STRING_TO_CUT {
            break;
        }
        let serialized = Value::String(longest.clone()).to_string().chars().count();
        let over = total - room + MARKER_ROOM;
        // Escapes make a character take more room in JSON than in the string.
        let cut = (over * chars).div_ceil(serialized.max(1));
        if cut >= chars {
            break;
        }
        *longest = truncate_output(longest, chars - cut);
        room += MARKER_ROOM;
        text = value.to_string();
    }
    if text.chars().count() <= room {
        return text;
    }
    truncate_output(&text, max_chars)
}

/// The longest string in `value` (by bytes).
fn longest_string(value: &mut Value) -> Option<&mut String> {
    match value {
        Value::String(text) => Some(text),
        Value::Array(items) => items
            .iter_mut()
            .filter_map(longest_string)
            .max_by_key(|text| text.len()),
        Value::Object(map) => map
            .values_mut()
            .filter_map(longest_string)
            .max_by_key(|text| text.len()),
        _ => None,
    }
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

    #[test]
    fn a_json_result_is_cut_inside_its_longest_string_and_stays_json() {
        let stdout: String = (1..=3000).map(|n| format!("{n}\n")).collect();
        let value = serde_json::json!({"exit_code": 0, "stderr": "warning\n", "stdout": stdout});
        let text = truncate_json(value, 1000);
        let parsed: Value = serde_json::from_str(&text).unwrap_or_default();
        let cut = parsed["stdout"].as_str().unwrap_or_default();
        assert!(cut.starts_with("1\n2\n3\n"), "{cut}");
        assert!(cut.ends_with("2999\n3000\n"), "{cut}");
        assert!(cut.contains("[... output truncated: "), "{cut}");
        assert_eq!(parsed["stderr"], "warning\n");
        assert_eq!(parsed["exit_code"], 0);
        assert!(text.chars().count() <= 1000 + MARKER_ROOM, "{}", text.len());
    }

    #[test]
    fn escapes_are_counted_as_json_counts_them() {
        let value = serde_json::json!({"stdout": "\u{0}".repeat(3000)});
        let text = truncate_json(value, 1000);
        assert!(serde_json::from_str::<Value>(&text).is_ok(), "{text}");
        assert!(
            text.chars().count() <= 1000 + 2 * MARKER_ROOM,
            "{}",
            text.len()
        );
    }

    #[test]
    fn many_short_strings_are_cut_as_text() {
        let files: Vec<String> = (0..500).map(|n| format!("file{n}.rs")).collect();
        let value = serde_json::json!({"files": files});
        let text = truncate_json(value.clone(), 300);
        assert_eq!(text, truncate_output(&value.to_string(), 300));
        // A result that fits is its text.
        assert_eq!(truncate_json(value.clone(), usize::MAX), value.to_string());
    }
}
