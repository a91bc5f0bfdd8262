//! The `cl100k_base` and `o200k_base` vocabularies as the build script lays them out: static
//! bytes compiled into the binary that need no parsing, hashing or allocation at start, so the
//! first count costs no more than the next (the tables are paged in as they are touched).
//!
//! A [`Vocab`] answers the one question counting asks: the rank of a byte string, if it is a
//! token (see `table.rs` for the hash table's layout).

mod table;

/// One encoding's tokens and the table from their bytes to their ranks.
pub(crate) struct Vocab {
    /// Every token's bytes, end to end, in rank order.
    tokens: &'static [u8],
    /// Little-endian `u32` offsets into `tokens`: token `r` is `tokens[starts[r]..starts[r + 1]]`.
    starts: &'static [u8],
    /// Little-endian `u32` slots, a power of two of them.
    table: &'static [u8],
}

macro_rules! generated {
    ($name:literal) => {
        Vocab {
            tokens: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".tokens")),
            starts: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".starts")),
            table: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".table")),
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
        let hash = table::hash(bytes);
        let tag = table::tag(hash);
        let mask = (self.table.len() / 4).saturating_sub(1);
        let mut at = hash as usize & mask;
        loop {
            let slot = word(self.table, at)?;
            if slot == table::EMPTY {
                return None;
            }
            let rank = slot & table::RANK_MASK;
            if slot & !table::RANK_MASK == tag && self.token(rank) == bytes {
                return Some(rank);
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
            assert_eq!(vocab.table.len() / 4, table::slots_for(tokens));
            for rank in 0..tokens as u32 {
                let bytes = vocab.token(rank);
                assert_eq!(bpe.decode_bytes(&[rank]).unwrap(), bytes, "rank {rank}");
                assert_eq!(vocab.rank(bytes), Some(rank), "rank {rank}");
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
