//! What program a simple command runs: the one place that sees through the ways a shell
//! word list can hide its program, for `blocked_commands` and for permission rules alike.
//!
//! - Leading `NAME=value` assignments are dropped.
//! - The program is reduced to its base name (`/usr/bin/git` is `git`).
//! - Wrappers that run the rest of their arguments as a command (`command`, `builtin`,
//!   `exec`, `env`, `nice`, `nohup`, `time`, `timeout`, `stdbuf`, `setsid`, `ionice`, `sudo`,
//!   `doas`, `xargs`) are dropped with their options.
//! - git's global options (`-C DIR`, `-c KEY=VALUE`, `--git-dir=...`) are dropped, so the
//!   subcommand follows `git`; a `-c alias.*` makes the subcommand unknown.
//! - Code the words carry as text (`sh -c SCRIPT`, `eval ...`, `trap SCRIPT ...`) is handed
//!   back to be parsed; commands of `find -exec ... ;` are handed back as nested commands.
//! - Commands whose effect the words cannot show (`source`, `.`, `alias`, a shell reading a
//!   script file or its input) become an unknown program.
//!
//! A word is `None` when it is not known before the shell expands it (`$X`, `$(...)`).
//! Whatever cannot be known is reported as such, never guessed: a deny rule treats it as a
//! match, an allow rule as a miss.

/// One word of a command: its literal text, or `None` when only the shell knows it.
pub type Word = Option<String>;

/// A simple command with its program resolved.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Resolved {
    /// The program (base name) and its arguments as they reach it.
    pub words: Vec<Word>,
    /// Further words may follow that the command line does not show (`xargs` appends them).
    pub more: bool,
    /// Whether the words are exactly what runs: false when something dropped can change it
    /// (an assignment, a program named by path, a wrapper's options, git's global options,
    /// code run from text).
    pub exact: bool,
    /// Shell code the command runs from its arguments (`sh -c`, `eval`, `trap`).
    pub script: Option<String>,
    /// Commands the command starts itself (`find -exec`).
    pub nested: Vec<Vec<Word>>,
    /// The command as written from each wrapper dropped on (`sudo git push`, then `nice git
    /// push` for `sudo nice git push`): a rule or a blocked entry naming a wrapper matches it.
    pub wrappers: Vec<Vec<Word>>,
}

/// Resolves `words` (see the module docs).
pub fn resolve(words: &[Word]) -> Resolved {
    let mut out = Resolved {
        exact: true,
        ..Resolved::default()
    };
    let mut rest: Vec<Word> = words.to_vec();
    loop {
        while let Some(Some(word)) = rest.first() {
            if !is_assignment(word) {
                break;
            }
            rest.remove(0);
            out.exact = false;
        }
        let Some(Some(program)) = rest.first().cloned() else {
            out.words = rest;
            return out;
        };
        let base = program.rsplit('/').next().unwrap_or(&program).to_owned();
        if base.is_empty() {
            out.words = rest;
            return out;
        }
        if base != program {
            out.exact = false;
            rest[0] = Some(base.clone());
        }
        if let Some(wrapper) = WRAPPERS.iter().find(|w| w.name == base) {
            let before = rest.clone();
            match unwrap(wrapper, &mut rest, &mut out) {
                Unwrapped::Command => {
                    out.wrappers.push(before);
                    continue;
                }
                Unwrapped::Itself => {
                    out.words = before;
                    return out;
                }
                Unwrapped::Unknown => {
                    unknown(&mut out);
                    return out;
                }
            }
        }
        match base.as_str() {
            "git" => git(&mut rest, &mut out),
            "sh" | "bash" | "dash" | "zsh" | "ksh" | "ash" | "mksh" | "busybox" => {
                match shell_script(&rest) {
                    Some(Some(script)) => {
                        out.script = Some(script);
                        out.exact = false;
                    }
                    _ => {
                        unknown(&mut out);
                        return out;
                    }
                }
            }
            "eval" => {
                let args: Option<Vec<String>> = rest[1..].iter().cloned().collect();
                match args {
                    Some(args) => {
                        out.script = Some(args.join(" "));
                        out.exact = false;
                    }
                    None => {
                        unknown(&mut out);
                        return out;
                    }
                }
            }
            "trap" => {
                out.exact = false;
                match rest.get(1) {
                    Some(Some(script)) if !script.starts_with('-') => {
                        out.script = Some(script.clone());
                    }
                    Some(None) => {
                        unknown(&mut out);
                        return out;
                    }
                    _ => {}
                }
            }
            "source" | "." | "alias" => {
                unknown(&mut out);
                return out;
            }
            "find" => find(&rest, &mut out),
            _ => {}
        }
        out.words = rest;
        return out;
    }
}

/// The command cannot be known: every deny rule matches it, no allow rule does.
fn unknown(out: &mut Resolved) {
    out.words = vec![None];
    out.more = true;
    out.exact = false;
}

/// A program that runs its arguments as a command.
struct Wrapper {
    name: &'static str,
    /// Options followed by a separate value.
    valued: &'static [&'static str],
    /// Options that make it not run a command (`command -v`).
    query: &'static [&'static str],
    /// Operands before the command (`timeout`'s duration).
    operands: usize,
    /// Whether its options leave what runs unchanged.
    harmless: bool,
}

const WRAPPERS: [Wrapper; 14] = [
    wrapper("command", &[], &["-v", "-V"], 0, true),
    wrapper("builtin", &[], &[], 0, true),
    wrapper("exec", &["-a"], &[], 0, true),
    wrapper("nohup", &[], &[], 0, true),
    wrapper("time", &["-f", "-o", "--format", "--output"], &[], 0, false),
    wrapper("nice", &["-n", "--adjustment"], &[], 0, true),
    wrapper(
        "timeout",
        &["-s", "-k", "--signal", "--kill-after"],
        &[],
        1,
        true,
    ),
    wrapper("stdbuf", &["-i", "-o", "-e"], &[], 0, true),
    wrapper("setsid", &[], &[], 0, true),
    wrapper("ionice", &["-c", "-n", "-p", "-P", "-u"], &[], 0, true),
    wrapper(
        "env",
        &["-u", "-C", "--unset", "--chdir", "-S", "--split-string"],
        &[],
        0,
        false,
    ),
    wrapper(
        "sudo",
        &["-u", "-g", "-h", "-p", "-C", "-U", "-r", "-t", "-D", "-T"],
        &[],
        0,
        false,
    ),
    wrapper("doas", &["-u", "-C"], &[], 0, false),
    wrapper(
        "xargs",
        &[
            "-I",
            "-n",
            "-L",
            "-P",
            "-s",
            "-d",
            "-E",
            "-a",
            "--max-args",
            "--max-procs",
            "--delimiter",
            "--arg-file",
            "--replace",
        ],
        &[],
        0,
        false,
    ),
];

const fn wrapper(
    name: &'static str,
    valued: &'static [&'static str],
    query: &'static [&'static str],
    operands: usize,
    harmless: bool,
) -> Wrapper {
    Wrapper {
        name,
        valued,
        query,
        operands,
        harmless,
    }
}

enum Unwrapped {
    /// `rest` now starts with the wrapped command.
    Command,
    /// The wrapper runs nothing (`command -v git`, a bare `exec`): it is the command.
    Itself,
    /// What it runs cannot be known.
    Unknown,
}

/// Drops `wrapper` and its options from the front of `rest`.
fn unwrap(wrapper: &Wrapper, rest: &mut Vec<Word>, out: &mut Resolved) -> Unwrapped {
    let mut at = 1;
    let mut options = false;
    let mut replace = false;
    while let Some(word) = rest.get(at) {
        let Some(word) = word else {
            return Unwrapped::Unknown;
        };
        if word == "--" {
            at += 1;
            break;
        }
        if !word.starts_with('-') || word == "-" {
            break;
        }
        options = true;
        if wrapper.query.contains(&word.as_str()) {
            return Unwrapped::Itself;
        }
        let name = word.split_once('=').map_or(word.as_str(), |(name, _)| name);
        // `env -S` splits a string into a command line of its own.
        if wrapper.name == "env" && (name == "-S" || name == "--split-string") {
            return Unwrapped::Unknown;
        }
        if wrapper.name == "xargs"
            && (name.starts_with("-I") || name.starts_with("-i") || name == "--replace")
        {
            replace = true;
        }
        at += 1;
        if wrapper.valued.contains(&word.as_str()) {
            at += 1;
        }
    }
    at += wrapper.operands;
    if wrapper.name == "env" {
        while let Some(Some(word)) = rest.get(at) {
            if !is_assignment(word) {
                break;
            }
            options = true;
            at += 1;
        }
    }
    if at >= rest.len() {
        return Unwrapped::Itself;
    }
    rest.drain(..at);
    // `sudo` and `doas` change who runs it, with options or without.
    if !wrapper.harmless && (options || matches!(wrapper.name, "sudo" | "doas")) {
        out.exact = false;
    }
    if wrapper.name == "xargs" {
        // xargs adds words read from its input, or puts them in place of the replace string.
        out.exact = false;
        out.more = true;
        if replace {
            for word in rest.iter_mut().skip(1) {
                *word = None;
            }
        }
    }
    Unwrapped::Command
}

/// Drops git's global options, so `rest[1]` is the subcommand.
fn git(rest: &mut Vec<Word>, out: &mut Resolved) {
    const VALUED: [&str; 7] = [
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--super-prefix",
        "--config-env",
    ];
    let mut at = 1;
    let mut alias = false;
    while let Some(word) = rest.get(at) {
        let Some(word) = word else {
            alias = true;
            break;
        };
        if !word.starts_with('-') {
            break;
        }
        if word == "--" {
            at += 1;
            break;
        }
        out.exact = false;
        let (name, value) = match word.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_owned())),
            _ => (word.as_str(), None),
        };
        let value = if VALUED.contains(&name) && value.is_none() {
            at += 1;
            match rest.get(at) {
                Some(Some(value)) => Some(value.clone()),
                Some(None) => {
                    alias = true;
                    None
                }
                None => None,
            }
        } else {
            value
        };
        if (name == "-c" || name == "--config-env")
            && value.is_some_and(|v| v.to_ascii_lowercase().starts_with("alias."))
        {
            alias = true;
        }
        at += 1;
    }
    let at = at.min(rest.len());
    rest.drain(1..at);
    if alias {
        // An alias defined on the command line can stand for any subcommand.
        rest.truncate(1);
        rest.push(None);
        out.more = true;
    }
}

/// The script a shell runs from `-c` (`Some(None)` when it is not literal); `None` when it
/// reads a file or its input, which the words do not show.
fn shell_script(rest: &[Word]) -> Option<Word> {
    let mut at = 1;
    while let Some(word) = rest.get(at) {
        let word = word.as_ref()?;
        if word == "-c" || (word.starts_with('-') && !word.starts_with("--") && word.contains('c'))
        {
            return rest.get(at + 1).cloned();
        }
        if !word.starts_with('-') && !word.starts_with('+') {
            return None;
        }
        at += 1;
    }
    None
}

/// The commands `find` runs for each file (`-exec`, `-execdir`, `-ok`, `-okdir`).
fn find(rest: &[Word], out: &mut Resolved) {
    let mut words = rest.iter().skip(1);
    while let Some(word) = words.next() {
        let starts = matches!(
            word.as_deref(),
            Some("-exec" | "-execdir" | "-ok" | "-okdir")
        );
        if !starts {
            continue;
        }
        out.exact = false;
        let mut nested = Vec::new();
        for word in words.by_ref() {
            if matches!(word.as_deref(), Some(";" | "+")) {
                break;
            }
            nested.push(match word.as_deref() {
                Some("{}") => None,
                _ => word.clone(),
            });
        }
        out.nested.push(nested);
    }
}

/// `NAME=value`.
pub(crate) fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Word> {
        line.split_whitespace()
            .map(|w| Some(w.to_owned()))
            .collect()
    }

    fn shown(resolved: &Resolved) -> Vec<String> {
        (resolved.words.iter())
            .map(|w| w.clone().unwrap_or_else(|| "?".into()))
            .collect()
    }

    #[test]
    fn wrappers_paths_and_git_options_resolve_to_the_program_that_runs() {
        for (line, expected, exact) in [
            ("git push", "git push", true),
            ("/usr/bin/git push", "git push", false),
            ("command git push", "git push", true),
            ("exec git push -f", "git push -f", true),
            ("env FOO=1 git push", "git push", false),
            ("nice -n 5 timeout -s KILL 10 git push", "git push", true),
            ("git -C . push", "git push", false),
            (
                "git -c user.name=x --git-dir=.git --no-pager push",
                "git push",
                false,
            ),
            (
                "git --work-tree . -C sub push origin",
                "git push origin",
                false,
            ),
            ("sudo -u root git push", "git push", false),
            ("command -v git", "command -v git", true),
            ("sudo nice git push", "git push", false),
            ("exec", "exec", true),
            ("FOO=1 ls", "ls", false),
        ] {
            let resolved = resolve(&words(line));
            assert_eq!(shown(&resolved).join(" "), expected, "{line}");
            assert_eq!(resolved.exact, exact, "{line}");
        }
    }

    #[test]
    fn the_wrappers_dropped_are_kept_as_written() {
        let resolved = resolve(&words("/usr/bin/sudo nice -n 5 git push"));
        assert_eq!(
            resolved.wrappers,
            vec![
                words("sudo nice -n 5 git push"),
                words("nice -n 5 git push")
            ]
        );
    }

    #[test]
    fn what_cannot_be_known_is_reported_unknown() {
        for line in [
            "source x.sh",
            ". ./x.sh",
            "alias ls=curl",
            "bash build.sh",
            "sh",
            "env -S 'git push'",
        ] {
            let resolved = resolve(&words(line));
            assert_eq!(resolved.words, vec![None], "{line}");
            assert!(resolved.more && !resolved.exact, "{line}");
        }
        let alias = resolve(&words("git -c alias.p=push p"));
        assert_eq!(shown(&alias), ["git", "?"]);
        let xargs = resolve(&words("xargs -I {} git {}"));
        assert_eq!(shown(&xargs), ["git", "?"]);
        assert!(xargs.more);
        let unknown_program = resolve(&[None, Some("push".into())]);
        assert_eq!(unknown_program.words[0], None);
    }

    #[test]
    fn code_carried_as_text_is_handed_back() {
        assert_eq!(resolve(&words("sh -ec x")).script.as_deref(), Some("x"));
        assert_eq!(
            resolve(&words("eval git push")).script.as_deref(),
            Some("git push")
        );
        let find = resolve(&words("find . -name x -exec git push ; -print"));
        assert_eq!(find.nested, vec![words("git push")]);
        assert!(!find.exact);
    }
}
