//! The price of a turn whose agent does not report one (Claude reports its own cost;
//! Codex and Gemini do not).
//!
//! List prices in US dollars per million tokens, as the vendors published them on
//! [`PRICES_AS_OF`] (Anthropic's, OpenAI's and Google's API pricing pages). A model that
//! is not in the table has no price: its turns count as unpriced and show as unknown,
//! never as $0. Input counts include cached input (OpenAI and Gemini report them that
//! way), so cached tokens are priced at the cache rate and the rest at the input rate.

/// When the prices below were taken.
pub const PRICES_AS_OF: &str = "2025-11-24";

/// Where they come from.
pub const PRICES_SOURCE: &str =
    "the vendors' published API list prices (Anthropic, OpenAI, Google), standard tier";

/// One model family's prices per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Model id, or the prefix of dated ids (`claude-sonnet-4-5` matches
    /// `claude-sonnet-4-5-20250929`).
    pub model: &'static str,
    /// Uncached input.
    pub input: f64,
    /// Cached input (a cache read).
    pub cached_input: f64,
    /// Output (reasoning included).
    pub output: f64,
}

const fn p(model: &'static str, input: f64, cached_input: f64, output: f64) -> Price {
    Price {
        model,
        input,
        cached_input,
        output,
    }
}

/// Longest prefixes first within a family, so `gpt-5-mini` is not priced as `gpt-5`.
pub const PRICES: &[Price] = &[
    p("claude-opus-4-5", 5.0, 0.5, 25.0),
    p("claude-opus-4-1", 15.0, 1.5, 75.0),
    p("claude-opus-4", 15.0, 1.5, 75.0),
    p("claude-sonnet-4-5", 3.0, 0.3, 15.0),
    p("claude-sonnet-4", 3.0, 0.3, 15.0),
    p("claude-haiku-4-5", 1.0, 0.1, 5.0),
    p("claude-3-5-haiku", 0.8, 0.08, 4.0),
    p("gpt-5-nano", 0.05, 0.005, 0.4),
    p("gpt-5-mini", 0.25, 0.025, 2.0),
    p("gpt-5-codex", 1.25, 0.125, 10.0),
    p("gpt-5", 1.25, 0.125, 10.0),
    p("gpt-4.1-mini", 0.4, 0.1, 1.6),
    p("gpt-4.1", 2.0, 0.5, 8.0),
    p("gpt-4o-mini", 0.15, 0.075, 0.6),
    p("gpt-4o", 2.5, 1.25, 10.0),
    p("gemini-2.5-flash-lite", 0.1, 0.025, 0.4),
    p("gemini-2.5-flash", 0.3, 0.075, 2.5),
    p("gemini-2.5-pro", 1.25, 0.31, 10.0),
];

/// The price of `model`, if the table knows it.
pub fn price_of(model: &str) -> Option<Price> {
    let m = model.trim().to_ascii_lowercase();
    PRICES.iter().copied().find(|p| {
        m == p.model
            || m.strip_prefix(p.model)
                .is_some_and(|rest| rest.starts_with('-') || rest.starts_with('@'))
    })
}

/// What `input` (cached ones included), `cached` and `output` tokens of `model` cost,
/// if its price is known.
pub fn cost_of(model: &str, input: u64, cached: u64, output: u64) -> Option<f64> {
    let p = price_of(model)?;
    let cached = cached.min(input);
    let m = 1_000_000.0;
    Some(
        (input - cached) as f64 * p.input / m
            + cached as f64 * p.cached_input / m
            + output as f64 * p.output / m,
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn known_models_are_priced_and_unknown_ones_are_not() {
        assert_eq!(price_of("gpt-5-mini").unwrap().model, "gpt-5-mini");
        assert_eq!(price_of("gpt-5").unwrap().model, "gpt-5");
        assert_eq!(price_of("gpt-5-2025-08-07").unwrap().model, "gpt-5");
        assert_eq!(
            price_of("claude-sonnet-4-5-20250929").unwrap().model,
            "claude-sonnet-4-5"
        );
        assert!(price_of("mock-model").is_none());
        assert!(price_of("gpt-50").is_none());
        let c = cost_of("gpt-5", 1_000_000, 200_000, 100_000).unwrap();
        assert!(
            (c - (0.8 * 1.25 + 0.2 * 0.125 + 0.1 * 10.0)).abs() < 1e-9,
            "{c}"
        );
        assert_eq!(cost_of("mock-model", 1, 0, 1), None);
    }
}
