//! A shell command as `/bin/sh` will run it, for permission rules: parsed with the
//! tree-sitter Bash grammar into the simple commands of its `;`, `&&`, `||`, `|` and `&`
//! chain, each as the program that runs and its words (quotes removed, wrappers and git's
//! global options seen through by [`ybs_tools::shell::program::resolve`]) and the files its
//! output is redirected into.
//!
//! A command is only "plain" when the parser can show it is exactly what the shell runs:
//! a chain of simple commands whose words are literal, with no command substitution
//! (`$(...)`, backticks), process substitution, variable or arithmetic expansion,
//! environment assignment, subshell, function, loop or condition, no code run from text
//! (`eval`, `sh -c`, `source`, `.`, `alias`), no here-document whose delimiter is quoted or
//! unusual (the grammar and the shell disagree where it ends), and output redirected only
//! to `/dev/null`, another descriptor, or a relative path outside the protected names and
//! the configuration files. Only a plain command can match an allow rule. Deny rules look
//! at every simple command found anywhere in the tree, plain or not; where the parser
//! cannot tell what runs (an unknown program, a word only the shell knows, a line it cannot
//! parse) the command is unknown, and an unknown command matches every deny rule.

use tree_sitter::{Node, Parser};
use ybs_tools::shell::program::{self, Word};

/// Names a redirection may never write into (relative to the project), whatever the rule.
pub const PROTECTED_NAMES: [&str; 4] = [".git", ".ybs", ".ybs.json", ".env"];

/// How deep code run from text (`sh -c "eval '...'"`) is followed before it counts as
/// unknown.
const MAX_DEPTH: usize = 4;

/// One simple command: what runs, and where its output goes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SimpleCommand {
    /// The program (base name) and its arguments, `None` where only the shell knows the
    /// word (a glob, an expansion).
    pub words: Vec<Word>,
    /// Further words may follow that the line does not show (`xargs`).
    pub more: bool,
    /// Whether the words are exactly what runs (see [`program::Resolved::exact`]).
    pub exact: bool,
    /// Output redirected into files: the operator (`>`, `>>`, `2>`) and the target.
    pub writes: Vec<(String, String)>,
    /// The command as written from each wrapper its program was found behind (`sudo git
    /// push`): a deny rule naming the wrapper matches these.
    pub wrappers: Vec<Vec<Word>>,
}

impl SimpleCommand {
    /// A command the parser cannot know.
    fn unknown() -> Self {
        SimpleCommand {
            words: vec![None],
            more: true,
            exact: false,
            writes: Vec::new(),
            wrappers: Vec::new(),
        }
    }

    /// The literal words, when every word is literal.
    pub fn literal(&self) -> Option<Vec<String>> {
        self.words.iter().cloned().collect()
    }
}

/// A command line taken apart.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParsedCommand {
    /// The simple commands of the chain, in order, then those found inside them.
    pub commands: Vec<SimpleCommand>,
    /// Whether the whole line is a chain of plain simple commands (see the module docs);
    /// when false, `commands` holds what could be read, for deny rules only.
    pub plain: bool,
    /// Why the line is not plain, for the prompt.
    pub not_plain: Option<String>,
}

/// Parses `line`. A line the grammar cannot parse completely is not plain, and unknown.
pub fn parse(line: &str) -> ParsedCommand {
    parse_at(line, 0)
}

fn parse_at(line: &str, depth: usize) -> ParsedCommand {
    let mut walk = Walk {
        source: line.as_bytes(),
        commands: Vec::new(),
        reason: None,
        depth,
    };
    let mut parser = Parser::new();
    let tree = parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .ok()
        .and_then(|()| parser.parse(line, None));
    match tree {
        None => walk.unknown("the command could not be parsed"),
        Some(tree) => {
            let root = tree.root_node();
            if root.has_error() {
                walk.unknown("the command does not parse as shell syntax");
            }
            walk.statements(root);
        }
    }
    let exact = walk.commands.iter().all(|c| c.exact && !c.more);
    if walk.reason.is_none() && !exact {
        walk.taint("it runs something its words do not show (a wrapper's options, a path)");
    }
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

struct Walk<'a> {
    source: &'a [u8],
    commands: Vec<SimpleCommand>,
    /// The first reason the line is not plain.
    reason: Option<String>,
    depth: usize,
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

    /// The parser cannot tell what runs: not plain, and a command every deny rule matches.
    fn unknown(&mut self, reason: &str) {
        self.taint(reason);
        self.commands.push(SimpleCommand::unknown());
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
                let first = self.commands.len();
                let mut writes = Vec::new();
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    match child.kind() {
                        "file_redirect" => writes.extend(self.redirect(child)),
                        "heredoc_redirect" | "herestring_redirect" => self.data_redirect(child),
                        _ => self.statement(child),
                    }
                }
                // The redirection applies to the commands of the statement it follows.
                for command in &mut self.commands[first..] {
                    command.writes.extend(writes.iter().cloned());
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
        match node.kind() {
            "command" => self.command(node),
            "heredoc_redirect" | "herestring_redirect" => self.data_redirect(node),
            "file_redirect" => {
                self.redirect(node);
            }
            _ => {
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    self.find_commands(child);
                }
            }
        }
    }

    fn command(&mut self, node: Node<'_>) {
        let mut words = Vec::new();
        let mut writes = Vec::new();
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
                "file_redirect" => writes.extend(self.redirect(child)),
                "herestring_redirect" | "heredoc_redirect" => self.data_redirect(child),
                _ if is_word(child.kind()) => words.push(self.word(child)),
                other => {
                    self.taint(format!("it contains {}", readable(other)));
                    self.find_commands(child);
                }
            }
        }
        // Inner commands found while reading the words come after this one.
        self.push(words, writes);
    }

    /// Resolves a simple command's program and records it, with what it runs in turn.
    fn push(&mut self, words: Vec<Word>, writes: Vec<(String, String)>) {
        let resolved = program::resolve(&words);
        if resolved.words.first().is_some_and(Option::is_none) {
            self.taint("the program it runs is not known before the shell runs it");
        }
        self.commands.push(SimpleCommand {
            words: resolved.words,
            more: resolved.more,
            exact: resolved.exact,
            writes,
            wrappers: resolved.wrappers,
        });
        if let Some(script) = resolved.script {
            self.taint("it runs code given as text (eval, sh -c, trap)");
            if self.depth >= MAX_DEPTH {
                self.commands.push(SimpleCommand::unknown());
            } else {
                let inner = parse_at(&script, self.depth + 1);
                self.commands.extend(inner.commands);
            }
        }
        for nested in resolved.nested {
            self.taint("it runs further commands (find -exec)");
            self.push(nested, Vec::new());
        }
    }

    /// The literal text of a word, quotes removed; `None` when only the shell knows it: an
    /// expansion (which taints the line; the commands inside a substitution are collected
    /// for deny rules) or a glob (file names; an allow rule's `*` may cover it).
    fn word(&mut self, node: Node<'_>) -> Word {
        match node.kind() {
            "word" | "number" => {
                let text = self.text(node);
                (!has_glob(text)).then(|| unescape(text))
            }
            "raw_string" => {
                let text = self.text(node);
                Some(
                    text.strip_prefix('\'')
                        .and_then(|t| t.strip_suffix('\''))
                        .unwrap_or(text)
                        .to_owned(),
                )
            }
            "string" => {
                let mut out = Some(String::new());
                let mut cursor = node.walk();
                for part in node.named_children(&mut cursor) {
                    let piece = if part.kind() == "string_content" {
                        Some(unescape_double(self.text(part)))
                    } else {
                        self.word(part)
                    };
                    out = out.zip(piece).map(|(out, piece)| out + &piece);
                }
                out
            }
            "concatenation" => {
                let mut out = Some(String::new());
                let mut cursor = node.walk();
                for part in node.named_children(&mut cursor) {
                    let piece = self.word(part);
                    out = out.zip(piece).map(|(out, piece)| out + &piece);
                }
                out
            }
            other => {
                self.taint(format!("it contains {}", readable(other)));
                self.find_commands(node);
                None
            }
        }
    }

    /// `< file`, `> file`, `2>&1`...: the file output goes into (operator and target), or
    /// nothing for input, `/dev/null` and descriptors. A target that is not a plain relative
    /// path outside [`PROTECTED_NAMES`] and the configuration files taints the line.
    fn redirect(&mut self, node: Node<'_>) -> Option<(String, String)> {
        let text = self.text(node).to_owned();
        let input = (text.trim_start_matches(|c: char| c.is_ascii_digit())).starts_with('<')
            && !text.contains("<>");
        let mut destination = None;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if child.kind() == "file_descriptor" {
                continue;
            }
            let start = child.start_byte().saturating_sub(node.start_byte());
            let operator = text.get(..start).unwrap_or("").trim().to_owned();
            destination = Some((operator, self.word(child)));
        }
        if input {
            return None;
        }
        let (operator, target) = destination?;
        let Some(target) = target else {
            self.taint("it redirects output into a file named only when the shell runs");
            return None;
        };
        // `2>&1`, `>&2`, `>&-`: a descriptor, not a file.
        let descriptor = target.chars().all(|c| c.is_ascii_digit() || c == '-');
        if (text.contains(">&") && descriptor) || target == "/dev/null" {
            return None;
        }
        if !is_safe_target(&target) {
            self.taint(format!("it redirects output into `{target}`"));
        }
        Some((operator, target))
    }

    /// Here-documents and here-strings feed data in; expansions inside them still count. A
    /// here-document whose delimiter is not a plain word is unknown: the shell removes its
    /// quotes and may end it elsewhere than the grammar does, running the lines between.
    fn data_redirect(&mut self, node: Node<'_>) {
        let mut delimiter = None;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "heredoc_start" => {
                    let text = self.text(child).to_owned();
                    if !is_plain_delimiter(&text) {
                        self.unknown(
                            "it has a here-document with a quoted or unusual delimiter, which \
                             the shell may end elsewhere",
                        );
                    }
                    delimiter = Some(text);
                }
                "heredoc_end" | "file_descriptor" => {}
                "heredoc_body" => {
                    let body = self.text(child).to_owned();
                    if let Some(delimiter) = &delimiter
                        && body
                            .lines()
                            .any(|line| line.trim_start_matches('\t') == delimiter)
                    {
                        self.unknown("its here-document holds its own delimiter");
                    }
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

/// A here-document delimiter both the grammar and every shell read the same way.
fn is_plain_delimiter(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether an unquoted word holds a glob character the shell expands to file names.
fn has_glob(text: &str) -> bool {
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '*' | '?' | '[' => return true,
            _ => {}
        }
    }
    false
}

/// A redirection target inside the project that is not protected: relative, no `..`, and
/// neither one of [`PROTECTED_NAMES`] or inside one, nor a file ybs reads as configuration.
fn is_safe_target(target: &str) -> bool {
    if target.is_empty() || target.starts_with('/') || target.starts_with('~') {
        return false;
    }
    if target.split('/').any(|part| part == "..") {
        return false;
    }
    if ybs_tools::protected::is_configuration(std::path::Path::new(target)) {
        return false;
    }
    let mut parts = target
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".");
    !parts.any(|part| PROTECTED_NAMES.contains(&part))
}

/// An unquoted word as the shell reads it: a backslash takes the next character literally.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next()
                && next != '\n'
            {
                out.push(next);
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
#[path = "command_tests.rs"]
mod tests;
