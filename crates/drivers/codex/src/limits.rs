//! Codex's usage limits → [`DriverEvent::Limit`]s, folded into the turn's account.
//!
//! Codex reads its windows from the model server's response headers
//! (`x-codex-primary-used-percent`, `-window-minutes`, `-reset-at`, and the `secondary`
//! ones) and reports them as `account/rateLimits/updated` `{rateLimits: {limitId,
//! primary: {usedPercent, windowDurationMins, resetsAt}, secondary}}` (resetsAt in
//! seconds), sparse: a window left out is unchanged. A used-up window also fails the
//! turn with `codexErrorInfo: "usageLimitExceeded"` (observed with codex-cli 0.171.0
//! against a scripted server answering 429 `usage_limit_reached`).

use serde_json::Value;
use weft_protocol::{DriverEvent, LimitWindow};

/// From this much use on a window is reported as close to its limit.
const WARNING_PERCENT: f64 = 80.0;

/// A window's name from its length: Claude's names where the lengths match.
fn window_name(limit_id: Option<&str>, slot: &str, minutes: Option<u64>) -> String {
    let base = match minutes {
        Some(300) => "five_hour".to_string(),
        Some(10080) => "seven_day".to_string(),
        Some(1440) => "daily".to_string(),
        Some(m) if m % 60 == 0 => format!("{}_hour", m / 60),
        Some(m) => format!("{m}_minute"),
        None => slot.to_string(),
    };
    match limit_id {
        Some(id) if id != "codex" && !id.is_empty() => format!("{id} {base}"),
        _ => base,
    }
}

/// The windows an `account/rateLimits/updated` reports.
pub fn from_update(params: &Value) -> Vec<DriverEvent> {
    let limits = &params["rateLimits"];
    let limit_id = limits["limitId"].as_str();
    ["primary", "secondary"]
        .iter()
        .filter_map(|slot| {
            let w = &limits[*slot];
            let used = w["usedPercent"].as_f64()?;
            let minutes = w["windowDurationMins"].as_u64();
            let status = if used >= 100.0 {
                "rejected"
            } else if used >= WARNING_PERCENT {
                "allowed_warning"
            } else {
                "allowed"
            };
            Some(DriverEvent::Limit {
                limit: LimitWindow {
                    window: window_name(limit_id, slot, minutes),
                    status: status.into(),
                    used_percent: Some(used),
                    resets_at: w["resetsAt"].as_i64().map(|s| s * 1000),
                    seen_at: 0,
                },
            })
        })
        .collect()
}

/// A used-up limit codex reported only as the turn's error (no window came with it).
pub fn from_error(params: &Value) -> Option<DriverEvent> {
    (params["error"]["codexErrorInfo"] == "usageLimitExceeded").then(|| DriverEvent::Limit {
        limit: LimitWindow {
            window: "usage".into(),
            status: "rejected".into(),
            ..Default::default()
        },
    })
}

/// Whether `events` hold a used-up window.
pub fn any_rejected(events: &[DriverEvent]) -> bool {
    events
        .iter()
        .any(|e| matches!(e, DriverEvent::Limit { limit } if limit.status == "rejected"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_windows_codex_reports_become_limits() {
        // As codex-cli 0.171.0 sent it after a 429 with x-codex-primary-used-percent: 100.
        let update = json!({"rateLimits": {"limitId": "codex", "limitName": null,
            "primary": {"usedPercent": 100, "windowDurationMins": 300, "resetsAt": 1796100000},
            "secondary": {"usedPercent": 43, "windowDurationMins": 10080, "resetsAt": 1796500000},
            "credits": null}});
        let events = from_update(&update);
        let limits: Vec<&LimitWindow> = events
            .iter()
            .filter_map(|e| match e {
                DriverEvent::Limit { limit } => Some(limit),
                _ => None,
            })
            .collect();
        assert_eq!(limits.len(), 2);
        assert_eq!(limits[0].window, "five_hour");
        assert_eq!(limits[0].status, "rejected");
        assert_eq!(limits[0].resets_at, Some(1_796_100_000_000));
        assert_eq!(limits[1].window, "seven_day");
        assert_eq!(limits[1].status, "allowed");
        assert!(any_rejected(&events));
        // Sparse: a window left out is not reported.
        let sparse = json!({"rateLimits": {"primary": {"usedPercent": 85.0}, "secondary": null}});
        let events = from_update(&sparse);
        assert_eq!(events.len(), 1);
        assert!(
            matches!(&events[0], DriverEvent::Limit { limit } if limit.status == "allowed_warning" && limit.window == "primary")
        );
        let error = json!({"error": {"message": "You've hit your usage limit.",
            "codexErrorInfo": "usageLimitExceeded"}, "willRetry": false});
        assert!(from_error(&error).is_some());
        assert!(from_error(&json!({"error": {"message": "x"}})).is_none());
    }
}
