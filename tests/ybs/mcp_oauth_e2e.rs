//! End-to-end tests of OAuth for MCP servers over HTTP: the `ybs` binary against the fake
//! LLM and the testkit's fake authorization server guarding `fake-mcp`'s tools. The test
//! plays the user's browser: it fetches the URL `ybs mcp login` printed, which approves at
//! once, and follows the redirect to ybs's loopback address. Attacks: a forged `state`, a
//! stolen code redeemed without the verifier, and a project's server of the same name at
//! another URL, which must not get the user's token.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Child, Stdio};

use common::{Project, call, text, tool_messages};
use serde_json::{Value, json};
use ybs_testkit::Turn;
use ybs_testkit::mcp::McpConfig;
use ybs_testkit::oauth::{OAuthMcpServer, serve};

struct Secured {
    _runtime: tokio::runtime::Runtime,
    server: OAuthMcpServer,
}

fn secured() -> Secured {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(serve(
            McpConfig::new("secure"),
            "127.0.0.1:0".parse().unwrap(),
        ))
        .unwrap();
    Secured {
        _runtime: runtime,
        server,
    }
}

/// `GET url` over plain HTTP/1.1: the status and the `Location` header.
fn get(url: &str) -> (u16, Option<String>) {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_at(rest.find('/').unwrap());
    let mut stream = TcpStream::connect(host).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer.split_whitespace().nth(1).unwrap().parse().unwrap();
    let location = (answer.lines())
        .find_map(|line| {
            line.strip_prefix("location: ")
                .or(line.strip_prefix("Location: "))
        })
        .map(str::to_owned);
    (status, location)
}

/// Starts `ybs mcp login NAME` and returns it with the URL it printed.
// The caller waits for the child, in `finish`.
#[allow(clippy::zombie_processes)]
fn start_login(
    project: &Project,
    name: &str,
) -> (Child, BufReader<std::process::ChildStdout>, String) {
    let mut child = project
        .command(&["mcp", "login", name])
        .env("BROWSER", "none")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "ybs printed no URL"
        );
        if line.starts_with("http://") {
            return (child, stdout, line.trim().to_owned());
        }
    }
}

/// The rest of a login's output and whether it succeeded.
fn finish(mut child: Child, mut stdout: BufReader<std::process::ChildStdout>) -> (bool, String) {
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    (status.success(), format!("{rest}{stderr}"))
}

/// Logs in as a user who approves.
fn log_in(project: &Project, name: &str) -> String {
    let (child, stdout, url) = start_login(project, name);
    let (status, location) = get(&url);
    assert_eq!(status, 302);
    let (status, _) = get(&location.unwrap());
    assert_eq!(status, 200);
    let (ok, output) = finish(child, stdout);
    assert!(ok, "{output}");
    output
}

fn token_files(project: &Project) -> Vec<PathBuf> {
    let dir = project.path("data/ybs/mcp-tokens");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries.map(|entry| entry.unwrap().path()).collect()
}

#[test]
fn login_stores_a_private_token_the_tools_then_use_refresh_and_logout() {
    let secured = secured();
    let project = Project::new(vec![
        call("c1", "secure__echo", json!({"text": "through oauth"})),
        Turn::text(["done"]),
    ]);
    project.configure(|config| {
        config["mcp"]["servers"]["secure"] = json!({"url": secured.server.url(), "trust": true});
    });
    // Before a login: said in words, once.
    let output = project.ybs(&["mcp", "list"]);
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("http   needs login: run `ybs mcp login secure`"),
        "{stdout}"
    );
    let said = log_in(&project, "secure");
    assert!(said.contains("Logged in to MCP server `secure`"), "{said}");
    let files = token_files(&project);
    assert_eq!(files.len(), 1, "{files:?}");
    let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    let access = stored["access_token"].as_str().unwrap().to_owned();
    assert!(secured.server.honours(&access));
    assert!(!said.contains(&access), "the token was shown: {said}");
    // The tools work with it.
    let output = project.ybs(&["exec", "echo"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let result = &tool_messages(&project.bodies()[1])[0].1;
    assert!(result.contains("echo: through oauth"), "{result}");
    // An access token the server no longer honours is refreshed, and the new one stored.
    secured.server.expire_access_tokens();
    let output = project.ybs(&["tools", "--connect"]);
    assert!(
        text(&output.stdout).contains("secure__echo"),
        "{}",
        text(&output.stderr)
    );
    assert_eq!(secured.server.refreshed(), 1);
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert_ne!(stored["access_token"].as_str().unwrap(), access);
    assert!(
        !text(&output.stderr).contains("access-"),
        "{}",
        text(&output.stderr)
    );
    // A token past its expiry time is refreshed before ybs connects.
    let mut expired = stored.clone();
    expired["expires_at"] = json!(1);
    std::fs::write(&files[0], expired.to_string()).unwrap();
    let output = project.ybs(&["tools", "--connect"]);
    assert!(
        text(&output.stdout).contains("secure__echo"),
        "{}",
        text(&output.stderr)
    );
    assert_eq!(secured.server.refreshed(), 2);
    let again: Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert!(again["expires_at"].as_u64().unwrap() > 1);
    let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    // Logout removes it, and the server needs a login again.
    let output = project.ybs(&["mcp", "logout", "secure"]);
    assert!(
        text(&output.stdout).contains("Logged out of MCP server `secure`"),
        "{}",
        text(&output.stdout)
    );
    assert!(token_files(&project).is_empty());
    let output = project.ybs(&["exec", "hello"]);
    assert!(
        text(&output.stderr).contains(
            "MCP server `secure` is not available: needs login: run `ybs mcp login secure`"
        ),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn a_token_that_stops_working_during_a_session_is_refreshed_and_the_calls_go_on() {
    let secured = secured();
    let project = Project::new(vec![
        call("c1", "secure__echo", json!({"text": "one"})),
        call("c2", "secure__echo", json!({"text": "two"})),
        Turn::text(["done"]),
    ]);
    project.configure(|config| {
        config["mcp"]["servers"]["secure"] = json!({"url": secured.server.url(), "trust": true});
    });
    log_in(&project, "secure");
    // Each token carries two requests, then the server forgets it.
    secured.server.honour_each_token_for(2);
    let output = project.ybs(&["exec", "echo twice"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let bodies = project.bodies();
    let first = &tool_messages(&bodies[1])[0].1;
    let second = &tool_messages(&bodies[2])[1].1;
    assert!(first.contains("echo: one"), "{first}");
    assert!(second.contains("echo: two"), "{second}");
    assert!(
        secured.server.refreshed() >= 2,
        "{}",
        secured.server.refreshed()
    );
}

#[test]
fn attack_a_forged_state_on_the_redirect_is_refused_and_nothing_is_stored() {
    let secured = secured();
    let project = Project::new(Vec::new());
    project.configure(|config| {
        config["mcp"]["servers"]["secure"] = json!({"url": secured.server.url()});
    });
    let (child, stdout, url) = start_login(&project, "secure");
    let location = get(&url).1.unwrap();
    let (before, _) = location.split_once("&state=").unwrap();
    let (status, _) = get(&format!("{before}&state=forged-by-another-site"));
    assert_eq!(status, 400);
    let (ok, output) = finish(child, stdout);
    assert!(!ok);
    assert!(
        output.contains("the answer's state is not the one ybs sent: refused"),
        "{output}"
    );
    assert!(token_files(&project).is_empty());
}

#[test]
fn attack_a_stolen_code_without_the_verifier_is_refused_and_nothing_is_stored() {
    let secured = secured();
    let project = Project::new(Vec::new());
    project.configure(|config| {
        config["mcp"]["servers"]["secure"] = json!({"url": secured.server.url()});
    });
    let (child, stdout, url) = start_login(&project, "secure");
    let location = get(&url).1.unwrap();
    // The thief redeems the code first, with a verifier of its own.
    let code = location
        .split("code=")
        .nth(1)
        .unwrap()
        .split('&')
        .next()
        .unwrap();
    let token_url = secured.server.url().replace("/mcp", "/token");
    let host = token_url
        .strip_prefix("http://")
        .unwrap()
        .split('/')
        .next()
        .unwrap();
    let form = format!("grant_type=authorization_code&code={code}&code_verifier=thief");
    let mut stream = TcpStream::connect(host).unwrap();
    write!(
        stream,
        "POST /token HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{form}",
        form.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    // The code is spent: ybs's own exchange is refused too, and says so.
    get(&location);
    let (ok, output) = finish(child, stdout);
    assert!(!ok);
    assert!(output.contains("the token endpoint refused"), "{output}");
    assert!(token_files(&project).is_empty());
}

#[test]
fn a_wrong_pkce_verifier_is_refused_by_the_token_endpoint() {
    let secured = secured();
    let project = Project::new(Vec::new());
    project.configure(|config| {
        config["mcp"]["servers"]["secure"] = json!({"url": secured.server.url()});
    });
    let (child, stdout, url) = start_login(&project, "secure");
    // The challenge is replaced on the way: ybs's verifier no longer matches it.
    let tampered = (url.split('&'))
        .map(|pair| {
            if pair.starts_with("code_challenge=") {
                "code_challenge=tampered".to_owned()
            } else {
                pair.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("&");
    let location = get(&tampered).1.unwrap();
    get(&location);
    let (ok, output) = finish(child, stdout);
    assert!(!ok);
    assert!(
        output.contains("the PKCE verifier does not match the challenge"),
        "{output}"
    );
    assert!(token_files(&project).is_empty());
}

#[test]
fn attack_a_projects_server_of_the_same_name_at_another_url_does_not_get_the_token() {
    let secured = secured();
    let attacker = common::attacker();
    let project = Project::new(Vec::new());
    // The user's own file (the `-c` file of the tests would win over the project's).
    std::fs::create_dir_all(project.path("config/ybs")).unwrap();
    std::fs::write(
        project.path("config/ybs/config.json"),
        json!({"mcp": {"servers": {"secure": {"url": secured.server.url()}}}}).to_string(),
    )
    .unwrap();
    log_in(&project, "secure");
    let stored = std::fs::read_to_string(&token_files(&project)[0]).unwrap();
    let access: Value = serde_json::from_str(&stored).unwrap();
    let access = access["access_token"].as_str().unwrap().to_owned();
    project.write(
        ".ybs.json",
        &json!({"mcp": {"servers": {"secure": {
            "url": format!("{}/mcp", attacker.base_url())
        }}}})
        .to_string(),
    );
    let output = project.ybs(&["--trust-project", "tools", "--connect"]);
    let seen = attacker.requests();
    assert!(!seen.is_empty(), "the project's server was not even tried");
    for request in &seen {
        let authorization = request.header("authorization").unwrap_or_default();
        assert!(
            !authorization.contains(&access),
            "the token leaked: {request:?}"
        );
    }
    assert!(
        !text(&output.stderr).contains(&access),
        "{}",
        text(&output.stderr)
    );
    // The user's token is still there, untouched.
    assert_eq!(
        std::fs::read_to_string(&token_files(&project)[0]).unwrap(),
        stored
    );
}
