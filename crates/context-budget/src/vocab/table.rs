//! The layout of the vocabulary's lookup tables, shared by the build script that writes them
//! and the crate that reads them: how bytes are hashed and what a slot holds.
//!
//! Two tables, both open addressing with linear probing over a power-of-two number of
//! little-endian `u64` slots, at most four fifths full ([`slots_for`]), [`EMPTY`] marking a
//! free one:
//!
//! - every token: a slot holds where the token's bytes start (the low
//!   [`START_BITS`] bits), their length (the next [`LEN_BITS`]), the token's rank (the next
//!   [`RANK_BITS`]) and the top bits of the hash of its bytes (the rest), so a probe reads the
//!   token's bytes only when the tags agree;
//! - the tokens of at most [`SHORT_LEN`] bytes: a slot holds the
//!   bytes themselves and their length (the key, see [`short_key`]) and the rank above them,
//!   so the short pieces and pairs that make up most lookups are answered from half a
//!   megabyte without reading anything else.

// The build script writes the tables and the crate reads them: each uses only part of this.
#![allow(dead_code)]

/// Bits of a slot that hold where the token's bytes start.
pub const START_BITS: u32 = 24;

/// Bits of a slot that hold the token's length in bytes.
pub const LEN_BITS: u32 = 8;

/// Bits of a slot that hold the rank: room for 262,143 tokens (o200k_base has 199,998).
pub const RANK_BITS: u32 = 18;

/// Where the rank starts in a slot.
pub const RANK_SHIFT: u32 = START_BITS + LEN_BITS;

/// Where the tag starts in a slot.
pub const TAG_SHIFT: u32 = RANK_SHIFT + RANK_BITS;

/// A free slot (its length bits are all ones, which no token's length is).
pub const EMPTY: u64 = u64::MAX;

/// The longest token a slot can describe.
pub const MAX_LEN: usize = (1 << LEN_BITS) - 2;

/// A slot for the token of rank `rank`, `len` bytes from `start`, whose bytes hash to `hash`.
pub fn slot(hash: u64, rank: u32, start: usize, len: usize) -> u64 {
    tag(hash) | u64::from(rank) << RANK_SHIFT | (len as u64) << START_BITS | start as u64
}

/// The tag of a hash: its top bits, where they sit in a slot.
pub fn tag(hash: u64) -> u64 {
    hash >> TAG_SHIFT << TAG_SHIFT
}

/// The rank, start and length of the token in `slot`.
pub fn unpack(slot: u64) -> (u32, usize, usize) {
    let field = |shift: u32, bits: u32| (slot >> shift) & ((1 << bits) - 1);
    (
        field(RANK_SHIFT, RANK_BITS) as u32,
        field(0, START_BITS) as usize,
        field(START_BITS, LEN_BITS) as usize,
    )
}

const K0: u64 = 0x9E37_79B9_7F4A_7C15;
const K1: u64 = 0xD6E8_FEB8_6659_FD93;

/// Multiplies and folds the two halves of the product together.
fn fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

fn u32_at(bytes: &[u8], at: usize) -> u64 {
    let mut le = [0u8; 4];
    le.copy_from_slice(&bytes[at..at + 4]);
    u64::from(u32::from_le_bytes(le))
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut le = [0u8; 8];
    le.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(le)
}

/// The hash of a token's bytes: eight bytes at a time, little-endian, length first, the last
/// (partial) word read so that it needs no copy.
pub fn hash(bytes: &[u8]) -> u64 {
    let len = bytes.len();
    let mut state = fold(len as u64 ^ K1, K0);
    let last = if len >= 8 {
        let mut at = 0;
        while at + 8 < len {
            state = fold(state ^ u64_at(bytes, at), K1);
            at += 8;
        }
        u64_at(bytes, len - 8)
    } else if len >= 4 {
        u32_at(bytes, 0) | u32_at(bytes, len - 4) << 32
    } else if len > 0 {
        u64::from(bytes[0]) << 16 | u64::from(bytes[len / 2]) << 8 | u64::from(bytes[len - 1])
    } else {
        0
    };
    fold(state ^ last, K0)
}

/// The longest token the short table holds.
pub const SHORT_LEN: usize = 4;

/// Where a short slot keeps the rank, above the key (the bytes, then the length; a free
/// slot's length bits, all ones, are no key's).
pub const SHORT_RANK_SHIFT: u32 = 35;

/// The key bits of a short slot.
pub const SHORT_KEY_MASK: u64 = (1 << SHORT_RANK_SHIFT) - 1;

/// The key of a byte string of at most [`SHORT_LEN`] bytes: its bytes little-endian, its
/// length above them. `None` for longer strings.
pub fn short_key(bytes: &[u8]) -> Option<u64> {
    let word = match *bytes {
        [] => 0,
        [a] => u32::from(a),
        [a, b] => u32::from(u16::from_le_bytes([a, b])),
        [a, b, c] => u32::from_le_bytes([a, b, c, 0]),
        [a, b, c, d] => u32::from_le_bytes([a, b, c, d]),
        _ => return None,
    };
    Some(u64::from(word) | (bytes.len() as u64) << 32)
}

/// The hash of a short key.
pub fn short_hash(key: u64) -> u64 {
    fold(key ^ K1, K0)
}

/// The number of slots of a table of `tokens` tokens: a power of two, at most four fifths
/// full (a probe that misses reads on through a cache line or two of neighbours).
pub fn slots_for(tokens: usize) -> usize {
    (tokens * 5 / 4 + 1).next_power_of_two()
}
