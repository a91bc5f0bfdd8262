//! A directory swapped, over and over, with a blocked one (`renameat2(RENAME_EXCHANGE)`)
//! while a guarded read walks through it: the identity check at the moment of access refuses
//! every read that would reach the blocked file. This is the race the tools' `read_file` runs
//! through `guarded`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ybs_fsguard::FileId;
use ybs_fsguard::guarded::{self, Guard, Refusal};

const PRIVATE: &str = "TOPSECRET-private";

/// One root, and the identities blocked when the guard was made.
struct Blocking {
    root: PathBuf,
    blocked: Vec<FileId>,
}

impl Guard for Blocking {
    fn root_of(&self, resolved: &Path) -> Option<&Path> {
        resolved
            .starts_with(&self.root)
            .then_some(self.root.as_path())
    }
    fn is_blocked_id(&self, id: FileId) -> bool {
        self.blocked.contains(&id)
    }
    fn is_read_only_id(&self, _: FileId) -> bool {
        false
    }
    fn check_write(&self, _: &str, _: &Path) -> Result<(), Refusal> {
        Ok(())
    }
}

#[test]
fn a_guarded_read_does_not_leak_a_blocked_file_during_a_rename_exchange_race() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("pub")).unwrap();
    std::fs::create_dir_all(root.join("private")).unwrap();
    std::fs::write(root.join("pub/key.txt"), "public").unwrap();
    std::fs::write(root.join("private/key.txt"), PRIVATE).unwrap();
    let guard = Blocking {
        blocked: vec![
            FileId::of(&root.join("private")).unwrap(),
            FileId::of(&root.join("private/key.txt")).unwrap(),
        ],
        root: root.clone(),
    };
    let stop = Arc::new(AtomicBool::new(false));
    // Swaps so far: the reads go on until the racer has really run (on a busy machine the
    // 400 reads can be over before it is scheduled).
    let swapped = Arc::new(AtomicU64::new(0));
    let racer = {
        let (stop, swapped) = (stop.clone(), swapped.clone());
        let (a, b) = (root.join("pub"), root.join("private"));
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) && swaps < 2_000_000 {
                rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    &a,
                    rustix::fs::CWD,
                    &b,
                    rustix::fs::RenameFlags::EXCHANGE,
                )
                .unwrap();
                swaps += 1;
                swapped.store(swaps, Ordering::Relaxed);
            }
            swaps
        })
    };
    let started = Instant::now();
    let (mut leaks, mut reads, mut refused) = (0, 0, 0);
    while (reads + refused < 400 || swapped.load(Ordering::Relaxed) < 1_000)
        && started.elapsed() < Duration::from_secs(20)
    {
        match guarded::read(&guard, &root.join("pub/key.txt")) {
            Ok(bytes) => {
                reads += 1;
                if bytes == PRIVATE.as_bytes() {
                    leaks += 1;
                }
            }
            Err(_) => refused += 1,
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = racer.join().unwrap();
    assert!(swaps > 100, "the race did not run ({swaps} swaps)");
    assert_eq!(
        leaks, 0,
        "{leaks} leaks in {reads} reads ({refused} refused)"
    );
    println!("rename exchange race: {swaps} swaps, {reads} reads, {refused} refused, 0 leaks");
}
