//! The third attack on the daemon: consent bound to what an include sends, nested `.git`
//! and git-directory layouts reserved, no context update through a swapped link, a git index
//! that cannot make the daemon allocate or wait, names that say secret, special files as
//! context, and private snapshots kept private. Each test performs the attack against the
//! real binary and checks it now does no harm, what the daemon says, and what is on disk.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::{PermissionsExt, symlink};

use common::World;
use serde_json::{Value, json};
use ybs_testkit::Turn;

fn project_error(view: &Value) -> String {
    view["instructions_info"]["project_error"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn includes(view: &Value) -> Vec<Value> {
    view["instructions_info"]["project_includes"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn mkfifo(path: &std::path::Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

// The user allows `@include NOTES.md` (ignored by git); a pull turns it into a link to
// `.env`. The consent was given to what NOTES.md sent then, so the include is refused again
// and the secret is not sent.
#[test]
fn include_consent_is_bound_to_the_resolved_file_and_its_content() {
    let world = World::new();
    let server = world.serve(vec![Turn::text(["fine"]), Turn::text(["fine"])], json!({}));
    world.write(".gitignore", "NOTES.md\n");
    world.write("NOTES.md", "MY-NOTES\n");
    world.write(".env", "API_KEY=SECRET-FROM-ENV\n");
    world.write(".bb7/instructions", "@include NOTES.md\n");
    let mut daemon = world.open_project();
    daemon.new_chat("mine");
    let view = daemon.call(json!({"action":"chat_get"}));
    assert!(project_error(&view).contains("include NOTES.md is ignored by git"));
    let digest = includes(&view)[0]["digest"].as_str().unwrap().to_owned();
    assert!(digest.starts_with("sha256:"), "{digest}");
    let ok = daemon.call(json!({"action":"allow_includes","paths":["NOTES.md"]}));
    assert_eq!(ok["type"], "ok", "{ok}");
    assert_eq!(
        project_error(&daemon.call(json!({"action":"chat_get"}))),
        ""
    );
    let sent = daemon.send("s1", "hello");
    assert_eq!(sent.last().unwrap()["type"], "done", "{sent:?}");

    // The pull: NOTES.md becomes a link to `.env`.
    std::fs::remove_file(world.project().join("NOTES.md")).unwrap();
    symlink(".env", world.project().join("NOTES.md")).unwrap();
    let view = daemon.call(json!({"action":"chat_get"}));
    let error = project_error(&view);
    assert!(
        error.contains("include NOTES.md is named like a file of secrets"),
        "{error}"
    );
    assert_ne!(includes(&view)[0]["digest"].as_str().unwrap(), digest);
    let refused = daemon.send("s2", "again");
    assert_eq!(refused.last().unwrap()["type"], "error", "{refused:?}");
    let requests = common::chat_requests(&server);
    assert_eq!(requests.len(), 1, "the second send reached no model");
    assert!(!requests[0].to_string().contains("SECRET-FROM-ENV"));

    // A consent bound to what the user was shown is kept as given; new content asks again.
    std::fs::remove_file(world.project().join("NOTES.md")).unwrap();
    world.write("NOTES.md", "MY-NOTES\n");
    let ok = daemon
        .call(json!({"action":"allow_includes","paths":[{"path":"NOTES.md","digest":digest}]}));
    assert_eq!(ok["type"], "ok", "{ok}");
    assert_eq!(
        project_error(&daemon.call(json!({"action":"chat_get"}))),
        ""
    );
    world.write("NOTES.md", "MY-NOTES\nTOKEN=PASTED-LATER\n");
    let error = project_error(&daemon.call(json!({"action":"chat_get"})));
    assert!(
        error.contains("include NOTES.md is ignored by git"),
        "{error}"
    );
}

// A nested repository's `lib/.git/config` and a `docs/` laid out as a bare repository
// (`HEAD`, `objects/`, `refs/`: its `config` is read by git run there) are reserved:
// `apply_file` and `get_diff_paths` refuse them, the output is kept, nothing is written.
#[test]
fn nested_git_directories_and_bare_layouts_are_never_written() {
    let world = World::new();
    world.write("lib/.git/HEAD", "ref: refs/heads/main\n");
    world.write("lib/src.rs", "fn main() {}\n");
    world.write("docs/HEAD", "ref: refs/heads/main\n");
    std::fs::create_dir_all(world.project().join("docs/objects")).unwrap();
    std::fs::create_dir_all(world.project().join("docs/refs")).unwrap();
    let mut daemon = world.open_project();
    let id = daemon.new_chat("mine");
    let output = world.chats_dir().join(&id).join("output");
    let hostile = [
        "lib/.git/config",
        "lib/.Git/hooks/pre-commit",
        "docs/config",
    ];
    for name in hostile {
        let file = output.join(name);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "[core]\n\tfsmonitor = touch /tmp/pwned\n").unwrap();
    }
    for name in hostile {
        let reply = daemon.call(json!({"action":"apply_file","path":name}));
        assert_eq!(reply["type"], "error", "{name}: {reply}");
        let message = reply["message"].as_str().unwrap();
        assert!(
            message.contains("inside .bb7/ or .git/")
                || message.contains("laid out as a git directory"),
            "{name}: {message}"
        );
        let diff = daemon.call(json!({"action":"get_diff_paths","path":name}));
        assert_eq!(diff["type"], "error", "{name}: {diff}");
        assert!(output.join(name).is_file(), "{name}: the output is kept");
        assert!(!world.project().join(name).exists(), "{name}");
    }
    // An ordinary file of the nested work tree is still applied.
    std::fs::write(output.join("lib/src.rs"), "fn main() { run() }\n").unwrap();
    let reply = daemon.call(json!({"action":"apply_file","path":"lib/src.rs"}));
    assert_eq!(reply["type"], "ok", "{reply}");
    assert_eq!(reply["content"], "fn main() { run() }\n", "{reply}");
}

// `docs/guide.md` in context becomes a link to `.env` (inside the project); the client
// reads through it and sends `context_update`. The daemon refuses it and drops the entry,
// so neither the secret nor the stale snapshot goes with the next send.
#[test]
fn a_context_update_through_a_swapped_link_is_refused_and_nothing_stale_is_sent() {
    let world = World::new();
    let server = world.serve(vec![Turn::text(["fine"])], json!({}));
    world.write("docs/guide.md", "GUIDE-OLD\n");
    world.write(".env", "TOKEN=SECRET-FROM-ENV\n");
    let mut daemon = world.open_project();
    let id = daemon.new_chat("mine");
    let added =
        daemon.call(json!({"action":"context_add","path":"docs/guide.md","content":"GUIDE-OLD\n"}));
    assert_eq!(added["type"], "ok", "{added}");
    std::fs::remove_file(world.project().join("docs/guide.md")).unwrap();
    symlink("../.env", world.project().join("docs/guide.md")).unwrap();
    let reply = daemon.call(json!({"action":"context_update","path":"docs/guide.md",
        "content":"TOKEN=SECRET-FROM-ENV\n"}));
    assert_eq!(reply["type"], "error", "{reply}");
    assert_eq!(
        reply["message"],
        "context file docs/guide.md now leads to .env through a link: not updated, and \
         removed from context (add .env itself if you mean to send it)"
    );
    let snapshot = world.chats_dir().join(&id).join("context/docs/guide.md");
    assert_eq!(std::fs::read_to_string(snapshot).unwrap(), "GUIDE-OLD\n");
    let list = daemon.call(json!({"action":"context_list"}));
    assert_eq!(list["files"], json!([]), "{list}");
    let sent = daemon.send("s1", "hello");
    assert_eq!(sent.last().unwrap()["type"], "done", "{sent:?}");
    let request = common::chat_requests(&server).pop().unwrap().to_string();
    assert!(!request.contains("SECRET-FROM-ENV") && !request.contains("GUIDE-OLD"));
}

/// A version 4 index of `count` entries that each keep the whole previous name and add a
/// byte: a small file describing names that grow without end.
fn quadratic_index(count: u32) -> Vec<u8> {
    let mut data = b"DIRC".to_vec();
    data.extend(4u32.to_be_bytes());
    data.extend(count.to_be_bytes());
    for _ in 0..count {
        data.extend([0u8; 40 + 20]);
        data.extend([0u8, 1]);
        data.push(0);
        data.extend(b"a\0");
    }
    data
}

// A git index that would make the daemon allocate gigabytes, one claiming four billion
// entries, and FIFOs as `.git/index`, as a `gitdir:` target's index and as `.git/config`:
// `chat_get` answers, and the include needs consent (the index vouches for nothing).
#[test]
fn a_hostile_git_index_or_a_fifo_vouches_for_nothing_and_holds_nothing() {
    let world = World::new();
    world.write("notes.md", "NOTES\n");
    world.write(".bb7/instructions", "@include notes.md\n");
    std::fs::create_dir_all(world.project().join(".git")).unwrap();
    let mut daemon = world.open_project();
    daemon.new_chat("mine");
    let index = world.project().join(".git/index");
    let mut huge_count = quadratic_index(1);
    huge_count[8..12].copy_from_slice(&u32::MAX.to_be_bytes());
    for data in [quadratic_index(20_000), huge_count] {
        std::fs::write(&index, data).unwrap();
        let view = daemon.call(json!({"action":"chat_get"}));
        assert_eq!(includes(&view)[0]["needs_consent"], "untracked", "{view}");
    }
    std::fs::remove_file(&index).unwrap();
    mkfifo(&index);
    mkfifo(&world.project().join(".git/config"));
    let view = daemon.call(json!({"action":"chat_get"}));
    assert_eq!(includes(&view)[0]["needs_consent"], "untracked", "{view}");
    // `.git` as a `gitdir:` file whose target's index is a FIFO.
    std::fs::remove_dir_all(world.project().join(".git")).unwrap();
    let target = world.root().join("elsewhere.git");
    std::fs::create_dir_all(&target).unwrap();
    mkfifo(&target.join("index"));
    world.write(".git", &format!("gitdir: {}\n", target.display()));
    let view = daemon.call(json!({"action":"chat_get"}));
    assert_eq!(includes(&view)[0]["needs_consent"], "untracked", "{view}");
}

// 800,000 includes of an empty file would be resolved and listed one by one: past 1000
// `@include` lines the instructions are an error.
#[test]
fn too_many_includes_are_an_instruction_error() {
    let world = World::new();
    world.write("empty.md", "");
    world.write(".bb7/instructions", &"@include empty.md\n".repeat(1001));
    let mut daemon = world.open_project();
    daemon.new_chat("mine");
    let view = daemon.call(json!({"action":"chat_get"}));
    assert!(
        project_error(&view).ends_with(":1001: instructions hold more than 1000 @include lines"),
        "{}",
        project_error(&view)
    );
    world.write(".bb7/instructions", &"@include empty.md\n".repeat(1000));
    let view = daemon.call(json!({"action":"chat_get"}));
    assert_eq!(project_error(&view), "");
    assert_eq!(includes(&view).len(), 1000);
}

// A tracked `.env` the user filled in, a `.env` outside any work tree and not in a
// `.gitignore`, and a project whose `.git` is a link: each include needs consent.
#[test]
fn secret_names_and_a_linked_git_need_consent_whatever_git_says() {
    let world = World::new();
    world.write(".env", "API_KEY=SECRET\n");
    world.write("keys/id_ed25519", "PRIVATE\n");
    world.write("notes.md", "NOTES\n");
    world.write(
        ".bb7/instructions",
        "@include .env\n@include keys/id_ed25519\n@include notes.md\n",
    );
    let mut daemon = world.open_project();
    daemon.new_chat("mine");
    let view = daemon.call(json!({"action":"chat_get"}));
    let reasons: Vec<Value> = includes(&view)
        .iter()
        .map(|i| i["needs_consent"].clone())
        .collect();
    assert_eq!(
        reasons,
        [json!("secret_name"), json!("secret_name"), Value::Null]
    );
    assert!(
        project_error(&view).contains(":1: include .env is named like a file of secrets"),
        "{}",
        project_error(&view)
    );
    // `.git` as a link to a git directory whose index lists every file: still a work tree
    // (git follows the link), so nothing is vouched for without reading through it.
    let real = world.root().join("real.git");
    std::fs::create_dir_all(&real).unwrap();
    symlink(&real, world.project().join(".git")).unwrap();
    let view = daemon.call(json!({"action":"chat_get"}));
    assert_eq!(includes(&view)[2]["needs_consent"], "untracked", "{view}");
}

// `/dev/zero` as an external context file is refused without reading it; a shipped chat
// naming `/dev/tty` as an external entry is suspect and is not sent.
#[test]
fn special_files_are_no_context_and_flag_a_shipped_chat() {
    let world = World::new();
    let mut daemon = world.open_project();
    daemon.new_chat("mine");
    let reply = daemon.call(json!({"action":"context_add","path":"/dev/zero","content":"x"}));
    assert_eq!(reply["type"], "error", "{reply}");
    assert_eq!(
        reply["message"],
        "/dev/zero is not a regular file: only regular files can be context files"
    );
    let id = "cccccccccc";
    let dir = world.chats_dir().join(id);
    std::fs::create_dir_all(dir.join("context/_external")).unwrap();
    let chat = json!({"version": 2, "id": id, "name": "shipped", "model": "test/model",
        "created": "2026-01-01T00:00:00Z", "draft": "", "messages": [],
        "context_files": [{"path": "/dev/tty", "readonly": true, "external": true,
            "version": "x"}]});
    std::fs::write(dir.join("chat.json"), chat.to_string()).unwrap();
    let selected = daemon.call(json!({"action":"chat_select","id":id}));
    assert_eq!(selected["type"], "ok", "{selected}");
    let view = daemon.call(json!({"action":"chat_get"}));
    assert!(
        view["untrusted"].as_str().is_some_and(
            |why| why.contains("external context file that is not a regular file (/dev/tty)")
        ),
        "{view}"
    );
}

// `bb7_init` keeps `.bb7/` out of git, and the snapshot of a `0600` file is `0600`.
#[test]
fn bb7_stays_out_of_git_and_private_files_stay_private() {
    let world = World::new();
    world.write(".env", "TOKEN=1\n");
    std::fs::set_permissions(
        world.project().join(".env"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let mut daemon = world.open_project();
    assert_eq!(world.read(".bb7/.gitignore").lines().last(), Some("*"));
    let id = daemon.new_chat("mine");
    let added = daemon.call(json!({"action":"context_add","path":".env","content":"TOKEN=1\n"}));
    assert_eq!(added["type"], "ok", "{added}");
    let snapshot = world.chats_dir().join(&id).join("context/.env");
    let mode = std::fs::metadata(&snapshot).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let updated =
        daemon.call(json!({"action":"context_update","path":".env","content":"TOKEN=2\n"}));
    assert_eq!(updated["type"], "ok", "{updated}");
    let mode = std::fs::metadata(&snapshot).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}
