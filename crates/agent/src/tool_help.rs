//! The tools and hooks as `ybs --help` and `/help` list them, grouped by what each built-in
//! tool declares about itself.

use ybs_tools::{ActionKind, Asks, Declaration, Effect, NetworkUse, Runner};

/// The tools the model has and the hooks around them, for the help texts.
pub fn tools_help() -> String {
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    for tool in ybs_tools::builtins::all() {
        let what = what_it_does(&tool.declaration());
        let name = tool.spec().name.clone();
        match groups.iter_mut().find(|(said, _)| *said == what) {
            Some((_, names)) => names.push(name),
            None => groups.push((what, vec![name])),
        }
    }
    let mut text =
        String::from("Tools the model has (tools.builtin.NAME.enabled turns one on or off):\n");
    for (what, names) in groups {
        text.push_str(&format!("  {:<36} {what}\n", names.join(", ")));
    }
    // One line each: the terminal's width decides where they wrap.
    text.push_str(&format!(
        "  {:<36} the provider's hosted search (anthropic, responses, openrouter); off unless \
         enabled\n",
        "web_search"
    ));
    text.push_str(
        "Hooks (config `hooks`): before_tool (may refuse a call), after_tool (formatters), \
         lint/test after a turn that changed files (failures go back to the model, max_rounds); \
         and the events session_start, session_end, user_prompt_submit, pre_compact, stop, \
         subagent_stop, notification (a JSON event on stdin, a JSON answer may block or add \
         context).\n",
    );
    text
}

/// A tool's line of the help, from its declaration.
fn what_it_does(declared: &Declaration) -> &'static str {
    match (declared.runner, declared.effect, declared.asks) {
        (Runner::SubAgent, _, _) => "a read-only sub-agent that returns its report",
        (_, Effect::Nothing, Asks::EveryHost) => {
            "reads from the web; asks once per host, loopback too"
        }
        (_, Effect::Nothing, _) if declared.parallel_safe => {
            "read the project; calls of one reply run at once"
        }
        (_, Effect::Nothing, _) => "look without changing anything",
        // Runs no command of its own: it ends one `run_shell` started in the background.
        (_, Effect::Commands, _)
            if declared.kind == ActionKind::Execute && declared.network == NetworkUse::Never =>
        {
            "end a background job run_shell started"
        }
        (_, Effect::FileAtPath | Effect::Commands, _) => {
            "change it (asks first; rules in safety.permissions)"
        }
        (_, Effect::TaskList, _) => "its task list, shown as it changes",
        (_, Effect::Unknown, _) => "may change anything (asks as configured)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_groups_the_built_ins_by_what_they_declare() {
        let help = tools_help();
        assert!(
            help.contains(
                "  read_file, list_files, search_files  read the project; calls of one reply run \
                 at once\n"
            ),
            "{help}"
        );
        assert!(
            help.contains("  write_file, edit_file, run_shell     change it"),
            "{help}"
        );
        assert!(help.contains("  task "), "{help}");
    }
}
