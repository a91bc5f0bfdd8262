//! The `write_file` and `edit_file` tool specs the model is given, per [`DiffMode`].

use ybs_core::{ToolCall, ToolSpec};

use super::DiffMode;

/// The name of the full-file tool.
pub const WRITE_FILE: &str = "write_file";
/// The name of the edit tool (whatever its schema).
pub const EDIT_FILE: &str = "edit_file";

const WRITE_FILE_DESCRIPTION: &str = "Create a new file or rewrite an existing file completely. \
Give the complete content: it replaces the whole file. Use it at most once per path in a \
response. Prefer edit_file for changes to part of an existing file.";

const WRITE_FILE_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File path relative to the project root, as shown in the context."},
    "content": {"type": "string", "description": "The complete content of the file."}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}"#;

const SEARCH_REPLACE_MULTI_DESCRIPTION: &str = "Make targeted edits to existing files by \
search and replace. Edits are applied in order and later edits see the results of earlier \
ones; they may touch several files. Each old_string must match the file exactly once (quote \
enough surrounding lines to make it unique) unless replace_all is true. If any edit fails, \
none is applied.";

const SEARCH_REPLACE_MULTI_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "edits": {
      "type": "array",
      "minItems": 1,
      "description": "The edits, applied in order.",
      "items": {
        "type": "object",
        "properties": {
          "path": {"type": "string", "description": "File path relative to the project root, as shown in the context."},
          "file_id": {"type": "string", "description": "The file_id shown with the file in the context."},
          "old_string": {"type": "string", "description": "The exact text to replace, copied from the file, including indentation."},
          "new_string": {"type": "string", "description": "The text to put in its place."},
          "replace_all": {"type": "boolean", "description": "Replace every occurrence instead of requiring exactly one. Default false."}
        },
        "required": ["path", "file_id", "old_string", "new_string"],
        "additionalProperties": false
      }
    }
  },
  "required": ["edits"],
  "additionalProperties": false
}"#;

const SEARCH_REPLACE_DESCRIPTION: &str = "Make a targeted edit to an existing file by search \
and replace. old_string must match the file exactly once (quote enough surrounding lines to \
make it unique) unless replace_all is true. Call it once per edit.";

const SEARCH_REPLACE_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File path relative to the project root, as shown in the context."},
    "file_id": {"type": "string", "description": "The file_id shown with the file in the context."},
    "old_string": {"type": "string", "description": "The exact text to replace, copied from the file, including indentation."},
    "new_string": {"type": "string", "description": "The text to put in its place."},
    "replace_all": {"type": "boolean", "description": "Replace every occurrence instead of requiring exactly one. Default false."}
  },
  "required": ["path", "file_id", "old_string", "new_string"],
  "additionalProperties": false
}"#;

const ANCHORED_DESCRIPTION: &str = "Make targeted edits to an existing file by replacing \
regions located by anchor lines. A region starts at the lines in start and ends at the lines \
in end (searched after start), or is just the start lines when end is omitted. Anchors are \
1 to 10 whole lines copied from the file and must each match exactly once. content replaces \
the whole region, anchors included; null content deletes it. Regions must not overlap. If \
any change fails, none is applied.";

const ANCHORED_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File path relative to the project root, as shown in the context."},
    "file_id": {"type": "string", "description": "The file_id shown with the file in the context."},
    "changes": {
      "type": "array",
      "minItems": 1,
      "items": {
        "type": "object",
        "properties": {
          "start": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 10, "description": "The first lines of the region, copied from the file."},
          "end": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 10, "description": "The last lines of the region, copied from the file. Omit when the region is just the start lines."},
          "content": {"type": ["array", "null"], "items": {"type": "string"}, "description": "The lines that replace the whole region, or null to delete it."}
        },
        "required": ["start", "content"],
        "additionalProperties": false
      }
    }
  },
  "required": ["path", "file_id", "changes"],
  "additionalProperties": false
}"#;

/// A spec whose schema is the JSON text `schema`. This crate does not depend on
/// `serde_json` itself; core's tool-argument parser turns the text into a JSON value (the
/// texts are constants, and a unit test checks they all parse to objects).
fn spec(name: &str, description: &str, schema: &str) -> ToolSpec {
    ToolSpec::new(
        name,
        description,
        ToolCall::from_raw_arguments("", name, schema).arguments,
    )
}

/// The `write_file {path, content}` spec (the same in every mode).
pub fn write_file_spec() -> ToolSpec {
    spec(WRITE_FILE, WRITE_FILE_DESCRIPTION, WRITE_FILE_SCHEMA)
}

/// The `edit_file` spec for `mode`; `None` for [`DiffMode::Off`].
pub fn edit_file_spec(mode: DiffMode) -> Option<ToolSpec> {
    let (description, schema) = match mode {
        DiffMode::SearchReplaceMulti => (
            SEARCH_REPLACE_MULTI_DESCRIPTION,
            SEARCH_REPLACE_MULTI_SCHEMA,
        ),
        DiffMode::SearchReplace => (SEARCH_REPLACE_DESCRIPTION, SEARCH_REPLACE_SCHEMA),
        DiffMode::Anchored => (ANCHORED_DESCRIPTION, ANCHORED_SCHEMA),
        DiffMode::Off => return None,
    };
    Some(spec(EDIT_FILE, description, schema))
}

/// The tools a bb7 request carries in `mode`: `write_file`, then `edit_file` unless `Off`.
pub fn tool_specs(mode: DiffMode) -> Vec<ToolSpec> {
    let mut specs = vec![write_file_spec()];
    specs.extend(edit_file_spec(mode));
    specs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_parses_to_an_object() {
        for mode in DiffMode::ALL {
            for spec in tool_specs(mode) {
                assert!(spec.parameters.is_object(), "{} in {mode}", spec.name);
                assert_eq!(spec.parameters["type"], "object");
            }
        }
    }
}
