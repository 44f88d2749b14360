//! What a long-lived agent process was started with, as far as its environment goes.
//!
//! A driver that keeps one agent process per session must start a new one (resuming
//! the session) when a turn comes with a different environment: a `weft run` with
//! another `ANTHROPIC_BASE_URL`, an account switched. It compares fingerprints rather
//! than keeping a second copy of the environment, which may hold secrets, per session.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};

/// A digest of a whole spawn environment: equal environments give equal fingerprints,
/// whatever the order of their entries (a repeated name counts once, its last value).
/// Its `Debug` prints the digest only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct EnvFingerprint(u64);

impl EnvFingerprint {
    /// The fingerprint of `env` (`AgentTurnInput::spawn_env`).
    pub fn of(env: &[(String, String)]) -> Self {
        // A shell's bookkeeping (`_`, `OLDPWD`, `SHLVL`) differs between two commands of
        // one terminal (or a script and a terminal): no reason to restart an agent.
        let merged: BTreeMap<&str, &str> = env
            .iter()
            .filter(|(k, _)| !weft_protocol::ClientEnv::is_bookkeeping(k))
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        // `DefaultHasher::new()` is SipHash with fixed keys: stable within a process,
        // which is as long as a fingerprint lives.
        let mut h = DefaultHasher::new();
        merged.hash(&mut h);
        Self(h.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn order_does_not_matter_values_and_names_do() {
        let a = EnvFingerprint::of(&env(&[("A", "1"), ("B", "2")]));
        assert_eq!(a, EnvFingerprint::of(&env(&[("B", "2"), ("A", "1")])));
        assert_eq!(
            a,
            EnvFingerprint::of(&env(&[("A", "0"), ("B", "2"), ("A", "1")]))
        );
        assert_ne!(a, EnvFingerprint::of(&env(&[("A", "1"), ("B", "3")])));
        assert_ne!(a, EnvFingerprint::of(&env(&[("A", "1")])));
        // A shell's bookkeeping does not count.
        assert_eq!(
            a,
            EnvFingerprint::of(&env(&[
                ("A", "1"),
                ("B", "2"),
                ("_", "/usr/bin/python3"),
                ("SHLVL", "3")
            ]))
        );
        // "A=1B" + "" is not "A=1" + "B".
        assert_ne!(
            EnvFingerprint::of(&env(&[("A", "1B"), ("C", "")])),
            EnvFingerprint::of(&env(&[("A", "1"), ("BC", "")]))
        );
    }
}
