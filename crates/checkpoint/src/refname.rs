//! The private ref of a session's checkpoints.
//!
//! Session keys look like `claude:0b1c…` but come from agents and users, so the name must
//! be legal for any input and distinct for distinct keys. Bytes outside `[A-Za-z0-9_-]`
//! are percent-encoded, dots included: that rules out every construct `git check-ref-format`
//! refuses (`..`, a leading `.`, a `.lock` suffix, `@{`, control characters, `:` `?` `*`
//! `[` `\` `~` `^`, spaces) and keeps the mapping injective, since `%` itself is encoded.
//! Refs under `refs/weft/` are neither fetched nor pushed by git's default refspecs.

/// The ref holding a session's checkpoints: `refs/weft/checkpoints/<agent>/<id>` for a
/// key `agent:id`. A key without a colon goes under `%%/`, a folder no encoded agent can
/// name, so it never collides with (or is a D/F conflict with) an agent's folder.
pub fn ref_name(session_key: &str) -> String {
    match session_key.split_once(':') {
        Some((agent, id)) => format!("refs/weft/checkpoints/{}/{}", encode(agent), encode(id)),
        None => format!("refs/weft/checkpoints/%%/{}", encode(session_key)),
    }
}

fn encode(part: &str) -> String {
    if part.is_empty() {
        // An empty component (`//`) is illegal; `%` alone never comes out of encoding.
        return "%".to_owned();
    }
    let mut out = String::with_capacity(part.len());
    for b in part.bytes() {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_become_distinct_legal_names() {
        assert_eq!(
            ref_name("claude:0b1c-22"),
            "refs/weft/checkpoints/claude/0b1c-22"
        );
        assert_eq!(ref_name("acp:a/b"), "refs/weft/checkpoints/acp/a%2Fb");
        assert_ne!(ref_name("x:a.b"), ref_name("x:a%2Eb"));
        assert_eq!(ref_name("x:"), "refs/weft/checkpoints/x/%");
        assert_eq!(ref_name("x:.lock"), "refs/weft/checkpoints/x/%2Elock");
        assert_eq!(ref_name("x"), "refs/weft/checkpoints/%%/x");
    }
}
