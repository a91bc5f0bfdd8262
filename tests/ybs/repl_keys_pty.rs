//! The REPL at the keyboard on an 80-column terminal (tmux): vi keys (`ui.editing_mode`,
//! `/vim`) with the mode in the prompt, a key bound in `ui.keys` (and an unknown key name
//! refused), messages typed while a turn runs (queued and sent after it, or steering it at
//! its next model request, or given back at the prompt by Ctrl-C), and Ctrl-V and `/paste`
//! attaching the clipboard's image through a stand-in `xclip`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod pty;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use pty::{Tmux, scratch_root, shell_quote, tmux_missing, write_fake_llm_config, ybs_command};
use serde_json::{Value, json};
use ybs_testkit::{FakeLlm, Script, ToolCall, Turn};

const COLUMNS: u16 = 80;

/// The bytes of the stand-in clipboard's image.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\nclipboard-image-bytes";

/// Writes the configuration for `llm` with `ui` merged into its `ui` section.
fn config_with(root: &Path, llm: &FakeLlm, ui: Value) -> std::path::PathBuf {
    let path = root.join("ybs.json");
    write_fake_llm_config(&path, &llm.base_url(), false);
    let mut config: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    for (key, value) in ui.as_object().unwrap() {
        config["ui"][key] = value.clone();
    }
    fs::write(&path, config.to_string()).unwrap();
    path
}

fn start(root: &Path, config: &Path, extra: &str, args: &str) -> Tmux {
    let command = ybs_command(root, "xterm", extra, config, args);
    Tmux::start_sized(
        &root.join("tmux.sock"),
        &root.join("project"),
        &command,
        (COLUMNS, 40),
    )
}

fn chat_bodies(llm: &FakeLlm) -> Vec<Value> {
    (llm.requests().into_iter())
        .filter(|request| request.path.ends_with("/chat/completions"))
        .map(|request| request.body)
        .collect()
}

/// The `role: user` texts of a request body, in order.
fn user_texts(body: &Value) -> Vec<String> {
    (body["messages"].as_array().unwrap().iter())
        .filter(|message| message["role"] == "user")
        .map(|message| match &message["content"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// A tool call that runs until the test creates `release` in the project: the turn is
/// surely running while the test types.
fn waiting_call() -> Turn {
    let command = "until [ -e release ]; do sleep 0.05; done; echo released";
    Turn::default().with_tool_call(ToolCall::new("w", "run_shell", json!({"command": command})))
}

/// The screen's words in order, whitespace and line ends made one space.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Waits until `sentence` shows, wrapped or not.
fn wait_for_words(tmux: &Tmux, sentence: &str) -> String {
    let start = std::time::Instant::now();
    loop {
        let screen = tmux.screen();
        if flat(&screen).contains(&flat(sentence)) {
            return screen;
        }
        assert!(
            start.elapsed() < pty::PATIENCE,
            "never saw {sentence:?} on\n{screen}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Waits until the cursor is at `column`.
fn wait_for_cursor(tmux: &Tmux, column: usize) {
    let start = std::time::Instant::now();
    loop {
        let at = tmux.run(&["display-message", "-p", "-t", "ybs", "#{cursor_x}"]);
        if at.trim() == column.to_string() {
            return;
        }
        assert!(start.elapsed() < pty::PATIENCE, "the cursor stayed at {at}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn vi_keys_edit_in_normal_mode_and_the_prompt_says_vi() {
    if tmux_missing() {
        return;
    }
    let root = scratch_root();
    let llm = FakeLlm::start(Script::new([Turn::text(["one"]), Turn::text(["two"])])).unwrap();
    let config = config_with(root.path(), &llm, json!({"editing_mode": "vi"}));
    let tmux = start(root.path(), &config, "", "");
    tmux.wait_for("ybs vi>");
    tmux.keys(&["-l", "hello world"]);
    tmux.wait_for("hello world");
    // Esc is normal mode once the editor has seen no sequence follow it: the cursor steps
    // back onto the last character.
    tmux.keys(&["Escape"]);
    wait_for_cursor(&tmux, "ybs vi> hello worl".len());
    tmux.keys(&["0"]);
    tmux.keys(&["x"]);
    tmux.wait_for("ybs vi> ello world");
    tmux.keys(&["Enter"]);
    tmux.wait_for_after("one", "ybs vi>");
    assert_eq!(user_texts(&chat_bodies(&llm)[0]), ["ello world"]);
    // `/vim` switches back to emacs keys, and the prompt says so.
    tmux.keys(&["-l", "/vim"]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("emacs keys on");
    assert!(screen.trim_end().ends_with("ybs>"), "{screen}");
    tmux.keys(&["-l", "/help"]);
    tmux.keys(&["Enter"]);
    wait_for_words(&tmux, "editing with emacs keys");
    tmux.keys(&["C-d"]);
}

#[test]
fn a_key_bound_in_the_config_works_and_help_says_it() {
    if tmux_missing() {
        return;
    }
    let root = scratch_root();
    let llm = FakeLlm::start(Script::new([Turn::text(["done"])])).unwrap();
    let config = config_with(root.path(), &llm, json!({"keys": {"newline": "ctrl-n"}}));
    let tmux = start(root.path(), &config, "", "");
    tmux.wait_for("ybs>");
    tmux.keys(&["-l", "/help"]);
    tmux.keys(&["Enter"]);
    let screen = wait_for_words(&tmux, "Ctrl-N inserts a newline");
    assert!(!screen.contains("Ctrl-J inserts"), "{screen}");
    tmux.keys(&["-l", "first line"]);
    tmux.keys(&["C-n"]);
    tmux.keys(&["-l", "second line"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for_after("done", "ybs>");
    assert_eq!(
        user_texts(&chat_bodies(&llm)[0]),
        ["first line\nsecond line"]
    );
    tmux.keys(&["C-d"]);
}

#[test]
fn an_unknown_key_name_or_action_is_an_error_naming_it() {
    let root = scratch_root();
    let llm = FakeLlm::start(Script::new([])).unwrap();
    for (keys, named, said) in [
        (
            json!({"submit": "ctrl-foo"}),
            "ui.keys.submit",
            "unknown key name \"ctrl-foo\"",
        ),
        (
            json!({"sumbit": "ctrl-s"}),
            "ui.keys",
            "unknown field `sumbit`",
        ),
        (
            json!({"submit": "ctrl-j"}),
            "ui.keys.submit",
            "ctrl-j is bound to both",
        ),
    ] {
        let config = config_with(root.path(), &llm, json!({"keys": keys}));
        let output = std::process::Command::new(ybs_e2e::binary("ybs"))
            .env_clear()
            .env("HOME", root.path().join("home"))
            .env("PATH", "/usr/bin:/bin")
            .current_dir(root.path().join("project"))
            .args(["-c", config.to_str().unwrap(), "exec", "hello"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{stderr}");
        assert!(stderr.contains(named), "{stderr}");
        assert!(stderr.contains(said), "{stderr}");
    }
    assert!(llm.requests().is_empty());
}

/// A REPL whose first turn ("start") is running its tool call until the test creates
/// `release` in the project, then goes on with `after`.
fn during_a_running_turn(after: Vec<Turn>) -> (tempfile::TempDir, FakeLlm, Tmux) {
    let root = scratch_root();
    let mut turns = vec![waiting_call()];
    turns.extend(after);
    let llm = FakeLlm::start(Script::new(turns)).unwrap();
    let config = config_with(root.path(), &llm, json!({}));
    let tmux = start(root.path(), &config, "", "--approval full-auto");
    tmux.wait_for("ybs>");
    tmux.keys(&["-l", "start"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("until [ -e release ]");
    (root, llm, tmux)
}

#[test]
fn a_message_typed_during_a_turn_is_queued_and_sent_after_it() {
    if tmux_missing() {
        return;
    }
    let (root, llm, tmux) = during_a_running_turn(vec![
        Turn::text(["first answer"]),
        Turn::text(["second answer"]),
    ]);
    tmux.keys(&["-l", "and then this"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("queued: and then this");
    // A C1 control typed as text (CSI) is shown, not obeyed.
    tmux.keys(&["-l", "x\u{9b}2Jy"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("queued: x<U+009B>2Jy");
    // Up takes the last one back to edit; Ctrl-U drops it.
    tmux.keys(&["Up"]);
    tmux.wait_for("unqueued, to edit: x<U+009B>2Jy");
    tmux.keys(&["C-u"]);
    fs::write(root.path().join("project/release"), "").unwrap();
    tmux.wait_for("second answer");
    let bodies = chat_bodies(&llm);
    assert_eq!(bodies.len(), 3);
    // The turn's own requests did not carry the queued message...
    assert_eq!(user_texts(&bodies[1]), ["start"]);
    // ...the next one is it, alone.
    assert_eq!(user_texts(&bodies[2]), ["start", "and then this"]);
    tmux.keys(&["C-d"]);
}

#[test]
fn a_steering_message_reaches_the_turns_next_model_request() {
    if tmux_missing() {
        return;
    }
    let (root, llm, tmux) = during_a_running_turn(vec![Turn::text(["steered answer"])]);
    tmux.keys(&["-l", "use tabs instead"]);
    tmux.keys(&["M-Enter"]);
    tmux.wait_for("steering: use tabs instead");
    fs::write(root.path().join("project/release"), "").unwrap();
    tmux.wait_for_after("steered answer", "ybs>");
    let bodies = chat_bodies(&llm);
    assert_eq!(bodies.len(), 2, "nothing more is sent after the turn");
    let messages = bodies[1]["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user");
    assert_eq!(last["content"], "use tabs instead");
    // It follows the tool's result.
    assert_eq!(messages[messages.len() - 2]["role"], "tool");
    tmux.keys(&["C-d"]);
}

#[test]
fn ctrl_c_cancels_the_turn_and_gives_the_queued_text_back_at_the_prompt() {
    if tmux_missing() {
        return;
    }
    let (_root, llm, tmux) = during_a_running_turn(vec![Turn::text(["after"])]);
    tmux.keys(&["-l", "keep me"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("queued: keep me");
    tmux.keys(&["C-c"]);
    wait_for_words(&tmux, "back at the prompt");
    tmux.wait_for("ybs> keep me");
    assert_eq!(
        chat_bodies(&llm).len(),
        1,
        "the queued message was not sent"
    );
    tmux.keys(&["Enter"]);
    tmux.wait_for("after");
    let bodies = chat_bodies(&llm);
    assert_eq!(
        user_texts(bodies.last().unwrap()).last().unwrap(),
        "keep me"
    );
    tmux.keys(&["C-d"]);
}

/// A stand-in `xclip` in `root/bin` that gives `root/clip.png` as the image and
/// `root/clip.txt` as text, each only when it exists (as the real one fails when the
/// clipboard has no such target).
fn stand_in_xclip(root: &Path) -> String {
    let bin = root.join("bin");
    fs::create_dir_all(&bin).unwrap();
    let script = format!(
        "#!/bin/sh\ncase \"$*\" in\n*image/png*) f={png};;\n*) f={txt};;\nesac\n\
         if [ -e \"$f\" ]; then cat \"$f\"; else echo 'Error: target image/png not available' >&2; exit 1; fi\n",
        png = shell_quote(&root.join("clip.png")),
        txt = shell_quote(&root.join("clip.txt")),
    );
    fs::write(bin.join("xclip"), script).unwrap();
    fs::set_permissions(bin.join("xclip"), fs::Permissions::from_mode(0o755)).unwrap();
    format!("PATH={}:/usr/bin:/bin", shell_quote(&bin))
}

#[test]
fn ctrl_v_and_paste_attach_the_clipboards_image() {
    if tmux_missing() {
        return;
    }
    let root = scratch_root();
    let llm = FakeLlm::start(Script::new([
        Turn::text(["seen"]),
        Turn::text(["seen again"]),
    ]))
    .unwrap();
    let config = config_with(root.path(), &llm, json!({}));
    let path = stand_in_xclip(root.path());
    let tmux = start(root.path(), &config, &path, "");
    tmux.wait_for("ybs>");
    // Nothing on the clipboard: said so, nothing attached.
    tmux.keys(&["-l", "/paste"]);
    tmux.keys(&["Enter"]);
    wait_for_words(
        &tmux,
        "the clipboard holds no image (xclip: Error: target image/png not available)",
    );
    fs::write(root.path().join("clip.png"), PNG).unwrap();
    tmux.keys(&["-l", "what is "]);
    tmux.keys(&["C-v"]);
    wait_for_words(&tmux, "attached to the next message");
    let screen = tmux.wait_for("ybs> what is");
    assert!(
        flat(&screen).contains("image from the clipboard ("),
        "{screen}"
    );
    tmux.keys(&["-l", "this"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for_after("seen", "ybs>");
    let encoded = base64_of(PNG);
    let body = chat_bodies(&llm)[0].to_string();
    assert!(body.contains(&encoded), "{body}");
    assert!(body.contains("what is this"), "{body}");
    // `/paste` attaches it as well.
    tmux.keys(&["-l", "/paste"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for_after("seen", "ybs>");
    wait_for_words(&tmux, "ybs> /paste image from the clipboard");
    tmux.keys(&["-l", "again"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("seen again");
    assert!(
        chat_bodies(&llm)[1]["messages"]
            .to_string()
            .matches(&encoded)
            .count()
            >= 2
    );
    tmux.keys(&["C-d"]);
}

#[test]
fn a_clipboard_program_planted_in_the_project_is_not_run() {
    if tmux_missing() || std::path::Path::new("/usr/bin/xclip").exists() {
        return;
    }
    let root = scratch_root();
    let llm = FakeLlm::start(Script::new([])).unwrap();
    let config = config_with(root.path(), &llm, json!({}));
    // A cloned repository ships its own `xclip`, on a PATH entry inside the project.
    let planted = root.path().join("project/bin");
    fs::create_dir_all(&planted).unwrap();
    let proof = root.path().join("ran");
    let script = format!("#!/bin/sh\ntouch {}\n", shell_quote(&proof));
    fs::write(planted.join("xclip"), script).unwrap();
    fs::set_permissions(planted.join("xclip"), fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("PATH={}:/usr/bin:/bin", shell_quote(&planted));
    let tmux = start(root.path(), &config, &path, "");
    tmux.wait_for("ybs>");
    tmux.keys(&["-l", "/paste"]);
    tmux.keys(&["Enter"]);
    wait_for_words(&tmux, "cannot paste: no clipboard program found");
    assert!(!proof.exists(), "the project's xclip ran");
    assert!(!root.path().join("data/ybs/pasted").exists());
    tmux.keys(&["C-d"]);
}

#[test]
fn text_pasted_with_ctrl_v_is_shown_inert() {
    if tmux_missing() {
        return;
    }
    let root = scratch_root();
    let llm = FakeLlm::start(Script::new([Turn::text(["ok"])])).unwrap();
    let config = config_with(root.path(), &llm, json!({}));
    let path = stand_in_xclip(root.path());
    // Text that would clear the screen and retitle the window, were it obeyed.
    fs::write(
        root.path().join("clip.txt"),
        "pasted\x1b[2J\x1b]0;owned\x07 text",
    )
    .unwrap();
    let tmux = start(root.path(), &config, &path, "");
    tmux.wait_for("ybs>");
    tmux.keys(&["C-v"]);
    let screen = tmux.wait_for("ybs> pasted^[[2J^[]0;owned^G text");
    assert!(screen.contains("ybs>"), "{screen}");
    tmux.keys(&["Enter"]);
    tmux.wait_for("ok");
    assert_eq!(
        user_texts(&chat_bodies(&llm)[0]),
        ["pasted^[[2J^[]0;owned^G text"]
    );
    tmux.keys(&["C-d"]);
}

/// Standard base64 of `bytes`.
fn base64_of(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}
