//! Switching a session between accounts: whether the agent's own session can follow,
//! and, for a session that opted in to auto-switch, which account to move to when its
//! limit window is used up.
//!
//! What binds an agent session to where it ran (the research note, §5):
//! - Claude signs its thinking blocks per provider. Signatures hold across Anthropic's
//!   own API, Bedrock and Vertex (login, setup-token, api-key, bedrock, vertex and the
//!   ambient login all count as that one provider), but not across a `gateway` (another
//!   provider or models behind an Anthropic-shaped endpoint).
//! - Codex encrypts its reasoning for the organisation of the account: any other
//!   login, key or endpoint cannot read it back (`invalid_encrypted_content`).
//! - Gemini keeps its sessions under its home (`GEMINI_CLI_HOME`): key kinds share the
//!   client's, a login account has its own, and Weft does not move Gemini's files.
//!
//! The transcripts of Claude and Codex are carried between homes (`handover.rs`), so a
//! move between two homes alone never needs a warning for them.

use weft_agent_spec::spec::{AgentSpec, Binding};
use weft_protocol::{AccountInfo, ClientEnv};

use crate::Accounts;

/// What an agent session is bound to, as its spec's kind says; two accounts with the
/// same binding can resume each other's sessions.
fn binding(spec: Option<&AgentSpec>, account: Option<&AccountInfo>) -> String {
    let Some(a) = account else {
        return "ambient".into();
    };
    let url = || a.base_url.as_deref().unwrap_or_default();
    match spec.and_then(|s| s.kind(&a.kind)).map(|k| &k.binding) {
        Some(Binding::Fixed(to)) => to.clone(),
        Some(Binding::BaseUrl(word)) => format!("{word} {}", url()),
        Some(Binding::Account) => format!("account {}", a.id),
        Some(Binding::Home) => format!("home {}", a.home_dir.as_deref().unwrap_or_default()),
        Some(Binding::ProtocolAndUrl) => {
            format!("{} {}", a.protocol.as_deref().unwrap_or_default(), url())
        }
        Some(Binding::Ambient) | None => "ambient".into(),
    }
}

fn ambient_binding(spec: Option<&AgentSpec>) -> String {
    spec.map_or_else(|| "ambient".into(), |s| s.ambient_binding.clone())
}

impl Accounts {
    /// An account as a notice names it: `acct-… (label)`, or the agent's own login.
    pub fn describe(&self, id: Option<&str>) -> String {
        match id {
            None => "ambient (the agent's own login)".into(),
            Some(id) => match self.get(id) {
                Ok(a) => format!("`{id}` ({})", a.label),
                Err(_) => format!("`{id}`"),
            },
        }
    }

    /// Why `agent`'s own session cannot follow from account `from` to `to` (none:
    /// ambient); `None` when it can.
    pub fn switch_warning(
        &self,
        agent: &str,
        from: Option<&str>,
        to: Option<&str>,
        _client_env: Option<&ClientEnv>,
    ) -> Option<String> {
        if from == to {
            return None;
        }
        let record = |id: Option<&str>| id.and_then(|id| self.get(id).ok());
        let (a, b) = (record(from), record(to));
        let spec = self.spec(agent);
        let side = |r: Option<&AccountInfo>| match r {
            Some(r) => binding(spec, Some(r)),
            None => ambient_binding(spec),
        };
        if side(a.as_ref()) == side(b.as_ref()) {
            return None;
        }
        let why = spec
            .and_then(|s| s.switch_reason.as_deref())
            .unwrap_or("the agent's session is bound to the endpoint it ran on");
        Some(format!(
            "{why}: this session's own {agent} session (on {}) cannot be resumed on {}. \
             Weft continues in a new {agent} session that starts from a handover summary of \
             the transcript; the Weft session and its history stay one.",
            self.describe(from),
            self.describe(to)
        ))
    }

    /// Whether session `session_key` switches accounts by itself on a used-up limit.
    pub fn auto_switch(&self, session_key: &str) -> Result<bool, crate::AccountError> {
        self.table.auto_switch(session_key).map_err(crate::storage)
    }

    /// Opts session `session_key` in to (or out of) auto-switch.
    pub fn set_auto_switch(
        &self,
        session_key: &str,
        enabled: bool,
    ) -> Result<(), crate::AccountError> {
        if weft_protocol::split_session_key(session_key).is_none() {
            return Err(crate::AccountError::Bad(format!(
                "`{session_key}` is not a session key (agent:id)"
            )));
        }
        self.table
            .set_auto_switch(session_key, enabled)
            .map_err(crate::storage)
    }

    /// For a session opted in to auto-switch: the account of `agent` after `from`
    /// (in the order they were added, wrapping) that has capacity — none of its windows
    /// used up and not yet reset — and can run a turn now.
    pub fn auto_switch_to(&self, session_key: &str, agent: &str, from: &str) -> Option<String> {
        if !self.auto_switch(session_key).unwrap_or(false) {
            return None;
        }
        let all: Vec<AccountInfo> = self
            .list()
            .ok()?
            .into_iter()
            .filter(|a| a.agent == agent)
            .collect();
        let start = all.iter().position(|a| a.id == from).map_or(0, |i| i + 1);
        let now = crate::now_ms();
        (0..all.len())
            .map(|i| &all[(start + i) % all.len()])
            .filter(|a| a.id != from)
            .find(|a| has_capacity(a, now) && self.usable(agent, &a.id).is_ok())
            .map(|a| a.id.clone())
    }
}

/// How long a used-up window that gave no reset time counts as used up (the shortest
/// window the vendors have, Claude's and Codex's five hours).
const UNKNOWN_RESET_MS: i64 = 5 * 3_600_000;

/// No window of the account is used up (`rejected`) and still unreset.
pub fn has_capacity(account: &AccountInfo, now: i64) -> bool {
    !account.limits.iter().any(|w| {
        w.status == "rejected" && w.resets_at.unwrap_or(w.seen_at + UNKNOWN_RESET_MS) > now
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acct(agent: &str, kind: &str, id: &str, base: Option<&str>) -> AccountInfo {
        AccountInfo {
            id: id.into(),
            agent: agent.into(),
            kind: kind.into(),
            base_url: base.map(str::to_string),
            home_dir: (kind == "login").then(|| format!("/w/homes/{id}")),
            ..Default::default()
        }
    }

    #[test]
    fn what_binds_a_session_follows_the_vendors_rules() {
        let specs = weft_drivers::specs_in(std::path::Path::new("/nonexistent"));
        let spec = |agent: &str| specs.iter().find(|s| s.id == agent);
        let b = |agent, kind, id, base| binding(spec(agent), Some(&acct(agent, kind, id, base)));
        let ambient_binding = |agent| ambient_binding(spec(agent));
        // Claude: every first-party kind is one provider; a gateway is another.
        assert_eq!(b("claude", "api-key", "a", Some("http://x")), "anthropic");
        assert_eq!(b("claude", "login", "b", None), ambient_binding("claude"));
        assert_ne!(b("claude", "gateway", "c", Some("http://g")), "anthropic");
        // Codex: each account its own organisation.
        assert_ne!(
            b("codex", "api-key", "a", None),
            b("codex", "api-key", "b", None)
        );
        assert_eq!(
            b("codex", "endpoint", "a", Some("http://e")),
            b("codex", "endpoint", "b", Some("http://e"))
        );
        // Gemini: key kinds share the client's home, a login has its own.
        assert_eq!(b("gemini", "api-key", "a", None), ambient_binding("gemini"));
        assert_ne!(b("gemini", "login", "a", None), ambient_binding("gemini"));
    }

    #[test]
    fn a_used_up_window_counts_until_it_resets() {
        let mut a = acct("claude", "api-key", "a", None);
        assert!(has_capacity(&a, 10));
        a.limits.push(weft_protocol::LimitWindow {
            window: "five_hour".into(),
            status: "rejected".into(),
            resets_at: Some(100),
            ..Default::default()
        });
        assert!(!has_capacity(&a, 10));
        assert!(has_capacity(&a, 101), "reset since");
        a.limits[0].status = "allowed_warning".into();
        assert!(has_capacity(&a, 10));
        // No reset time given: used up for five hours from when it was seen.
        a.limits[0] = weft_protocol::LimitWindow {
            window: "usage".into(),
            status: "rejected".into(),
            seen_at: 1_000,
            ..Default::default()
        };
        assert!(!has_capacity(&a, 1_000 + 3_600_000));
        assert!(has_capacity(&a, 1_000 + UNKNOWN_RESET_MS + 1));
    }
}
