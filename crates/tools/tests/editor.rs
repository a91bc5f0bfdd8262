//! File tools with an editor ([`ybs_tools::EditorFiles`]): reads see the editor's text,
//! writes go through it where it can write in place, and the sandbox applies either way.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use common::Fixture;
use serde_json::json;
use ybs_tools::{Editor, EditorFiles};

/// An editor holding some buffers, recording the writes it is asked for (and doing them to
/// disk, as an editor saving its buffer would).
#[derive(Default)]
struct Buffers {
    open: Mutex<BTreeMap<PathBuf, String>>,
    writes: Mutex<Vec<(PathBuf, String)>>,
}

impl EditorFiles for Buffers {
    fn read(&self, path: &Path) -> Option<String> {
        self.open.lock().unwrap().get(path).cloned()
    }

    fn write(&self, path: &Path, text: &str) -> Result<(), String> {
        self.writes
            .lock()
            .unwrap()
            .push((path.to_owned(), text.to_owned()));
        self.open
            .lock()
            .unwrap()
            .insert(path.to_owned(), text.to_owned());
        std::fs::write(path, text).map_err(|error| error.to_string())
    }
}

fn with_editor(f: &mut Fixture) -> Arc<Buffers> {
    let buffers = Arc::new(Buffers::default());
    f.ctx.editor = Editor::new(buffers.clone());
    buffers
}

#[test]
fn reads_and_edits_see_the_unsaved_buffer_and_write_through_the_editor() {
    let mut f = Fixture::new();
    let buffers = with_editor(&mut f);
    let path = f.root.join("a.txt");
    buffers
        .open
        .lock()
        .unwrap()
        .insert(path.clone(), "unsaved\nbeta\n".into());

    let read = f.call("read_file", json!({"path": "a.txt"})).unwrap();
    assert_eq!(read["content"], "     1\tunsaved\n     2\tbeta\n");

    f.call(
        "edit_file",
        json!({"path": "a.txt", "old_text": "unsaved", "new_text": "edited"}),
    )
    .unwrap();
    let writes = buffers.writes.lock().unwrap().clone();
    assert_eq!(writes, [(path.clone(), "edited\nbeta\n".to_owned())]);

    // A file the editor has no buffer of is read from disk.
    let read = f.call("read_file", json!({"path": "src/lib.rs"})).unwrap();
    assert_eq!(read["content"], "     1\tfn main() {}\n");
}

#[test]
fn writes_the_editor_cannot_do_in_place_go_to_disk_and_the_sandbox_still_refuses() {
    let mut f = Fixture::new();
    let buffers = with_editor(&mut f);

    // A new file in an existing directory goes through the editor...
    f.call(
        "write_file",
        json!({"path": "src/new.rs", "content": "x\n"}),
    )
    .unwrap();
    assert_eq!(buffers.writes.lock().unwrap().len(), 1);
    // ...one whose directories must be made first is written to disk by the tool.
    f.call(
        "write_file",
        json!({"path": "deep/er/new.rs", "content": "y\n"}),
    )
    .unwrap();
    assert_eq!(buffers.writes.lock().unwrap().len(), 1);
    assert_eq!(
        std::fs::read_to_string(f.root.join("deep/er/new.rs")).unwrap(),
        "y\n"
    );

    // A hard-linked file is replaced, never written in place (the other link keeps its text).
    let other = f.outside.join("linked.txt");
    std::fs::write(&other, "outside\n").unwrap();
    std::fs::hard_link(&other, f.root.join("linked.txt")).unwrap();
    f.call(
        "write_file",
        json!({"path": "linked.txt", "content": "z\n"}),
    )
    .unwrap();
    assert_eq!(buffers.writes.lock().unwrap().len(), 1);
    assert_eq!(std::fs::read_to_string(&other).unwrap(), "outside\n");

    // Blocked paths are refused before the editor is asked anything.
    let err = f.err(
        "write_file",
        json!({"path": "private/key.txt", "content": "no"}),
    );
    assert!(err.contains("denied") || err.contains("blocked"), "{err}");
    let err = f.err("read_file", json!({"path": "../outside/secret.txt"}));
    assert!(!err.contains(common::SECRET), "{err}");
    assert_eq!(buffers.writes.lock().unwrap().len(), 1);
}
