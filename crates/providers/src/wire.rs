//! Wire pieces that more than one format writes the same way.

use serde::Serialize;
use serde_json::{Value, json};
use ybs_core::{ToolCall, ToolSpec};

/// A tool in OpenAI's function format, which Ollama takes too.
#[derive(Debug, Serialize)]
pub(crate) struct FunctionTool<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: Function<'a>,
}

#[derive(Debug, Serialize)]
pub(crate) struct Function<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub parameters: &'a Value,
}

/// The request's tools in the function format.
pub(crate) fn function_tools(tools: &[ToolSpec]) -> Vec<FunctionTool<'_>> {
    tools
        .iter()
        .map(|tool| FunctionTool {
            kind: "function",
            function: Function {
                name: &tool.name,
                description: &tool.description,
                parameters: &tool.parameters,
            },
        })
        .collect()
}

/// A call's arguments for formats that take them as an object (Anthropic, Ollama): `{}` when
/// the model wrote something else or JSON that did not parse.
pub(crate) fn arguments_object(call: &ToolCall) -> Value {
    match &call.arguments {
        Value::Object(_) if call.arguments_error.is_none() => call.arguments.clone(),
        _ => json!({}),
    }
}
