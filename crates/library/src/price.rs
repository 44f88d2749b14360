//! API prices of the models Weft knows, to put a dollar figure on usage.
//!
//! An embedded table (US dollars per million tokens, the vendors' published list prices
//! as of late 2025), matched by model-name prefix, longest first. A model that matches
//! nothing has no price: usage reports list it as unknown, never as $0. For a
//! subscription these are API-equivalent figures, not what the user pays.

/// Per million tokens: input, output, cache read, cache write.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Input.
    pub input: f64,
    /// Output (reasoning included).
    pub output: f64,
    /// Cache read.
    pub cache_read: f64,
    /// Cache write (5-minute).
    pub cache_write: f64,
}

const fn p(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Price {
    Price {
        input,
        output,
        cache_read,
        cache_write,
    }
}

const TABLE: &[(&str, Price)] = &[
    ("claude-opus-4-5", p(5.0, 25.0, 0.5, 6.25)),
    ("claude-opus-4-1", p(15.0, 75.0, 1.5, 18.75)),
    ("claude-opus-4-2025", p(15.0, 75.0, 1.5, 18.75)),
    ("claude-opus-4-0", p(15.0, 75.0, 1.5, 18.75)),
    ("claude-sonnet-4", p(3.0, 15.0, 0.3, 3.75)),
    ("claude-3-7-sonnet", p(3.0, 15.0, 0.3, 3.75)),
    ("claude-3-5-sonnet", p(3.0, 15.0, 0.3, 3.75)),
    ("claude-haiku-4-5", p(1.0, 5.0, 0.1, 1.25)),
    ("claude-3-5-haiku", p(0.8, 4.0, 0.08, 1.0)),
    ("gpt-5-mini", p(0.25, 2.0, 0.025, 0.0)),
    ("gpt-5-nano", p(0.05, 0.4, 0.005, 0.0)),
    ("gpt-5", p(1.25, 10.0, 0.125, 0.0)),
    ("gpt-4.1-mini", p(0.4, 1.6, 0.1, 0.0)),
    ("gpt-4.1", p(2.0, 8.0, 0.5, 0.0)),
    ("o4-mini", p(1.1, 4.4, 0.275, 0.0)),
    ("o3", p(2.0, 8.0, 0.5, 0.0)),
    ("gemini-2.5-pro", p(1.25, 10.0, 0.31, 0.0)),
    ("gemini-2.5-flash-lite", p(0.1, 0.4, 0.025, 0.0)),
    ("gemini-2.5-flash", p(0.3, 2.5, 0.075, 0.0)),
];

/// The price of `model`, if known.
pub fn price_of(model: &str) -> Option<Price> {
    let m = model.to_ascii_lowercase();
    let m = m.rsplit('/').next().unwrap_or(&m);
    TABLE
        .iter()
        .filter(|(prefix, _)| m.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, p)| *p)
}

/// The cost in dollars of these tokens at `price`.
pub fn cost(price: Price, input: u64, output: u64, cache_read: u64, cache_write: u64) -> f64 {
    (input as f64 * price.input
        + output as f64 * price.output
        + cache_read as f64 * price.cache_read
        + cache_write as f64 * price.cache_write)
        / 1_000_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_models_are_priced_and_unknown_ones_are_not() {
        assert_eq!(
            price_of("claude-sonnet-4-5-20250929").map(|p| p.input),
            Some(3.0)
        );
        assert_eq!(price_of("gpt-5-mini").map(|p| p.output), Some(2.0));
        assert_eq!(price_of("gpt-5-codex").map(|p| p.output), Some(10.0));
        assert_eq!(price_of("mock-model"), None);
        assert_eq!(
            price_of("claude-opus-4-8"),
            None,
            "a newer model is not guessed"
        );
        let c = cost(
            price_of("gpt-5").unwrap_or(p(0.0, 0.0, 0.0, 0.0)),
            1_000_000,
            0,
            0,
            0,
        );
        assert!((c - 1.25).abs() < 1e-9);
    }
}
