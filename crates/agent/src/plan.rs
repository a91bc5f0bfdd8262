//! Plan mode: the model may only look (the tools that declare themselves fit for plan mode),
//! investigates and proposes a plan; the user approves it (or edits it) and the agent acts
//! on it.

/// The system prompt's section while plan mode is on, naming the tools `offered`.
pub fn section(offered: &[String]) -> String {
    format!(
        "# Plan mode\n\nPlan mode is on: you can only read ({}); nothing may be changed and no \
         command run. Investigate what the task needs, then reply with a short numbered plan: \
         the files to change, how, and how to check the result. The user approves or edits the \
         plan before anything is done.",
        offered.join(", ")
    )
}

/// What the model is told when it calls a tool plan mode does not offer.
pub fn refusal(offered: &[String]) -> String {
    format!(
        "Plan mode is on: only {} run. Do not change anything yet; finish investigating and \
         propose the plan.",
        in_words(offered)
    )
}

/// `a, b and c`.
fn in_words(names: &[String]) -> String {
    match names.split_last() {
        None => "no tools".to_owned(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// The message that hands an approved plan back to the agent.
pub fn approved(plan: &str) -> String {
    format!(
        "Plan mode is off. Carry out this plan now, step by step:\n\n{}",
        plan.trim()
    )
}
