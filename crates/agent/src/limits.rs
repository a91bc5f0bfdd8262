//! The model's real limits: its context window and the most tokens one reply may have, each
//! with where it came from: the configuration when the user set it, else what the provider
//! says about the model, else ybs's built-in catalog, else a default.

use std::fmt;
use std::time::Duration;

use ybs_providers::{CatalogLimits, LimitsSource, ModelLimits, PriceTable, Provider, ProviderKind};

use crate::config::{Config, Source, Sources};

/// The most output tokens asked for by default, however many the model allows: a long
/// `write_file` fits, a runaway reply stops.
pub const OUTPUT_CAP: u64 = 32_000;

/// The window assumed when nobody says.
pub const DEFAULT_WINDOW: u64 = 32_000;

/// How long the provider has to say what it knows about the model.
pub const DISCOVERY_WAIT: Duration = Duration::from_secs(3);

/// Where a limit came from.
#[derive(Debug, Clone, PartialEq)]
pub enum LimitSource {
    /// The user's configuration (a file, a variable or a flag).
    Configured(Source),
    /// The provider's answer (the request that gave it).
    Provider(String),
    /// ybs's built-in catalog.
    Catalog,
    /// Nobody said.
    Default,
}

impl fmt::Display for LimitSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitSource::Configured(source) => write!(f, "configured, {source}"),
            LimitSource::Provider(request) => write!(f, "the provider's {request}"),
            LimitSource::Catalog => f.write_str("ybs's model catalog"),
            LimitSource::Default => f.write_str("ybs's default: the model's is not known"),
        }
    }
}

/// One limit, in tokens, with its source.
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    /// The number of tokens.
    pub tokens: u64,
    /// Where it came from.
    pub source: LimitSource,
    /// What was done to the model's own value (`capped at 32k`), if anything.
    pub note: Option<String>,
}

/// The limits a session runs with.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// The context window: prompt and reply together.
    pub window: Limit,
    /// The most tokens one reply may have.
    pub output: Limit,
    /// Characters per token of the server's tokenizer, when it could be asked.
    pub chars_per_token: Option<f64>,
}

impl Default for Limits {
    fn default() -> Self {
        resolve(&Config::default(), &Sources::default(), None, None)
    }
}

impl Limits {
    /// `context 200k, output 32k`.
    pub fn short(&self) -> String {
        format!(
            "context {}, output {}",
            tokens_short(self.window.tokens),
            tokens_short(self.output.tokens)
        )
    }

    /// Lines for `ybs config`: each limit with its source.
    pub fn describe(&self) -> String {
        let line = |name: &str, limit: &Limit| {
            let note = limit
                .note
                .as_ref()
                .map(|note| format!(", {note}"))
                .unwrap_or_default();
            format!(
                "#   {name} {} tokens ({}{note})\n",
                thousands(limit.tokens),
                limit.source
            )
        };
        let mut text = String::from("# Model limits:\n");
        text.push_str(&line("context window", &self.window));
        text.push_str(&line("output", &self.output));
        if let Some(ratio) = self.chars_per_token {
            text.push_str(&format!(
                "#   the server's tokenizer counts about {ratio:.1} characters a token\n"
            ));
        }
        text
    }
}

/// The limits of the configured model: `context.max_tokens` and `llm.max_tokens` when set,
/// else what the provider `said`, else the `catalog`, else defaults. An output limit that is
/// the model's is capped at [`OUTPUT_CAP`]; one nobody knows is a quarter of the window (at
/// most the cap).
pub fn resolve(
    config: &Config,
    sources: &Sources,
    said: Option<&ModelLimits>,
    catalog: Option<CatalogLimits>,
) -> Limits {
    let said_window = said.and_then(|said| Some((said.context_window?, said.source.clone())));
    let window = match (config.context.max_tokens, said_window, catalog) {
        (Some(tokens), _, _) => Limit {
            tokens,
            source: LimitSource::Configured(sources.of("context.max_tokens").clone()),
            note: None,
        },
        (None, Some((tokens, request)), _) => Limit {
            tokens,
            source: LimitSource::Provider(request),
            note: None,
        },
        (None, None, Some(catalog)) => Limit {
            tokens: catalog.context,
            source: LimitSource::Catalog,
            note: None,
        },
        (None, None, None) => Limit {
            tokens: DEFAULT_WINDOW,
            source: LimitSource::Default,
            note: None,
        },
    };
    let said_output = said.and_then(|said| Some((said.max_output?, said.source.clone())));
    let capped = |tokens: u64, source: LimitSource| Limit {
        tokens: tokens.min(OUTPUT_CAP),
        note: (tokens > OUTPUT_CAP).then(|| {
            format!(
                "the model allows {}; capped at {} (set llm.max_tokens for more)",
                thousands(tokens),
                thousands(OUTPUT_CAP)
            )
        }),
        source,
    };
    let output = match (config.llm.max_tokens, said_output, catalog) {
        (Some(tokens), _, _) => Limit {
            tokens: u64::from(tokens),
            source: LimitSource::Configured(sources.of("llm.max_tokens").clone()),
            note: None,
        },
        (None, Some((tokens, request)), _) => capped(tokens, LimitSource::Provider(request)),
        (None, None, Some(catalog)) => capped(catalog.max_output, LimitSource::Catalog),
        (None, None, None) => Limit {
            tokens: (window.tokens / 4).clamp(256, OUTPUT_CAP),
            source: LimitSource::Default,
            note: Some("a quarter of the window".to_owned()),
        },
    };
    Limits {
        window,
        output,
        chars_per_token: said.and_then(|said| said.chars_per_token),
    }
}

/// Whether to ask the provider: not when both limits are configured, nor for the big APIs
/// whose model lists give no limits when the catalog knows the model (unless the endpoint
/// is a server of one's own, which knows its window and tokenizer better than any catalog).
pub fn worth_asking(config: &Config, kind: ProviderKind, catalog: Option<CatalogLimits>) -> bool {
    if config.context.max_tokens.is_some() && config.llm.max_tokens.is_some() {
        return false;
    }
    let limits = kind
        .capabilities()
        .limits_at(config.llm.endpoint.as_deref());
    !(limits == LimitsSource::Catalog && catalog.is_some())
}

/// What the provider says about `model`, if it answers within [`DISCOVERY_WAIT`].
pub async fn ask_provider(provider: &dyn Provider, model: &str) -> Option<ModelLimits> {
    let answer = tokio::time::timeout(DISCOVERY_WAIT, provider.model_limits(model)).await;
    answer.ok()?.ok().filter(|limits| !limits.is_empty())
}

/// Resolves the limits of `config`'s model: asks `provider` when [`worth_asking`] (on a
/// runtime of its own: callers are not async), then [`resolve`]s.
pub fn discover(
    config: &Config,
    sources: &Sources,
    provider: &dyn Provider,
    prices: &PriceTable,
) -> Limits {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => discover_on(&runtime, config, sources, provider, prices),
        Err(_) => resolve(config, sources, None, prices.limits(&config.llm.model)),
    }
}

/// [`discover`] on `runtime` (the REPL's, when `/model` or `/provider` switches).
pub fn discover_on(
    runtime: &tokio::runtime::Runtime,
    config: &Config,
    sources: &Sources,
    provider: &dyn Provider,
    prices: &PriceTable,
) -> Limits {
    let catalog = prices.limits(&config.llm.model);
    let said = if worth_asking(config, provider.kind(), catalog) {
        runtime.block_on(ask_provider(provider, &config.llm.model))
    } else {
        None
    };
    resolve(config, sources, said.as_ref(), catalog)
}

/// `200k`, `1M`, `4,096`: a token count as the banner and usage line show it.
pub fn tokens_short(tokens: u64) -> String {
    if tokens >= 1_000_000 && tokens % 1_000 == 0 || tokens >= 1_040_000 {
        let millions = tokens as f64 / 1_000_000.0;
        return format!("{}M", trim_decimal(millions));
    }
    if tokens >= 10_000 {
        return format!("{}k", trim_decimal(tokens as f64 / 1_000.0));
    }
    thousands(tokens)
}

fn trim_decimal(value: f64) -> String {
    let text = format!("{value:.1}");
    text.strip_suffix(".0").unwrap_or(&text).to_owned()
}

/// `12,345`.
pub fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::new();
    for (index, c) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(window: Option<u64>, output: Option<u64>) -> ModelLimits {
        ModelLimits {
            context_window: window,
            max_output: output,
            source: "GET /models".into(),
            chars_per_token: None,
        }
    }

    const SONNET: CatalogLimits = CatalogLimits {
        context: 200_000,
        max_output: 64_000,
    };

    #[test]
    fn the_provider_wins_over_the_catalog_and_the_configuration_over_both() {
        let config = Config::default();
        let sources = Sources::default();
        let limits = resolve(
            &config,
            &sources,
            Some(&said(Some(100_000), None)),
            Some(SONNET),
        );
        assert_eq!(limits.window.tokens, 100_000);
        assert_eq!(
            limits.window.source,
            LimitSource::Provider("GET /models".into())
        );
        assert_eq!(limits.output.tokens, OUTPUT_CAP);
        assert_eq!(limits.output.source, LimitSource::Catalog);
        assert!(
            limits
                .output
                .note
                .as_deref()
                .is_some_and(|n| n.contains("64,000"))
        );

        let mut config = Config::default();
        config.context.max_tokens = Some(50_000);
        config.llm.max_tokens = Some(1_000);
        let limits = resolve(
            &config,
            &sources,
            Some(&said(Some(100_000), Some(8))),
            Some(SONNET),
        );
        assert_eq!(
            (limits.window.tokens, limits.output.tokens),
            (50_000, 1_000)
        );
        assert!(matches!(limits.window.source, LimitSource::Configured(_)));
    }

    #[test]
    fn nobody_knows_means_defaults_and_a_quarter_of_the_window_for_output() {
        let limits = resolve(&Config::default(), &Sources::default(), None, None);
        assert_eq!(limits.window.tokens, DEFAULT_WINDOW);
        assert_eq!(limits.output.tokens, 8_000);
        let small = resolve(
            &Config::default(),
            &Sources::default(),
            Some(&said(Some(4_096), None)),
            None,
        );
        assert_eq!(small.output.tokens, 1_024);
        assert_eq!(small.short(), "context 4,096, output 1,024");
    }

    #[test]
    fn short_counts() {
        assert_eq!(tokens_short(200_000), "200k");
        assert_eq!(tokens_short(1_048_576), "1M");
        assert_eq!(tokens_short(1_047_576), "1M");
        assert_eq!(tokens_short(131_072), "131.1k");
        assert_eq!(tokens_short(4_096), "4,096");
        assert_eq!(tokens_short(32_000), "32k");
    }

    #[test]
    fn the_big_apis_are_not_asked_about_models_the_catalog_knows() {
        let config = Config::default();
        assert!(!worth_asking(
            &config,
            ProviderKind::Anthropic,
            Some(SONNET)
        ));
        assert!(worth_asking(&config, ProviderKind::Anthropic, None));
        assert!(worth_asking(
            &config,
            ProviderKind::OpenRouter,
            Some(SONNET)
        ));
        assert!(worth_asking(&config, ProviderKind::LlamaCpp, None));
    }

    #[test]
    fn a_big_apis_format_at_a_server_of_ones_own_asks_the_server() {
        let mut config = Config::default();
        config.llm.endpoint = Some("http://127.0.0.1:8080/v1".to_owned());
        assert!(worth_asking(&config, ProviderKind::OpenAi, Some(SONNET)));
    }
}
