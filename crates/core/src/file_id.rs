use sha2::{Digest, Sha256};

/// The short id bb7 gives a file's content: the first 8 hex characters of
/// `sha256(path, NUL byte, content)`.
///
/// The path is part of the hash so that identical content at two paths gets two ids. Models
/// quote these ids back in edits; they never make them up.
///
/// ```
/// assert_eq!(ybs_core::file_id("a.txt", "hello\n").len(), 8);
/// assert_ne!(ybs_core::file_id("a.txt", "x"), ybs_core::file_id("b.txt", "x"));
/// ```
pub fn file_id(path: &str, content: impl AsRef<[u8]>) -> String {
    let mut hasher = Sha256::new();
    hasher.update(path.as_bytes());
    hasher.update([0u8]);
    hasher.update(content.as_ref());
    let digest = hasher.finalize();
    hex::encode(&digest[..4])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_sha256_of_path_nul_content() {
        // sha256("a.txt\0hello\n"), computed independently with `printf 'a.txt\0hello\n' | sha256sum`.
        assert_eq!(file_id("a.txt", "hello\n"), "aed49f77");
    }

    #[test]
    fn path_changes_the_id() {
        assert_ne!(file_id("a", "same"), file_id("b", "same"));
        assert_eq!(file_id("a", "same"), file_id("a", b"same".as_slice()));
    }
}
