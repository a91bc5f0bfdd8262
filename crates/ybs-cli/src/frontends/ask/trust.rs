//! A chat file's directives that wait for the user's trust in `ybs ask`, like a project's
//! settings: an `endpoint` or `backend` other than the configuration's (the conversation and
//! the API key would go there) and every `mcp:` line (it starts a program or connects to a
//! server). Until the user trusts the chat file (`ybs trust FILE`, remembered by its real
//! path and a digest of these directives, or `--trust-project` for one run), they are left out
//! with one warning each. The files a chat brings in (`file:`, `import:`...) are limited to
//! what `read_file` may read ([`access`]), trusted or not.

use std::io::Write;
use std::path::Path;

use ybs_chatfile::{Access, Expansion, ToolRequestKind};

use crate::startup::exit::Failed;
use ybs_agent::config::{Config, Risk, Trust, TrustStore, digest};
use ybs_agent::setup::{self, Surroundings};

/// One directive that needs trust.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directive {
    /// Where it is and what it says (`review.chat:3: mcp: stdio ...`).
    pub text: String,
    /// What it could do.
    pub risk: Risk,
}

/// The directives of `expansion` that need trust, in file order of their kind.
pub fn directives(expansion: &Expansion, config: &Config) -> Vec<Directive> {
    let mut found = Vec::new();
    let options = expansion.options.effective();
    for key in ["backend", "endpoint"] {
        let Some(value) = options.get(key) else {
            continue;
        };
        let chosen = *value == config.llm.provider
            || Some(value) == config.llm.endpoint.as_ref()
            // A name of the user's own `llm.endpoints` is their choice.
            || (key == "endpoint" && config.llm.endpoints.contains_key(value.as_str()));
        // Only a URL or a provider can send anything anywhere; another word is an error
        // later (an unknown endpoint name is listed against the configured ones).
        let reaches = value.contains("://") || value.parse::<ybs_providers::ProviderKind>().is_ok();
        if !chosen && reaches {
            found.push(Directive {
                text: format!("{key}: {value}"),
                risk: Risk::SendsData,
            });
        }
    }
    for request in (expansion.tools.iter()).filter(|r| r.kind == ToolRequestKind::Mcp) {
        let runs = request.args.first().is_some_and(|word| word == "stdio");
        found.push(Directive {
            text: format!(
                "{}: mcp: {}",
                request.source,
                shell_words::join(&request.args)
            ),
            risk: if runs {
                Risk::RunsPrograms
            } else {
                Risk::SendsData
            },
        });
    }
    found
}

/// The digest `ybs trust` records for `directives`.
pub fn fingerprint(directives: &[Directive]) -> String {
    let texts: Vec<&str> = directives.iter().map(|d| d.text.as_str()).collect();
    digest(&texts.join("\n"))
}

/// Leaves out of `expansion` the directives that need trust, unless `trust` allows those of
/// `chat`; returns one warning per directive left out.
pub fn withhold_untrusted(
    expansion: &mut Expansion,
    config: &Config,
    chat: &Path,
    trust: &Trust,
) -> Vec<String> {
    let found = directives(expansion, config);
    if found.is_empty() || trust.allows(chat, &fingerprint(&found)) {
        return Vec::new();
    }
    for key in ["backend", "endpoint"] {
        expansion.options.sticky.remove(key);
        expansion.options.transient.remove(key);
    }
    expansion.tools.retain(|r| r.kind != ToolRequestKind::Mcp);
    (found.iter())
        .map(|directive| {
            format!(
                "{}: `{}` ignored: this chat file is not trusted and {}; run `ybs trust {}` to \
                 trust it, or pass --trust-project for one run",
                chat.display(),
                crate::render::inert(&directive.text),
                directive.risk.describe(),
                chat.display()
            )
        })
        .collect()
}

/// The files a chat may bring in: those `read_file` may read with `config`'s sandbox.
pub fn access(config: &Config, around: &Surroundings) -> Result<Access, Failed> {
    let sandbox = setup::tool_context(config, around)
        .map_err(|error| Failed(error.to_string()))?
        .sandbox;
    Ok(ybs_agent::session::access(sandbox))
}

/// `ybs trust CHAT`: prints the chat file's directives that need trust and remembers them.
pub fn trust_chat(
    config: &Config,
    around: &Surroundings,
    chat: &Path,
    store: &mut TrustStore,
    out: &mut dyn Write,
) -> Result<u8, Failed> {
    let expansion = ybs_chatfile::Expander::new(&around.cwd)
        .with_access(access(config, around)?)
        .expand_file(chat)
        .map_err(|error| Failed(error.to_string()))?;
    let found = directives(&expansion, config);
    if found.is_empty() {
        let _ = writeln!(
            out,
            "nothing to trust: {} has no endpoint, backend or mcp line that needs trust",
            chat.display()
        );
        return Ok(0);
    }
    store.trust(chat, &fingerprint(&found)).map_err(|error| {
        Failed(format!(
            "cannot record the trust of {}: {error}",
            chat.display()
        ))
    })?;
    let _ = writeln!(
        out,
        "trusted (until they change; the record is kept outside the project):"
    );
    let _ = writeln!(
        out,
        "  {}",
        crate::render::inert(&chat.display().to_string())
    );
    for directive in &found {
        let _ = writeln!(
            out,
            "    {}\n      ({})",
            crate::render::inert(&directive.text),
            directive.risk.describe()
        );
    }
    Ok(0)
}
