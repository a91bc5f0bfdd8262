//! The `skill` tool: the model reads a skill's instructions, or one of its files, when a task
//! calls for it. It is the one way a skill's files are read, through the skill's own
//! link-safe reader ([`Skill::read`]); its scripts run through `run_shell`, whose sandbox
//! and rules are those of every other command.

use serde_json::{Value, json};
use ybs_core::ToolSpec;
use ybs_tools::{ActionKind, Args, Declaration, Tool, ToolContext, ToolError};

use super::Skill;

/// The `skill` tool over the session's skills.
pub struct SkillTool {
    spec: ToolSpec,
    skills: Vec<Skill>,
}

impl SkillTool {
    /// The tool offering `skills` (which the system prompt lists).
    pub fn new(skills: Vec<Skill>) -> Self {
        let names: Vec<Value> = skills.iter().map(|s| Value::from(s.name.clone())).collect();
        let spec = ToolSpec::new(
            "skill",
            "Read a skill listed under # Skills in the system prompt: without `file`, its \
             instructions (SKILL.md) and the list of its files; with `file` (a path relative \
             to the skill's folder), that file's text. Run a skill's scripts with run_shell \
             at the folder the result names.",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "enum": names, "description": "The skill's name"},
                    "file": {"type": "string", "description": "A file of the skill, relative to its folder"}
                },
                "required": ["name"]
            }),
        );
        SkillTool { spec, skills }
    }
}

impl Tool for SkillTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn invoke(&self, args: &Args, _ctx: &ToolContext) -> Result<Value, ToolError> {
        let name = args.str("name")?;
        let Some(skill) = self.skills.iter().find(|skill| skill.name == name) else {
            let known: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
            return Err(args.invalid(format!(
                "no skill `{name}`; the skills are: {}",
                known.join(", ")
            )));
        };
        let file = args.opt_str("file")?;
        let text = skill.read(file).map_err(ToolError::failed)?;
        let mut result = json!({
            "skill": skill.name,
            "folder": skill.dir.display().to_string(),
            "text": text,
        });
        if file.is_none() {
            result["files"] = json!(skill.files());
        }
        Ok(result)
    }

    fn declaration(&self) -> Declaration {
        Declaration::looking(ActionKind::Read)
    }

    fn title(&self, arguments: &Value) -> Option<String> {
        let name = arguments.get("name")?.as_str()?;
        Some(match arguments.get("file").and_then(Value::as_str) {
            Some(file) => format!("Skill {name}: {file}"),
            None => format!("Skill {name}"),
        })
    }
}
