//! The `cl100k_base` and `o200k_base` vocabularies as the build script lays them out: static
//! bytes compiled into the binary that need no parsing, hashing or allocation at start, so the
//! first count costs no more than the next (the tables are paged in as they are touched).
//!
//! A [`Vocab`] answers the one question counting asks: the rank of a byte string, if it is a
//! token (see `table.rs` for the tables' layout).

mod table;

/// One encoding's tokens and the table from their bytes to their ranks.
pub(crate) struct Vocab {
    /// Every token's bytes, end to end, in rank order.
    tokens: &'static [u8],
    /// Little-endian `u32` offsets into `tokens`: token `r` is `tokens[starts[r]..starts[r + 1]]`.
    starts: &'static [u8],
    /// Little-endian `u64` slots, a power of two of them: every token.
    table: &'static [u8],
    /// Little-endian `u64` slots, a power of two of them: the tokens of at most
    /// [`table::SHORT_LEN`] bytes.
    short: &'static [u8],
}

macro_rules! generated {
    ($name:literal) => {
        Vocab {
            tokens: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".tokens")),
            starts: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".starts")),
            table: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".table")),
            short: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".short")),
        }
    };
}

/// `cl100k_base`.
pub(crate) static CL100K: Vocab = generated!("cl100k_base");

/// `o200k_base`.
pub(crate) static O200K: Vocab = generated!("o200k_base");

/// The little-endian `u32` at index `index` of `words`, if there is one.
fn word(words: &[u8], index: usize) -> Option<u32> {
    let bytes = words.get(index * 4..index * 4 + 4)?;
    let mut le = [0u8; 4];
    le.copy_from_slice(bytes);
    Some(u32::from_le_bytes(le))
}

/// The little-endian `u64` at index `index` of `slots`, if there is one.
fn slot(slots: &[u8], index: usize) -> Option<u64> {
    let bytes = slots.get(index * 8..index * 8 + 8)?;
    let mut le = [0u8; 8];
    le.copy_from_slice(bytes);
    Some(u64::from_le_bytes(le))
}

impl Vocab {
    /// The number of tokens.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        (self.starts.len() / 4).saturating_sub(1)
    }

    /// The bytes of the token of rank `rank` (empty for a rank past the last).
    pub(crate) fn token(&self, rank: u32) -> &'static [u8] {
        let rank = rank as usize;
        match (word(self.starts, rank), word(self.starts, rank + 1)) {
            (Some(start), Some(end)) => self
                .tokens
                .get(start as usize..end as usize)
                .unwrap_or_default(),
            _ => &[],
        }
    }

    /// The byte length of the token of rank `rank`.
    pub(crate) fn token_len(&self, rank: u32) -> usize {
        self.token(rank).len()
    }

    /// The rank of the token whose bytes are `bytes`, if there is one.
    pub(crate) fn rank(&self, bytes: &[u8]) -> Option<u32> {
        match table::short_key(bytes) {
            Some(key) => self.short_rank(key),
            None => self.long_rank(bytes),
        }
    }

    /// The rank of the token of at most [`table::SHORT_LEN`] bytes whose key is `key`.
    fn short_rank(&self, key: u64) -> Option<u32> {
        let mask = (self.short.len() / 8).saturating_sub(1);
        let mut at = table::short_hash(key) as usize & mask;
        loop {
            let found = slot(self.short, at)?;
            if found == table::EMPTY {
                return None;
            }
            if found & table::SHORT_KEY_MASK == key {
                return Some((found >> table::SHORT_RANK_SHIFT) as u32);
            }
            at = (at + 1) & mask;
        }
    }

    /// The rank of the token whose bytes are `bytes`, looked up among every token.
    fn long_rank(&self, bytes: &[u8]) -> Option<u32> {
        let hash = table::hash(bytes);
        let tag = table::tag(hash);
        let mask = (self.table.len() / 8).saturating_sub(1);
        let mut at = hash as usize & mask;
        loop {
            let found = slot(self.table, at)?;
            if found == table::EMPTY {
                return None;
            }
            if table::tag(found) == tag {
                let (rank, start, len) = table::unpack(found);
                if self.tokens.get(start..start + len) == Some(bytes) {
                    return Some(rank);
                }
            }
            at = (at + 1) & mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_token_is_tiktokens_and_finds_its_own_rank() {
        for (vocab, bpe, tokens) in [
            (&CL100K, tiktoken_rs::cl100k_base_singleton(), 100_256),
            (&O200K, tiktoken_rs::o200k_base_singleton(), 199_998),
        ] {
            assert_eq!(vocab.len(), tokens);
            assert_eq!(vocab.table.len() / 8, table::slots_for(tokens));
            let short = (0..tokens as u32)
                .filter(|&rank| vocab.token_len(rank) <= table::SHORT_LEN)
                .count();
            assert_eq!(vocab.short.len() / 8, table::slots_for(short));
            for rank in 0..tokens as u32 {
                let bytes = vocab.token(rank);
                assert_eq!(bpe.decode_bytes(&[rank]).unwrap(), bytes, "rank {rank}");
                assert_eq!(vocab.rank(bytes), Some(rank), "rank {rank}");
                assert_eq!(vocab.long_rank(bytes), Some(rank), "rank {rank}");
                assert_eq!(vocab.token_len(rank), bytes.len());
            }
            // The rank after the last is a special token or none at all, not an ordinary one.
            assert!(vocab.token(tokens as u32).is_empty());
        }
    }

    #[test]
    fn byte_strings_that_are_not_tokens_have_no_rank() {
        for vocab in [&CL100K, &O200K] {
            for bytes in [
                &b""[..],
                b"<|endoftext|>",
                b"antidisestablishmentarianism",
                &[0xff, 0xfe, 0xfd, 0xfc],
                &[b'a'; 300],
            ] {
                assert_eq!(vocab.rank(bytes), None, "{bytes:?}");
            }
            // Every single byte is a token.
            for byte in 0..=255u8 {
                assert!(vocab.rank(&[byte]).is_some(), "{byte}");
            }
        }
    }
}
