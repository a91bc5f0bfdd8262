//! Reads the paths a git index holds (`DIRC`, versions 2 to 4, SHA-1 or SHA-256 object
//! names) without running git. The index comes from a tree someone else may have shaped, so
//! every length it states is checked against what is left of the file before anything is
//! allocated: the entry count against the smallest entry, each name against `PATH_MAX`, the
//! names together against a cap, and the whole read against a time budget. Whatever breaks a
//! bound makes the index unreadable, and an unreadable index vouches for nothing (every file
//! of its work tree then needs the user's consent).

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

/// The largest index read (a very large repository's is a few hundred megabytes; bb7's
/// projects are far smaller, and one past this needs consent for every include).
pub const MAX_INDEX_BYTES: u64 = 256 * 1024 * 1024;

/// The longest path an entry may name (Linux's `PATH_MAX`).
const MAX_NAME_BYTES: usize = 4096;

/// The most bytes all names together may take once version 4's shared prefixes are
/// expanded: such prefixes let a small file describe gigabytes of names.
const MAX_TOTAL_NAME_BYTES: usize = 256 * 1024 * 1024;

/// How long one read may take; past it the index vouches for nothing.
const TIME_BUDGET: Duration = Duration::from_secs(2);

/// How many entries are parsed between two looks at the clock.
const CLOCK_EVERY: usize = 4096;

/// The paths of the index file `path`; `None` when it is not a regular file of at most
/// [`MAX_INDEX_BYTES`] (a FIFO or a device is refused without blocking) or does not parse
/// within the bounds.
pub fn read_index(path: &Path, hash_len: usize) -> Option<HashSet<Vec<u8>>> {
    let read = ybs_fsguard::read_file(path, MAX_INDEX_BYTES, ybs_fsguard::Links::Follow).ok()?;
    if read.truncated {
        return None;
    }
    parse_index(&read.bytes, hash_len, Instant::now() + TIME_BUDGET)
}

fn be32(data: &[u8], at: usize) -> Option<u32> {
    let bytes = data.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

/// Git's offset varint (index version 4's prefix length); `None` past `usize`.
fn varint(data: &[u8], at: &mut usize) -> Option<usize> {
    let mut byte = *data.get(*at)?;
    *at += 1;
    let mut value = usize::from(byte & 0x7f);
    while byte & 0x80 != 0 {
        byte = *data.get(*at)?;
        *at += 1;
        value = value
            .checked_add(1)?
            .checked_mul(128)?
            .checked_add(usize::from(byte & 0x7f))?;
    }
    Some(value)
}

/// The paths of an index held in memory, or `None` when it breaks a bound or `deadline`
/// passes first.
pub fn parse_index(data: &[u8], hash_len: usize, deadline: Instant) -> Option<HashSet<Vec<u8>>> {
    if data.get(..4)? != b"DIRC" {
        return None;
    }
    let version = be32(data, 4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = usize::try_from(be32(data, 8)?).ok()?;
    // The fixed fields, the flags and at least a one-byte name with its NUL: an index
    // claiming more entries than fit in the file is refused before anything is reserved.
    let smallest_entry = 40 + hash_len + 2 + 2;
    if count > data.len().saturating_sub(12) / smallest_entry {
        return None;
    }
    let mut paths = HashSet::with_capacity(count);
    let mut total_names = 0usize;
    let mut at = 12usize;
    let mut previous: Vec<u8> = Vec::new();
    for entry in 0..count {
        if entry % CLOCK_EVERY == 0 && Instant::now() > deadline {
            return None;
        }
        let start = at;
        // ctime, mtime (8 each), dev, ino, mode, uid, gid, size (4 each), the object name.
        let flags_at = start.checked_add(40 + hash_len)?;
        let flags = u16::from_be_bytes([*data.get(flags_at)?, *data.get(flags_at + 1)?]);
        let mut name_at = flags_at + 2;
        if version >= 3 && flags & 0x4000 != 0 {
            name_at += 2;
        }
        let name = if version == 4 {
            let mut cursor = name_at;
            let strip = varint(data, &mut cursor)?;
            let end = cursor + data.get(cursor..)?.iter().position(|&b| b == 0)?;
            let keep = previous.len().checked_sub(strip)?;
            let suffix = &data[cursor..end];
            if keep + suffix.len() > MAX_NAME_BYTES {
                return None;
            }
            previous.truncate(keep);
            previous.extend_from_slice(suffix);
            at = end + 1;
            previous.clone()
        } else {
            let end = name_at + data.get(name_at..)?.iter().position(|&b| b == 0)?;
            if end - name_at > MAX_NAME_BYTES {
                return None;
            }
            // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
            at = start + ((end - start + 8) & !7);
            data[name_at..end].to_vec()
        };
        total_names += name.len();
        if total_names > MAX_TOTAL_NAME_BYTES {
            return None;
        }
        paths.insert(name);
    }
    Some(paths)
}

#[cfg(test)]
pub(crate) mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn later() -> Instant {
        Instant::now() + TIME_BUDGET
    }

    /// A version 2 (or 3) index of `names`, SHA-1.
    pub(crate) fn index_v2(names: &[&str]) -> Vec<u8> {
        let mut data = b"DIRC".to_vec();
        data.extend(2u32.to_be_bytes());
        data.extend((names.len() as u32).to_be_bytes());
        for name in names {
            let start = data.len();
            data.extend([0u8; 40 + 20]);
            data.extend((name.len() as u16).to_be_bytes());
            data.extend(name.as_bytes());
            let len = data.len() - start;
            data.extend(vec![0u8; ((len + 8) & !7) - len]);
        }
        data
    }

    /// A version 4 index whose entries are `(strip, suffix)`.
    fn index_v4(entries: &[(u8, &[u8])], count: u32) -> Vec<u8> {
        let mut data = b"DIRC".to_vec();
        data.extend(4u32.to_be_bytes());
        data.extend(count.to_be_bytes());
        for (strip, suffix) in entries {
            data.extend([0u8; 40 + 20]);
            data.extend([0u8, 8]);
            data.push(*strip);
            data.extend(*suffix);
            data.push(0);
        }
        data
    }

    #[test]
    fn reads_version_2_and_4_indexes() {
        let paths = parse_index(
            &index_v2(&["a.txt", "src/lib.rs", "src/long-name.rs"]),
            20,
            later(),
        )
        .unwrap();
        assert_eq!(paths.len(), 3);
        assert!(paths.contains(b"src/lib.rs".as_slice()));
        // Version 4: the second name keeps 4 bytes of the first ("src/") and adds "b.rs".
        let data = index_v4(&[(0, b"src/a.rs"), (4, b"b.rs")], 2);
        let paths = parse_index(&data, 20, later()).unwrap();
        assert!(paths.contains(b"src/a.rs".as_slice()) && paths.contains(b"src/b.rs".as_slice()));
        assert!(parse_index(b"DIRX", 20, later()).is_none());
        assert!(parse_index(&index_v2(&["a"])[..30], 20, later()).is_none());
    }

    #[test]
    fn a_hostile_index_is_refused_before_it_is_allocated() {
        // A count far past what the file can hold reserves nothing.
        let mut data = index_v2(&["a"]);
        data[8..12].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(parse_index(&data, 20, later()).is_none());
        // Version 4 names that each keep the whole previous name and add a byte grow
        // quadratically; past `PATH_MAX` the index is refused.
        let entries: Vec<(u8, &[u8])> = (0..5000).map(|_| (0u8, b"a".as_slice())).collect();
        assert!(parse_index(&index_v4(&entries, 5000), 20, later()).is_none());
        // A name longer than `PATH_MAX` in a version 2 index.
        let long = "x".repeat(MAX_NAME_BYTES + 1);
        assert!(parse_index(&index_v2(&[&long]), 20, later()).is_none());
        // A deadline already past stops the read.
        let past = Instant::now() - Duration::from_secs(1);
        assert!(parse_index(&index_v2(&["a"]), 20, past).is_none());
    }
}
