use std::ops::{Add, AddAssign};

use serde::{Deserialize, Serialize};

/// Tokens used and money spent by one request, or, summed with `+`, by a session.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens of the prompt, cached ones included.
    #[serde(default)]
    pub prompt_tokens: u64,
    /// Tokens of the reply, reasoning included.
    #[serde(default)]
    pub completion_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    #[serde(default)]
    pub cached_tokens: u64,
    /// Prompt tokens written to the provider's cache (Anthropic bills them above the input
    /// price).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
    /// Reply tokens spent on reasoning.
    #[serde(default)]
    pub reasoning_tokens: u64,
    /// Prompt plus reply tokens.
    #[serde(default)]
    pub total_tokens: u64,
    /// Cost in the provider's currency (USD or credits), when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// What the prompt cache saved against the full input price (negative when cache writes
    /// cost more than the reads saved), when the model's prices are known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_savings: Option<f64>,
}

fn add_known(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    }
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

impl Usage {
    /// The field-wise maximum of two reports of the same request. Providers report counts
    /// cumulatively (Anthropic sends input tokens first and output tokens at the end), so the
    /// largest value seen for each field is the final one.
    pub fn merge_max(self, other: Usage) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens.max(other.prompt_tokens),
            completion_tokens: self.completion_tokens.max(other.completion_tokens),
            cached_tokens: self.cached_tokens.max(other.cached_tokens),
            cache_write_tokens: self.cache_write_tokens.max(other.cache_write_tokens),
            reasoning_tokens: self.reasoning_tokens.max(other.reasoning_tokens),
            total_tokens: self.total_tokens.max(other.total_tokens),
            cost: match (self.cost, other.cost) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            },
            cache_savings: other.cache_savings.or(self.cache_savings),
        }
    }

    /// Fills `total_tokens` from prompt and reply when the provider left it out.
    pub fn with_total(mut self) -> Usage {
        if self.total_tokens == 0 {
            self.total_tokens = self.prompt_tokens + self.completion_tokens;
        }
        self
    }
}

impl Add for Usage {
    type Output = Usage;

    fn add(self, other: Usage) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens + other.prompt_tokens,
            completion_tokens: self.completion_tokens + other.completion_tokens,
            cached_tokens: self.cached_tokens + other.cached_tokens,
            cache_write_tokens: self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens: self.reasoning_tokens + other.reasoning_tokens,
            total_tokens: self.total_tokens + other.total_tokens,
            cost: add_known(self.cost, other.cost),
            cache_savings: add_known(self.cache_savings, other.cache_savings),
        }
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        *self = *self + other;
    }
}

impl std::iter::Sum for Usage {
    fn sum<I: Iterator<Item = Usage>>(iter: I) -> Usage {
        iter.fold(Usage::default(), Add::add)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(prompt: u64, completion: u64, cost: Option<f64>) -> Usage {
        Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: prompt + completion,
            cost,
            ..Usage::default()
        }
    }

    #[test]
    fn adds_every_field_and_known_costs() {
        let sum: Usage = [
            usage(10, 5, Some(0.5)),
            usage(1, 2, None),
            usage(3, 4, Some(0.25)),
        ]
        .into_iter()
        .sum();
        assert_eq!(sum, usage(14, 11, Some(0.75)));
        assert_eq!(usage(1, 1, None) + usage(1, 1, None), usage(2, 2, None));
    }

    #[test]
    fn merge_keeps_the_largest_cumulative_count() {
        let start = Usage {
            prompt_tokens: 100,
            completion_tokens: 1,
            ..Usage::default()
        };
        let end = Usage {
            completion_tokens: 42,
            ..Usage::default()
        };
        let merged = start.merge_max(end).with_total();
        assert_eq!(merged.prompt_tokens, 100);
        assert_eq!(merged.completion_tokens, 42);
        assert_eq!(merged.total_tokens, 142);
    }
}
