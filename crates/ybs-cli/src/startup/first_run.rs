//! The first run: when no provider is configured, pick one from the API key in the
//! environment (saying which, and how to choose when several are set), or check that Ollama
//! answers; with neither, a short guide instead of a long wait and a stack of causes. Also the
//! banner line that says what a session runs with.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use ybs_providers::ProviderKind;

use ybs_agent::config::{LoadedConfig, Source};
use ybs_agent::host::Host;

/// How long Ollama has to answer before the guide is shown.
pub const OLLAMA_WAIT: Duration = Duration::from_millis(300);

/// The providers picked from an API key, in order of preference when several are set.
pub const KEYED: [ProviderKind; 5] = [
    ProviderKind::OpenRouter,
    ProviderKind::Anthropic,
    ProviderKind::OpenAi,
    ProviderKind::Gemini,
    ProviderKind::DeepSeek,
];

/// What a provider picked by its key is set up with, from its capabilities: the variable
/// the key is read from, the provider's name and the model used when none is configured.
pub fn keyed(kind: ProviderKind) -> Option<(&'static str, &'static str, &'static str)> {
    let capabilities = kind.capabilities();
    Some((
        capabilities.api_key_env?,
        kind.name(),
        capabilities.default_model?,
    ))
}

/// What the first-run check decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// The configuration names a provider, or Ollama answers: nothing to say.
    Configured,
    /// A provider was picked from the environment; the note says so (for the banner).
    Picked(String),
    /// Nothing usable: show [`GUIDE`] and exit 2.
    Guide,
}

/// The guide printed when no provider can be used.
pub const GUIDE: &str = "\
ybs needs a model provider, and none is configured.

Set one of these API keys (ybs picks the provider from it):
  OPENROUTER_API_KEY   OpenRouter (many models with one key)
  ANTHROPIC_API_KEY    Anthropic
  OPENAI_API_KEY       OpenAI
  GEMINI_API_KEY       Google Gemini
  DEEPSEEK_API_KEY     DeepSeek
or start Ollama (https://ollama.com) on http://localhost:11434 (local models).

Or choose in ~/.config/ybs/config.json (in a project's ./.ybs.json, a provider
and endpoint apply only once you trust it with `ybs trust`):
  {\"llm\": {\"provider\": \"openai-compatible\", \"model\": \"my-model\",
           \"endpoint\": \"http://localhost:8080/v1\"}}

`ybs config` shows the effective settings and where each comes from;
`--provider` and `--model` choose for one run.
";

/// The value of variable `name`: ybs's own view of the environment first, then the process's.
fn variable(host: &Host, name: &str) -> Option<String> {
    (host.env.get(name).cloned())
        .or_else(|| std::env::var(name).ok())
        .filter(|value| !value.trim().is_empty())
}

/// Settles the provider of `loaded` when the configuration does not name one: from the one
/// API key set (or the first of several), else Ollama if it answers within [`OLLAMA_WAIT`].
pub fn settle(loaded: &mut LoadedConfig, host: &Host) -> Choice {
    if *loaded.sources.of("llm.provider") != Source::Default {
        return Choice::Configured;
    }
    let set: Vec<(&str, &str, &str)> = (KEYED.into_iter().filter_map(keyed))
        .filter(|(name, _, _)| variable(host, name).is_some())
        .collect();
    let model_set = *loaded.sources.of("llm.model") != Source::Default;
    let llm = &mut loaded.config.llm;
    match set.as_slice() {
        [] => {
            let endpoint = (llm.endpoint.clone())
                .or_else(|| ProviderKind::Ollama.default_endpoint().map(str::to_owned))
                .unwrap_or_default();
            if ollama_answers(&endpoint, OLLAMA_WAIT) {
                Choice::Configured
            } else {
                Choice::Guide
            }
        }
        [(name, provider, model), rest @ ..] => {
            llm.provider = (*provider).to_owned();
            if !model_set {
                llm.model = (*model).to_owned();
            }
            if rest.is_empty() {
                return Choice::Picked(format!("{provider} from {name}"));
            }
            let others: Vec<&str> = rest.iter().map(|(name, _, _)| *name).collect();
            Choice::Picked(format!(
                "{provider} from {name} ({} also set; choose with --provider NAME or \
                 llm.provider in .ybs.json)",
                others.join(", ")
            ))
        }
    }
}

/// [`settle`] for a command that talks to the model, then its model ([`super::model::settle`];
/// with `say_unanswered`, saying at once when a server of one's own does not answer, for a
/// session that would otherwise wait for the user's first message to find out): `Err(2)`
/// after writing the guide to `err`; otherwise the note of a picked provider, if any.
pub fn check(
    loaded: &mut LoadedConfig,
    host: &Host,
    say_unanswered: bool,
    err: &mut dyn Write,
) -> Result<Option<String>, u8> {
    let note = match settle(loaded, host) {
        Choice::Configured => None,
        Choice::Picked(note) => Some(note),
        Choice::Guide => {
            let _ = write!(err, "{GUIDE}");
            return Err(super::exit::USAGE_ERROR);
        }
    };
    let chooser =
        super::model::Chooser::from_sources(*loaded.sources.of("llm.model") != Source::Default);
    if let Some(error) = super::model::settle(&mut loaded.config, chooser, &host.env)
        && say_unanswered
    {
        let warning = super::model::unanswered(&loaded.config, &error);
        let _ = writeln!(err, "{}", crate::render::wrap::problem("warning", &warning));
    }
    Ok(note)
}

/// Whether an HTTP server answers at `endpoint` within `wait` (connect, request and the
/// first bytes of the reply).
pub fn ollama_answers(endpoint: &str, wait: Duration) -> bool {
    let start = Instant::now();
    let rest = endpoint
        .strip_prefix("http://")
        .or_else(|| endpoint.strip_prefix("https://"))
        .unwrap_or(endpoint);
    let authority = rest.split('/').next().unwrap_or(rest);
    let with_port = if authority
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
    {
        authority.to_owned()
    } else if endpoint.starts_with("https://") {
        format!("{authority}:443")
    } else {
        format!("{authority}:80")
    };
    let Ok(addresses) = with_port.to_socket_addrs() else {
        return false;
    };
    for address in addresses {
        let left = wait.saturating_sub(start.elapsed());
        if left.is_zero() {
            return false;
        }
        let Ok(mut stream) = TcpStream::connect_timeout(&address, left) else {
            continue;
        };
        let left = wait
            .saturating_sub(start.elapsed())
            .max(Duration::from_millis(1));
        let _ = stream.set_read_timeout(Some(left));
        let _ = stream.set_write_timeout(Some(left));
        let request = format!("GET /api/version HTTP/1.0\r\nHost: {authority}\r\n\r\n");
        if stream.write_all(request.as_bytes()).is_err() {
            continue;
        }
        let mut head = [0u8; 5];
        if stream.read_exact(&mut head).is_ok() && &head == b"HTTP/" {
            return true;
        }
    }
    false
}

/// The banner line: version, provider, model, the model's window and output limit, the
/// reasoning effort when set, the sandbox (and network), auto-commit when on, and the note of a provider picked
/// from the environment.
pub fn banner(
    config: &ybs_agent::config::Config,
    limits: &ybs_agent::limits::Limits,
    sandbox: &str,
    note: Option<&str>,
) -> String {
    let picked = note
        .map(|note| format!("; using {note}"))
        .unwrap_or_default();
    let effort = (config.llm.reasoning_effort)
        .map(|effort| format!(", effort {effort}"))
        .unwrap_or_default();
    // Without the sandbox every command has the network: nothing to say about it.
    let network = if config.safety.sandbox_enabled {
        format!(", network {}", config.safety.network.name())
    } else {
        String::new()
    };
    // Commits in the user's repository are opt-in: when they happen, the user is told.
    let commits = if config.git.auto_commit {
        ", auto-commit on"
    } else {
        ""
    };
    // The model's and provider's names may come from a project's file.
    let line = format!(
        "ybs {} ({} {}, {}{effort}, {sandbox}{network}{commits}{picked}). /help for commands, Ctrl-D to exit.",
        env!("CARGO_PKG_VERSION"),
        config.llm.provider,
        super::model::shown(&config.llm.model),
        limits.short(),
    );
    crate::render::inert(&line).into_owned()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::BTreeMap;
    use std::net::TcpListener;

    use super::*;
    use ybs_agent::config::{ConfigLocations, FlagOverrides, load};

    #[test]
    fn the_setup_guide_fits_an_80_column_terminal() {
        // It is printed as written: a line of 80 would fill the last column and wrap.
        for line in GUIDE.lines() {
            assert!(line.chars().count() < 80, "{line}");
        }
    }

    fn host(env: &[(&str, &str)], dir: &std::path::Path) -> Host {
        Host {
            locations: ConfigLocations {
                system_file: dir.join("etc/config.json"),
                home: Some(dir.join("home")),
                xdg_config_home: None,
                cwd: dir.to_path_buf(),
            },
            env: (env.iter())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
            data_home: None,
        }
    }

    fn loaded(host: &Host, flags: &FlagOverrides) -> LoadedConfig {
        load(
            &host.locations,
            &host.env,
            flags,
            &ybs_agent::config::Trust::default(),
        )
        .unwrap()
    }

    /// An endpoint on 127.0.0.1 where nothing listens.
    fn closed_endpoint() -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        format!("http://127.0.0.1:{port}")
    }

    #[test]
    fn each_key_alone_picks_its_provider_and_default_model() {
        let dir = tempfile::tempdir().unwrap();
        for (name, provider, model) in KEYED.into_iter().filter_map(keyed) {
            let host = host(&[(name, "k")], dir.path());
            let mut loaded = loaded(&host, &FlagOverrides::default());
            let choice = settle(&mut loaded, &host);
            assert_eq!(choice, Choice::Picked(format!("{provider} from {name}")));
            assert_eq!(loaded.config.llm.provider, provider);
            assert_eq!(loaded.config.llm.model, model);
        }
    }

    #[test]
    fn several_keys_name_the_pick_and_how_to_choose() {
        let dir = tempfile::tempdir().unwrap();
        let host = host(
            &[("OPENAI_API_KEY", "a"), ("ANTHROPIC_API_KEY", "b")],
            dir.path(),
        );
        let mut loaded = loaded(&host, &FlagOverrides::default());
        let Choice::Picked(note) = settle(&mut loaded, &host) else {
            panic!("nothing picked");
        };
        assert_eq!(loaded.config.llm.provider, "anthropic");
        assert!(note.starts_with("anthropic from ANTHROPIC_API_KEY (OPENAI_API_KEY also set"));
        assert!(note.contains("--provider"), "{note}");
    }

    #[test]
    fn a_configured_provider_or_model_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let host = host(&[("OPENAI_API_KEY", "a")], dir.path());
        let flags = FlagOverrides {
            provider: Some("anthropic".into()),
            ..FlagOverrides::default()
        };
        let mut kept = loaded(&host, &flags);
        assert_eq!(settle(&mut kept, &host), Choice::Configured);
        assert_eq!(kept.config.llm.provider, "anthropic");
        let flags = FlagOverrides {
            model: Some("gpt-5".into()),
            ..FlagOverrides::default()
        };
        let mut model = loaded(&host, &flags);
        assert!(matches!(settle(&mut model, &host), Choice::Picked(_)));
        assert_eq!(model.config.llm.model, "gpt-5");
    }

    #[test]
    fn no_key_and_no_ollama_is_the_guide_quickly() {
        let dir = tempfile::tempdir().unwrap();
        let host = host(&[], dir.path());
        let flags = FlagOverrides {
            endpoint: Some(closed_endpoint()),
            ..FlagOverrides::default()
        };
        let mut loaded = loaded(&host, &flags);
        assert_eq!(settle(&mut loaded, &host), Choice::Guide);
    }

    #[test]
    fn an_answering_server_counts_as_ollama() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut buffer = [0u8; 256];
            let _ = stream.read(&mut buffer);
            stream.write_all(b"HTTP/1.0 200 OK\r\n\r\n{}").unwrap();
        });
        assert!(ollama_answers(
            &format!("http://127.0.0.1:{port}"),
            Duration::from_secs(5)
        ));
        server.join().unwrap();
        assert!(!ollama_answers(&closed_endpoint(), OLLAMA_WAIT));
    }

    #[test]
    fn the_banner_names_provider_model_window_and_sandbox() {
        let mut config = ybs_agent::config::Config::default();
        let limits = ybs_agent::limits::Limits::default();
        let line = banner(
            &config,
            &limits,
            "sandbox on",
            Some("openai from OPENAI_API_KEY"),
        );
        assert!(
            line.contains("(ollama qwen3:14b, context 32k, output 8,000, sandbox on"),
            "{line}"
        );
        assert!(
            line.contains("sandbox on, network ask; using openai from OPENAI_API_KEY)"),
            "{line}"
        );
        config.safety.network = ybs_agent::config::Network::On;
        let line = banner(&config, &limits, "sandbox on", None);
        assert!(line.contains("sandbox on, network on)"), "{line}");
        assert!(!line.contains("auto-commit"), "{line}");
        config.git.auto_commit = true;
        let line = banner(&config, &limits, "sandbox on", None);
        assert!(line.contains("network on, auto-commit on)"), "{line}");
        config.git.auto_commit = false;
        config.safety.sandbox_enabled = false;
        config.llm.reasoning_effort = Some(ybs_core::ReasoningEffort::High);
        let line = banner(&config, &limits, "sandbox OFF", None);
        assert!(
            line.contains("output 8,000, effort high, sandbox OFF)"),
            "{line}"
        );
    }
}
