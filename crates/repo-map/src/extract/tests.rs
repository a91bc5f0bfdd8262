use super::*;

/// `(depth, signature)` of each definition, and whether `name` is among the references.
fn defs(lang: Lang, source: &str) -> Vec<(usize, String)> {
    let symbols = Extractor::new().extract(lang, source);
    (symbols.definitions.iter())
        .map(|d| (d.depth, d.signature.clone()))
        .collect()
}

fn names(lang: Lang, source: &str) -> Vec<String> {
    let symbols = Extractor::new().extract(lang, source);
    symbols.definitions.into_iter().map(|d| d.name).collect()
}

fn sig(depth: usize, text: &str) -> (usize, String) {
    (depth, text.to_owned())
}

#[test]
fn rust_items_impls_traits_and_members() {
    let source = r#"
use std::fmt;

/// Docs are not part of the signature.
#[derive(Debug)]
pub struct Config<T: Clone> {
    name: String,
}

pub enum Mode { A, B }

pub trait Store {
    fn get(&self, key: &str) -> Option<String>;
}

impl<T: Clone> Config<T> {
    pub fn load(
        path: &std::path::Path,
    ) -> Result<Self, Error> {
        let inner = 1;
        fn nested() {}
        todo!()
    }
}

pub const MAX: usize = 10;
pub type Map = std::collections::HashMap<String, String>;
macro_rules! shout { () => {} }

fn helper(x: u32) -> u32 { x }
"#;
    assert_eq!(
        defs(Lang::Rust, source),
        vec![
            sig(0, "pub struct Config<T: Clone>"),
            sig(0, "pub enum Mode"),
            sig(0, "pub trait Store"),
            sig(1, "fn get(&self, key: &str) -> Option<String>"),
            sig(0, "impl<T: Clone> Config<T>"),
            sig(
                1,
                "pub fn load( path: &std::path::Path, ) -> Result<Self, Error>"
            ),
            sig(0, "pub const MAX: usize"),
            sig(0, "pub type Map"),
            sig(0, "macro_rules! shout"),
            sig(0, "fn helper(x: u32) -> u32"),
        ]
    );
    assert_eq!(
        names(Lang::Rust, source),
        [
            "Config",
            "Mode",
            "Store",
            "get",
            "Config<T>",
            "load",
            "MAX",
            "Map",
            "shout",
            "helper"
        ]
    );
}

#[test]
fn references_are_the_identifiers_of_the_file() {
    let symbols = Extractor::new().extract(
        Lang::Rust,
        "fn main() { let c = Config::load(path); c.run(); }",
    );
    for name in ["Config", "load", "path", "run", "main", "c"] {
        assert!(symbols.references.contains(&name.to_owned()), "{name}");
    }
    let mut sorted = symbols.references.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(symbols.references, sorted);
}

#[test]
fn python_functions_classes_methods_and_decorators() {
    let source = "\
import os

@dataclass
class Point(Base):
    x: int

    def norm(self) -> float:
        def inner():
            pass
        return 0.0

    @property
    def y(self):
        return 1

async def fetch(url: str,
                timeout: int = 3) -> bytes:
    pass

CONSTANT = 3
";
    assert_eq!(
        defs(Lang::Python, source),
        vec![
            sig(0, "class Point(Base)"),
            sig(1, "def norm(self) -> float"),
            sig(1, "def y(self)"),
            sig(0, "async def fetch(url: str, timeout: int = 3) -> bytes"),
        ]
    );
}

#[test]
fn javascript_functions_classes_and_arrow_constants() {
    let source = "\
import x from 'y';
export function parse(text, options = {}) { return 1; }
export default class Parser extends Base {
  constructor(a) { super(); }
  static make() { return new Parser(); }
}
const add = (a, b) => a + b;
let handler = async function (event) { };
const answer = 42;
function* gen() { yield 1; }
";
    assert_eq!(
        defs(Lang::JavaScript, source),
        vec![
            sig(0, "function parse(text, options = {})"),
            sig(0, "class Parser extends Base"),
            sig(1, "constructor(a)"),
            sig(1, "static make()"),
            sig(0, "const add = (a, b)"),
            sig(0, "let handler = async function (event)"),
            sig(0, "function* gen()"),
        ]
    );
}

#[test]
fn typescript_interfaces_types_enums_and_classes() {
    let source = "\
export interface Shape {
  area(): number;
  name: string;
}
export type Id = string | number;
enum Color { Red, Green }
export abstract class Base<T> implements Shape {
  abstract area(): number;
  protected describe(prefix: string): string { return prefix; }
}
namespace Util { export function clamp(x: number): number { return x; } }
declare function external(a: number): void;
";
    assert_eq!(
        defs(Lang::TypeScript, source),
        vec![
            sig(0, "interface Shape"),
            sig(1, "area(): number"),
            sig(0, "type Id"),
            sig(0, "enum Color"),
            sig(0, "abstract class Base<T> implements Shape"),
            sig(1, "abstract area(): number"),
            sig(1, "protected describe(prefix: string): string"),
            sig(0, "namespace Util"),
            sig(1, "function clamp(x: number): number"),
            sig(0, "function external(a: number): void"),
        ]
    );
}

#[test]
fn tsx_parses_with_its_own_grammar() {
    let source = "export const App = (props: Props) => <div>{props.title}</div>;\n";
    assert_eq!(
        defs(Lang::Tsx, source),
        vec![sig(0, "const App = (props: Props)")]
    );
}

#[test]
fn go_functions_methods_and_types() {
    let source = "\
package store

import \"fmt\"

type Store struct {
	items map[string]string
}

type (
	Key string
	Getter interface {
		Get(k Key) string
	}
)

func New() *Store { return &Store{} }

func (s *Store) Get(k Key) (string, error) {
	return fmt.Sprint(k), nil
}
";
    assert_eq!(
        defs(Lang::Go, source),
        vec![
            sig(0, "type Store struct"),
            sig(0, "type Key string"),
            sig(0, "type Getter interface"),
            sig(0, "func New() *Store"),
            sig(0, "func (s *Store) Get(k Key) (string, error)"),
        ]
    );
}

#[test]
fn c_functions_prototypes_records_typedefs_and_macros_inside_guards() {
    let source = "\
#ifndef LIST_H
#define LIST_H
#include <stddef.h>

struct node {
    int value;
    struct node *next;
};

typedef struct list {
    struct node *head;
} list_t;

typedef unsigned long size;

#define MAX(a, b) ((a) > (b) ? (a) : (b))

int list_len(const list_t *list);
static char *name_of(struct node *n) { return 0; }

#endif
";
    assert_eq!(
        defs(Lang::C, source),
        vec![
            sig(0, "struct node"),
            sig(0, "typedef struct list list_t"),
            sig(0, "typedef unsigned long size"),
            sig(0, "#define MAX(a, b)"),
            sig(0, "int list_len(const list_t *list)"),
            sig(0, "static char *name_of(struct node *n)"),
        ]
    );
    assert_eq!(
        names(Lang::C, source),
        ["node", "list_t", "size", "MAX", "list_len", "name_of"]
    );
}

#[test]
fn broken_source_still_gives_what_parses() {
    let symbols = Extractor::new().extract(Lang::Python, "def ok(a):\n    pass\n\ndef broken(:\n");
    assert_eq!(symbols.definitions[0].signature, "def ok(a)");
}

#[test]
fn one_line_collapses_whitespace_and_cuts_long_signatures() {
    assert_eq!(
        one_line("fn f(\n    a: u32,\n) -> u32 {"),
        "fn f( a: u32, ) -> u32"
    );
    let long = format!("fn f({})", "a: u32, ".repeat(40));
    let cut = one_line(&long);
    assert_eq!(cut.chars().count(), MAX_SIGNATURE_CHARS);
    assert!(cut.ends_with('…'));
}

#[test]
fn one_parser_switches_languages() {
    let mut extractor = Extractor::new();
    assert_eq!(
        extractor
            .extract(Lang::Go, "package a\nfunc A() {}")
            .definitions
            .len(),
        1
    );
    assert_eq!(
        extractor
            .extract(Lang::C, "void b(void) {}")
            .definitions
            .len(),
        1
    );
    assert_eq!(
        extractor
            .extract(Lang::Go, "package a\nfunc C() {}")
            .definitions[0]
            .name,
        "C"
    );
}
