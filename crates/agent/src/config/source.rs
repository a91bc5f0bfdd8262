//! Where each effective value came from.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// The origin of one configuration value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The built-in default.
    Default,
    /// A configuration file.
    File(PathBuf),
    /// An environment variable, by name.
    Env(String),
    /// A command-line flag, such as `--model`.
    Flag(&'static str),
    /// Changed in the running session, by a REPL command such as `/effort`.
    Session,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::File(path) => write!(f, "{}", path.display()),
            Source::Env(name) => write!(f, "env {name}"),
            Source::Flag(flag) => write!(f, "flag {flag}"),
            Source::Session => f.write_str("set in this session"),
        }
    }
}

/// The source of every value set by a file, the environment or a flag, by dotted key path
/// (`llm.model`, `tools.external`). Arrays are single values: a later source replaces a whole
/// list. Keys not recorded here have their default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sources {
    by_key: BTreeMap<String, Source>,
}

impl Sources {
    /// Records that `key` was last set by `source`, forgetting the sources of anything below
    /// it (a scalar replacing a section replaces its keys too).
    pub fn set(&mut self, key: &str, source: Source) {
        let below = format!("{key}.");
        let below_index = format!("{key}[");
        self.by_key
            .retain(|known, _| !known.starts_with(&below) && !known.starts_with(&below_index));
        self.by_key.insert(key.to_owned(), source);
    }

    /// The source of `key`: its own, else that of the nearest enclosing value that was set
    /// whole (an array element takes its array's), else [`Source::Default`].
    pub fn of(&self, key: &str) -> &Source {
        let mut current = key;
        loop {
            if let Some(source) = self.by_key.get(current) {
                return source;
            }
            match current.rfind(['.', '[']) {
                Some(cut) => current = &current[..cut],
                None => return &Source::Default,
            }
        }
    }

    /// Every recorded key with its source, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Source)> {
        self.by_key
            .iter()
            .map(|(key, source)| (key.as_str(), source))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_are_defaults_and_elements_take_their_arrays_source() {
        let mut sources = Sources::default();
        sources.set("tools.external", Source::Env("X".into()));
        assert_eq!(sources.of("llm.model"), &Source::Default);
        assert_eq!(
            sources.of("tools.external[1].path"),
            &Source::Env("X".into())
        );
        assert_eq!(sources.of("tools"), &Source::Default);
    }

    #[test]
    fn setting_a_key_forgets_what_was_below_it() {
        let mut sources = Sources::default();
        sources.set("mcp.servers.a.command", Source::Flag("--x"));
        sources.set("mcp.servers", Source::File("/f".into()));
        assert_eq!(sources.iter().count(), 1);
        assert_eq!(
            sources.of("mcp.servers.a.command"),
            &Source::File("/f".into())
        );
    }

    #[test]
    fn sources_display_for_people() {
        assert_eq!(Source::Default.to_string(), "default");
        assert_eq!(Source::File("/a/b.json".into()).to_string(), "/a/b.json");
        assert_eq!(Source::Env("YBS_MODEL".into()).to_string(), "env YBS_MODEL");
        assert_eq!(Source::Flag("--model").to_string(), "flag --model");
    }
}
