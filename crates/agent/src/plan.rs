//! Plan mode: the model may only look (the tools that change nothing), investigates and
//! proposes a plan; the user approves it (or edits it) and the agent acts on it.

/// The tools offered in plan mode: those that change nothing.
pub const READ_ONLY_TOOLS: [&str; 3] = ["read_file", "list_files", "search_files"];

/// The system prompt's section while plan mode is on.
pub const PLAN_SECTION: &str = "# Plan mode\n\nPlan mode is on: you can only read (read_file, \
list_files, search_files); nothing may be changed and no command run. Investigate what the \
task needs, then reply with a short numbered plan: the files to change, how, and how to \
check the result. The user approves or edits the plan before anything is done.";

/// The message that hands an approved plan back to the agent.
pub fn approved(plan: &str) -> String {
    format!(
        "Plan mode is off. Carry out this plan now, step by step:\n\n{}",
        plan.trim()
    )
}
