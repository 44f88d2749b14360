//! Accounts on the wire: what every surface sees of an account (never its secret), and
//! the requests that add, test and change one.
//!
//! A secret crosses the wire exactly once, in [`AddAccountRequest::secret`], and only
//! over the owner-only Unix socket (the daemon refuses it from a WebSocket). Its type,
//! [`SecretText`], serializes the value (it must reach the daemon) but prints `***` in
//! `Debug`, so a logged request never shows it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A secret value in transit. `Debug` prints `***`; the value is only serialized.
#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
pub struct SecretText(pub String);

impl std::fmt::Debug for SecretText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

/// Where an account's secret comes from.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum SecretSource {
    /// None: a login kind (the agent's own login in the account's home) or ambient.
    #[default]
    None,
    /// The OS secret store (Secret Service), one entry per account.
    Store,
    /// A variable of the daemon's own environment, read at each spawn.
    Env {
        /// The variable's name.
        name: String,
    },
    /// A command whose standard output is the secret, run at each spawn (like Claude's
    /// `apiKeyHelper`).
    Command {
        /// Run with `/bin/sh -c`.
        command: String,
    },
}

/// How a new account gets its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum SecretInput {
    /// The value itself, kept in the OS secret store.
    Value {
        /// The secret.
        value: SecretText,
    },
    /// A variable of the daemon's environment.
    Env {
        /// Its name.
        name: String,
    },
    /// A command printing the secret.
    Command {
        /// The command line.
        command: String,
    },
}

/// One limit window of an account, as the agent last reported it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct LimitWindow {
    /// `five_hour`, `seven_day`, `primary`, `daily`, …
    pub window: String,
    /// `allowed`, `allowed_warning`, `rejected`.
    pub status: String,
    /// How much of the window is used, 0–100, when known.
    pub used_percent: Option<f64>,
    /// When the window resets (ms since the epoch), when known.
    #[ts(type = "number | null")]
    pub resets_at: Option<i64>,
    /// When this was seen (ms since the epoch).
    #[ts(type = "number")]
    pub seen_at: i64,
}

/// An account as listed: everything but its secret.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct AccountInfo {
    /// Its id (`acct-…`).
    pub id: String,
    /// The agent it belongs to.
    pub agent: String,
    /// `login`, `api-key`, `setup-token`, `gateway`, `endpoint`, `bedrock`, `vertex`;
    /// `env` for ACP agents (named variables); `endpoint` for the native agent (base URL,
    /// `protocol`, `models` and a key).
    pub kind: String,
    /// The user's name for it.
    pub label: String,
    /// The agent's own config folder for this account (login kinds).
    pub home_dir: Option<String>,
    /// The endpoint (key kinds, optional).
    pub base_url: Option<String>,
    /// The endpoint's protocol, for the native agent (`anthropic-messages`,
    /// `openai-responses`, `openai-chat`, `gemini`).
    pub protocol: Option<String>,
    /// Model names the account offers (a gateway's, an endpoint's).
    pub models: Vec<String>,
    /// Public variables set for its spawns (never a secret).
    pub env: BTreeMap<String, String>,
    /// Where its secret comes from.
    pub secret: SecretSource,
    /// The variable a spawn gets the secret in (ACP agents' `env` kind; others use the
    /// kind's own variable).
    pub secret_var: Option<String>,
    /// Its limit windows, as last seen.
    pub limits: Vec<LimitWindow>,
    /// Created (ms since the epoch).
    #[ts(type = "number")]
    pub created_at: i64,
    /// Last changed (ms since the epoch).
    #[ts(type = "number")]
    pub updated_at: i64,
}

/// Add an account. Answered by its [`AccountInfo`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct AddAccountRequest {
    /// The agent (`claude`, `codex`, `gemini`, …).
    pub agent: String,
    /// The kind (see [`AccountInfo::kind`]).
    pub kind: String,
    /// Its name.
    pub label: String,
    /// An endpoint for key kinds.
    pub base_url: Option<String>,
    /// The endpoint's protocol.
    pub protocol: Option<String>,
    /// Model names.
    pub models: Vec<String>,
    /// Public variables for its spawns.
    pub env: BTreeMap<String, String>,
    /// Its secret, for key kinds.
    pub secret: Option<SecretInput>,
    /// The variable the secret is given in (ACP agents' `env` kind: e.g.
    /// `KIMI_API_KEY`).
    pub secret_var: Option<String>,
}

/// What switching a session to another account does (or would do). Answered to
/// [`crate::ClientRequest::SwitchAccount`] and [`crate::ClientRequest::CheckAccountSwitch`].
///
/// A switch the agent can follow (same provider, or a transcript Weft can carry into
/// the new account's home) resumes the agent's own session. One it cannot follow — a
/// Claude session moving to another provider (its thinking signatures are bound to the
/// provider), a Codex session moving to another account (its reasoning is bound to
/// the organisation), a Gemini session moving to another home — carries a `warning`:
/// nothing changes until the switch is asked again with `confirm`, and then the next
/// turn starts a new agent session seeded with a handover of the transcript (the Weft
/// session and its history stay one).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct AccountSwitch {
    /// The session.
    pub session_key: String,
    /// The account it was on (none: the agent's own login, ambient).
    pub from: Option<String>,
    /// The account asked for (none: ambient).
    pub to: Option<String>,
    /// Why the agent's own session cannot follow (none: it resumes). The app shows it
    /// before the switch; the CLI prints it and asks (or takes `--yes`).
    pub warning: Option<String>,
    /// True when the session is now on `to`.
    pub switched: bool,
    /// The next turn starts a new agent session seeded with a handover.
    pub handover: bool,
    /// The task id of the prompt run again on the new account (`resume`).
    pub task_id: Option<String>,
}

/// A session's opt-in to switching accounts by itself. Answered to
/// [`crate::ClientRequest::SetAutoSwitch`] and [`crate::ClientRequest::GetAutoSwitch`].
///
/// When on and a turn ends with its account's limit window used up (the snapshot's
/// `limitHit`), the session moves to the next account of the same agent that has
/// capacity (no window `rejected` that has not reset yet, and usable now) and runs
/// the cut-short prompt again there; a notice in the new turn says so. Off by default.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct AutoSwitch {
    /// The session.
    pub session_key: String,
    /// On or off.
    pub enabled: bool,
}

/// What testing an account found. Answered to [`crate::ClientRequest::TestAccount`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AccountTest {
    /// The account.
    pub id: String,
    /// True when it can be used now.
    pub ok: bool,
    /// `ok`, `loggedOut`, `expired`, `wrongKey`, `noSecret`, `unreachable`, `error`.
    pub status: String,
    /// What was found, in words.
    pub detail: String,
}

/// Usage of an account on one day.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct AccountUsageDay {
    /// The account.
    pub account: String,
    /// `YYYY-MM-DD` (UTC).
    pub day: String,
    /// Input tokens.
    #[ts(type = "number")]
    pub input_tokens: u64,
    /// Output tokens.
    #[ts(type = "number")]
    pub output_tokens: u64,
    /// Cache reads.
    #[ts(type = "number")]
    pub cache_read_tokens: u64,
    /// Cache writes.
    #[ts(type = "number")]
    pub cache_write_tokens: u64,
    /// Cost in US dollars of the turns whose cost is known.
    pub cost_usd: f64,
    /// Turns whose cost is not known (no price for their model): shown as unknown.
    pub unpriced_turns: u32,
    /// Turns counted.
    pub turns: u32,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use crate::{ClientMessage, ClientRequest};

    use super::*;

    /// A request's fields share the message's JSON object with its `id`: none of the
    /// account verbs may have a field of that name.
    #[test]
    fn every_account_verb_round_trips_as_a_message() {
        let requests = vec![
            ClientRequest::ListAccounts {},
            ClientRequest::AddAccount(AddAccountRequest {
                agent: "claude".into(),
                kind: "api-key".into(),
                label: "k".into(),
                secret: Some(SecretInput::Value {
                    value: SecretText("sk-1".into()),
                }),
                ..Default::default()
            }),
            ClientRequest::RenameAccount {
                account: "acct-1".into(),
                label: "new".into(),
            },
            ClientRequest::RemoveAccount {
                account: "acct-1".into(),
                delete_home: true,
            },
            ClientRequest::TestAccount {
                account: "acct-1".into(),
            },
            ClientRequest::AccountUsage {
                account: Some("acct-1".into()),
            },
            ClientRequest::SwitchAccount {
                session_key: "claude:s".into(),
                account: "acct-2".into(),
                resume: true,
                confirm: false,
            },
            ClientRequest::CheckAccountSwitch {
                session_key: "claude:s".into(),
                account: "ambient".into(),
            },
            ClientRequest::SetAutoSwitch {
                session_key: "claude:s".into(),
                enabled: true,
            },
            ClientRequest::GetAutoSwitch {
                session_key: "claude:s".into(),
            },
        ];
        for request in requests {
            let message = ClientMessage { id: 7, request };
            let json = serde_json::to_string(&message).unwrap();
            let back: ClientMessage = serde_json::from_str(&json).unwrap();
            assert_eq!(back, message, "{json}");
        }
        let shown = format!("{:?}", SecretText("sk-1".into()));
        assert_eq!(shown, "***");
    }

    #[test]
    fn a_used_up_limit_window_is_noted_in_the_snapshot() {
        let mut acc = crate::Accumulator::new(crate::UniversalSnapshot::default());
        let limit = |status: &str| crate::DriverEvent::Limit {
            limit: LimitWindow {
                window: "five_hour".into(),
                status: status.into(),
                ..Default::default()
            },
        };
        acc.apply(&limit("allowed_warning"), 1);
        assert!(acc.snapshot().notices.is_empty());
        acc.apply(&limit("rejected"), 2);
        assert_eq!(
            acc.snapshot().notices,
            ["this account's five_hour usage limit is reached: switch accounts to go on"]
        );
        let hit = acc.snapshot().limit_hit.clone();
        assert_eq!(hit.map(|l| l.window), Some("five_hour".to_string()));
        let patch = crate::patch::diff(&crate::UniversalSnapshot::default(), acc.snapshot());
        let back = crate::patch::apply(&crate::UniversalSnapshot::default(), &patch);
        assert_eq!(
            back.limit_hit,
            acc.snapshot().limit_hit,
            "limitHit travels in a patch"
        );
    }
}
