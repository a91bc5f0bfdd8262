//! End to end against the fake LLM: `ybs undo` taking back `exec`, `ask` and REPL turns after
//! ybs exited, from the journal kept under `$XDG_DATA_HOME/ybs/undo/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod pty;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::{Project, call, text};
use pty::{Tmux, shell_quote, ybs_command};
use serde_json::json;
use ybs_testkit::Turn;

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn succeeds(output: &std::process::Output) -> String {
    assert!(
        output.status.success(),
        "stdout:\n{}\nstderr:\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    text(&output.stdout)
}

/// A chat turn (`Hello there.`), a turn creating `made.txt`, then text replies `more`.
fn hello_then_create(more: &[&str]) -> Vec<Turn> {
    let mut turns = vec![
        Turn::text(["Hello there."]),
        call(
            "c1",
            "write_file",
            json!({"path": "made.txt", "content": "x\n"}),
        ),
        Turn::text(["Created it."]),
    ];
    turns.extend(more.iter().map(|text| Turn::text([*text])));
    turns
}

/// Two exec runs: the first creates `made.txt`, the second edits `kept.txt`, rewrites
/// `whole.txt` (mode 0640) and creates `sub/new.txt`.
fn two_runs() -> Project {
    let project = Project::new(vec![
        call(
            "c1",
            "write_file",
            json!({"path": "made.txt", "content": "made\n"}),
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
        call(
            "c4",
            "write_file",
            json!({"path": "sub/new.txt", "content": "x\n"}),
        ),
        Turn::text(["Edited."]),
    ]);
    project.write("kept.txt", "old\n");
    project.write("whole.txt", "original\n");
    fs::set_permissions(project.file("whole.txt"), fs::Permissions::from_mode(0o640)).unwrap();
    fs::create_dir(project.file("sub")).unwrap();
    succeeds(&project.ybs(&["exec", "--yes", "create made"]));
    succeeds(&project.ybs(&["exec", "--yes", "edit the rest"]));
    assert_eq!(project.read("kept.txt"), "new\n");
    assert_eq!(project.read("sub/new.txt"), "x\n");
    project
}

#[test]
fn undo_takes_back_exec_runs_one_by_one_from_a_subdirectory_too() {
    let project = two_runs();
    let listed = succeeds(&project.ybs(&["undo", "--list"]));
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 2, "{listed}");
    assert!(
        lines[0].starts_with(" 1  20")
            && lines[0].ends_with("UTC  exec  \"edit the rest\"  kept.txt, whole.txt, sub/new.txt"),
        "{listed}"
    );
    assert!(
        lines[1].ends_with("exec  \"create made\"  made.txt"),
        "{listed}"
    );
    // Each exec started a session; undoing the run removes its session too.
    let second = sessions(&project).pop().unwrap();
    let stdout = succeeds(&project.ybs(&["undo"]));
    assert!(
        stdout.starts_with("undoing exec \"edit the rest\" of 20"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with(&format!(
            "restored whole.txt\nrestored kept.txt\nremoved sub/new.txt (the turn created \
             it)\nremoved the session {} (the turn started it)\n1 earlier turn recorded; \
             `ybs undo` again takes back the one before\n",
            second.display()
        )),
        "{stdout}"
    );
    assert_eq!(sessions(&project).len(), 1);
    assert_eq!(project.read("kept.txt"), "old\n");
    assert_eq!(project.read("whole.txt"), "original\n");
    assert_eq!(mode(&project.file("whole.txt")), 0o640);
    assert!(!project.file("sub/new.txt").exists());
    assert_eq!(project.read("made.txt"), "made\n");
    // From a subdirectory: the run before.
    let output = project
        .command(&["undo"])
        .current_dir(project.file("sub"))
        .output()
        .unwrap();
    let stdout = succeeds(&output);
    assert!(stdout.contains("undoing exec \"create made\""), "{stdout}");
    // Paths are the project's, not relative to where ybs undo runs.
    assert!(
        stdout.contains("removed made.txt (the turn created it)\n"),
        "{stdout}"
    );
    assert!(!project.file("made.txt").exists());
    // Nothing is left.
    let output = project.ybs(&["undo"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert_eq!(
        stderr,
        format!(
            "ybs: error: nothing to undo: no recorded exec, ask or REPL turn is left for {} \
             (ybs keeps the last 20 runs of a project)\n",
            project.file("").display().to_string().trim_end_matches('/')
        )
    );
    assert_eq!(text(&output.stdout), "");
}

#[test]
fn the_journal_is_private_and_a_corrupt_one_touches_nothing() {
    let project = two_runs();
    let undo = project.path("data/ybs/undo");
    let projects: Vec<_> = fs::read_dir(&undo)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(projects.len(), 1, "{projects:?}");
    let mut runs: Vec<_> = (fs::read_dir(&projects[0]).unwrap())
        .map(|e| e.unwrap().path())
        .collect();
    runs.sort();
    assert_eq!(runs.len(), 2, "{runs:?}");
    let turn = runs[1].join("turn-0001");
    for dir in [&undo, &projects[0], &runs[1], &turn] {
        assert_eq!(mode(dir), 0o700, "{}", dir.display());
    }
    for name in ["turn.json", "0.before", "0.after", "1.before"] {
        assert_eq!(mode(&turn.join(name)), 0o600, "{name}");
    }
    fs::write(turn.join("turn.json"), "{\"version\": 1, \"files\": [").unwrap();
    let output = project.ybs(&["undo"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(
        stderr.starts_with(&format!(
            "ybs: error: the undo journal {} cannot be read (turn.json: ",
            turn.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("nothing was changed. Remove that directory to undo earlier runs"),
        "{stderr}"
    );
    assert_eq!(project.read("kept.txt"), "new\n");
    assert_eq!(project.read("made.txt"), "made\n");
    assert!(project.file("sub/new.txt").exists());
    // Removing it, as told, undoes the run before.
    fs::remove_dir_all(&turn).unwrap();
    succeeds(&project.ybs(&["undo"]));
    assert!(!project.file("made.txt").exists());
}

#[test]
fn a_file_changed_since_is_refused_without_a_terminal_and_kept_with_yes() {
    let project = Project::new(vec![
        call(
            "c1",
            "edit_file",
            json!({"path": "kept.txt", "old_text": "old", "new_text": "new"}),
        ),
        Turn::text(["Edited."]),
    ]);
    project.write("kept.txt", "old\n");
    succeeds(&project.ybs(&["exec", "--yes", "edit"]));
    project.write("kept.txt", "mine\n");
    let output = project.ybs(&["undo"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert_eq!(
        stderr,
        format!(
            "ybs: error: cannot undo: {} changed since that turn; nothing was changed. Run \
             `ybs undo --yes` to undo anyway (your version is then kept in a copy)\n",
            project.file("kept.txt").display()
        )
    );
    assert_eq!(project.read("kept.txt"), "mine\n");
    let stdout = succeeds(&project.ybs(&["undo", "--yes"]));
    assert!(stdout.contains("restored kept.txt\n"), "{stdout}");
    assert_eq!(project.read("kept.txt"), "old\n");
    let copy = (stdout.lines())
        .find_map(|line| line.strip_prefix("your version of kept.txt is kept in "))
        .unwrap();
    assert_eq!(fs::read_to_string(copy).unwrap(), "mine\n");
    assert_eq!(mode(Path::new(copy)), 0o600);
    assert!(copy.starts_with(project.path("data/ybs/undo").to_str().unwrap()));
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

fn edit_and_create() -> Vec<Turn> {
    vec![
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
    ]
}

#[test]
fn undo_after_exec_drops_the_auto_commit() {
    let project = git_project(edit_and_create());
    let output = project.ybs(&["exec", "--yes", "edit"]);
    succeeds(&output);
    assert!(text(&output.stderr).contains("ybs: committed 2 files as "));
    assert_eq!(project.git(&["log", "--format=%s"]), "[ybs] edit\nstart\n");
    let stdout = succeeds(&project.ybs(&["undo"]));
    assert!(stdout.contains("dropped the commit "), "{stdout}");
    assert_eq!(project.git(&["log", "--format=%s"]), "start\n");
    assert_eq!(project.git(&["status", "--porcelain"]), "");
    assert_eq!(project.read("kept.txt"), "old\n");
    assert!(!project.file("made.txt").exists());
}

#[test]
fn undo_after_exec_refuses_when_the_user_committed_on_top() {
    let project = git_project(edit_and_create());
    succeeds(&project.ybs(&["exec", "--yes", "edit"]));
    project.write("other.txt", "mine\n");
    project.git(&["add", "other.txt"]);
    project.git(&["commit", "-qm", "user work"]);
    let output = project.ybs(&["undo"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("ybs: error: cannot undo: the turn was committed as ")
            && stderr.contains("commits were made on top of it"),
        "{stderr}"
    );
    assert_eq!(project.read("kept.txt"), "new\n");
    assert_eq!(project.read("made.txt"), "x\n");
    assert_eq!(project.git(&["log", "--format=%s"]).lines().count(), 3);
}

#[test]
fn undo_after_ask_restores_the_project_file_and_the_chat_file() {
    let project = Project::new(vec![
        call(
            "c1",
            "edit_file",
            json!({"path": "kept.txt", "old_text": "old", "new_text": "new"}),
        ),
        Turn::text(["Edited it."]),
    ]);
    project.write("kept.txt", "old\n");
    let chat = "tool: edit_file\n\nuser:\n\nHello.\n\nassistant:\n\nHi.\n";
    project.write("talk.chat", chat);
    fs::set_permissions(project.file("talk.chat"), fs::Permissions::from_mode(0o600)).unwrap();
    succeeds(&project.ybs(&["ask", "--yes", "--chat", "talk.chat", "Edit kept.txt"]));
    let grown = project.read("talk.chat");
    assert!(
        grown.contains("Edit kept.txt") && grown.contains("Edited it."),
        "{grown}"
    );
    assert_eq!(project.read("kept.txt"), "new\n");
    let stdout = succeeds(&project.ybs(&["undo"]));
    assert!(
        stdout.starts_with("undoing ask \"Edit kept.txt\""),
        "{stdout}"
    );
    assert!(
        stdout.contains("restored kept.txt\nrestored talk.chat\n"),
        "{stdout}"
    );
    assert_eq!(project.read("talk.chat"), chat);
    assert_eq!(mode(&project.file("talk.chat")), 0o600);
    assert_eq!(project.read("kept.txt"), "old\n");
}

#[test]
fn undoing_a_turn_that_ran_shell_commands_warns() {
    let project = Project::new(vec![
        call("c1", "run_shell", json!({"command": "true"})),
        // A write that fails changes nothing and is not listed.
        call(
            "c2",
            "edit_file",
            json!({"path": "missing.txt", "old_text": "a", "new_text": "b"}),
        ),
        Turn::text(["Ran it."]),
    ]);
    succeeds(&project.ybs(&["exec", "--yes", "run"]));
    let listed = succeeds(&project.ybs(&["undo", "--list"]));
    assert!(
        listed.ends_with("exec  \"run\"  no files (+ shell commands)\n"),
        "{listed}"
    );
    let output = project.ybs(&["undo"]);
    let stdout = succeeds(&output);
    assert!(
        stdout.contains("the turn changed no files\nremoved the session "),
        "{stdout}"
    );
    assert_eq!(
        text(&output.stderr),
        "ybs: warning: the turn ran shell commands; what they changed cannot be undone\n"
    );
}

#[test]
fn a_repl_turn_can_be_undone_after_the_session_ended() {
    let project = Project::new(vec![
        call(
            "c1",
            "write_file",
            json!({"path": "made.txt", "content": "x\n"}),
        ),
        Turn::text(["Created."]),
        Turn::text(["Just talk."]),
    ]);
    let output = project.ybs_with_input(&[], "create\ny\ntalk\n");
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(project.file("made.txt").exists());
    // The turn that changed nothing left nothing to undo.
    let listed = succeeds(&project.ybs(&["undo", "--list"]));
    assert_eq!(listed.lines().count(), 1, "{listed}");
    let stdout = succeeds(&project.ybs(&["undo"]));
    assert!(stdout.starts_with("undoing repl \"create\""), "{stdout}");
    assert!(!project.file("made.txt").exists());
}

#[test]
fn on_a_terminal_undo_asks_before_going_over_a_change() {
    if std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_err()
    {
        eprintln!("tmux is not installed: skipping the pseudo-terminal test");
        return;
    }
    let project = Project::new(vec![
        call(
            "c1",
            "edit_file",
            json!({"path": "kept.txt", "old_text": "old", "new_text": "new"}),
        ),
        Turn::text(["Edited."]),
    ]);
    project.write("kept.txt", "old\n");
    succeeds(&project.ybs(&["exec", "--yes", "edit"]));
    project.write("kept.txt", "mine\n");
    let undo = ybs_command(
        &project.path(""),
        "xterm",
        "",
        &project.path("config/ybs.json"),
        "undo",
    );
    let script = format!("{undo}; echo exit=$?; {undo}; echo exit=$?; sleep 600");
    let command = format!("sh -c {}", shell_quote(Path::new(&script)));
    let tmux = Tmux::start(&project.path("tmux.sock"), &project.file(""), &command);
    let question =
        "kept.txt changed since that turn. Undo anyway (your version is kept in a copy)? [y/N]:";
    tmux.wait_for(question);
    tmux.keys(&["n", "Enter"]);
    let screen = tmux.wait_for("exit=1");
    assert!(
        screen.contains("changed since that turn and was left as it is"),
        "{screen}"
    );
    assert_eq!(project.read("kept.txt"), "mine\n");
    tmux.wait_for_after("exit=1", question);
    tmux.keys(&["y", "Enter"]);
    let screen = tmux.wait_for("exit=0");
    assert!(screen.contains("restored kept.txt"), "{screen}");
    assert_eq!(project.read("kept.txt"), "old\n");
}

/// The session files of the project, oldest first.
fn sessions(project: &Project) -> Vec<std::path::PathBuf> {
    let Ok(dirs) = fs::read_dir(project.path("data/ybs/sessions")) else {
        return Vec::new();
    };
    let mut files: Vec<_> = (dirs.flat_map(|dir| fs::read_dir(dir.unwrap().path()).unwrap()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "chat"))
        .collect();
    files.sort();
    files
}

/// The messages of the last request the fake LLM received, as JSON text.
fn last_messages(project: &Project) -> String {
    let bodies = project.bodies();
    bodies.last().unwrap()["messages"].to_string()
}

#[test]
fn undo_takes_an_exec_turn_out_of_its_session_and_resume_does_not_send_it() {
    let project = Project::new(vec![
        call(
            "c1",
            "write_file",
            json!({"path": "made.txt", "content": "made\n"}),
        ),
        Turn::text(["Created it."]),
        call(
            "c2",
            "edit_file",
            json!({"path": "made.txt", "old_text": "made", "new_text": "changed"}),
        ),
        Turn::text(["Edited in turn two."]),
        Turn::text(["Nothing else."]),
    ]);
    succeeds(&project.ybs(&["exec", "--yes", "create made"]));
    let files = sessions(&project);
    assert_eq!(files.len(), 1, "{files:?}");
    let session = &files[0];
    let first = fs::read(session).unwrap();
    succeeds(&project.ybs(&["--resume", "exec", "--yes", "turn two: edit"]));
    let grown = fs::read_to_string(session).unwrap();
    assert!(
        grown.contains("turn two: edit") && grown.contains("Edited in turn two."),
        "{grown}"
    );
    assert_eq!(project.read("made.txt"), "changed\n");
    let stdout = succeeds(&project.ybs(&["undo"]));
    assert!(
        stdout.contains(&format!(
            "restored made.txt\ntook the turn out of the session {}\n",
            session.display()
        )),
        "{stdout}"
    );
    assert_eq!(project.read("made.txt"), "made\n");
    assert_eq!(fs::read(session).unwrap(), first);
    assert_eq!(mode(session), 0o600);
    succeeds(&project.ybs(&["--resume", "exec", "--yes", "anything else?"]));
    let sent = last_messages(&project);
    assert!(
        sent.contains("create made") && sent.contains("Created it."),
        "{sent}"
    );
    assert!(
        !sent.contains("turn two") && !sent.contains("\"c2\""),
        "{sent}"
    );
    assert_eq!(sessions(&project), files);
}

#[test]
fn turns_saved_after_the_undone_one_stay_in_the_session_and_a_copy_is_kept() {
    let project = Project::new(vec![
        call(
            "c1",
            "write_file",
            json!({"path": "made.txt", "content": "made\n"}),
        ),
        Turn::text(["Created it."]),
        // A turn that changes no file leaves no undo record, but is saved in the session.
        Turn::text(["You are welcome."]),
        Turn::text(["Still here."]),
    ]);
    succeeds(&project.ybs(&["exec", "--yes", "create made"]));
    succeeds(&project.ybs(&["--resume", "exec", "thanks"]));
    let session = sessions(&project).pop().unwrap();
    let before_undo = fs::read(&session).unwrap();
    let stdout = succeeds(&project.ybs(&["undo"]));
    assert!(
        stdout.contains(&format!(
            "removed made.txt (the turn created it)\ntook the turn out of the session {}; the \
             1 turn saved after it stays\nthe session as it was is kept in ",
            session.display()
        )),
        "{stdout}"
    );
    assert!(!project.file("made.txt").exists());
    let copy = (stdout.lines())
        .find_map(|line| line.strip_prefix("the session as it was is kept in "))
        .unwrap();
    assert_eq!(fs::read(copy).unwrap(), before_undo);
    assert_eq!(mode(Path::new(copy)), 0o600);
    assert_eq!(
        fs::read_to_string(&session).unwrap(),
        "user:\n\nthanks\n\nassistant:\n\nYou are welcome.\n"
    );
    succeeds(&project.ybs(&["--resume", "exec", "and now?"]));
    let sent = last_messages(&project);
    assert!(
        sent.contains("thanks") && sent.contains("You are welcome."),
        "{sent}"
    );
    assert!(
        !sent.contains("create made") && !sent.contains("Created it.") && !sent.contains("c1"),
        "{sent}"
    );
}

#[test]
fn a_session_edited_since_is_left_as_it_is_with_a_warning() {
    let project = Project::new(vec![
        call(
            "c1",
            "write_file",
            json!({"path": "made.txt", "content": "made\n"}),
        ),
        Turn::text(["Created it."]),
    ]);
    succeeds(&project.ybs(&["exec", "--yes", "create made"]));
    let session = sessions(&project).pop().unwrap();
    let edited = "user:\n\nmy own words\n\nassistant:\n\nCreated it.\n";
    fs::write(&session, edited).unwrap();
    let output = project.ybs(&["undo"]);
    let stdout = succeeds(&output);
    assert!(
        stdout.contains("removed made.txt (the turn created it)\n"),
        "{stdout}"
    );
    assert!(!stdout.contains("session"), "{stdout}");
    assert_eq!(
        text(&output.stderr),
        format!(
            "ybs: warning: the session {} was left as it is: it changed since that turn other \
             than by later turns (compacted or edited), so the turn's messages cannot be told \
             apart; resuming it still gives the model the undone turn\n",
            session.display()
        )
    );
    assert_eq!(fs::read_to_string(&session).unwrap(), edited);
    assert!(!project.file("made.txt").exists());
}

#[test]
fn repl_undo_saves_the_session_without_the_turn() {
    let project = Project::new(hello_then_create(&["Again.", "Resumed."]));
    let output = project.ybs_with_input(&[], "hello\ncreate\ny\n/undo\nagain\n");
    let stdout = succeeds(&output);
    assert!(
        stdout.contains(
            "removed made.txt (the turn created it)\nthe turn was dropped from the conversation \
             and from its saved session\n"
        ),
        "{stdout}"
    );
    assert!(!project.file("made.txt").exists());
    // The next turn's save is not taken for a change made elsewhere.
    assert!(
        !text(&output.stderr).contains("warning"),
        "{}",
        text(&output.stderr)
    );
    let session = sessions(&project).pop().unwrap();
    assert_eq!(
        fs::read_to_string(&session).unwrap(),
        "user:\n\nhello\n\nassistant:\n\nHello there.\n\nuser:\n\nagain\n\nassistant:\n\nAgain.\n"
    );
    // The REPL's own /undo took the turn out of the journal too.
    let listed = succeeds(&project.ybs(&["undo", "--list"]));
    assert_eq!(
        listed,
        format!(
            "no recorded turn to undo for {}\n",
            project.file("").display().to_string().trim_end_matches('/')
        )
    );
    succeeds(&project.ybs(&["--resume", "exec", "go on"]));
    let sent = last_messages(&project);
    assert!(
        sent.contains("hello") && sent.contains("Hello there."),
        "{sent}"
    );
    assert!(
        !sent.contains("create") && !sent.contains("Created it."),
        "{sent}"
    );
}

#[test]
fn after_repl_clear_undo_still_takes_back_the_earlier_turn_and_its_session() {
    let project = Project::new(hello_then_create(&[]));
    let output = project.ybs_with_input(&[], "hello\ncreate\ny\n/clear\n/undo\n");
    let stdout = succeeds(&output);
    assert!(!project.file("made.txt").exists(), "{stdout}");
    let files = sessions(&project);
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(
        stdout.contains(&format!(
            "conversation cleared\nremoved made.txt (the turn created it)\nthe turn was in \
             the conversation before /clear\ntook the turn out of the session {}\n",
            files[0].display()
        )),
        "{stdout}"
    );
    assert_eq!(
        fs::read_to_string(&files[0]).unwrap(),
        "user:\n\nhello\n\nassistant:\n\nHello there.\n"
    );
}

#[test]
fn a_running_repl_says_when_ybs_undo_changed_its_session_and_keeps_that_version() {
    let project = Project::new(hello_then_create(&["Talking."]));
    let mut child = project
        .command(&[])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, b"hello\ncreate\ny\n").unwrap();
    // Wait until the REPL saved the second turn and recorded that save in its journal.
    let recorded = || {
        let journal = project.path("data/ybs/undo");
        let runs = fs::read_dir(journal).ok()?.next()?.ok()?.path();
        let run = fs::read_dir(runs).ok()?.next()?.ok()?.path();
        let manifest = fs::read_to_string(run.join("turn-0002/turn.json")).ok()?;
        Some(manifest.contains("\"session\": {"))
    };
    let mut waited = 0;
    while recorded() != Some(true) {
        waited += 1;
        assert!(waited < 600, "the REPL did not save its turn");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let session = sessions(&project).pop().unwrap();
    let stdout = succeeds(&project.ybs(&["undo"]));
    assert!(
        stdout.contains(&format!(
            "took the turn out of the session {}",
            session.display()
        )),
        "{stdout}"
    );
    let undone = "user:\n\nhello\n\nassistant:\n\nHello there.\n";
    assert_eq!(fs::read_to_string(&session).unwrap(), undone);
    std::io::Write::write_all(&mut stdin, b"talk\n").unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let stderr = text(&output.stderr);
    let warning = format!(
        "ybs: warning: the session {} changed since this session saved it (`ybs undo` or an \
         edit elsewhere?); it is saved again from this session's conversation, which still \
         holds any turn undone there; that version is kept in ",
        session.display()
    );
    let copy = (stderr.lines())
        .find_map(|line| line.strip_prefix(&warning))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert_eq!(fs::read_to_string(copy).unwrap(), undone);
    assert!(fs::read_to_string(&session).unwrap().contains("Talking."));
}
