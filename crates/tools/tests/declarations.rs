//! What the tools declare about themselves, and the registry and the confirmation policy
//! asking the declaration instead of the tool's name.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::Fixture;
use serde_json::{Value, json};
use ybs_core::ToolSpec;
use ybs_tools::{
    ActionKind, Args, Asks, Change, Confirmation, ConfirmationPolicy, Declaration, Effect,
    NetworkUse, RuleSubject, Runner, Summary, Tool, ToolContext, ToolError,
};

/// A tool of the test's own that declares what it is told to.
struct Declared {
    spec: ToolSpec,
    declaration: Declaration,
}

impl Declared {
    fn new(name: &str, declaration: Declaration) -> Arc<Self> {
        let schema = json!({"type": "object", "properties": {"path": {"type": "string"}}});
        Arc::new(Declared {
            spec: ToolSpec::new(name, "a test tool", schema),
            declaration,
        })
    }
}

impl Tool for Declared {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn invoke(&self, args: &Args, _ctx: &ToolContext) -> Result<Value, ToolError> {
        Ok(args.to_value())
    }

    fn declaration(&self) -> Declaration {
        self.declaration
    }

    fn summarize(&self, _: &Value, result: &Value, _: Option<Change>) -> Option<Summary> {
        Some(Summary::ok(format!("Declared {}", result.get("path")?)))
    }
}

#[test]
fn the_built_ins_declare_what_the_lists_said() {
    let f = Fixture::new();
    let names = |keep: fn(&Declaration) -> bool| f.registry.names_where(keep);
    assert_eq!(
        names(|d| d.in_plan_mode),
        ["read_file", "list_files", "search_files"]
    );
    assert_eq!(
        names(|d| d.in_subagent),
        ["read_file", "list_files", "search_files"]
    );
    assert_eq!(
        names(|d| d.parallel_safe),
        ["read_file", "list_files", "search_files", "web_fetch"]
    );
    assert_eq!(
        names(|d| d.effect == Effect::FileAtPath),
        ["write_file", "edit_file"]
    );
    assert_eq!(
        names(|d| d.effect.mutates()),
        [
            "write_file",
            "edit_file",
            "run_shell",
            "stop_job",
            "todo_write"
        ]
    );
    assert_eq!(names(|d| d.needs_jobs), ["read_job_output", "stop_job"]);
    assert_eq!(names(|d| d.runner == Runner::SubAgent), ["task"]);
    assert_eq!(names(|d| d.network == NetworkUse::WhenAsked), ["run_shell"]);
    assert_eq!(names(|d| d.asks == Asks::EveryHost), ["web_fetch"]);
    assert_eq!(
        f.registry.declaration("run_shell").rule_subject,
        RuleSubject::Command
    );
    assert_eq!(f.registry.declaration("read_file").kind, ActionKind::Read);
    // A name nobody registered gets the conservative declaration.
    assert_eq!(f.registry.declaration("nope"), Declaration::default());
    assert!(Declaration::default().effect.mutates());
}

#[test]
fn a_registered_tool_is_asked_for_its_declaration_everywhere() {
    let mut f = Fixture::new();
    let looking = Declared::new("probe", Declaration::looking(ActionKind::Fetch));
    let changing = Declared::new(
        "poke",
        Declaration {
            asks: Asks::UnreadFile,
            ..Declaration::file_changing(ActionKind::Delete)
        },
    );
    f.registry.register(looking).unwrap();
    f.registry.register(changing).unwrap();

    assert!(
        f.registry
            .names_where(|d| d.in_plan_mode)
            .contains(&"probe".to_owned())
    );
    assert!(
        !f.registry
            .names_where(|d| d.in_plan_mode)
            .contains(&"poke".to_owned())
    );
    let sub = f.registry.narrowed(|d| d.in_subagent);
    assert!(sub.is_enabled("probe") && !sub.is_enabled("poke") && !sub.is_enabled("task"));
    assert_eq!(f.registry.declaration("probe").kind, ActionKind::Fetch);
    assert_eq!(
        f.registry
            .summarize("probe", &json!({}), &json!({"path": "x"}), None)
            .map(|summary| summary.headline),
        Some("Declared \"x\"".to_owned())
    );

    // The policy asks before an unread file is changed, whatever the tool is called.
    let policy = ConfirmationPolicy::new(Vec::<String>::new());
    let check = |name: &str| {
        let declaration = f.registry.declaration(name);
        policy.check(name, &declaration, &json!({"path": "a.txt"}), &f.ctx)
    };
    assert_eq!(check("probe"), Confirmation::NotNeeded);
    assert_eq!(
        check("poke"),
        Confirmation::Required {
            reason: "`poke` of `a.txt`, which was not read in this session".into()
        }
    );
    // A file ybs reads as configuration asks for every tool that may change a file.
    let configuration = json!({"path": ".ybs.json"});
    for name in ["poke", "some_external_tool"] {
        let declaration = f.registry.declaration(name);
        assert!(matches!(
            policy.check(name, &declaration, &configuration, &f.ctx),
            Confirmation::Required { .. }
        ));
    }
}

#[test]
fn a_disabled_tool_is_not_callable_whoever_runs_it() {
    let mut f = Fixture::new();
    assert!(f.registry.callable("task").is_ok());
    f.registry.set_enabled("task", false);
    assert!(matches!(
        f.registry.callable("task"),
        Err(ToolError::Disabled(_))
    ));
    assert!(matches!(
        f.registry.callable("nope"),
        Err(ToolError::UnknownTool { .. })
    ));
    // A sub-agent's tools never include what the agent's has disabled.
    f.registry.set_enabled("read_file", false);
    assert!(
        !f.registry
            .narrowed(|d| d.in_subagent)
            .is_enabled("read_file")
    );
}
