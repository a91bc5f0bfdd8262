//! The front matter of the Markdown files users write for Claude Code, codex, opencode and
//! the other agents (skills, sub-agents, slash commands): a block between two `---` lines at
//! the top, of `key: value` lines. Only the part of YAML those files use is read: plain,
//! quoted and folded (`>`, `|`) strings, and lists written `[a, b]`, `a, b` or as `- a`
//! lines. Anything else is kept as text, so an odd file still loads with its body.

use std::collections::BTreeMap;

/// A file split into its front matter and its body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrontMatter {
    /// Each key's value as written (lists joined by `, `), keys in lowercase.
    pub fields: BTreeMap<String, String>,
    /// The text after the front matter (the whole file when it has none).
    pub body: String,
}

impl FrontMatter {
    /// Splits `text`; a file without a closing `---` is all body.
    pub fn parse(text: &str) -> FrontMatter {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut lines = text.split_inclusive('\n');
        let opens = lines.next().is_some_and(|first| first.trim_end() == "---");
        if !opens {
            return FrontMatter {
                fields: BTreeMap::new(),
                body: text.to_owned(),
            };
        }
        let mut block = Vec::new();
        let mut consumed = text.split_inclusive('\n').next().map_or(0, str::len);
        let mut closed = false;
        for line in lines {
            consumed += line.len();
            if line.trim_end() == "---" {
                closed = true;
                break;
            }
            block.push(line.trim_end_matches(['\n', '\r']));
        }
        if !closed {
            return FrontMatter {
                fields: BTreeMap::new(),
                body: text.to_owned(),
            };
        }
        FrontMatter {
            fields: fields(&block),
            body: text[consumed..].trim_start_matches(['\n', '\r']).to_owned(),
        }
    }

    /// The value of `key` (lowercase), when present and not empty.
    pub fn get(&self, key: &str) -> Option<&str> {
        (self.fields.get(key))
            .map(String::as_str)
            .filter(|value| !value.is_empty())
    }

    /// The value of `key` as a list: split at commas outside parentheses, so Claude Code's
    /// `Bash(git add:*), Read` is two items.
    pub fn list(&self, key: &str) -> Option<Vec<String>> {
        self.get(key).map(split_list)
    }
}

/// Splits a list written `a, b` (or `a b` when no comma: codex's `allowed-tools: Read Grep`)
/// at separators outside parentheses.
pub fn split_list(value: &str) -> Vec<String> {
    let separators: &[char] = if value.contains(',') {
        &[',']
    } else {
        &[' ', '\t']
    };
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for ch in value.chars() {
        match ch {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth == 0 && separators.contains(&ch) {
            items.push(std::mem::take(&mut current));
        } else {
            current.push(ch);
        }
    }
    items.push(current);
    (items.into_iter())
        .map(|item| unquote(item.trim()).to_owned())
        .filter(|item| !item.is_empty())
        .collect()
}

fn fields(block: &[&str]) -> BTreeMap<String, String> {
    let mut fields = BTreeMap::new();
    let mut index = 0;
    while index < block.len() {
        let line = block[index];
        index += 1;
        if line.starts_with([' ', '\t', '#']) || line.trim().is_empty() {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim().to_ascii_lowercase();
        let value = value.trim();
        // The indented lines that continue this key: a folded string or a list.
        let mut continued = Vec::new();
        while let Some(next) = block.get(index) {
            if !(next.starts_with([' ', '\t']) || next.trim().is_empty()) {
                break;
            }
            continued.push(next.trim());
            index += 1;
        }
        while continued.last().is_some_and(|line| line.is_empty()) {
            continued.pop();
        }
        let value = if value.starts_with('|') {
            continued.join("\n")
        } else if value.starts_with('>') || (value.is_empty() && !is_list(&continued)) {
            continued.join(" ")
        } else if value.is_empty() {
            (continued.iter())
                .filter_map(|line| line.strip_prefix('-'))
                .map(|item| unquote(item.trim()))
                .collect::<Vec<_>>()
                .join(", ")
        } else if let Some(inner) = (value.strip_prefix('[').and_then(|v| v.strip_suffix(']')))
            // `[pr-number] [priority]`, as Claude Code's argument hints are written, is text.
            .filter(|inner| !inner.contains(['[', ']']))
        {
            split_list(inner).join(", ")
        } else {
            let mut text = unquote(value).to_owned();
            // A plain string may go on over indented lines.
            for line in continued {
                text.push(' ');
                text.push_str(line);
            }
            text
        };
        fields.insert(key, value);
    }
    fields
}

fn is_list(lines: &[&str]) -> bool {
    !lines.is_empty() && lines.iter().all(|line| line.starts_with('-'))
}

fn unquote(value: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(inner) = (value.strip_prefix(quote)).and_then(|v| v.strip_suffix(quote)) {
            return inner;
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_codes_sub_agent_file_is_read() {
        let text = "---\nname: code-reviewer\ndescription: Expert code review specialist. \
                    Use immediately after writing code.\ntools: Read, Grep, Glob, Bash\n\
                    model: inherit\n---\n\nYou are a senior code reviewer.\n";
        let parsed = FrontMatter::parse(text);
        assert_eq!(parsed.get("name"), Some("code-reviewer"));
        assert_eq!(
            parsed.list("tools"),
            Some(vec![
                "Read".into(),
                "Grep".into(),
                "Glob".into(),
                "Bash".into()
            ])
        );
        assert_eq!(parsed.get("model"), Some("inherit"));
        assert_eq!(parsed.body, "You are a senior code reviewer.\n");
    }

    #[test]
    fn folded_quoted_and_listed_values_are_read() {
        let text = "---\ndescription: >\n  Extract text\n  from PDFs.\n\
                    argument-hint: [pr-number] [priority]\nallowed-tools:\n  - Read\n  - \
                    'Bash(git status:*)'\nkeys: [a, \"b\"]\n---\nBody";
        let parsed = FrontMatter::parse(text);
        assert_eq!(parsed.get("description"), Some("Extract text from PDFs."));
        assert_eq!(parsed.get("argument-hint"), Some("[pr-number] [priority]"));
        assert_eq!(
            parsed.list("allowed-tools"),
            Some(vec!["Read".into(), "Bash(git status:*)".into()])
        );
        assert_eq!(parsed.list("keys"), Some(vec!["a".into(), "b".into()]));
        assert_eq!(parsed.body, "Body");
    }

    #[test]
    fn commas_inside_parentheses_do_not_split_and_a_file_without_front_matter_is_body() {
        assert_eq!(
            split_list("Bash(git add:*), Bash(git commit:*)"),
            vec![
                "Bash(git add:*)".to_owned(),
                "Bash(git commit:*)".to_owned()
            ]
        );
        let plain = FrontMatter::parse("Review $1.\n---\n");
        assert!(plain.fields.is_empty());
        assert_eq!(plain.body, "Review $1.\n---\n");
        let unclosed = FrontMatter::parse("---\nname: x\nno end");
        assert!(unclosed.fields.is_empty());
    }
}
