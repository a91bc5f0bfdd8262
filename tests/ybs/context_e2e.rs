//! End to end against the fake LLM: what ybs tells the model about where it is (the system
//! prompt's environment block and instruction files, the project's `.ybs.json` found from a
//! subdirectory), the diff shown before a change, and `/undo` with and without git.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;

use common::{Project, call, text};
use serde_json::{Value, json};
use ybs_testkit::Turn;

fn system_prompt(body: &Value) -> String {
    let first = &body["messages"][0];
    assert_eq!(first["role"], "system", "{body}");
    first["content"].as_str().unwrap().to_owned()
}

/// A git repository in `project/` with instruction files at three levels and the user's own.
fn nested_instructions(project: &Project) {
    project.git(&["init", "-q", "-b", "main"]);
    fs::create_dir_all(project.file("sub/deeper")).unwrap();
    project.write("AGENTS.md", "Root rule: use tabs.\n");
    project.write("CLAUDE.md", "Never shown: the root has an AGENTS.md.\n");
    project.write("sub/CLAUDE.md", "Sub rule from CLAUDE.md.\n");
    project.write("sub/deeper/AGENTS.md", "Deeper rule: run the tests.\n");
    fs::create_dir_all(project.path("config/ybs")).unwrap();
    fs::write(
        project.path("config/ybs/AGENTS.md"),
        "User rule: be brief.\n",
    )
    .unwrap();
}

#[test]
fn the_system_prompt_has_the_environment_and_every_instruction_file_in_order() {
    let project = Project::new(vec![Turn::text(["Done."])]);
    nested_instructions(&project);
    // The repository's own .ybs.json is read from a subdirectory.
    project.write(".ybs.json", r#"{"llm": {"temperature": 0.25}}"#);
    let deeper = project.file("sub/deeper");
    let output = project
        .command(&["exec", "hello"])
        .current_dir(&deeper)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let bodies = project.bodies();
    let body = &bodies[0];
    assert_eq!(body["temperature"], json!(0.25), "{body}");
    let system = system_prompt(body);
    assert!(
        system.starts_with("You are ybs, a coding agent"),
        "{system}"
    );
    let root = project.file("");
    let root = root.to_str().unwrap().trim_end_matches('/');
    for needle in [
        "# Environment\n".to_owned(),
        format!(
            "- Operating system: {} ({})\n",
            std::env::consts::OS,
            std::env::consts::ARCH
        ),
        "- Shell of run_shell: /bin/sh".to_owned(),
        format!("- Project directory: {}\n", deeper.display()),
        "- Today's date: 20".to_owned(),
        format!("- Git: a repository at {root}, on branch main\n"),
        "- git status --short when the session started:\n    ?? ".to_owned(),
        "- Sandbox: on. No network access; files can be written only under".to_owned(),
    ] {
        assert!(system.contains(&needle), "{needle:?} not in\n{system}");
    }
    let sources = [
        format!("{root}/AGENTS.md\">\nRoot rule: use tabs."),
        format!("{root}/sub/CLAUDE.md\">\nSub rule from CLAUDE.md."),
        format!("{root}/sub/deeper/AGENTS.md\">\nDeeper rule: run the tests."),
        format!(
            "{}\">\nUser rule: be brief.",
            project.path("config/ybs/AGENTS.md").display()
        ),
    ];
    let mut last = 0;
    for source in &sources {
        let at = system
            .find(source.as_str())
            .unwrap_or_else(|| panic!("{source} not in\n{system}"));
        assert!(at > last, "{source} out of order");
        last = at;
    }
    assert!(!system.contains("Never shown"));
    assert!(system.find("# Environment").unwrap() < system.find("# Project instructions").unwrap());
    // `ybs config` names the files.
    let output = project
        .command(&["config"])
        .current_dir(&deeper)
        .output()
        .unwrap();
    let shown = text(&output.stdout);
    assert!(
        shown.contains(&format!("#   {root}/sub/CLAUDE.md (24 characters)")),
        "{shown}"
    );
    assert!(shown.contains("llm.temperature = 0.25"), "{shown}");
}

#[test]
fn the_working_directory_file_wins_over_the_repository_one_and_the_prompt_stays_the_same() {
    let project = Project::new(vec![
        call("c1", "read_file", json!({"path": "AGENTS.md"})),
        Turn::text(["Read it."]),
    ]);
    nested_instructions(&project);
    project.write(".ybs.json", r#"{"llm": {"temperature": 0.25}}"#);
    project.write("sub/.ybs.json", r#"{"llm": {"temperature": 0.5}}"#);
    let output = project
        .command(&["exec", "read"])
        .current_dir(project.file("sub"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let bodies = project.bodies();
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0]["temperature"], json!(0.5));
    // Byte for byte the same system prompt on each request of the session.
    assert_eq!(system_prompt(&bodies[0]), system_prompt(&bodies[1]));
}

#[test]
fn instructions_over_the_cap_are_cut_with_a_warning() {
    let project = Project::new(vec![Turn::text(["Done."])]);
    nested_instructions(&project);
    project.configure(|config| config["context"] = json!({"instructions_max_chars": 30}));
    let output = project
        .command(&["exec", "hello"])
        .current_dir(project.file("sub/deeper"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("ybs: warning: project instructions were cut to context.instructions_max_chars (30 characters)"),
        "{stderr}"
    );
    let system = system_prompt(&project.bodies()[0]);
    // 20 characters of the root file, 10 of the next, none of the rest.
    assert!(system.contains("Root rule: use tabs."), "{system}");
    assert!(
        system.contains("Sub rule f\n[… 14 more characters cut: context.instructions_max_chars]"),
        "{system}"
    );
    assert!(!system.contains("Deeper rule"));
    assert!(!system.contains("User rule"));
}

#[test]
fn dry_run_shows_the_system_prompt_and_the_diff_of_a_write() {
    let project = Project::new(vec![
        call(
            "c1",
            "edit_file",
            json!({"path": "a.txt", "old_text": "two", "new_text": "TWO"}),
        ),
        Turn::text(["Edited."]),
    ]);
    project.write("a.txt", "one\ntwo\nthree\n");
    let output = project.ybs(&["--dry-run", "exec", "--yes", "edit"]);
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("dry run: the system prompt of this session:\nYou are ybs"),
        "{stderr}"
    );
    assert!(stderr.contains("# Environment"), "{stderr}");
    assert!(
        stderr.contains("  a.txt: +1 -1\n  @@ -1,3 +1,3 @@\n   one\n  -two\n  +TWO\n   three\n"),
        "{stderr}"
    );
    assert_eq!(project.read("a.txt"), "one\ntwo\nthree\n");
}

#[test]
fn exec_shows_each_change_and_a_summary_per_file() {
    let project = Project::new(vec![
        call(
            "c1",
            "write_file",
            json!({"path": "new.txt", "content": "a\nb\n"}),
        ),
        call(
            "c2",
            "edit_file",
            json!({"path": "old.txt", "old_text": "x", "new_text": "y\nz"}),
        ),
        call("c3", "run_shell", json!({"command": "true"})),
        Turn::text(["Done."]),
    ]);
    project.write("old.txt", "x\n");
    let output = project.ybs(&["exec", "--yes", "change"]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("  new file new.txt (2 lines, 4 bytes)\n  +a\n  +b\n"),
        "{stderr}"
    );
    assert!(stderr.contains("  -x\n  +y\n  +z\n"), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "  $ true\n  in {}\n",
            project.file("").display().to_string().trim_end_matches('/')
        )),
        "{stderr}"
    );
    assert!(stderr.contains("+2 -0 new.txt (new)\n"), "{stderr}");
    assert!(stderr.contains("+2 -1 old.txt\n"), "{stderr}");
    // Not a terminal: plain + and -, no colour.
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
}

fn undo_script() -> Vec<Turn> {
    vec![
        call(
            "c1",
            "write_file",
            json!({"path": "made.txt", "content": "new\n"}),
        ),
        Turn::text(["Created."]),
        call(
            "c2",
            "edit_file",
            json!({"path": "kept.txt", "old_text": "old", "new_text": "new"}),
        ),
        call(
            "c3",
            "write_file",
            json!({"path": "whole.txt", "content": "rewritten\n"}),
        ),
        Turn::text(["Edited."]),
        Turn::text(["Fine."]),
    ]
}

fn system_and_users(body: &Value) -> Vec<String> {
    (body["messages"].as_array().unwrap().iter())
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn undo_puts_back_writes_edits_and_creations_turn_by_turn_without_git() {
    let project = Project::new(undo_script());
    project.write("kept.txt", "old\n");
    project.write("whole.txt", "original\n");
    fs::set_permissions(
        project.file("whole.txt"),
        std::os::unix::fs::PermissionsExt::from_mode(0o640),
    )
    .unwrap();
    let input = "create\ny\nedit\ny\ny\n/diff\n/undo\nagain\n/undo\n/undo\n/undo\n";
    let output = project.ybs_with_input(&[], input);
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("+1 -1 kept.txt\n+1 -1 whole.txt\n"),
        "{stderr}"
    );
    assert!(
        stdout.contains("  kept.txt: +1 -1\n  @@ -1 +1 @@\n  -old\n  +new\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "restored whole.txt\nrestored kept.txt\nthe turn was dropped from the conversation and from its saved session\n"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("the turn changed no files\nthe turn was dropped from the conversation and from its saved session\nremoved made.txt (the turn created it)\n"), "{stdout}");
    assert!(
        stdout.ends_with(
            "nothing to undo: no turn of this session changed anything that is still recorded\n\
             (turns of earlier runs, a resumed session's too: `ybs undo --list`, `ybs undo`)\n"
        ),
        "{stdout}"
    );
    assert_eq!(project.read("kept.txt"), "old\n");
    assert_eq!(project.read("whole.txt"), "original\n");
    let mode = fs::metadata(project.file("whole.txt"))
        .unwrap()
        .permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o640
    );
    assert!(!project.file("made.txt").exists());
    // The model no longer sees the undone turn.
    let bodies = project.bodies();
    let last = bodies.last().unwrap();
    assert_eq!(system_and_users(last), ["create", "again"]);
    // The pre-images were kept under the state directory while they were needed.
    assert!(project.path("data/ybs/undo").is_dir());
}

#[test]
fn undo_asks_before_going_over_changes_made_since_and_keeps_them() {
    let project = Project::new(vec![
        call(
            "c1",
            "edit_file",
            json!({"path": "kept.txt", "old_text": "old", "new_text": "new"}),
        ),
        Turn::text(["Edited."]),
    ]);
    project.write("kept.txt", "old\n");
    let mut repl = Repl::start(&project);
    repl.send("edit\ny\n");
    // The turn has ended once the journal's summary is out; then the user changes the file.
    wait_until(|| project.read("kept.txt") == "new\n" && project.llm.requests().len() >= 2);
    std::thread::sleep(std::time::Duration::from_millis(300));
    fs::write(project.file("kept.txt"), "mine\n").unwrap();
    repl.send("/undo\nn\n/undo\ny\n");
    let stdout = repl.finish();
    assert!(
        stdout.contains(
            "changed since that turn. Undo anyway (your version is kept in a copy)? [y/N]: "
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("kept.txt changed since that turn and was left as it is"),
        "{stdout}"
    );
    assert!(stdout.contains("restored kept.txt"), "{stdout}");
    assert_eq!(project.read("kept.txt"), "old\n");
    let copy_line = stdout
        .lines()
        .find(|l| l.starts_with("your version of kept.txt is kept in "))
        .unwrap();
    let copy = copy_line.trim_start_matches("your version of kept.txt is kept in ");
    assert_eq!(fs::read_to_string(copy).unwrap(), "mine\n");
}

fn git_project(turns: Vec<Turn>) -> Project {
    let project = Project::new(turns);
    project.configure(|config| config["git"] = json!({"auto_commit": true}));
    project.git(&["init", "-q", "-b", "main"]);
    project.write("kept.txt", "old\n");
    project.git(&["add", "kept.txt"]);
    project.git(&["commit", "-qm", "start"]);
    project
}

#[test]
fn undo_with_auto_commit_drops_the_ybs_commit() {
    let project = git_project(vec![
        call(
            "c1",
            "edit_file",
            json!({"path": "kept.txt", "old_text": "old", "new_text": "new"}),
        ),
        call(
            "c2",
            "write_file",
            json!({"path": "made.txt", "content": "x\n"}),
        ),
        Turn::text(["Edited."]),
    ]);
    let output = project.ybs_with_input(&[], "edit\ny\ny\n/undo\n");
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("ybs: committed 2 files as "),
        "{}",
        text(&output.stderr)
    );
    assert!(stdout.contains("dropped the commit "), "{stdout}");
    assert_eq!(project.git(&["log", "--format=%s"]).trim(), "start");
    assert_eq!(project.git(&["status", "--porcelain"]), "");
    assert_eq!(project.read("kept.txt"), "old\n");
    assert!(!project.file("made.txt").exists());
}

#[test]
fn undo_refuses_when_the_user_committed_on_top() {
    let project = git_project(vec![
        call(
            "c1",
            "edit_file",
            json!({"path": "kept.txt", "old_text": "old", "new_text": "new"}),
        ),
        Turn::text(["Edited."]),
    ]);
    let mut repl = Repl::start(&project);
    repl.send("edit\ny\n");
    wait_until(|| {
        project
            .git(&["log", "-1", "--format=%s"])
            .starts_with("[ybs]")
    });
    project.write("other.txt", "mine\n");
    project.git(&["add", "other.txt"]);
    project.git(&["commit", "-qm", "user work"]);
    repl.send("/undo\n");
    let stdout = repl.finish();
    assert!(
        stdout.contains("error: cannot undo: the turn was committed as "),
        "{stdout}"
    );
    assert!(
        stdout.contains("commits were made on top of it"),
        "{stdout}"
    );
    assert_eq!(project.read("kept.txt"), "new\n");
    assert_eq!(project.git(&["log", "--format=%s"]).lines().count(), 3);
}

/// The REPL on pipes, fed in steps.
struct Repl {
    child: std::process::Child,
}

impl Repl {
    fn start(project: &Project) -> Repl {
        let child = project
            .command(&[])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        Repl { child }
    }

    fn send(&mut self, input: &str) {
        use std::io::Write;
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(input.as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    fn finish(mut self) -> String {
        drop(self.child.stdin.take());
        let output = self.child.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", text(&output.stderr));
        text(&output.stdout)
    }
}

fn wait_until(mut done: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "never happened"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn ask_sends_the_environment_and_instructions_and_a_chat_system_prompt_replaces_ybs_own() {
    let project = Project::new(vec![Turn::text(["One."]), Turn::text(["Two."])]);
    project.write("AGENTS.md", "Answer in French.\n");
    project.write("plain.chat", "What is this?\n");
    let output = project.ybs(&["ask", "--chat", "plain.chat"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    project.write(
        "own.chat",
        "system:\n\nYou are a poet.\n\nuser:\n\nWrite.\n",
    );
    let output = project.ybs(&["ask", "--chat", "own.chat"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let bodies = project.bodies();
    let plain = system_prompt(&bodies[0]);
    assert!(plain.starts_with("You are ybs"), "{plain}");
    assert!(
        plain.contains("# Environment") && plain.contains("Answer in French."),
        "{plain}"
    );
    let all: Vec<String> = (bodies[1]["messages"].as_array().unwrap().iter())
        .filter(|m| m["role"] == "system")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    let joined = all.join("\n");
    assert!(joined.contains("You are a poet."), "{joined}");
    assert!(
        joined.contains("# Environment") && joined.contains("Answer in French."),
        "{joined}"
    );
    assert!(!joined.contains("You are ybs"), "{joined}");
}
