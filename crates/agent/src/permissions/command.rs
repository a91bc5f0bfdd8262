//! A shell command as `/bin/sh` will run it, for permission rules: parsed with the
//! tree-sitter Bash grammar into the simple commands of its `;`, `&&`, `||`, `|` and `&`
//! chain, each as the words it runs with (quotes removed).
//!
//! A command is only "plain" when every part of it is such a chain of simple commands whose
//! words are literal: no command substitution (`$(...)`, backticks), no process
//! substitution, no variable or arithmetic expansion, no environment assignment in front
//! of a command, no subshell, function, loop or condition, and output redirected only to
//! `/dev/null`, another descriptor, or a relative path outside the protected names. Only a
//! plain command can match an allow rule: anything else might run something the words do
//! not show. Deny rules look at every simple command found anywhere in the tree, plain or
//! not.

use tree_sitter::{Node, Parser};

/// Names a redirection may never write into (relative to the project), whatever the rule.
pub const PROTECTED_NAMES: [&str; 4] = [".git", ".ybs", ".ybs.json", ".env"];

/// A command line taken apart.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParsedCommand {
    /// The simple commands of the chain, in order, each as its words.
    pub commands: Vec<Vec<String>>,
    /// Whether the whole line is a chain of plain simple commands (see the module docs);
    /// when false, `commands` holds what could be read, for deny rules only.
    pub plain: bool,
    /// Why the line is not plain, for the prompt.
    pub not_plain: Option<String>,
}

/// Parses `line`. A line the grammar cannot parse completely is not plain.
pub fn parse(line: &str) -> ParsedCommand {
    let mut parser = Parser::new();
    if parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .is_err()
    {
        return not_plain(Vec::new(), "the shell grammar could not be loaded");
    }
    let Some(tree) = parser.parse(line, None) else {
        return not_plain(Vec::new(), "the command could not be parsed");
    };
    let root = tree.root_node();
    let mut walk = Walk {
        source: line.as_bytes(),
        commands: Vec::new(),
        reason: None,
    };
    if root.has_error() {
        walk.reason = Some("the command does not parse as shell syntax".into());
    }
    walk.statements(root);
    ParsedCommand {
        plain: walk.reason.is_none() && !walk.commands.is_empty(),
        not_plain: walk.reason.or_else(|| {
            walk.commands
                .is_empty()
                .then(|| "the command is empty".to_owned())
        }),
        commands: walk.commands,
    }
}

fn not_plain(commands: Vec<Vec<String>>, reason: &str) -> ParsedCommand {
    ParsedCommand {
        commands,
        plain: false,
        not_plain: Some(reason.to_owned()),
    }
}

struct Walk<'a> {
    source: &'a [u8],
    commands: Vec<Vec<String>>,
    /// The first reason the line is not plain.
    reason: Option<String>,
}

impl Walk<'_> {
    fn text(&self, node: Node<'_>) -> &str {
        node.utf8_text(self.source).unwrap_or("")
    }

    fn taint(&mut self, reason: impl Into<String>) {
        if self.reason.is_none() {
            self.reason = Some(reason.into());
        }
    }

    /// The statements under `node` (the program, a list, a pipeline): separators are
    /// skipped, each statement handled.
    fn statements(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            self.statement(child);
        }
    }

    fn statement(&mut self, node: Node<'_>) {
        match node.kind() {
            "comment" => {}
            "list" | "pipeline" => self.statements(node),
            "command" => self.command(node),
            "redirected_statement" => {
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    match child.kind() {
                        "file_redirect" => self.redirect(child),
                        "heredoc_redirect" | "herestring_redirect" => self.data_redirect(child),
                        _ => self.statement(child),
                    }
                }
            }
            other => {
                self.taint(format!("it contains {}", readable(other)));
                self.find_commands(node);
            }
        }
    }

    /// Every command anywhere under `node`, for deny rules (the line is already not plain).
    fn find_commands(&mut self, node: Node<'_>) {
        if node.kind() == "command" {
            self.command(node);
            return;
        }
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            self.find_commands(child);
        }
    }

    fn command(&mut self, node: Node<'_>) {
        let mut words = Vec::new();
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "command_name" => {
                    let mut inner = child.walk();
                    for part in child.named_children(&mut inner) {
                        words.push(self.word(part));
                    }
                }
                "variable_assignment" => {
                    self.taint("it sets environment variables for a command");
                    self.find_commands(child);
                }
                "file_redirect" => self.redirect(child),
                "herestring_redirect" => self.data_redirect(child),
                _ if is_word(child.kind()) => words.push(self.word(child)),
                other => {
                    self.taint(format!("it contains {}", readable(other)));
                    self.find_commands(child);
                }
            }
        }
        // Inner commands found while reading the words come after this one.
        self.commands.push(words);
    }

    /// The literal text of a word, quotes removed; anything that expands taints the line
    /// (and the commands inside a substitution are collected for deny rules).
    fn word(&mut self, node: Node<'_>) -> String {
        match node.kind() {
            "word" | "number" => unescape(self.text(node)),
            "raw_string" => {
                let text = self.text(node);
                text.strip_prefix('\'')
                    .and_then(|t| t.strip_suffix('\''))
                    .unwrap_or(text)
                    .to_owned()
            }
            "string" => {
                let mut out = String::new();
                let mut cursor = node.walk();
                for part in node.named_children(&mut cursor) {
                    if part.kind() == "string_content" {
                        out.push_str(&unescape_double(self.text(part)));
                    } else {
                        out.push_str(&self.word(part));
                    }
                }
                out
            }
            "concatenation" => {
                let mut out = String::new();
                let mut cursor = node.walk();
                for part in node.named_children(&mut cursor) {
                    out.push_str(&self.word(part));
                }
                out
            }
            other => {
                self.taint(format!("it contains {}", readable(other)));
                self.find_commands(node);
                self.text(node).to_owned()
            }
        }
    }

    /// `< file`, `> file`, `2>&1`...: output may go to `/dev/null`, a descriptor, or a plain
    /// relative path outside [`PROTECTED_NAMES`].
    fn redirect(&mut self, node: Node<'_>) {
        let text = self.text(node).to_owned();
        let input = (text.trim_start_matches(|c: char| c.is_ascii_digit())).starts_with('<')
            && !text.contains("<>");
        let mut destination = None;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if child.kind() == "file_descriptor" {
                continue;
            }
            destination = Some(self.word(child));
        }
        if input {
            return;
        }
        let Some(target) = destination else {
            return;
        };
        // `2>&1`, `>&2`, `>&-`: a descriptor, not a file.
        let descriptor = target.chars().all(|c| c.is_ascii_digit() || c == '-');
        if text.contains(">&") && descriptor {
            return;
        }
        if target == "/dev/null" {
            return;
        }
        if !is_safe_target(&target) {
            self.taint(format!("it redirects output into `{target}`"));
        }
    }

    /// Here-documents and here-strings feed data in; expansions inside them still count.
    fn data_redirect(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "heredoc_start" | "heredoc_end" | "file_descriptor" => {}
                "heredoc_body" => {
                    let mut inner = child.walk();
                    for part in child.named_children(&mut inner) {
                        if part.kind() != "heredoc_content" {
                            self.word(part);
                        }
                    }
                }
                _ if is_word(child.kind()) => {
                    self.word(child);
                }
                _ => self.statement(child),
            }
        }
    }
}

fn is_word(kind: &str) -> bool {
    matches!(
        kind,
        "word"
            | "number"
            | "raw_string"
            | "string"
            | "concatenation"
            | "ansi_c_string"
            | "translated_string"
            | "simple_expansion"
            | "expansion"
            | "command_substitution"
            | "process_substitution"
            | "arithmetic_expansion"
            | "brace_expression"
    )
}

/// A redirection target inside the project that is not protected: relative, no `..`, and
/// not one of [`PROTECTED_NAMES`] or inside one.
fn is_safe_target(target: &str) -> bool {
    if target.is_empty() || target.starts_with('/') || target.starts_with('~') {
        return false;
    }
    let mut parts = target
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".");
    if target.split('/').any(|part| part == "..") {
        return false;
    }
    !parts.any(|part| PROTECTED_NAMES.contains(&part))
}

/// An unquoted word as the shell reads it: a backslash takes the next character literally.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                if next != '\n' {
                    out.push(next);
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Inside double quotes a backslash only escapes `$`, `` ` ``, `"`, `\` and a newline.
fn unescape_double(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    if let Some(next) = chars.next() {
                        out.push(next);
                    }
                }
                Some('\n') => {
                    chars.next();
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A node kind in words.
fn readable(kind: &str) -> &'static str {
    match kind {
        "command_substitution" => "a command substitution ($(...) or backticks)",
        "process_substitution" => "a process substitution",
        "simple_expansion" | "expansion" => "a variable expansion",
        "arithmetic_expansion" => "an arithmetic expansion",
        "subshell" => "a subshell",
        "compound_statement" => "a command group",
        "function_definition" => "a function definition",
        "if_statement" | "case_statement" => "a condition",
        "for_statement" | "c_style_for_statement" | "while_statement" => "a loop",
        "variable_assignment" | "declaration_command" | "unset_command" => "a variable assignment",
        "negated_command" => "a negated command",
        "test_command" => "a test expression",
        "brace_expression" => "a brace expansion",
        "ansi_c_string" | "translated_string" => "a special string",
        _ => "shell syntax that is not a plain command",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Vec<String>> {
        parse(line).commands
    }

    #[test]
    fn chains_split_into_their_commands_with_quotes_removed() {
        let parsed = parse("git status && cargo test --all; ls -la | grep 'a b' || echo \"x y\"");
        assert!(parsed.plain, "{parsed:?}");
        assert_eq!(
            parsed.commands,
            vec![
                vec!["git", "status"],
                vec!["cargo", "test", "--all"],
                vec!["ls", "-la"],
                vec!["grep", "a b"],
                vec!["echo", "x y"],
            ]
        );
        assert_eq!(words("cargo\\ test"), vec![vec!["cargo test"]]);
    }

    #[test]
    fn substitutions_expansions_and_assignments_are_not_plain() {
        for line in [
            "echo $(rm -rf ~)",
            "echo `whoami`",
            "ls $HOME",
            "FOO=1 cargo test",
            "(cd /; ls)",
            "for f in *; do rm $f; done",
            "cat <(ls)",
            "ls &&",
            "f() { ls; }; f",
        ] {
            let parsed = parse(line);
            assert!(!parsed.plain, "{line}: {parsed:?}");
            assert!(parsed.not_plain.is_some(), "{line}");
        }
        // What runs inside a substitution is still seen, for deny rules.
        assert!(words("echo $(git push)").contains(&vec!["git".into(), "push".into()]));
    }

    #[test]
    fn redirections_into_protected_paths_are_not_plain() {
        for line in [
            "cargo test > out.txt",
            "ls 2>&1 | head",
            "ls > /dev/null",
            "wc < a.txt",
        ] {
            assert!(parse(line).plain, "{line}");
        }
        for line in [
            "echo x > .git/config",
            "echo x >> .ybs.json",
            "echo x > ../elsewhere",
            "echo x > /etc/passwd",
            "echo x > ~/.bashrc",
            "echo x > sub/.git/hooks/pre-commit",
        ] {
            let parsed = parse(line);
            assert!(!parsed.plain, "{line}");
            assert!(
                parsed.not_plain.unwrap().contains("redirects output"),
                "{line}"
            );
        }
    }
}
