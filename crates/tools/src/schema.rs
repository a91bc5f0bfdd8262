//! Tool parameter schemas: the spec's parameter map turned into the JSON Schema the model
//! sees, and arguments checked against that schema before a tool runs.
//!
//! The spec writes parameters as a map of name to `{"type", "description", "required",
//! "default"}`; the model is given `{"type": "object", "properties": {...}, "required": [...]}`
//! (a JSON Schema object), with each property keeping its `type`, `description` and `default`.

use serde_json::{Map, Value, json};

use crate::error::ToolError;

/// Turns the spec's parameter map into a JSON Schema object. Fails with a message when a
/// parameter is not an object or has no `type`.
pub fn parameters_to_schema(parameters: &Value) -> Result<Value, String> {
    // Already a JSON Schema object: keep it.
    if parameters.get("type").and_then(Value::as_str) == Some("object")
        && parameters.get("properties").is_some_and(Value::is_object)
    {
        return Ok(parameters.clone());
    }
    let map = parameters
        .as_object()
        .ok_or_else(|| "`parameters` must be an object of parameter definitions".to_string())?;
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (name, definition) in map {
        let definition = definition
            .as_object()
            .ok_or_else(|| format!("parameter `{name}` must be an object"))?;
        let kind = definition
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("parameter `{name}` has no `type`"))?;
        if !KNOWN_TYPES.contains(&kind) {
            return Err(format!(
                "parameter `{name}` has unknown type `{kind}` (expected one of {})",
                KNOWN_TYPES.join(", ")
            ));
        }
        let mut property = Map::new();
        for (key, value) in definition {
            if key != "required" {
                property.insert(key.clone(), value.clone());
            }
        }
        if definition.get("required").and_then(Value::as_bool) == Some(true) {
            required.push(Value::String(name.clone()));
        }
        properties.insert(name.clone(), Value::Object(property));
    }
    // Sorted so the schema is the same whether or not serde_json keeps insertion order.
    required.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
    Ok(json!({"type": "object", "properties": properties, "required": required}))
}

const KNOWN_TYPES: [&str; 6] = ["string", "integer", "number", "boolean", "array", "object"];

/// Arguments that passed validation, with defaults filled in.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Args {
    tool: String,
    values: Map<String, Value>,
    defaulted: Vec<String>,
}

impl Args {
    /// All arguments as a JSON object.
    pub fn to_value(&self) -> Value {
        Value::Object(self.values.clone())
    }

    /// Whether the caller gave this argument (rather than it taking its schema default).
    pub fn is_given(&self, name: &str) -> bool {
        self.values.contains_key(name) && !self.defaulted.iter().any(|d| d == name)
    }

    /// The raw value of an argument.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }

    /// A required string argument.
    pub fn str(&self, name: &str) -> Result<&str, ToolError> {
        self.opt_str(name)?
            .ok_or_else(|| self.invalid(format!("missing required argument `{name}`")))
    }

    /// An optional string argument.
    pub fn opt_str(&self, name: &str) -> Result<Option<&str>, ToolError> {
        match self.values.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.invalid(format!(
                "argument `{name}` must be a string, got {}",
                describe(other)
            ))),
        }
    }

    /// An integer argument (its default was filled in by validation when it has one).
    pub fn int(&self, name: &str) -> Result<Option<i64>, ToolError> {
        match self.values.get(name) {
            None => Ok(None),
            Some(value) => as_integer(value).map(Some).ok_or_else(|| {
                self.invalid(format!(
                    "argument `{name}` must be an integer, got {}",
                    describe(value)
                ))
            }),
        }
    }

    /// A boolean argument, `false` when absent.
    pub fn bool(&self, name: &str) -> Result<bool, ToolError> {
        match self.values.get(name) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(self.invalid(format!(
                "argument `{name}` must be a boolean, got {}",
                describe(other)
            ))),
        }
    }

    /// An error about these arguments.
    pub fn invalid(&self, message: impl Into<String>) -> ToolError {
        ToolError::InvalidArguments {
            tool: self.tool.clone(),
            message: message.into(),
        }
    }
}

/// Checks `args` against a JSON Schema object made by [`parameters_to_schema`]: the arguments
/// must be an object, every required argument present, every argument known and of its
/// declared type. `null` counts as absent. Defaults are filled in.
pub fn validate(tool: &str, schema: &Value, args: &Value) -> Result<Args, ToolError> {
    let invalid = |message: String| ToolError::InvalidArguments {
        tool: tool.to_string(),
        message,
    };
    let given = match args {
        Value::Object(map) => map.clone(),
        Value::Null => Map::new(),
        other => {
            return Err(invalid(format!(
                "arguments must be a JSON object, got {}",
                describe(other)
            )));
        }
    };
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // Built-in schemas leave `additionalProperties` out and mean "no others"; a schema from
    // elsewhere (an MCP server) that allows others says so.
    let others_allowed = schema
        .get("additionalProperties")
        .is_some_and(|allowed| allowed.as_bool() != Some(false));
    let mut values = Map::new();
    for (name, value) in given {
        let Some(property) = properties.get(&name) else {
            if others_allowed {
                values.insert(name, value);
                continue;
            }
            let mut known: Vec<&str> = properties.keys().map(String::as_str).collect();
            known.sort_unstable();
            return Err(invalid(format!(
                "unknown argument `{name}`; expected: {}",
                known.join(", ")
            )));
        };
        if value.is_null() {
            continue;
        }
        if let Some(kind) = property.get("type").and_then(Value::as_str) {
            if !has_type(&value, kind) {
                return Err(invalid(format!(
                    "argument `{name}` must be {} {kind}, got {}",
                    article(kind),
                    describe(&value)
                )));
            }
        }
        values.insert(name, value);
    }
    for name in &required {
        if !values.contains_key(*name) {
            return Err(invalid(format!("missing required argument `{name}`")));
        }
    }
    let mut defaulted = Vec::new();
    for (name, property) in properties {
        if !values.contains_key(name) {
            if let Some(default) = property.get("default") {
                values.insert(name.clone(), default.clone());
                defaulted.push(name.clone());
            }
        }
    }
    Ok(Args {
        tool: tool.to_string(),
        values,
        defaulted,
    })
}

fn has_type(value: &Value, kind: &str) -> bool {
    match kind {
        "string" => value.is_string(),
        "integer" => as_integer(value).is_some(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    }
}

/// An integer, accepting whole floats such as `5.0` that some models send.
fn as_integer(value: &Value) -> Option<i64> {
    if let Some(i) = value.as_i64() {
        return Some(i);
    }
    let f = value.as_f64()?;
    #[allow(clippy::cast_possible_truncation)]
    (f.fract() == 0.0 && f.abs() < 9.0e15).then_some(f as i64)
}

fn article(kind: &str) -> &'static str {
    if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

fn describe(value: &Value) -> String {
    let kind = match value {
        Value::Null => return "null".into(),
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let mut shown = value.to_string();
    if shown.chars().count() > 40 {
        shown = shown.chars().take(40).collect::<String>() + "...";
    }
    format!("{kind} {shown}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn schema() -> Value {
        parameters_to_schema(&json!({
            "path": {"type": "string", "description": "p", "required": true},
            "limit": {"type": "integer", "required": false, "default": 500},
            "all": {"type": "boolean"}
        }))
        .unwrap()
    }

    #[test]
    fn converts_spec_parameters() {
        assert_eq!(
            schema(),
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "p"},
                    "limit": {"type": "integer", "default": 500},
                    "all": {"type": "boolean"}
                },
                "required": ["path"]
            })
        );
    }

    #[test]
    fn other_arguments_pass_only_when_the_schema_allows_them() {
        let strict = validate("t", &schema(), &json!({"path": "a", "x": 1})).unwrap_err();
        assert_eq!(
            strict.to_string(),
            "invalid arguments for `t`: unknown argument `x`; expected: all, limit, path"
        );
        let mut open = schema();
        open["additionalProperties"] = json!(true);
        let args = validate("t", &open, &json!({"path": "a", "x": 1})).unwrap();
        assert_eq!(args.get("x"), Some(&json!(1)));
        open["additionalProperties"] = json!(false);
        assert!(validate("t", &open, &json!({"path": "a", "x": 1})).is_err());
    }

    #[test]
    fn fills_defaults_and_accepts_whole_floats() {
        let args = validate("t", &schema(), &json!({"path": "a", "all": null})).unwrap();
        assert_eq!(args.int("limit").unwrap(), Some(500));
        assert!(!args.is_given("limit"));
        assert!(args.is_given("path"));
        let args = validate("t", &schema(), &json!({"path": "a", "limit": 5.0})).unwrap();
        assert_eq!(args.int("limit").unwrap(), Some(5));
    }

    #[test]
    fn errors_are_exact() {
        let err = |args: Value| validate("t", &schema(), &args).unwrap_err().to_string();
        assert_eq!(
            err(json!({})),
            "invalid arguments for `t`: missing required argument `path`"
        );
        assert_eq!(
            err(json!({"path": 3})),
            "invalid arguments for `t`: argument `path` must be a string, got number 3"
        );
        assert_eq!(
            err(json!({"path": "a", "limit": "10"})),
            "invalid arguments for `t`: argument `limit` must be an integer, got string \"10\""
        );
        assert_eq!(
            err(json!({"path": "a", "file_path": "b"})),
            "invalid arguments for `t`: unknown argument `file_path`; expected: all, limit, path"
        );
        assert_eq!(
            err(json!([1])),
            "invalid arguments for `t`: arguments must be a JSON object, got array [1]"
        );
    }
}
