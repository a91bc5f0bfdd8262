//! Deep merging of JSON objects, recording the source of every value set.

use serde_json::{Map, Value};

use super::source::{Source, Sources};

/// Merges `layer` into `base`: objects merge key by key, everything else (scalars, `null`,
/// arrays) replaces what was there. Each replaced value's key is recorded in `sources`.
pub fn merge_object(
    base: &mut Map<String, Value>,
    layer: Map<String, Value>,
    prefix: &str,
    source: &Source,
    sources: &mut Sources,
) {
    for (key, value) in layer {
        let path = join(prefix, &key);
        match (base.get_mut(&key), value) {
            (Some(Value::Object(existing)), Value::Object(inner)) => {
                merge_object(existing, inner, &path, source, sources);
            }
            (_, Value::Object(inner)) => {
                // A section the base lacks (a new MCP server, say): record each leaf.
                let mut fresh = Map::new();
                merge_object(&mut fresh, inner, &path, source, sources);
                base.insert(key, Value::Object(fresh));
            }
            (_, value) => {
                sources.set(&path, source.clone());
                base.insert(key, value);
            }
        }
    }
}

/// Sets the value at a dotted `path` (`llm.model`), creating objects on the way.
pub fn set_path(
    root: &mut Map<String, Value>,
    path: &str,
    value: Value,
    source: Source,
    sources: &mut Sources,
) {
    let mut current = root;
    let mut keys = path.split('.').peekable();
    while let Some(key) = keys.next() {
        if keys.peek().is_none() {
            current.insert(key.to_owned(), value);
            break;
        }
        let entry = current
            .entry(key.to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        if !entry.is_object() {
            *entry = Value::Object(Map::new());
        }
        let Value::Object(next) = entry else { return };
        current = next;
    }
    sources.set(path, source);
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_owned()
    } else {
        format!("{prefix}.{key}")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn later_layers_override_single_keys_not_sections() {
        let mut base =
            object(json!({"llm": {"model": "a", "provider": "ollama"}, "ui": {"color": true}}));
        let mut sources = Sources::default();
        let file = Source::File("/f".into());
        merge_object(
            &mut base,
            object(json!({"llm": {"model": "b"}})),
            "",
            &file,
            &mut sources,
        );
        assert_eq!(
            Value::Object(base),
            json!({"llm": {"model": "b", "provider": "ollama"}, "ui": {"color": true}})
        );
        assert_eq!(sources.of("llm.model"), &file);
        assert_eq!(sources.of("llm.provider"), &Source::Default);
    }

    #[test]
    fn arrays_are_replaced_whole() {
        let mut base = object(json!({"safety": {"blocked_commands": ["sudo", "rm -rf /"]}}));
        let mut sources = Sources::default();
        let file = Source::File("/f".into());
        merge_object(
            &mut base,
            object(json!({"safety": {"blocked_commands": ["curl"]}})),
            "",
            &file,
            &mut sources,
        );
        assert_eq!(base["safety"]["blocked_commands"], json!(["curl"]));
        assert_eq!(sources.of("safety.blocked_commands[0]"), &file);
    }

    #[test]
    fn new_sections_record_each_leaf() {
        let mut base = object(json!({"mcp": {"servers": {}}}));
        let mut sources = Sources::default();
        let a = Source::File("/a".into());
        let b = Source::File("/b".into());
        merge_object(
            &mut base,
            object(json!({"mcp": {"servers": {"git": {"command": "x", "args": ["1"]}}}})),
            "",
            &a,
            &mut sources,
        );
        merge_object(
            &mut base,
            object(json!({"mcp": {"servers": {"git": {"args": ["2"]}}}})),
            "",
            &b,
            &mut sources,
        );
        assert_eq!(
            base["mcp"]["servers"]["git"],
            json!({"command": "x", "args": ["2"]})
        );
        assert_eq!(sources.of("mcp.servers.git.command"), &a);
        assert_eq!(sources.of("mcp.servers.git.args"), &b);
    }

    #[test]
    fn set_path_creates_and_records() {
        let mut root = Map::new();
        let mut sources = Sources::default();
        set_path(
            &mut root,
            "llm.model",
            json!("m"),
            Source::Flag("--model"),
            &mut sources,
        );
        assert_eq!(Value::Object(root), json!({"llm": {"model": "m"}}));
        assert_eq!(sources.of("llm.model"), &Source::Flag("--model"));
    }
}
