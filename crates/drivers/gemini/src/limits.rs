//! Gemini's used-up quota → a [`DriverEvent::Limit`], folded into the turn's account.
//!
//! The model server answers 429 `RESOURCE_EXHAUSTED` with a `QuotaFailure`; the Gemini
//! CLI (0.61.0, checked against a scripted server) retries a per-minute quota itself and
//! gives up at once on a daily one (`TerminalQuotaError`), ending the headless turn with
//! `{"type":"result","status":"error","error":{"message":"[API Error: You have exhausted
//! your daily quota on this model.] …"}}`. Its stream carries no window or reset time,
//! so the window is named from the message: `daily`, or `quota`.

use weft_protocol::{DriverEvent, LimitWindow};

/// The limit a failed turn's message reports, if it is about a used-up quota.
pub fn from_failure(message: &str) -> Option<DriverEvent> {
    let lower = message.to_ascii_lowercase();
    let quota = lower.contains("quota")
        || lower.contains("resource_exhausted")
        || lower.contains("resource exhausted");
    if !quota {
        return None;
    }
    let window = if lower.contains("daily") || lower.contains("per day") {
        "daily"
    } else {
        "quota"
    };
    Some(DriverEvent::Limit {
        limit: LimitWindow {
            window: window.into(),
            status: "rejected".into(),
            ..Default::default()
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_used_up_quota_is_a_limit() {
        // The result line's message, as gemini 0.61.0 printed it after a 429 with a
        // daily QuotaFailure.
        let daily = "[API Error: You have exhausted your daily quota on this model.]\nPlease wait and try again later.";
        assert!(matches!(
            from_failure(daily),
            Some(DriverEvent::Limit { limit }) if limit.window == "daily" && limit.status == "rejected"
        ));
        assert!(matches!(
            from_failure("[API Error: You exceeded your current quota, please check your plan]"),
            Some(DriverEvent::Limit { limit }) if limit.window == "quota"
        ));
        assert!(from_failure("[API Error: invalid API key]").is_none());
    }
}
