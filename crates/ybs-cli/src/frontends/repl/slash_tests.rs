//! The parsing of slash commands, their help and their names for completion.

use super::*;

fn command(line: &str) -> Result<SlashCommand, String> {
    match parse_input(line) {
        Ok(Input::Command(command)) => Ok(command),
        Ok(other) => Err(format!("not a command: {other:?}")),
        Err(err) => Err(err.to_string()),
    }
}

#[test]
fn every_command_parses() {
    let switch = |name: &str, model: Option<&str>| {
        Ok(SlashCommand::Provider(ProviderAction::Switch {
            name: name.into(),
            model: model.map(Into::into),
        }))
    };
    assert_eq!(
        command("/provider list"),
        Ok(SlashCommand::Provider(ProviderAction::List))
    );
    assert_eq!(
        command("/provider current"),
        Ok(SlashCommand::Provider(ProviderAction::Current))
    );
    assert_eq!(command("/provider ollama"), switch("ollama", None));
    assert_eq!(
        command("  /provider  ollama   qwen2.5:14b "),
        switch("ollama", Some("qwen2.5:14b"))
    );
    assert_eq!(
        command("/model gpt-4o"),
        Ok(SlashCommand::Model("gpt-4o".into()))
    );
    assert_eq!(command("/config"), Ok(SlashCommand::Config));
    assert_eq!(command("/tools"), Ok(SlashCommand::Tools));
    assert_eq!(command("/help"), Ok(SlashCommand::Help));
    assert_eq!(command("/HELP"), Ok(SlashCommand::Help));
    assert_eq!(command("/clear"), Ok(SlashCommand::Clear));
    assert_eq!(command("/compact"), Ok(SlashCommand::Compact));
    assert_eq!(command("/usage"), Ok(SlashCommand::Usage));
    assert_eq!(command("/save"), Ok(SlashCommand::Save(None)));
    assert_eq!(
        command("/save my notes.chat"),
        Ok(SlashCommand::Save(Some("my notes.chat".into())))
    );
    assert_eq!(command("/reload-tools"), Ok(SlashCommand::ReloadTools));
    assert_eq!(command("/undo"), Ok(SlashCommand::Undo));
    assert_eq!(command("/diff"), Ok(SlashCommand::Diff));
    assert_eq!(command("/last"), Ok(SlashCommand::Last));
    assert_eq!(command("/resume"), Ok(SlashCommand::Resume(None)));
    assert_eq!(command("/resume 2"), Ok(SlashCommand::Resume(Some(2))));
    assert_eq!(command("/fork"), Ok(SlashCommand::Fork));
    assert_eq!(command("/init"), Ok(SlashCommand::Init));
    assert_eq!(command("/edit"), Ok(SlashCommand::Edit));
    assert_eq!(command("/vim"), Ok(SlashCommand::Vim));
    assert_eq!(command("/paste"), Ok(SlashCommand::Paste));
    assert_eq!(command("/status"), Ok(SlashCommand::Status));
    assert_eq!(command("/skills"), Ok(SlashCommand::Skills));
    assert_eq!(command("/agents"), Ok(SlashCommand::Agents));
    assert_eq!(
        command("/image shots/my screen.png"),
        Ok(SlashCommand::Image("shots/my screen.png".into()))
    );
}

#[test]
fn exit_and_quit_leave() {
    assert_eq!(command("/exit"), Ok(SlashCommand::Exit));
    assert_eq!(command("/quit"), Ok(SlashCommand::Exit));
    assert_eq!(command("/QUIT"), Ok(SlashCommand::Exit));
    assert_eq!(
        command("/exit now"),
        Err("/exit takes fewer arguments; usage: /exit".into())
    );
}

#[test]
fn image_without_a_path_gives_its_usage() {
    assert_eq!(
        command("/image"),
        Err("/image needs an argument; usage: /image PATH".into())
    );
    assert_eq!(
        command("/image   "),
        Err("/image needs an argument; usage: /image PATH".into())
    );
}

#[test]
fn completion_names_cover_commands_and_aliases() {
    let names: Vec<&str> = names().collect();
    for (name, _, _) in COMMANDS {
        assert!(names.contains(name), "{name}");
    }
    assert!(names.contains(&"quit"));
}

#[test]
fn plain_lines_are_messages_and_double_slash_escapes() {
    assert_eq!(
        parse_input("  hello /there "),
        Ok(Input::Message("  hello /there ".into()))
    );
    assert_eq!(
        parse_input("//etc/hosts is odd"),
        Ok(Input::Message("/etc/hosts is odd".into()))
    );
    assert_eq!(parse_input("   "), Ok(Input::Empty));
}

#[test]
fn an_unknown_command_says_so_and_lists_the_known_ones() {
    let known = "/provider, /model, /status, /config, /tools, /skills, /agents, /help, /clear, \
                 /compact, /usage, /save, /reload-tools, /undo, /diff, /effort, /approval, \
                 /permissions, /plan, /last, /resume, /fork, /init, /edit, /paste, /vim, /image, \
                 /review, /jobs, /exit";
    assert_eq!(
        command("/frobnicate now"),
        Err(format!(
            "unknown command /frobnicate; known commands: {known}"
        ))
    );
    assert_eq!(
        command("/mod x"),
        Err(format!(
            "unknown command /mod (did you mean /model?); known commands: {known}"
        ))
    );
    assert_eq!(
        command("/"),
        Err(format!("unknown command /; known commands: {known}"))
    );
}

#[test]
fn wrong_argument_counts_show_the_usage() {
    assert_eq!(
        command("/model"),
        Ok(SlashCommand::Provider(ProviderAction::Current))
    );
    assert_eq!(
        command("/model a b"),
        Err("/model takes fewer arguments; usage: /model [NAME]".into())
    );
    assert_eq!(
        command("/provider"),
        Err("/provider needs an argument; usage: /provider list|current|NAME [MODEL]".into())
    );
    assert_eq!(
        command("/provider list all"),
        Err("/provider takes fewer arguments; usage: /provider list|current|NAME [MODEL]".into())
    );
    assert_eq!(
        command("/provider openai gpt-4 extra"),
        Err("/provider takes fewer arguments; usage: /provider list|current|NAME [MODEL]".into())
    );
    assert_eq!(
        command("/clear all"),
        Err("/clear takes fewer arguments; usage: /clear".into())
    );
}

#[test]
fn effort_plan_approval_and_permissions_parse() {
    use ybs_core::ReasoningEffort;
    assert_eq!(
        command("/effort high"),
        Ok(SlashCommand::Effort(Some(Some(ReasoningEffort::High))))
    );
    assert_eq!(command("/effort off"), Ok(SlashCommand::Effort(Some(None))));
    assert_eq!(command("/effort"), Ok(SlashCommand::Effort(None)));
    assert!(command("/effort extreme").is_err());
    assert_eq!(command("/plan"), Ok(SlashCommand::Plan(None)));
    assert_eq!(command("/plan off"), Ok(SlashCommand::Plan(Some(false))));
    assert_eq!(
        command("/approval full-auto"),
        Ok(SlashCommand::Approval(Some("full-auto".into())))
    );
    assert_eq!(
        command("/permissions remove 2"),
        Ok(SlashCommand::Permissions(Some(2)))
    );
}

#[test]
fn help_lists_every_command() {
    let help = help_text(None);
    for (_, usage, what) in COMMANDS {
        assert!(help.contains(&format!("{usage} ")), "{usage}");
        assert!(help.contains(what));
    }
    assert!(help.starts_with("Commands:\n  /provider list|current|NAME [MODEL]  "));
}

#[test]
fn help_at_80_columns_wraps_purposes_under_their_column() {
    let help = help_text(Some(80));
    assert!(
        help.lines().all(|line| line.chars().count() <= 80),
        "{help}"
    );
    let column = COMMANDS
        .iter()
        .map(|(_, usage, _)| usage.len())
        .max()
        .unwrap_or(0)
        + 4;
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    for (_, usage, what) in COMMANDS {
        assert!(flat.contains(&format!("{usage} {what}")), "{usage}: {help}");
    }
    let rows: Vec<&str> = (help.lines().skip(1))
        .take_while(|line| !line.starts_with("Start a message"))
        .collect();
    assert!(rows.len() > COMMANDS.len(), "nothing wrapped: {help}");
    for row in rows.iter().filter(|row| !row.starts_with("  /")) {
        assert!(row.starts_with(&" ".repeat(column)), "{row:?}");
    }
}
