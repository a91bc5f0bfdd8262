//! Numbers for people: `12,345`, `$0.0123`.

/// `n` with thousands separators (the tools' summaries use the same).
pub use ybs_tools::summary::thousands;

/// A cost: four decimals below a dollar (requests are cheap), two above.
pub fn money(cost: f64) -> String {
    if cost.abs() < 1.0 {
        format!("${cost:.4}")
    } else {
        format!("${cost:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn money_keeps_small_costs_visible() {
        assert_eq!(money(0.00123), "$0.0012");
        assert_eq!(money(12.345), "$12.35");
        assert_eq!(money(0.0), "$0.0000");
    }
}
