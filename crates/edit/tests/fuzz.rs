//! Deterministic randomized checks of the edit algorithms: no panics on arbitrary UTF-8
//! (multi-byte characters, CR, LF, tabs), CRLF files stay CRLF, the trailing-newline state
//! is kept, and a unique exact match behaves like `str::replacen`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use ybs_edit::{AnchoredChange, SearchReplace, apply_anchored, apply_search_replace};

/// xorshift64*: a small deterministic generator, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const WORDS: &[&str] = &[
    "a", "b", "ab", "é", "😀", "ß", "日本", " ", "  ", "\t", "x = 1;", "{", "}",
];

/// A random file of 0-7 lines with `eol` endings, with or without a final newline.
fn file(rng: &mut Rng, eol: &str) -> String {
    let n = rng.below(8);
    let mut lines = Vec::new();
    for _ in 0..n {
        let words = rng.below(4);
        lines.push((0..words).map(|_| rng.pick(WORDS)).collect::<String>());
    }
    let mut s = lines.join(eol);
    if n > 0 && rng.below(2) == 0 {
        s.push_str(eol);
    }
    s
}

/// Random model text with LF line endings.
fn text(rng: &mut Rng) -> String {
    let n = rng.below(6);
    (0..n)
        .map(|_| {
            if rng.below(4) == 0 {
                "\n"
            } else {
                rng.pick(WORDS)
            }
        })
        .collect()
}

/// A random slice of `content` at char boundaries (so it usually matches somewhere).
fn slice_of(rng: &mut Rng, content: &str) -> String {
    let bounds: Vec<usize> = content
        .char_indices()
        .map(|(i, _)| i)
        .chain([content.len()])
        .collect();
    let a = bounds[rng.below(bounds.len())];
    let b = bounds[rng.below(bounds.len())];
    content[a.min(b)..a.max(b)].to_owned()
}

/// A file that ended with a newline still does. (The other direction is not checked: when
/// the new text's last line is blank, a file without a final newline ends in `\n` + "".)
/// Rounds per test; `BB7_FUZZ_ROUNDS` raises it for a longer local run.
fn rounds() -> usize {
    std::env::var("BB7_FUZZ_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4000)
}

fn assert_kept_state(base: &str, out: &str, ctx: &str) {
    if base.ends_with('\n') && !out.is_empty() {
        assert!(out.ends_with('\n'), "trailing newline lost: {ctx}");
    }
}

fn assert_crlf_only(out: &str, ctx: &str) {
    let b = out.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'\n' {
            assert!(i > 0 && b[i - 1] == b'\r', "bare LF at {i}: {ctx}");
        }
        if c == b'\r' {
            assert_eq!(b.get(i + 1), Some(&b'\n'), "lone CR at {i}: {ctx}");
        }
    }
}

#[test]
fn search_replace_on_random_input() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..rounds() {
        let crlf = rng.below(2) == 0;
        let base = file(&mut rng, if crlf { "\r\n" } else { "\n" });
        let old = match rng.below(3) {
            0 => text(&mut rng),
            1 => slice_of(&mut rng, &base),
            _ => slice_of(&mut rng, &base)
                .replace("\r\n", "\n")
                .replace("  ", " "),
        };
        let new = text(&mut rng);
        let all = rng.below(3) == 0;
        let edit = SearchReplace::new(old.clone(), new.clone()).replace_all(all);
        let ctx = format!("round {round}: base={base:?} old={old:?} new={new:?} all={all}");
        let Ok(done) = apply_search_replace(&base, &edit) else {
            continue;
        };
        assert_kept_state(&base, &done.content, &ctx);
        if crlf && !base.is_empty() && base.contains('\n') {
            assert_crlf_only(&done.content, &ctx);
        }
        let unique_exact = !old.is_empty() && base.matches(old.as_str()).count() == 1;
        if !crlf && !all && unique_exact && base.ends_with('\n') {
            let expect = base.replacen(old.as_str(), &new, 1);
            if expect.ends_with('\n') {
                assert_eq!(done.content, expect, "{ctx}");
            }
        }
    }
}

#[test]
fn anchored_on_random_input() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for round in 0..rounds() {
        let crlf = rng.below(2) == 0;
        let base = file(&mut rng, if crlf { "\r\n" } else { "\n" });
        let lines: Vec<String> = base
            .replace("\r\n", "\n")
            .lines()
            .map(str::to_owned)
            .collect();
        let pick = |rng: &mut Rng| -> Vec<String> {
            if lines.is_empty() || rng.below(5) == 0 {
                return vec![text(rng)];
            }
            let at = rng.below(lines.len());
            let len = 1 + rng.below(2.min(lines.len() - at));
            lines[at..at + len]
                .iter()
                .map(|l| {
                    if rng.below(3) == 0 {
                        l.trim().to_owned()
                    } else {
                        l.clone()
                    }
                })
                .collect()
        };
        let changes: Vec<AnchoredChange> = (0..1 + rng.below(3))
            .map(|_| AnchoredChange {
                start: pick(&mut rng),
                end: if rng.below(2) == 0 {
                    Some(pick(&mut rng))
                } else {
                    None
                },
                content: if rng.below(4) == 0 {
                    None
                } else {
                    Some(text(&mut rng).split('\n').map(str::to_owned).collect())
                },
            })
            .collect();
        let ctx = format!("round {round}: base={base:?} changes={changes:?}");
        let Ok(out) = apply_anchored(&base, &changes) else {
            continue;
        };
        assert_kept_state(&base, &out, &ctx);
        if crlf && base.contains('\n') {
            assert_crlf_only(&out, &ctx);
        }
    }
}
