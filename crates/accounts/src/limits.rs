//! An account's limit windows and its usage per day.
//!
//! Usage is folded in when a turn on the account ends: its tokens, and its cost — the
//! agent's own figure (Claude's `total_cost_usd`), else the shipped pricing table's for
//! its model. A turn with neither counts as unpriced: shown as unknown, never as $0.

use weft_agent_spec::prices::Tokens;
use weft_protocol::{DriverEvent, LimitWindow, UniversalSnapshot};
use weft_store::accounts::UsageDelta;

/// Limit windows an event reports, if it reports any: each driver turns its agent's
/// signal into [`DriverEvent::Limit`] (Claude's `rate_limit_event`, Codex's
/// `account/rateLimits/updated` and usage-limit error, Gemini's 429 RESOURCE_EXHAUSTED).
pub fn from_event(event: &DriverEvent, now: i64) -> Option<Vec<LimitWindow>> {
    match event {
        DriverEvent::Limit { limit } => {
            let mut limit = limit.clone();
            if limit.seen_at == 0 {
                limit.seen_at = now;
            }
            Some(vec![limit])
        }
        _ => None,
    }
}

/// `YYYY-MM-DD` (UTC) of a time in ms since the epoch.
pub fn day_of(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
        .strftime("%Y-%m-%d")
        .to_string()
}

/// What a finished turn adds to its account's day: its cost as the agent reported it,
/// else from the pricing table for its model (see [`weft_agent_spec::prices`]), else unknown.
pub fn usage_of(snapshot: &UniversalSnapshot) -> Option<(String, UsageDelta)> {
    let usage = snapshot.usage.as_ref()?;
    let input = usage.input_tokens.unwrap_or(0);
    let cached = usage.cached_input_tokens.unwrap_or(0);
    let output = usage.output_tokens.unwrap_or(0);
    let cost = usage.cost_usd.or_else(|| {
        let model = snapshot.model.as_deref()?;
        let cached = cached.min(input);
        // The input count includes the cached part (as OpenAI and Gemini report it).
        weft_agent_spec::prices::price_of(model).map(|p| {
            p.cost(Tokens {
                input: input - cached,
                cache_read: cached,
                cache_write: 0,
                output,
            })
        })
    });
    Some((
        day_of(snapshot.updated_at),
        UsageDelta {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: cached,
            cache_write_tokens: 0,
            cost_usd: cost,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_utc_dates() {
        assert_eq!(day_of(0), "1970-01-01");
        assert_eq!(day_of(1_796_083_200_000), "2026-12-01");
        assert_eq!(day_of(951_782_400_000), "2000-02-29");
    }
}
