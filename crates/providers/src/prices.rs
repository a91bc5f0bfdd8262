//! What a request cost: a price table per model (built in, overridable) and the cost of a
//! [`Usage`] under it, with what the prompt cache saved; and the catalog's limits of each
//! model (context window, output tokens) for when the provider does not say.
//!
//! The built-in table is data (`data/prices.json`), in US dollars per million tokens and in
//! tokens. A model the table does not know has no price and no limits: callers show tokens
//! only and use their own defaults, never a guess.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ybs_core::Usage;

const BUILTIN: &str = include_str!("../data/prices.json");

/// The price of one model, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    /// Prompt tokens that were neither read from nor written to a cache.
    pub input: f64,
    /// Reply tokens, reasoning included.
    pub output: f64,
    /// Prompt tokens written to the cache; the input price when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
    /// Prompt tokens read from the cache; the input price when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<f64>,
}

/// The cost of a request (or a sum of them) and what caching changed.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Cost {
    /// What was paid, in US dollars.
    pub total: f64,
    /// What the same tokens would have cost without a cache, minus `total`: cache reads
    /// save, cache writes (priced above the input) cost extra, so it can be negative.
    pub saved_by_cache: f64,
}

impl ModelPrice {
    /// The cost of `usage` at this price.
    pub fn cost(&self, usage: &Usage) -> Cost {
        let per_token = |price: f64| price / 1_000_000.0;
        let read = usage.cached_tokens as f64;
        let written = usage.cache_write_tokens as f64;
        let uncached = usage
            .prompt_tokens
            .saturating_sub(usage.cached_tokens + usage.cache_write_tokens)
            as f64;
        let read_price = self.cache_read.unwrap_or(self.input);
        let write_price = self.cache_write.unwrap_or(self.input);
        let total = uncached * per_token(self.input)
            + written * per_token(write_price)
            + read * per_token(read_price)
            + usage.completion_tokens as f64 * per_token(self.output);
        let without_cache = (uncached + written + read) * per_token(self.input)
            + usage.completion_tokens as f64 * per_token(self.output);
        Cost {
            total,
            saved_by_cache: without_cache - total,
        }
    }
}

/// What the catalog says about a model's size, in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogLimits {
    /// The context window: prompt and reply together.
    pub context: u64,
    /// The most tokens one reply may have.
    pub max_output: u64,
}

/// Prices (and the catalog's limits) by model.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PriceTable {
    models: BTreeMap<String, ModelPrice>,
    limits: BTreeMap<String, CatalogLimits>,
}

#[derive(Deserialize)]
struct PriceFile {
    models: BTreeMap<String, FileEntry>,
}

/// One model of the data file: its price and, optionally, its limits.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileEntry {
    input: f64,
    output: f64,
    #[serde(default)]
    cache_write: Option<f64>,
    #[serde(default)]
    cache_read: Option<f64>,
    #[serde(default)]
    context: Option<u64>,
    #[serde(default)]
    max_output: Option<u64>,
}

/// A price table or an override that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("invalid price table: {0}")]
pub struct PriceError(#[from] serde_json::Error);

impl PriceTable {
    /// The table shipped with this crate: current models of Anthropic, OpenAI, DeepSeek and
    /// Google's Gemini (as OpenRouter serves it).
    pub fn builtin() -> Result<PriceTable, PriceError> {
        PriceTable::from_json(BUILTIN)
    }

    /// A table from JSON of the form `{"models": {"MODEL": {"input": .., "output": ..,
    /// "cache_write": .., "cache_read": ..}}}`.
    /// Each model may also give `context` and `max_output` (its limits, in tokens).
    pub fn from_json(json: &str) -> Result<PriceTable, PriceError> {
        let file: PriceFile = serde_json::from_str(json)?;
        let mut table = PriceTable::default();
        for (model, entry) in file.models {
            let name = normalize(&model);
            if let (Some(context), Some(max_output)) = (entry.context, entry.max_output) {
                table.limits.insert(
                    name.clone(),
                    CatalogLimits {
                        context,
                        max_output,
                    },
                );
            }
            table.models.insert(
                name,
                ModelPrice {
                    input: entry.input,
                    output: entry.output,
                    cache_write: entry.cache_write,
                    cache_read: entry.cache_read,
                },
            );
        }
        Ok(table)
    }

    /// This table with `overrides` added, replacing the prices of models it already has.
    pub fn with_overrides(mut self, overrides: BTreeMap<String, ModelPrice>) -> PriceTable {
        for (model, price) in overrides {
            self.models.insert(normalize(&model), price);
        }
        self
    }

    /// The price of `model`, named as any provider names it (`claude-sonnet-4-5-20250929`,
    /// `anthropic/claude-sonnet-4.5`, `openai/gpt-4o`): the vendor prefix, a date suffix and
    /// the difference between dots and dashes do not matter; anything else must match.
    pub fn lookup(&self, model: &str) -> Option<&ModelPrice> {
        let name = normalize(model);
        self.models
            .get(&name)
            .or_else(|| self.models.get(without_date(&name)))
    }

    /// The catalog's limits of `model`, named as [`lookup`](PriceTable::lookup) takes it.
    pub fn limits(&self, model: &str) -> Option<CatalogLimits> {
        let name = normalize(model);
        (self.limits.get(&name))
            .or_else(|| self.limits.get(without_date(&name)))
            .copied()
    }

    /// The number of models priced.
    pub fn len(&self) -> usize {
        self.models.len()
    }

    /// Whether no model is priced.
    pub fn is_empty(&self) -> bool {
        self.models.is_empty()
    }
}

fn normalize(model: &str) -> String {
    let name = model.rsplit('/').next().unwrap_or(model);
    let name = name.trim().to_ascii_lowercase();
    without_bedrock_parts(&name).replace('.', "-")
}

/// The vendors of Bedrock's model ids (`anthropic.claude...`, `amazon.nova-pro-v1:0`).
const BEDROCK_VENDORS: [&str; 8] = [
    "anthropic",
    "amazon",
    "meta",
    "mistral",
    "cohere",
    "ai21",
    "deepseek",
    "writer",
];

/// A Bedrock model id without its cross-region prefix, vendor and version:
/// `us.anthropic.claude-sonnet-4-5-20250929-v1:0` -> `claude-sonnet-4-5-20250929`,
/// `meta.llama3-3-70b-instruct-v1:0` -> `llama3-3-70b-instruct`; other names as they are.
fn without_bedrock_parts(name: &str) -> &str {
    let mut rest = name;
    if let Some((geo, after)) = rest.split_once('.')
        && ["us", "eu", "apac", "global", "us-gov", "jp", "au", "ca"].contains(&geo)
    {
        rest = after;
    }
    let Some((vendor, model)) = rest.split_once('.') else {
        return name;
    };
    if !BEDROCK_VENDORS.contains(&vendor) {
        return name;
    }
    let model = model.split_once(':').map_or(model, |(stem, _)| stem);
    match model.rsplit_once("-v") {
        Some((stem, version)) if version.bytes().all(|b| b.is_ascii_digit()) => stem,
        _ => model,
    }
}

/// `claude-3-5-haiku-20241022` -> `claude-3-5-haiku`, `gpt-4o-2024-08-06` -> `gpt-4o`,
/// `claude-3-7-sonnet-latest` -> `claude-3-7-sonnet`.
fn without_date(name: &str) -> &str {
    if let Some(stem) = name.strip_suffix("-latest") {
        return stem;
    }
    let digits = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    let mut parts: Vec<&str> = name.rsplitn(4, '-').collect();
    parts.reverse();
    match parts.as_slice() {
        [stem, year, month, day]
            if year.len() == 4 && month.len() == 2 && day.len() == 2 && digits(year) =>
        {
            if digits(month) && digits(day) {
                return stem;
            }
            name
        }
        _ => match name.rsplit_once('-') {
            Some((stem, date)) if date.len() == 8 && digits(date) => stem,
            _ => name,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> PriceTable {
        PriceTable::builtin().expect("the built-in table parses")
    }

    #[test]
    fn the_builtin_table_prices_each_vendor() {
        let table = table();
        assert!(table.len() >= 20);
        for model in [
            "claude-sonnet-4-5-20250929",
            "anthropic/claude-sonnet-4.5",
            "claude-3-5-haiku-latest",
            "gpt-4o-2024-08-06",
            "openai/gpt-4o-mini",
            "deepseek-chat",
            "google/gemini-2.5-pro",
        ] {
            assert!(table.lookup(model).is_some(), "{model}");
        }
        assert_eq!(table.lookup("gpt-4o-mini").map(|p| p.input), Some(0.15));
        assert_eq!(table.lookup("gpt-4o").map(|p| p.input), Some(2.5));
    }

    #[test]
    fn every_model_of_the_catalog_has_its_limits() {
        let table = table();
        for model in table.models.keys() {
            let limits = table.limits(model).unwrap_or_else(|| panic!("{model}"));
            assert!(limits.context >= 100_000, "{model}: {limits:?}");
            assert!(limits.max_output >= 4_096 && limits.max_output < limits.context);
        }
        let sonnet = table.limits("anthropic/claude-sonnet-4.5");
        assert_eq!(
            sonnet,
            Some(CatalogLimits {
                context: 200_000,
                max_output: 64_000
            })
        );
        assert_eq!(
            table.limits("gpt-4o-2024-08-06").map(|l| l.context),
            Some(128_000)
        );
        assert_eq!(table.limits("llama3.2"), None);
    }

    #[test]
    fn bedrock_ids_find_their_models() {
        let table = table();
        let sonnet = table.lookup("claude-sonnet-4-5").copied();
        assert!(sonnet.is_some());
        for id in [
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "anthropic.claude-sonnet-4-5-20250929-v1:0",
            "eu.anthropic.claude-sonnet-4-5-20250929-v1:0",
        ] {
            assert_eq!(table.lookup(id).copied(), sonnet, "{id}");
        }
        let nova = table
            .limits("amazon.nova-pro-v1:0")
            .expect("Nova Pro's limits");
        assert_eq!(nova.context, 300_000);
        assert!(table.lookup("us.meta.llama3-3-70b-instruct-v1:0").is_some());
        assert!(table.lookup("meta.llama9-v1:0").is_none());
    }

    #[test]
    fn unknown_models_have_no_price() {
        let table = table();
        for model in ["llama3.2", "gpt-4o-super", "claude", "fake-model", ""] {
            assert_eq!(table.lookup(model), None, "{model}");
        }
    }

    #[test]
    fn overrides_replace_and_extend() {
        let mut overrides = BTreeMap::new();
        let cheap = ModelPrice {
            input: 0.1,
            output: 0.2,
            cache_write: None,
            cache_read: None,
        };
        overrides.insert("anthropic/claude-sonnet-4.5".to_owned(), cheap);
        overrides.insert("my-local-model".to_owned(), cheap);
        let table = table().with_overrides(overrides);
        assert_eq!(table.lookup("claude-sonnet-4-5-20250929"), Some(&cheap));
        assert_eq!(table.lookup("my-local-model"), Some(&cheap));
    }

    #[test]
    fn a_bad_table_is_an_error_naming_the_field() {
        let error = PriceTable::from_json(r#"{"models": {"x": {"input": 1}}}"#)
            .expect_err("output is missing");
        assert!(error.to_string().contains("output"), "{error}");
        let error = PriceTable::from_json(
            r#"{"models": {"x": {"input": 1, "output": 2, "cahce_read": 1}}}"#,
        )
        .expect_err("a misspelt field");
        assert!(error.to_string().contains("cahce_read"), "{error}");
    }

    #[test]
    fn cache_reads_save_and_writes_cost_extra() {
        let sonnet = *table().lookup("claude-sonnet-4-5").expect("priced");
        let cold = Usage {
            prompt_tokens: 50_000,
            cache_write_tokens: 48_000,
            completion_tokens: 1_000,
            ..Usage::default()
        };
        let cost = sonnet.cost(&cold);
        // 2,000 * $3 + 48,000 * $3.75 + 1,000 * $15, per million.
        assert!((cost.total - 0.201).abs() < 1e-9, "{cost:?}");
        assert!((cost.saved_by_cache + 0.036).abs() < 1e-9, "{cost:?}");
        let warm = Usage {
            prompt_tokens: 51_000,
            cached_tokens: 48_000,
            cache_write_tokens: 2_000,
            completion_tokens: 1_000,
            ..Usage::default()
        };
        let cost = sonnet.cost(&warm);
        // 1,000 * $3 + 2,000 * $3.75 + 48,000 * $0.30 + 1,000 * $15.
        assert!((cost.total - 0.0399).abs() < 1e-9, "{cost:?}");
        assert!((cost.saved_by_cache - 0.1281).abs() < 1e-9, "{cost:?}");
    }

    #[test]
    fn dates_come_off_only_when_they_are_dates() {
        assert_eq!(without_date("gpt-4o-2024-08-06"), "gpt-4o");
        assert_eq!(without_date("claude-3-haiku-20240307"), "claude-3-haiku");
        assert_eq!(without_date("gpt-4-1"), "gpt-4-1");
        assert_eq!(without_date("o3"), "o3");
        assert_eq!(without_date("model-2024-xx-06"), "model-2024-xx-06");
    }
}
