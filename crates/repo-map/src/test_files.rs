//! Test files for the ranking tests: a file by its definitions and the names it uses.

use crate::source::MappedFile;
use crate::{Definition, Symbols};

/// A file defining `defines` (each `fn NAME()` at depth 0) and using `uses`.
pub fn file(path: &str, defines: &[&str], uses: &[&str]) -> MappedFile {
    let mut references: Vec<String> = uses.iter().map(|s| (*s).to_owned()).collect();
    references.sort();
    MappedFile {
        path: path.to_owned(),
        symbols: Symbols {
            definitions: (defines.iter())
                .map(|name| Definition {
                    name: (*name).to_owned(),
                    signature: format!("fn {name}()"),
                    depth: 0,
                })
                .collect(),
            references,
        },
    }
}
