//! Writes the `cl100k_base` and `o200k_base` vocabularies (taken from `tiktoken-rs`, which
//! embeds OpenAI's files) to `OUT_DIR` in the form the counter reads without any work at start:
//! every token's bytes end to end in rank order (`NAME.tokens`), where each starts
//! (`NAME.starts`, little-endian `u32`s, one more than there are tokens) and a hash table from
//! bytes to rank (`NAME.table`), and one of the tokens of at most four bytes (`NAME.short`),
//! both little-endian `u64` slots laid out as `src/vocab/table.rs` says. The crate's tests check every token against `tiktoken-rs` again.

use std::error::Error;
use std::path::Path;

#[path = "src/vocab/table.rs"]
mod table;

type Result<T> = std::result::Result<T, Box<dyn Error>>;

fn main() -> Result<()> {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/vocab/table.rs");
    let out = std::env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?;
    let out = Path::new(&out);
    write(out, "cl100k_base", &tiktoken_rs::cl100k_base()?)?;
    write(out, "o200k_base", &tiktoken_rs::o200k_base()?)?;
    Ok(())
}

/// The ordinary tokens of `bpe` in rank order: ranks from 0 up to the first that is not one
/// (special tokens come after a gap in both encodings).
fn tokens(bpe: &tiktoken_rs::CoreBPE) -> Vec<Vec<u8>> {
    let mut tokens = Vec::new();
    let specials = bpe.special_tokens();
    while let Ok(bytes) = bpe.decode_bytes(&[tokens.len() as u32]) {
        if std::str::from_utf8(&bytes).is_ok_and(|text| specials.contains(text)) {
            break;
        }
        tokens.push(bytes);
    }
    tokens
}

fn write(out: &Path, name: &str, bpe: &tiktoken_rs::CoreBPE) -> Result<()> {
    let tokens = tokens(bpe);
    if tokens.len() < 256 || tokens.len() >= 1 << table::RANK_BITS {
        return Err(format!("{name}: {} tokens do not fit the table", tokens.len()).into());
    }
    let total: usize = tokens.iter().map(Vec::len).sum();
    let longest = tokens.iter().map(Vec::len).max().unwrap_or(0);
    if total >= 1 << table::START_BITS || longest > table::MAX_LEN {
        return Err(
            format!("{name}: {total} bytes, {longest} at most, do not fit the table").into(),
        );
    }
    let mut bytes = Vec::new();
    let mut starts = Vec::with_capacity((tokens.len() + 1) * 4);
    starts.extend_from_slice(&0u32.to_le_bytes());
    let mut slots = vec![table::EMPTY; table::slots_for(tokens.len())];
    let mask = slots.len() - 1;
    for (rank, token) in tokens.iter().enumerate() {
        let start = bytes.len();
        bytes.extend_from_slice(token);
        starts.extend_from_slice(&u32::try_from(bytes.len())?.to_le_bytes());
        let hash = table::hash(token);
        let mut at = hash as usize & mask;
        while slots[at] != table::EMPTY {
            at = (at + 1) & mask;
        }
        slots[at] = table::slot(hash, u32::try_from(rank)?, start, token.len());
    }
    let short: Vec<(u64, usize)> = tokens
        .iter()
        .enumerate()
        .filter_map(|(rank, token)| Some((table::short_key(token)?, rank)))
        .collect();
    let mut short_slots = vec![table::EMPTY; table::slots_for(short.len())];
    let short_mask = short_slots.len() - 1;
    for (key, rank) in short {
        let mut at = table::short_hash(key) as usize & short_mask;
        while short_slots[at] != table::EMPTY {
            at = (at + 1) & short_mask;
        }
        short_slots[at] = key | (rank as u64) << table::SHORT_RANK_SHIFT;
    }
    let table: Vec<u8> = slots.iter().flat_map(|slot| slot.to_le_bytes()).collect();
    let short: Vec<u8> = short_slots
        .iter()
        .flat_map(|slot| slot.to_le_bytes())
        .collect();
    std::fs::write(out.join(format!("{name}.short")), short)?;
    std::fs::write(out.join(format!("{name}.tokens")), bytes)?;
    std::fs::write(out.join(format!("{name}.starts")), starts)?;
    std::fs::write(out.join(format!("{name}.table")), table)?;
    Ok(())
}
