//! Definitions and referenced identifiers of one source file, read from its tree-sitter tree.
//!
//! Only the top of the tree is searched for definitions: the items of the file (seen through
//! `export`, decorators and `#if` blocks, which signatures leave out) and one level of members (methods of a class, `impl`
//! or trait, functions of an inline module). References are every identifier in the file.

use tree_sitter::{Node, Parser};

use crate::lang::Lang;

/// The longest signature kept, in characters; longer ones end with `…`.
pub const MAX_SIGNATURE_CHARS: usize = 160;

/// At most this many definitions are kept per file (a generated file can have thousands).
const MAX_DEFINITIONS: usize = 400;

/// One definition: a function, type, method...
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    /// Its name, as other files would reference it.
    pub name: String,
    /// Its declaration on one line, without the body (`pub fn load(path: &Path) -> Config`).
    pub signature: String,
    /// 0 for an item of the file, 1 for a member (a method in a class or `impl`).
    pub depth: usize,
}

/// What one file defines and which names it uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Symbols {
    /// Definitions in source order.
    pub definitions: Vec<Definition>,
    /// Every identifier the file contains, sorted and without duplicates.
    pub references: Vec<String>,
}

/// Reusable parsers, one per language met (switching a parser's language each file costs
/// more than the parse of a small file): one extractor per thread.
pub struct Extractor {
    parsers: Vec<(Lang, Parser)>,
}

impl Default for Extractor {
    fn default() -> Self {
        Self::new()
    }
}

impl Extractor {
    /// An extractor with no parser yet.
    pub fn new() -> Self {
        Extractor {
            parsers: Vec::new(),
        }
    }

    fn parser(&mut self, lang: Lang) -> Option<&mut Parser> {
        let at = match self.parsers.iter().position(|(l, _)| *l == lang) {
            Some(at) => at,
            None => {
                let mut parser = Parser::new();
                parser.set_language(&lang.grammar()).ok()?;
                self.parsers.push((lang, parser));
                self.parsers.len() - 1
            }
        };
        self.parsers.get_mut(at).map(|(_, parser)| parser)
    }

    /// The definitions and references of `source`, a file in `lang`. A grammar that fails to
    /// load or a file that does not parse gives no symbols (the file is then listed by name).
    pub fn extract(&mut self, lang: Lang, source: &str) -> Symbols {
        let Some(tree) = self
            .parser(lang)
            .and_then(|parser| parser.parse(source, None))
        else {
            return Symbols::default();
        };
        let walk = Walk { lang, src: source };
        let mut definitions = Vec::new();
        walk.items(tree.root_node(), 0, &mut definitions);
        definitions.truncate(MAX_DEFINITIONS);
        Symbols {
            definitions,
            references: identifiers(tree.root_node(), source),
        }
    }
}

/// Every identifier-like leaf of the tree, sorted and deduplicated.
fn identifiers(root: Node, src: &str) -> Vec<String> {
    let mut names: Vec<&str> = Vec::new();
    let mut cursor = root.walk();
    'walk: loop {
        let node = cursor.node();
        if node.child_count() == 0 {
            if node.is_named() && node.kind().ends_with("identifier") {
                if let Some(text) = src.get(node.byte_range()) {
                    names.push(text);
                }
            }
        } else if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    names.sort_unstable();
    names.dedup();
    names.into_iter().map(str::to_owned).collect()
}

struct Walk<'a> {
    lang: Lang,
    src: &'a str,
}

impl Walk<'_> {
    fn text(&self, node: Node) -> &str {
        self.src.get(node.byte_range()).unwrap_or("")
    }

    fn field_text(&self, node: Node, field: &str) -> Option<String> {
        node.child_by_field_name(field)
            .map(|child| self.text(child).to_owned())
    }

    /// The node's text up to the first of `fields` that it has, on one line.
    fn head(&self, node: Node, fields: &[&str]) -> String {
        let end = (fields.iter())
            .filter_map(|field| node.child_by_field_name(field))
            .map(|child| child.start_byte())
            .min()
            .unwrap_or(node.end_byte());
        one_line(self.src.get(node.start_byte()..end).unwrap_or(""))
    }

    fn push(
        &self,
        out: &mut Vec<Definition>,
        name: Option<String>,
        signature: String,
        depth: usize,
    ) {
        if let Some(name) = name.filter(|name| !name.is_empty()) {
            if !signature.is_empty() {
                out.push(Definition {
                    name,
                    signature,
                    depth,
                });
            }
        }
    }

    /// The definitions among the named children of `node`.
    fn items(&self, node: Node, depth: usize, out: &mut Vec<Definition>) {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if out.len() >= MAX_DEFINITIONS {
                return;
            }
            self.item(child, depth, out);
        }
    }

    /// Adds the definition `node` is, then its members if it has some and `depth` allows.
    fn item(&self, node: Node, depth: usize, out: &mut Vec<Definition>) {
        let members = match (self.lang, node.kind()) {
            // Wrappers whose content is at the same level.
            (
                Lang::JavaScript | Lang::TypeScript | Lang::Tsx,
                "export_statement" | "ambient_declaration",
            )
            | (Lang::TypeScript | Lang::Tsx, "expression_statement")
            | (Lang::Python, "decorated_definition")
            | (
                Lang::C,
                "preproc_ifdef" | "preproc_if" | "preproc_else" | "preproc_elif"
                | "preproc_elifdef",
            ) => {
                self.items(node, depth, out);
                return;
            }
            (Lang::Rust, "function_item") => self.simple(node, &["body"], depth, out, None),
            (Lang::Rust, "function_signature_item") => self.simple(node, &[], depth, out, None),
            (Lang::Rust, "struct_item" | "enum_item" | "union_item" | "trait_item") => {
                self.simple(node, &["body"], depth, out, Some("body"))
            }
            (Lang::Rust, "mod_item") => self.simple(node, &["body"], depth, out, Some("body")),
            (Lang::Rust, "const_item" | "static_item") => {
                self.simple(node, &["value"], depth, out, None)
            }
            (Lang::Rust, "type_item") => self.simple(node, &["type"], depth, out, None),
            (Lang::Rust, "macro_definition") => {
                let name = self.field_text(node, "name");
                let signature = name.as_ref().map(|n| format!("macro_rules! {n}"));
                self.push(out, name, signature.unwrap_or_default(), depth);
                None
            }
            (Lang::Rust, "impl_item") => {
                let name = self.field_text(node, "type");
                self.push(out, name, self.head(node, &["body"]), depth);
                node.child_by_field_name("body")
            }
            (Lang::Python, "function_definition") => self.simple(node, &["body"], depth, out, None),
            (Lang::Python, "class_definition") => {
                self.simple(node, &["body"], depth, out, Some("body"))
            }
            (
                Lang::JavaScript | Lang::TypeScript | Lang::Tsx,
                "function_declaration" | "generator_function_declaration" | "method_definition",
            ) => self.simple(node, &["body"], depth, out, None),
            (
                Lang::JavaScript | Lang::TypeScript | Lang::Tsx,
                "class_declaration" | "abstract_class_declaration",
            ) => self.simple(node, &["body"], depth, out, Some("body")),
            (
                Lang::JavaScript | Lang::TypeScript | Lang::Tsx,
                "lexical_declaration" | "variable_declaration",
            ) => {
                self.js_functions(node, depth, out);
                None
            }
            (
                Lang::TypeScript | Lang::Tsx,
                "interface_declaration" | "enum_declaration" | "internal_module" | "module",
            ) => self.simple(node, &["body"], depth, out, Some("body")),
            (Lang::TypeScript | Lang::Tsx, "type_alias_declaration") => {
                self.simple(node, &["value"], depth, out, None)
            }
            (
                Lang::TypeScript | Lang::Tsx,
                "function_signature" | "method_signature" | "abstract_method_signature",
            ) => self.simple(node, &[], depth, out, None),
            (Lang::Go, "function_declaration" | "method_declaration") => {
                self.simple(node, &["body"], depth, out, None)
            }
            (Lang::Go, "type_declaration") => {
                let mut cursor = node.walk();
                for spec in node.named_children(&mut cursor) {
                    let name = self.field_text(spec, "name");
                    let first = self.text(spec).lines().next().unwrap_or("");
                    self.push(out, name, one_line(&format!("type {first}")), depth);
                }
                None
            }
            (Lang::C, "function_definition") => {
                let name = node
                    .child_by_field_name("declarator")
                    .and_then(|d| self.c_name(d));
                self.push(out, name, self.head(node, &["body"]), depth);
                None
            }
            (Lang::C, "declaration") => {
                self.c_declaration(node, depth, out);
                None
            }
            (Lang::C, "struct_specifier" | "union_specifier" | "enum_specifier") => {
                self.c_record(node, depth, out);
                None
            }
            (Lang::C, "type_definition") => {
                let name = node
                    .child_by_field_name("declarator")
                    .and_then(|d| self.c_name(d));
                let head = node
                    .child_by_field_name("type")
                    .map(|t| self.head(t, &["body"]))
                    .unwrap_or_default();
                let signature = name
                    .as_ref()
                    .map(|n| one_line(&format!("typedef {head} {n}")));
                self.push(out, name, signature.unwrap_or_default(), depth);
                None
            }
            (Lang::C, "preproc_function_def") => self.simple(node, &["value"], depth, out, None),
            _ => None,
        };
        if let Some(body) = members.filter(|_| depth == 0) {
            self.items(body, depth + 1, out);
        }
    }

    /// A definition named by its `name` field, signed by its text up to `cut`; returns the
    /// node holding its members when `members` names one.
    fn simple<'t>(
        &self,
        node: Node<'t>,
        cut: &[&str],
        depth: usize,
        out: &mut Vec<Definition>,
        members: Option<&str>,
    ) -> Option<Node<'t>> {
        self.push(
            out,
            self.field_text(node, "name"),
            self.head(node, cut),
            depth,
        );
        members.and_then(|field| node.child_by_field_name(field))
    }

    /// `const f = (a) => ...` and `let g = function () {}`: variables holding functions or
    /// classes count as definitions.
    fn js_functions(&self, node: Node, depth: usize, out: &mut Vec<Definition>) {
        let mut cursor = node.walk();
        for declarator in node.named_children(&mut cursor) {
            if declarator.kind() != "variable_declarator" {
                continue;
            }
            let Some(value) = declarator.child_by_field_name("value") else {
                continue;
            };
            if !matches!(
                value.kind(),
                "arrow_function"
                    | "function_expression"
                    | "function"
                    | "generator_function"
                    | "class"
            ) {
                continue;
            }
            let end = (value.child_by_field_name("body"))
                .map_or(value.end_byte(), |body| body.start_byte());
            let head = one_line(self.src.get(node.start_byte()..end).unwrap_or(""));
            let signature = head.trim_end_matches("=>").trim_end().to_owned();
            self.push(out, self.field_text(declarator, "name"), signature, depth);
        }
    }

    /// The identifier a C declarator declares (through pointers, arrays, parentheses).
    fn c_name(&self, mut node: Node) -> Option<String> {
        for _ in 0..16 {
            match node.kind() {
                "identifier" | "field_identifier" | "type_identifier" => {
                    return Some(self.text(node).to_owned());
                }
                _ => node = node.child_by_field_name("declarator")?,
            }
        }
        None
    }

    fn c_is_function(node: Node) -> bool {
        let mut node = Some(node);
        for _ in 0..16 {
            match node {
                Some(n) if n.kind() == "function_declarator" => return true,
                Some(n) => node = n.child_by_field_name("declarator"),
                None => return false,
            }
        }
        false
    }

    /// A prototype (`int f(int x);`) or a declaration whose type defines a record.
    fn c_declaration(&self, node: Node, depth: usize, out: &mut Vec<Definition>) {
        if let Some(record) = node.child_by_field_name("type") {
            self.c_record(record, depth, out);
        }
        let mut cursor = node.walk();
        for declarator in node.children_by_field_name("declarator", &mut cursor) {
            if Self::c_is_function(declarator) {
                let signature = one_line(self.text(node));
                self.push(out, self.c_name(declarator), signature, depth);
            }
        }
    }

    /// `struct point { ... }`: a named record with a body.
    fn c_record(&self, node: Node, depth: usize, out: &mut Vec<Definition>) {
        if matches!(
            node.kind(),
            "struct_specifier" | "union_specifier" | "enum_specifier"
        ) && node.child_by_field_name("body").is_some()
        {
            self.simple(node, &["body"], depth, out, None);
        }
    }
}

/// `text` on one line: whitespace runs become one space, a trailing `{`, `:`, `=` or `;` is
/// dropped, and a long result is cut at [`MAX_SIGNATURE_CHARS`] with `…`.
pub fn one_line(text: &str) -> String {
    let mut line = String::with_capacity(text.len().min(MAX_SIGNATURE_CHARS + 8));
    for word in text.split_whitespace() {
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    let trimmed = line.trim_end_matches(['{', ':', '=', ';', ' ']);
    if trimmed.chars().count() <= MAX_SIGNATURE_CHARS {
        return trimmed.to_owned();
    }
    let mut cut: String = trimmed.chars().take(MAX_SIGNATURE_CHARS - 1).collect();
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests;
