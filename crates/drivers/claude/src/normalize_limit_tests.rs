//! The normalizer's reading of `rate_limit_event` lines.
#![allow(clippy::unwrap_used)]

use super::*;

#[test]
fn a_rate_limit_event_becomes_the_accounts_limit_window() {
    let line: OutLine = serde_json::from_str(
        r#"{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","resetsAt":1796090400,"rateLimitType":"five_hour","utilization":0.91,"isUsingOverage":false},"uuid":"u","session_id":"s"}"#,
    )
    .unwrap();
    let mut out = Vec::new();
    Normalizer::new(0.0).line(line, &mut out);
    let [DriverEvent::Limit { limit }] = out.as_slice() else {
        panic!("{out:?}");
    };
    assert_eq!(limit.window, "five_hour");
    assert_eq!(limit.status, "allowed_warning");
    assert_eq!(limit.resets_at, Some(1_796_090_400_000));
    assert!((limit.used_percent.unwrap() - 91.0).abs() < 1e-9);
}
