//! Reading one configuration file: JSON syntax, the schema's types, and unknown keys.

use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::error::{ConfigError, ConfigWarning};
use super::schema::{Config, SCHEMA_VERSION};

/// A file's keys as JSON, ready to merge, with the warnings it caused.
#[derive(Debug)]
pub struct ParsedFile {
    /// The top-level object.
    pub value: Map<String, Value>,
    /// Unknown keys and versions.
    pub warnings: Vec<ConfigWarning>,
}

/// Parses `text`, the contents of `path`. An empty file is an empty configuration.
pub fn parse(path: &Path, text: &str) -> Result<ParsedFile, ConfigError> {
    if text.trim().is_empty() {
        return Ok(ParsedFile {
            value: Map::new(),
            warnings: Vec::new(),
        });
    }
    let value: Value = serde_json::from_str(text).map_err(|err| ConfigError::Syntax {
        path: path.to_owned(),
        line: err.line(),
        column: err.column(),
        message: without_position(&err),
    })?;
    let Value::Object(value) = value else {
        return Err(ConfigError::NotAnObject {
            path: path.to_owned(),
        });
    };
    let mut warnings = Vec::new();
    check_schema(path, text, &mut warnings)?;
    if let Some(Value::String(version)) = value.get("version") {
        if version != SCHEMA_VERSION && version != "1" {
            warnings.push(ConfigWarning::UnknownVersion {
                path: path.to_owned(),
                version: version.clone(),
            });
        }
    }
    Ok(ParsedFile { value, warnings })
}

/// Deserializes the text as a [`Config`] to find values of the wrong type (with their key
/// path and position) and keys the schema does not have.
fn check_schema(
    path: &Path,
    text: &str,
    warnings: &mut Vec<ConfigWarning>,
) -> Result<(), ConfigError> {
    let mut json = serde_json::Deserializer::from_str(text);
    let mut track = serde_path_to_error::Track::new();
    let mut unknown = Vec::new();
    let result = {
        let tracked = serde_path_to_error::Deserializer::new(&mut json, &mut track);
        let mut note = |ignored: serde_ignored::Path<'_>| unknown.push(key_path(&ignored));
        Config::deserialize(serde_ignored::Deserializer::new(tracked, &mut note))
    };
    if let Err(err) = result {
        return Err(ConfigError::WrongType {
            path: path.to_owned(),
            line: err.line(),
            column: err.column(),
            key: track.path().to_string(),
            message: without_position(&err),
        });
    }
    warnings.extend(unknown.into_iter().map(|key| ConfigWarning::UnknownKey {
        path: path.to_owned(),
        key,
    }));
    Ok(())
}

/// `serde_ignored`'s path in our notation: `a.b[2].c`.
fn key_path(path: &serde_ignored::Path<'_>) -> String {
    use serde_ignored::Path;
    match path {
        Path::Root => String::new(),
        Path::Seq { parent, index } => format!("{}[{index}]", key_path(parent)),
        Path::Map { parent, key } => {
            let parent = key_path(parent);
            if parent.is_empty() {
                key.clone()
            } else {
                format!("{parent}.{key}")
            }
        }
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => key_path(parent),
    }
}

/// serde_json's message without the " at line L column C" it appends (we print the
/// position in front, compiler style).
fn without_position(err: &serde_json::Error) -> String {
    let text = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    text.strip_suffix(&suffix).unwrap_or(&text).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_err(text: &str) -> String {
        match parse(Path::new("/c/.ybs.json"), text) {
            Ok(parsed) => panic!("parsed: {parsed:?}"),
            Err(err) => err.to_string(),
        }
    }

    fn warnings(text: &str) -> Vec<String> {
        match parse(Path::new("/c/.ybs.json"), text) {
            Ok(parsed) => parsed.warnings.iter().map(ToString::to_string).collect(),
            Err(err) => panic!("{err}"),
        }
    }

    #[test]
    fn malformed_json_names_file_line_and_column() {
        assert_eq!(
            parse_err("{\n  \"llm\": {\n    \"model\": \"x\",\n  }\n}"),
            "/c/.ybs.json:4:3: malformed config file: trailing comma"
        );
        assert_eq!(
            parse_err("{\"llm\": {\"model\": \"x\"}"),
            "/c/.ybs.json:1:22: malformed config file: EOF while parsing an object"
        );
    }

    #[test]
    fn a_top_level_that_is_not_an_object_is_refused() {
        assert_eq!(
            parse_err("[1, 2]"),
            "/c/.ybs.json: a config file must hold a JSON object ({ ... }) at its top level"
        );
    }

    #[test]
    fn a_value_of_the_wrong_type_names_its_key_and_position() {
        assert_eq!(
            parse_err("{\"llm\": {\n  \"temperature\": \"hot\"\n}}"),
            "/c/.ybs.json:2:22: llm.temperature: invalid type: string \"hot\", expected f64"
        );
        assert_eq!(
            parse_err("{\"tools\": {\"external\": [{\"name\": \"a\"}, {\"enabled\": 3}]}}"),
            "/c/.ybs.json:1:52: tools.external[1].enabled: invalid type: integer `3`, expected a boolean"
        );
        assert_eq!(
            parse_err("{\"agent\": {\"max_iterations\": -1}}"),
            "/c/.ybs.json:1:31: agent.max_iterations: invalid value: integer `-1`, expected u32"
        );
    }

    #[test]
    fn unknown_keys_are_warnings_with_their_dotted_path() {
        assert_eq!(
            warnings(
                "{\"llm\": {\"modle\": \"x\"}, \"colour\": 1,
                  \"tools\": {\"builtin\": {\"read_fil\": {}}, \"external\": [{\"nme\": 1}]},
                  \"mcp\": {\"servers\": {\"s\": {\"comand\": \"x\"}}}}"
            ),
            [
                "/c/.ybs.json: unknown key llm.modle (ignored)",
                "/c/.ybs.json: unknown key colour (ignored)",
                "/c/.ybs.json: unknown key tools.builtin.read_fil (ignored)",
                "/c/.ybs.json: unknown key tools.external[0].nme (ignored)",
                "/c/.ybs.json: unknown key mcp.servers.s.comand (ignored)",
            ]
        );
    }

    #[test]
    fn free_form_tool_parameters_are_not_unknown_keys() {
        let text = r#"{"tools": {"external": [{"name": "w", "path": "/x",
            "parameters": {"query": {"type": "string", "required": true}}}]}}"#;
        assert!(warnings(text).is_empty());
    }

    #[test]
    fn an_unknown_version_is_a_warning() {
        assert_eq!(
            warnings("{\"version\": \"2.0\"}"),
            ["/c/.ybs.json: config version \"2.0\" is not \"1.0\"; reading it as \"1.0\""]
        );
        assert!(warnings("{\"version\": \"1.0\"}").is_empty());
    }

    #[test]
    fn an_empty_file_is_an_empty_config() {
        assert!(warnings("  \n").is_empty());
    }
}
