//! `ybs mcp list`: each configured MCP server with how it is reached, whether it answers
//! (and what it offers, or why not in words) and the file that configured it. A project's
//! server that waits for trust is listed as such and not started. `ybs mcp login NAME` and
//! `ybs mcp logout NAME`: the OAuth token of an HTTP server.

use std::io::Write;

use crate::cli::Cli;
use crate::startup::exit::Failed;
use crate::startup::load::load;
use ybs_agent::config::{FileRole, FileStatus, Source, UntrustedFile};
use ybs_agent::host::Host;
use ybs_agent::mcp::{self, ServerSummary};
use ybs_agent::setup;

/// One row of the list.
struct Row {
    name: String,
    transport: &'static str,
    state: String,
    configured: String,
}

/// `ybs mcp list`: starts the enabled servers to say what each offers.
pub fn list(
    cli: &Cli,
    host: &Host,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, Failed> {
    let loaded = load(cli, host, err)?;
    let config = &loaded.config;
    let (mut registry, _) = setup::registry(config, host.locations.home.as_deref());
    let mut policy = ybs_tools::ConfirmationPolicy::default();
    let specs = mcp::from_config(&config.mcp.servers, &host.locations.cwd);
    let (servers, failures) = setup::connect_mcp(specs, &mut registry, &mut policy);
    let summaries = servers.summaries();
    let mut rows: Vec<Row> = Vec::new();
    for (name, server) in &config.mcp.servers {
        let transport = if server.url.is_some() {
            "http"
        } else {
            "stdio"
        };
        let state = if !server.enabled {
            "disabled (mcp.servers.NAME.enabled is false)".replace("NAME", name)
        } else if let Some(summary) = summaries.iter().find(|s| &s.name == name) {
            connected(summary)
        } else if let Some(failure) = failures.iter().find(|f| &f.server == name) {
            if failure.message.starts_with("needs login") {
                failure.message.clone()
            } else {
                format!("failed: {}", failure.message)
            }
        } else {
            "not connected".to_owned()
        };
        // Sources are kept by leaf key; the server's address says which file defined it.
        let address = if server.url.is_some() {
            "url"
        } else {
            "command"
        };
        let source = loaded.sources.of(&format!("mcp.servers.{name}.{address}"));
        rows.push(Row {
            name: name.clone(),
            transport,
            state,
            configured: configured_in(source, &loaded.files),
        });
    }
    rows.extend(waiting_for_trust(&loaded.untrusted, &rows));
    if rows.is_empty() {
        let _ = writeln!(
            out,
            "No MCP servers are configured (mcp.servers in ~/.config/ybs/config.json or .ybs.json)."
        );
        return Ok(0);
    }
    let name_width = rows.iter().map(|row| row.name.len()).max().unwrap_or(0);
    for row in rows {
        let line = format!(
            "{:name_width$}  {:5}  {}  ({})",
            row.name, row.transport, row.state, row.configured
        );
        let _ = writeln!(out, "{}", crate::render::inert_lines(&line));
    }
    Ok(0)
}

/// "connected: 4 tools, 2 resources, 1 prompt".
fn connected(summary: &ServerSummary) -> String {
    let count = |n: usize, one: &str| {
        if n == 1 {
            format!("1 {one}")
        } else {
            format!("{n} {one}s")
        }
    };
    format!(
        "connected: {}, {}, {}",
        count(summary.tools, "tool"),
        count(summary.resources, "resource"),
        count(summary.prompts, "prompt")
    )
}

/// "user: FILE" or "project: FILE".
fn configured_in(source: &Source, files: &[FileStatus]) -> String {
    let Source::File(path) = source else {
        return source.to_string();
    };
    let role = (files.iter())
        .find(|status| &status.file.path == path)
        .map(|status| status.file.role);
    let kind = match role {
        Some(FileRole::Project) => "project",
        Some(FileRole::System) => "system",
        Some(FileRole::Explicit) => "user, --config",
        _ => "user",
    };
    format!("{kind}: {}", path.display())
}

/// The project's servers that are not used until the project is trusted.
fn waiting_for_trust(untrusted: &[UntrustedFile], listed: &[Row]) -> Vec<Row> {
    let mut rows = Vec::new();
    for file in untrusted {
        for setting in &file.settings {
            let Some(rest) = setting.key.strip_prefix("mcp.servers.") else {
                continue;
            };
            let name = rest.split('.').next().unwrap_or(rest).to_owned();
            let seen = listed
                .iter()
                .chain(rows.iter())
                .any(|row: &Row| row.name == name);
            if seen {
                continue;
            }
            let transport = if setting.value.get("url").is_some() {
                "http"
            } else {
                "stdio"
            };
            rows.push(Row {
                name,
                transport,
                state: "not started: the project is not trusted (run `ybs trust`)".to_owned(),
                configured: format!("project: {}", file.path.display()),
            });
        }
    }
    rows
}

/// The URL of the HTTP server `name` of the configuration (a project's needs trust).
fn server_url(cli: &Cli, host: &Host, name: &str, err: &mut dyn Write) -> Result<String, Failed> {
    let loaded = load(cli, host, err)?;
    let Some(server) = loaded.config.mcp.servers.get(name) else {
        return Err(Failed(format!(
            "no MCP server `{name}` is configured (`ybs mcp list` shows them; a project's \
             servers need `ybs trust`)"
        )));
    };
    match &server.url {
        Some(url) => Ok(url.clone()),
        None => Err(Failed(format!(
            "MCP server `{name}` runs as a program (stdio): it needs no login"
        ))),
    }
}

fn token_store(host: &Host) -> Result<ybs_agent::mcp::oauth::TokenStore, Failed> {
    (host.data_home.as_deref())
        .map(ybs_agent::mcp::oauth::TokenStore::new)
        .ok_or_else(|| Failed("no data directory to keep the token in (HOME is not set)".into()))
}

/// `ybs mcp login NAME`.
pub fn login(
    cli: &Cli,
    host: &Host,
    name: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, Failed> {
    let url = server_url(cli, host, name, err)?;
    let store = token_store(host)?;
    let mut show = |line: &str| {
        let _ = writeln!(out, "{}", crate::render::inert_lines(line));
        let _ = out.flush();
    };
    ybs_agent::mcp::oauth::login(&url, &store, &mut show)
        .map_err(|error| Failed(format!("cannot log in to MCP server `{name}`: {error}")))?;
    let _ = writeln!(
        out,
        "{}",
        crate::render::inert_lines(&format!(
            "Logged in to MCP server `{name}` ({url}); its token is kept in {}",
            store.path(&url).display()
        ))
    );
    Ok(0)
}

/// `ybs mcp logout NAME`.
pub fn logout(
    cli: &Cli,
    host: &Host,
    name: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, Failed> {
    let url = server_url(cli, host, name, err)?;
    let store = token_store(host)?;
    let removed = (store.remove(&url))
        .map_err(|error| Failed(format!("cannot remove the token of `{name}`: {error}")))?;
    let line = if removed {
        format!("Logged out of MCP server `{name}`: its token is removed")
    } else {
        format!("No token was stored for MCP server `{name}`")
    };
    let _ = writeln!(out, "{}", crate::render::inert_lines(&line));
    Ok(0)
}
