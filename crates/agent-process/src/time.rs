//! Times as agents write them in their session files (RFC 3339), as milliseconds since
//! the epoch, which is how Weft keeps every time.

/// Milliseconds since the epoch of an RFC 3339 time (`2026-11-30T03:01:53.161Z`; an
/// offset such as `+02:00` is honoured); `None` when it does not parse.
pub fn parse_time(s: &str) -> Option<i64> {
    s.trim()
        .parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_millisecond())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse() {
        assert_eq!(parse_time("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_time("1970-01-01T00:00:01.500Z"), Some(1500));
        assert_eq!(
            parse_time("2026-11-30T03:01:53.161Z"),
            Some(1_796_007_713_161)
        );
        assert_eq!(
            parse_time("2026-11-30T03:08:18.021Z"),
            Some(1_796_008_098_021)
        );
        assert_eq!(parse_time("1970-01-01T01:00:00+01:00"), Some(0));
        assert_eq!(parse_time("garbage"), None);
    }
}
