//! End-to-end tests of the repository map (`context.repo_map_tokens`): the `ybs` binary
//! against the fake LLM, checked through the system prompt of the recorded requests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;

use common::{Project, call, text};
use serde_json::{Value, json};
use ybs_agent::prompt::repo_map::{HEADING, OUTSIDE};
use ybs_context_budget::{CharsPerToken, TokenCounter};
use ybs_testkit::Turn;

/// The system prompt of a request body.
fn system(body: &Value) -> String {
    let first = &body["messages"][0];
    assert_eq!(first["role"], "system", "{body}");
    first["content"].as_str().unwrap().to_owned()
}

/// The map's section of a system prompt (it comes last), if there is one.
fn map_section(body: &Value) -> Option<String> {
    let system = system(body);
    system.find(HEADING).map(|at| system[at..].to_owned())
}

/// A project of 60 source files in four languages, where `src/core.rs` is used by all the
/// Rust files.
fn populate(project: &Project) {
    for dir in ["src", "lib", "web", "cmd"] {
        fs::create_dir_all(project.file(dir)).unwrap();
    }
    project.write(
        "src/core.rs",
        "pub struct Engine { size: usize }\nimpl Engine {\n    pub fn start(&self) -> bool { true }\n}\n",
    );
    for i in 0..15 {
        project.write(
            &format!("src/part{i:02}.rs"),
            &format!("pub fn part_{i}(engine: &Engine) -> bool {{ engine.start() }}\n"),
        );
        project.write(
            &format!("lib/tool{i:02}.py"),
            &format!("class Tool{i}:\n    def run(self, value):\n        return value\n"),
        );
        project.write(
            &format!("web/view{i:02}.ts"),
            &format!("export function render{i}(node: HTMLElement): void {{}}\n"),
        );
        project.write(
            &format!("cmd/main{i:02}.go"),
            &format!("package cmd\n\nfunc Command{i}(args []string) error {{ return nil }}\n"),
        );
    }
    project.write("notes.txt", "not code\n");
    fs::write(project.file(".gitignore"), "ignored/\n").unwrap();
    fs::create_dir_all(project.file("ignored")).unwrap();
    project.write("ignored/secret.rs", "pub fn hidden_function() {}\n");
}

fn budget(project: &Project, tokens: u64) {
    project.configure(|config| config["context"] = json!({"repo_map_tokens": tokens}));
}

#[test]
fn the_map_is_in_the_system_prompt_within_its_budget() {
    let project = Project::new(vec![Turn::text(["ok"])]);
    populate(&project);
    budget(&project, 300);
    let output = project.ybs(&["exec", "what does web/view07.ts do?"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let bodies = project.bodies();
    let section = map_section(&bodies[0]).expect("a map section");
    assert!(CharsPerToken::default().count(&section) <= 300, "{section}");
    let map = &section[HEADING.len()..];
    // The mentioned file first, then the file every Rust file uses.
    assert!(
        map.starts_with(
            "web/view07.ts:\n  function render7(node: HTMLElement): void\nsrc/core.rs:\n  \
             pub struct Engine\n  impl Engine\n    pub fn start(&self) -> bool\n"
        ),
        "{map}"
    );
    assert!(map.ends_with("more files not shown\n"), "{map}");
    assert!(!map.contains("ignored/"), "{map}");
    // The system prompt itself is still there, before the map.
    assert!(system(&bodies[0]).starts_with("You are ybs"));
}

#[test]
fn a_large_budget_shows_every_file_and_zero_turns_the_map_off() {
    let project = Project::new(vec![Turn::text(["ok"]), Turn::text(["ok"])]);
    populate(&project);
    budget(&project, 5000);
    assert!(project.ybs(&["exec", "hi"]).status.success());
    budget(&project, 0);
    assert!(project.ybs(&["exec", "hi"]).status.success());
    let bodies = project.bodies();
    let map = map_section(&bodies[0]).unwrap();
    for file in [
        "src/part14.rs",
        "lib/tool03.py",
        "cmd/main00.go",
        "notes.txt",
        ".gitignore",
    ] {
        assert!(map.contains(&format!("\n{file}")), "{file} in {map}");
    }
    assert!(!map.contains("not shown"), "{map}");
    assert_eq!(map_section(&bodies[1]), None);
    assert!(!system(&bodies[1]).contains("Repository map"));
}

#[test]
fn the_map_is_rebuilt_after_a_file_is_added_and_identical_otherwise() {
    let project = Project::new(vec![
        call(
            "c1",
            "write_file",
            json!({"path": "lib/fresh.py", "content": "def brand_new_helper(x):\n    return x\n"}),
        ),
        Turn::text(["created it"]),
        Turn::text(["second"]),
        Turn::text(["third"]),
    ]);
    populate(&project);
    budget(&project, 5000);
    let output = project.ybs_with_input(&[], "create a file\ny\nnext\nagain\n");
    assert!(output.status.success(), "{}", text(&output.stderr));
    let bodies = project.bodies();
    assert_eq!(bodies.len(), 4);
    let sections: Vec<String> = bodies.iter().map(|b| map_section(b).unwrap()).collect();
    // Within the first turn the map stays as it was when the turn began.
    assert!(!sections[0].contains("lib/fresh.py"));
    assert_eq!(system(&bodies[0]), system(&bodies[1]));
    // The next turn sees the new file and its definition.
    assert!(
        sections[2].contains("lib/fresh.py:\n  def brand_new_helper(x)\n"),
        "{}",
        sections[2]
    );
    // Nothing changed since: the same bytes.
    assert_eq!(system(&bodies[2]), system(&bodies[3]));
}

#[test]
fn dry_run_shows_the_map() {
    let project = Project::new(vec![Turn::text(["ok"])]);
    populate(&project);
    budget(&project, 400);
    let output = project.ybs(&["--dry-run", "exec", "look at src/core.rs"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let shown = format!("{}{}", text(&output.stdout), text(&output.stderr));
    assert!(
        shown.contains("repo map: ") && shown.contains("(context.repo_map_tokens)"),
        "{shown}"
    );
    assert!(shown.contains(HEADING.trim_end()), "{shown}");
    assert!(
        shown.contains("src/core.rs:\n  pub struct Engine"),
        "{shown}"
    );
}

#[test]
fn ask_sends_the_map_with_the_chat_files_mentions_first() {
    let project = Project::new(vec![Turn::text(["ok"])]);
    populate(&project);
    budget(&project, 200);
    project.write("q.chat", "What does cmd/main03.go do?\n");
    let output = project.ybs(&["ask", "--chat", "q.chat"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let section = map_section(&project.bodies()[0]).expect("a map section");
    assert!(CharsPerToken::default().count(&section) <= 200, "{section}");
    assert!(
        section[HEADING.len()..]
            .starts_with("cmd/main03.go:\n  func Command3(args []string) error\n"),
        "{section}"
    );
}

#[test]
fn started_in_a_subdirectory_the_map_covers_the_repository_nearest_files_first() {
    let project = Project::new(vec![Turn::text(["ok"]), Turn::text(["ok"])]);
    project.git(&["init", "-q"]);
    populate(&project);
    fs::create_dir_all(project.file("empty")).unwrap();
    budget(&project, 600);
    for folder in ["web", "empty"] {
        let output = project
            .command(&["exec", "hi"])
            .current_dir(project.file(folder))
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", text(&output.stderr));
    }
    let bodies = project.bodies();
    let from_web = map_section(&bodies[0]).expect("a map from web/");
    assert!(from_web[HEADING.len()..].starts_with(OUTSIDE), "{from_web}");
    let map = &from_web[HEADING.len() + OUTSIDE.len()..];
    // The working directory's files first, written from it; the rest of the repository
    // after them, as `../`.
    assert!(
        map.starts_with("view00.ts:\n  function render0(node: HTMLElement): void\nview01.ts:"),
        "{map}"
    );
    assert!(
        map.contains("\n../src/core.rs:\n  pub struct Engine\n"),
        "{map}"
    );
    assert!(!map.contains("\nweb/"), "{map}");
    // An empty folder gets the repository's map, not none.
    let from_empty = map_section(&bodies[1]).expect("a map from an empty folder");
    assert!(
        from_empty.contains("../src/core.rs:\n  pub struct Engine\n  impl Engine\n"),
        "{from_empty}"
    );
    assert!(from_empty.contains("../web/view"), "{from_empty}");
}

#[test]
fn started_in_a_small_folder_the_map_keeps_a_share_for_the_rest_of_the_repository() {
    let project = Project::new(vec![Turn::text(["ok"])]);
    project.git(&["init", "-q"]);
    populate(&project);
    // A folder of three files with many definitions each, which nothing else uses.
    fs::create_dir_all(project.file("tool")).unwrap();
    for i in 0..3 {
        let text: String = (0..40)
            .map(|j| format!("pub fn tool_step_{i}_{j}(value: u64) -> u64 {{ value }}\n"))
            .collect();
        project.write(&format!("tool/t{i}.rs"), &text);
    }
    budget(&project, 600);
    let output = project
        .command(&["exec", "hi"])
        .current_dir(project.file("tool"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let section = map_section(&project.bodies()[0]).expect("a map from tool/");
    let map = &section[HEADING.len() + OUTSIDE.len()..];
    assert!(map.starts_with("t0.rs:\n  pub fn tool_step_0_0("), "{map}");
    let outside: Vec<&str> = (map.lines())
        .filter(|line| line.starts_with("../"))
        .collect();
    assert!(outside.len() >= 10, "{map}");
    assert!(
        map.contains("\n../src/core.rs:\n  pub struct Engine\n"),
        "{map}"
    );
    assert!(CharsPerToken::default().count(map) <= 600, "{map}");
}
