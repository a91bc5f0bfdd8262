//! `blocked_commands`: refusing commands before they run, by normalized command text.
//!
//! The command is split into simple commands the way a shell would (quotes, backslashes,
//! `;`, `&&`, `||`, `|`, `&`, newlines, `( )`, `$( )` and backticks), then each is normalized:
//! leading `VAR=value` assignments and wrappers (`env`, `command`, `exec`, `nohup`, `time`,
//! `nice`, `timeout`, `xargs`, `builtin`) are dropped, the program is reduced to its base
//! name, and `sh -c '...'` / `eval '...'` are parsed recursively. A blocked entry is parsed
//! the same way and matches a simple command with the same program whose flags include the
//! entry's flags (`-rf` matches `-fr` and `-r -f`) and whose operands include the entry's
//! operands (`/` matches `/`, `//`, `/*` and `/.`).
//!
//! This is a guard against accidents, not a security boundary: the shell sandbox is.

/// The first blocked entry that `command` matches, if any.
pub fn find_blocked<'a>(command: &str, blocked: &'a [String]) -> Option<&'a str> {
    let commands = simple_commands(command, 0);
    blocked.iter().map(String::as_str).find(|entry| {
        let patterns = simple_commands(entry, 0);
        patterns.iter().any(|pattern| {
            !pattern.is_empty() && commands.iter().any(|command| matches(pattern, command))
        })
    })
}

const MAX_DEPTH: usize = 8;

/// The normalized simple commands in `text`: each a list of lowercased words, the program
/// first.
fn simple_commands(text: &str, depth: usize) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for words in split(text) {
        let mut nested = Vec::new();
        for word in &words {
            if depth < MAX_DEPTH && (word.contains("$(") || word.contains('`')) {
                let inner = word.replace("$(", ";").replace(['`', ')'], ";");
                nested.extend(simple_commands(&inner, depth + 1));
            }
        }
        let (words, wrappers) = strip_wrappers(words);
        out.extend(wrappers);
        if let Some(program) = words.first() {
            let inline = match program.as_str() {
                "sh" | "bash" | "dash" | "zsh" | "ksh" | "ash" | "busybox" => words
                    .iter()
                    .position(|w| {
                        w == "-c" || (w.starts_with('-') && !w.starts_with("--") && w.contains('c'))
                    })
                    .and_then(|i| words.get(i + 1)),
                "eval" => words.get(1),
                _ => None,
            };
            if let Some(script) = inline {
                if depth < MAX_DEPTH {
                    nested.extend(simple_commands(script, depth + 1));
                }
            }
            out.push(words);
        }
        out.extend(nested);
    }
    out
}

/// Splits shell text into simple commands of unquoted words.
fn split(text: &str) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars().peekable();
    let finish_word = |words: &mut Vec<String>, word: &mut String, in_word: &mut bool| {
        if *in_word {
            words.push(std::mem::take(word).to_lowercase());
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    if next != '\n' {
                        word.push(next);
                        in_word = true;
                    }
                }
            }
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => {
                            if let Some(next) = chars.next() {
                                word.push(next);
                            }
                        }
                        _ => word.push(q),
                    }
                }
            }
            ';' | '&' | '|' | '\n' | '(' | ')' | '`' | '{' | '}' | '<' | '>' => {
                finish_word(&mut words, &mut word, &mut in_word);
                if !matches!(c, '<' | '>') && !words.is_empty() {
                    commands.push(std::mem::take(&mut words));
                }
            }
            '$' if chars.peek() == Some(&'(') => {
                finish_word(&mut words, &mut word, &mut in_word);
                if !words.is_empty() {
                    commands.push(std::mem::take(&mut words));
                }
            }
            c if c.is_whitespace() => finish_word(&mut words, &mut word, &mut in_word),
            c => {
                word.push(c);
                in_word = true;
            }
        }
    }
    finish_word(&mut words, &mut word, &mut in_word);
    if !words.is_empty() {
        commands.push(words);
    }
    commands
}

/// Drops assignments and wrapper programs, and reduces the program to its base name, as
/// permission rules do ([`super::program::resolve`]); a command whose program cannot be known
/// keeps its words. Also returns the command as written from each wrapper dropped, so an
/// entry naming a wrapper (`sudo`) still matches.
fn strip_wrappers(words: Vec<String>) -> (Vec<String>, Vec<Vec<String>>) {
    let given: Vec<super::program::Word> = words.iter().cloned().map(Some).collect();
    let resolved = super::program::resolve(&given);
    let wrappers = (resolved.wrappers.into_iter())
        .map(|form| form.into_iter().flatten().collect())
        .collect();
    if resolved.words.first().is_some_and(Option::is_none) {
        let mut words = words;
        if let Some(first) = words.first_mut()
            && let Some(base) = first.rsplit('/').next()
        {
            *first = base.to_owned();
        }
        return (words, wrappers);
    }
    (resolved.words.into_iter().flatten().collect(), wrappers)
}

/// Whether `command` (normalized) contains everything `pattern` (normalized) asks for.
fn matches(pattern: &[String], command: &[String]) -> bool {
    let (Some(program), Some(wanted)) = (command.first(), pattern.first()) else {
        return false;
    };
    if program != wanted {
        return false;
    }
    let args = &command[1..];
    let short_flags: String = args
        .iter()
        .filter(|a| is_short_flags(a))
        .flat_map(|a| a.chars().skip(1))
        .collect();
    let operands: Vec<String> = args
        .iter()
        .filter(|a| !a.starts_with('-'))
        .map(|a| normalize_operand(a))
        .collect();
    pattern[1..].iter().all(|want| {
        if is_short_flags(want) {
            want.chars().skip(1).all(|c| short_flags.contains(c))
        } else if want.starts_with('-') {
            args.contains(want)
        } else {
            operands.contains(&normalize_operand(want))
        }
    })
}

fn is_short_flags(word: &str) -> bool {
    word.len() > 1
        && word.starts_with('-')
        && !word.starts_with("--")
        && word[1..].chars().all(|c| c.is_ascii_alphabetic())
}

/// `//` -> `/`, trailing `/.`, `/*` and `/` dropped (but `/` stays `/`), and octal modes
/// without leading zeros (`0777` -> `777`).
fn normalize_operand(word: &str) -> String {
    if word.len() > 1 && word.chars().all(|c| c.is_ascii_digit()) {
        let trimmed = word.trim_start_matches('0');
        return if trimmed.is_empty() {
            "0".into()
        } else {
            trimmed.into()
        };
    }
    let mut path = word.to_string();
    while path.contains("//") {
        path = path.replace("//", "/");
    }
    loop {
        let before = path.len();
        for suffix in ["/.", "/*", "/"] {
            if path.len() > 1 {
                if let Some(stripped) = path.strip_suffix(suffix) {
                    path = if stripped.is_empty() {
                        "/".into()
                    } else {
                        stripped.into()
                    };
                }
            }
        }
        if path.len() == before {
            return path;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocked() -> Vec<String> {
        ["rm -rf /", "sudo", "chmod 777"].map(String::from).to_vec()
    }

    #[test]
    fn refuses_normalized_variants() {
        let cases = [
            ("sudo ls", "sudo"),
            ("  SUDO   ls", "sudo"),
            ("/usr/bin/sudo ls", "sudo"),
            ("s\\udo ls", "sudo"),
            ("'sudo' ls", "sudo"),
            ("echo hi && sudo ls", "sudo"),
            ("echo hi;sudo ls", "sudo"),
            ("echo $(sudo id)", "sudo"),
            ("echo \"`sudo id`\"", "sudo"),
            ("FOO=1 env BAR=2 sudo ls", "sudo"),
            ("command exec nohup sudo ls", "sudo"),
            ("timeout -s 9 5 sudo ls", "sudo"),
            ("sh -c 'sudo ls'", "sudo"),
            ("bash -lc \"sudo ls\"", "sudo"),
            ("eval 'sudo ls'", "sudo"),
            ("rm -rf /", "rm -rf /"),
            ("rm   -fr   /", "rm -rf /"),
            ("rm -r -f /", "rm -rf /"),
            ("rm -rf //", "rm -rf /"),
            ("rm -rf /*", "rm -rf /"),
            ("rm -rf --no-preserve-root /", "rm -rf /"),
            ("chmod 777 file", "chmod 777"),
            ("chmod -R 0777 .", "chmod 777"),
        ];
        let list = blocked();
        for (command, entry) in cases {
            assert_eq!(find_blocked(command, &list), Some(entry), "{command}");
        }
    }

    #[test]
    fn allows_harmless_commands() {
        let list = blocked();
        for command in [
            "ls -la",
            "rm -rf ./target",
            "rm -rf /tmp/x",
            "echo sudo",
            "chmod 755 f",
            "grep -r sudo .",
            "cargo test",
        ] {
            assert_eq!(find_blocked(command, &list), None, "{command}");
        }
    }
}
