//! The layout of a vocabulary's lookup table, shared by the build script that writes it and the
//! crate that reads it: the hash of a token's bytes and how a slot packs a rank with a tag.
//!
//! The table is open addressing with linear probing over a power-of-two number of `u32` slots,
//! at most half full. A slot holds a token's rank in its low [`RANK_BITS`] bits and the top bits
//! of the token's hash above them, so most probes that miss are told apart without reading the
//! token's bytes; [`EMPTY`] marks a free slot.

/// Bits of a slot that hold the rank: room for 262,143 tokens (o200k_base has 199,998).
pub const RANK_BITS: u32 = 18;

/// The mask of the rank bits of a slot.
pub const RANK_MASK: u32 = (1 << RANK_BITS) - 1;

/// A free slot (its rank bits are all ones, which no token's rank is).
pub const EMPTY: u32 = u32::MAX;

const K0: u64 = 0x9E37_79B9_7F4A_7C15;
const K1: u64 = 0xD6E8_FEB8_6659_FD93;

/// Multiplies and folds the two halves of the product together.
fn fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

/// The hash of a token's bytes: eight bytes at a time, little-endian, length first.
pub fn hash(bytes: &[u8]) -> u64 {
    let mut state = fold(bytes.len() as u64 ^ K1, K0);
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let mut le = [0u8; 8];
        le.copy_from_slice(word);
        state = fold(state ^ u64::from_le_bytes(le), K1);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut le = [0u8; 8];
        le[..rest.len()].copy_from_slice(rest);
        state = fold(state ^ u64::from_le_bytes(le), K1);
    }
    fold(state, K0)
}

/// The tag of a hash: its top bits, as they sit above the rank bits of a slot. Never all ones,
/// so a slot holding a token is never [`EMPTY`].
pub fn tag(hash: u64) -> u32 {
    let tag = (hash >> (64 - (32 - RANK_BITS))) as u32;
    // All-ones would make a slot of rank RANK_MASK look empty; no rank is that large, but
    // keep the two apart anyway.
    tag.min((1 << (32 - RANK_BITS)) - 2) << RANK_BITS
}

/// The number of slots for `tokens` tokens: a power of two at least twice as large.
#[allow(dead_code)] // The build script sizes the table; the crate only reads it.
pub fn slots_for(tokens: usize) -> usize {
    (tokens * 2).next_power_of_two().max(2)
}
