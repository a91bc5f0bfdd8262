//! Prices for the usage line: the built-in table with `llm.prices` over it, and what a reply
//! cost when the provider did not say (OpenRouter's own figure always wins).

use std::collections::BTreeMap;

use ybs_core::Usage;
use ybs_providers::{ModelPrice, PriceError, PriceTable};

/// The built-in price table with the configuration's `llm.prices` added.
pub fn price_table(overrides: &BTreeMap<String, ModelPrice>) -> Result<PriceTable, PriceError> {
    Ok(PriceTable::builtin()?.with_overrides(overrides.clone()))
}

/// `usage` of one reply of `model` with its cost filled in from `table` when the provider
/// reported none, and what caching saved when the model is priced. A model the table does not
/// know keeps the provider's figures: tokens only, never a guess.
pub fn priced(table: &PriceTable, model: &str, mut usage: Usage) -> Usage {
    if let Some(price) = table.lookup(model) {
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
        let got = priced(&table, "claude-sonnet-4-5", usage(None));
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
        let got = priced(&table, "anthropic/claude-sonnet-4.5", usage(Some(0.5)));
        assert_eq!(got.cost, Some(0.5));
        assert!(got.cache_savings.is_some());
        let got = priced(&table, "qwen3:14b", usage(None));
        assert_eq!((got.cost, got.cache_savings), (None, None));
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
        let got = priced(&table, "qwen3:14b", usage(None));
        assert!((got.cost.expect("priced") - 0.0102).abs() < 1e-9, "{got:?}");
    }
}
