//! Session keys: `agent:id`.
//!
//! The agent id comes first so a key alone says which driver owns the session. Agent
//! ids never contain `:`; the id part may (it is everything after the first `:`).

/// Builds a session key from an agent id and a session id.
pub fn make_session_key(agent: &str, id: &str) -> String {
    format!("{agent}:{id}")
}

/// Splits a session key into `(agent, id)`; `None` when it is not of the form `agent:id`
/// with both parts non-empty.
pub fn split_session_key(key: &str) -> Option<(&str, &str)> {
    let (agent, id) = key.split_once(':')?;
    (!agent.is_empty() && !id.is_empty()).then_some((agent, id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn make_and_split_round_trip() {
        let key = make_session_key("claude", "8f1c:2");
        assert_eq!(key, "claude:8f1c:2");
        assert_eq!(split_session_key(&key), Some(("claude", "8f1c:2")));
    }

    #[test]
    fn malformed_keys_do_not_split() {
        assert_eq!(split_session_key("claude"), None);
        assert_eq!(split_session_key(":x"), None);
        assert_eq!(split_session_key("echo:"), None);
    }
}
