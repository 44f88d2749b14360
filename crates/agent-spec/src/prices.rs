//! What the vendors' models cost: the one price table, for the accounts' usage per
//! day (a turn whose agent reports no cost: Codex, Gemini) and the session library's
//! usage reports.
//!
//! List prices in US dollars per million tokens, as the vendors published them on
//! [`PRICES_AS_OF`] (Anthropic's, OpenAI's and Google's API pricing pages, standard
//! tier). A model the table does not know has no price: its usage shows as unpriced,
//! never as $0, and a newer model is never guessed from an older one's name. For a
//! subscription these are API-equivalent figures, not what the user pays.

/// When the prices below were taken.
pub const PRICES_AS_OF: &str = "2025-11-24";

/// Where they come from.
pub const PRICES_SOURCE: &str =
    "the vendors' published API list prices (Anthropic, OpenAI, Google), standard tier";

/// One model's (or a family of dated ids') prices per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// A model id; it also prices its dated and tagged ids (`claude-sonnet-4-5` prices
    /// `claude-sonnet-4-5-20250929`, `gpt-5` prices `gpt-5-2025-08-07`).
    pub model: &'static str,
    /// Uncached input.
    pub input: f64,
    /// Cached input (a cache read).
    pub cache_read: f64,
    /// A cache write (Anthropic's 5-minute cache; 0 where writes cost nothing extra).
    pub cache_write: f64,
    /// Output (reasoning included).
    pub output: f64,
}

const fn p(
    model: &'static str,
    input: f64,
    cache_read: f64,
    cache_write: f64,
    output: f64,
) -> Price {
    Price {
        model,
        input,
        cache_read,
        cache_write,
        output,
    }
}

/// The table. Claude Opus 4 is listed by its ids, not as `claude-opus-4`, so a later
/// Opus 4.x is not priced as 4.0.
pub const PRICES: &[Price] = &[
    p("claude-opus-4-5", 5.0, 0.5, 6.25, 25.0),
    p("claude-opus-4-1", 15.0, 1.5, 18.75, 75.0),
    p("claude-opus-4-0", 15.0, 1.5, 18.75, 75.0),
    p("claude-opus-4-20250514", 15.0, 1.5, 18.75, 75.0),
    p("claude-sonnet-4-5", 3.0, 0.3, 3.75, 15.0),
    p("claude-sonnet-4", 3.0, 0.3, 3.75, 15.0),
    p("claude-3-7-sonnet", 3.0, 0.3, 3.75, 15.0),
    p("claude-3-5-sonnet", 3.0, 0.3, 3.75, 15.0),
    p("claude-haiku-4-5", 1.0, 0.1, 1.25, 5.0),
    p("claude-3-5-haiku", 0.8, 0.08, 1.0, 4.0),
    p("gpt-5-nano", 0.05, 0.005, 0.0, 0.4),
    p("gpt-5-mini", 0.25, 0.025, 0.0, 2.0),
    p("gpt-5-codex", 1.25, 0.125, 0.0, 10.0),
    p("gpt-5", 1.25, 0.125, 0.0, 10.0),
    p("gpt-4.1-mini", 0.4, 0.1, 0.0, 1.6),
    p("gpt-4.1", 2.0, 0.5, 0.0, 8.0),
    p("gpt-4o-mini", 0.15, 0.075, 0.0, 0.6),
    p("gpt-4o", 2.5, 1.25, 0.0, 10.0),
    p("o4-mini", 1.1, 0.275, 0.0, 4.4),
    p("o3", 2.0, 0.5, 0.0, 8.0),
    p("gemini-2.5-flash-lite", 0.1, 0.025, 0.0, 0.4),
    p("gemini-2.5-flash", 0.3, 0.075, 0.0, 2.5),
    p("gemini-2.5-pro", 1.25, 0.31, 0.0, 10.0),
];

/// The price of `model` (any case; a `provider/` prefix is ignored): the longest id in
/// the table that is `model` itself, or that `model` continues with `-` or `@` (a date
/// or a tag). `gpt-50` is not `gpt-5`.
pub fn price_of(model: &str) -> Option<Price> {
    let m = model.trim().to_ascii_lowercase();
    let m = m.rsplit('/').next().unwrap_or(&m);
    PRICES
        .iter()
        .filter(|p| {
            m.strip_prefix(p.model)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '@']))
        })
        .max_by_key(|p| p.model.len())
        .copied()
}

/// Tokens of one or more calls, as the price applies to them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Uncached input.
    pub input: u64,
    /// Cache reads.
    pub cache_read: u64,
    /// Cache writes.
    pub cache_write: u64,
    /// Output.
    pub output: u64,
}

impl Price {
    /// What `tokens` cost at this price, in dollars.
    pub fn cost(&self, tokens: Tokens) -> f64 {
        (tokens.input as f64 * self.input
            + tokens.cache_read as f64 * self.cache_read
            + tokens.cache_write as f64 * self.cache_write
            + tokens.output as f64 * self.output)
            / 1_000_000.0
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn known_models_are_priced_and_unknown_or_newer_ones_are_not() {
        assert_eq!(price_of("gpt-5-mini").unwrap().model, "gpt-5-mini");
        assert_eq!(price_of("gpt-5").unwrap().model, "gpt-5");
        assert_eq!(price_of("gpt-5-2025-08-07").unwrap().model, "gpt-5");
        assert_eq!(price_of("openai/GPT-5-codex").unwrap().output, 10.0);
        assert_eq!(
            price_of("claude-sonnet-4-5-20250929").unwrap().model,
            "claude-sonnet-4-5"
        );
        assert_eq!(
            price_of("claude-opus-4-20250514").unwrap().input,
            15.0,
            "Opus 4 by its dated id"
        );
        assert!(price_of("mock-model").is_none());
        assert!(price_of("gpt-50").is_none());
        assert!(
            price_of("claude-opus-4-8").is_none(),
            "a newer model is not guessed"
        );
        let gpt5 = price_of("gpt-5").unwrap();
        let c = gpt5.cost(Tokens {
            input: 800_000,
            cache_read: 200_000,
            cache_write: 0,
            output: 100_000,
        });
        assert!(
            (c - (0.8 * 1.25 + 0.2 * 0.125 + 0.1 * 10.0)).abs() < 1e-9,
            "{c}"
        );
    }
}
