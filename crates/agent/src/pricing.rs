//! Prices for the usage line: the built-in table with `llm.prices` over it, and what a reply
//! cost when the provider did not say (OpenRouter's own figure always wins).

use std::collections::BTreeMap;

use ybs_core::{CacheTtl, Usage};
use ybs_providers::{ModelPrice, PriceError, PriceTable};

/// The built-in price table with the configuration's `llm.prices` added.
pub fn price_table(overrides: &BTreeMap<String, ModelPrice>) -> Result<PriceTable, PriceError> {
    Ok(PriceTable::builtin()?.with_overrides(overrides.clone()))
}

/// `usage` of one reply of `model` with its cost filled in from `table` when the provider
/// reported none, and what caching saved when the model is priced. A model the table does not
/// know keeps the provider's figures: tokens only, never a guess. Writes to the one-hour cache
/// cost twice the input price (Anthropic's rate for it).
pub fn priced(table: &PriceTable, model: &str, ttl: Option<CacheTtl>, mut usage: Usage) -> Usage {
    if let Some(mut price) = table.lookup(model).copied() {
        if ttl == Some(CacheTtl::OneHour) && price.cache_write.is_some() {
            price.cache_write = Some(price.input * 2.0);
        }
        let cost = price.cost(&usage);
        usage.cost = usage.cost.or(Some(cost.total));
        if usage.cached_tokens > 0 || usage.cache_write_tokens > 0 {
            usage.cache_savings = Some(cost.saved_by_cache);
        }
    }
    usage
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(cost: Option<f64>) -> Usage {
        Usage {
            prompt_tokens: 10_000,
            cached_tokens: 9_000,
            completion_tokens: 100,
            cost,
            ..Usage::default()
        }
    }

    #[test]
    fn the_table_fills_a_missing_cost_and_the_savings() {
        let table = price_table(&BTreeMap::new()).expect("builtin");
        let got = priced(&table, "claude-sonnet-4-5", None, usage(None));
        // 1,000 * $3 + 9,000 * $0.30 + 100 * $15, per million.
        assert!((got.cost.expect("priced") - 0.0072).abs() < 1e-9, "{got:?}");
        assert!(
            (got.cache_savings.expect("saved") - 0.0243).abs() < 1e-9,
            "{got:?}"
        );
    }

    #[test]
    fn the_providers_own_cost_wins_and_unknown_models_stay_unpriced() {
        let table = price_table(&BTreeMap::new()).expect("builtin");
        let got = priced(
            &table,
            "anthropic/claude-sonnet-4.5",
            None,
            usage(Some(0.5)),
        );
        assert_eq!(got.cost, Some(0.5));
        assert!(got.cache_savings.is_some());
        let got = priced(&table, "qwen3:14b", None, usage(None));
        assert_eq!((got.cost, got.cache_savings), (None, None));
    }

    #[test]
    fn one_hour_cache_writes_cost_twice_the_input() {
        let table = price_table(&BTreeMap::new()).expect("builtin");
        let written = Usage {
            prompt_tokens: 10_000,
            cache_write_tokens: 10_000,
            ..Usage::default()
        };
        let five = priced(
            &table,
            "claude-sonnet-4-5",
            Some(CacheTtl::FiveMinutes),
            written,
        );
        let hour = priced(
            &table,
            "claude-sonnet-4-5",
            Some(CacheTtl::OneHour),
            written,
        );
        assert!(
            (five.cost.expect("priced") - 0.0375).abs() < 1e-9,
            "{five:?}"
        );
        assert!((hour.cost.expect("priced") - 0.06).abs() < 1e-9, "{hour:?}");
    }

    #[test]
    fn overrides_price_a_local_model() {
        let mut overrides = BTreeMap::new();
        overrides.insert(
            "qwen3:14b".to_owned(),
            ModelPrice {
                input: 1.0,
                output: 2.0,
                cache_write: None,
                cache_read: None,
            },
        );
        let table = price_table(&overrides).expect("builtin");
        let got = priced(&table, "qwen3:14b", None, usage(None));
        assert!((got.cost.expect("priced") - 0.0102).abs() < 1e-9, "{got:?}");
    }
}
