//! The messages every client and the kernel service exchange: one request enum that
//! names every verb and one server message enum.
//!
//! A connection carries JSON messages ([`ClientMessage`] up, [`ServerMessage`] down)
//! and binary terminal frames ([`crate::TerminalFrame`] down, [`crate::TerminalInput`]
//! up, in `terminal_frame.rs`). The first
//! request on a connection is [`ClientRequest::Hello`]; on a WebSocket it also carries
//! the token (never in a URL).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::error::WireError;
use crate::patch::PatchEvent;
use crate::snapshot::{InteractionKind, Question};
use crate::verbs::ClientRequest;
use crate::wire::InteractionResponse;

/// What a client may do. A token is issued with its scopes; the Unix socket (owner only)
/// grants both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum Scope {
    /// Sessions, history, search, agents, subscriptions, the inbox.
    Read,
    /// Prompt, stop, steer, answer, terminals, the daemon itself.
    Control,
}

impl Scope {
    /// Its name on the wire and in the token file.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Control => "control",
        }
    }

    /// The scope named `name`.
    pub fn parse(name: &str) -> Option<Scope> {
        match name {
            "read" => Some(Scope::Read),
            "control" => Some(Scope::Control),
            _ => None,
        }
    }
}

/// An environment a client hands over for the agents its turns start. It may hold
/// secrets: its `Debug` prints the names only.
#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
pub struct ClientEnv(pub BTreeMap<String, String>);

impl ClientEnv {
    /// What a shell sets for its own bookkeeping and changes from one command to the
    /// next (`_` is the command's own path): two environments that differ only there
    /// start the same agent, so a process started for one serves the other.
    pub const BOOKKEEPING: [&'static str; 3] = ["_", "OLDPWD", "SHLVL"];

    /// True when `name` is one of [`Self::BOOKKEEPING`].
    pub fn is_bookkeeping(name: &str) -> bool {
        Self::BOOKKEEPING.contains(&name)
    }

    /// The same environment for an agent: equal but for [`Self::BOOKKEEPING`].
    pub fn same_for_agents(&self, other: &ClientEnv) -> bool {
        let kept = |e: &ClientEnv| {
            e.0.iter()
                .filter(|(k, _)| !Self::is_bookkeeping(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<Vec<_>>()
        };
        kept(self) == kept(other)
    }

    /// The names of the variables (not [`Self::BOOKKEEPING`]) set differently in the two,
    /// or in only one: what kept them from being [`Self::same_for_agents`]. Names only,
    /// for a log line; values may be secrets.
    pub fn differing(&self, other: &ClientEnv) -> Vec<String> {
        let mut names: Vec<String> = self
            .0
            .keys()
            .chain(other.0.keys())
            .filter(|k| !Self::is_bookkeeping(k) && self.0.get(*k) != other.0.get(*k))
            .cloned()
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

impl std::fmt::Debug for ClientEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

/// The first request on a connection. Its `Debug` leaves out the token and the proof.
#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct Hello {
    /// The client's version (`CARGO_PKG_VERSION`); a daemon of another version restarts
    /// once it has no running turns.
    pub version: String,
    /// What the client is, for the record of who answered what: `cli`, `app`,
    /// `browser`, …
    pub surface: String,
    /// The environment this client's turns run their agents with (a CLI sends its own);
    /// none: the daemon's own.
    pub env: Option<ClientEnv>,
    /// The WebSocket token (the Unix socket needs none).
    pub token: Option<String>,
    /// On the Unix socket: the contents of `$WEFT_HOME/client.key`, which only a
    /// process outside Weft's sandbox can read. A socket hello without it is refused.
    pub proof: Option<String>,
}

impl std::fmt::Debug for Hello {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hello")
            .field("version", &self.version)
            .field("surface", &self.surface)
            .field("env", &self.env)
            .field("token", &self.token.as_ref().map(|_| "…"))
            .field("proof", &self.proof.as_ref().map(|_| "…"))
            .finish()
    }
}

/// Reply to [`Hello`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Welcome {
    /// The daemon's version.
    pub version: String,
    /// The daemon's process id.
    pub pid: u32,
    /// What this connection may do.
    pub scopes: Vec<Scope>,
    /// Set when the daemon is of another version and will exit as soon as it has no
    /// running turns (at once when it has none): reconnect to get a new one.
    pub restarting: bool,
}

/// Answer the interaction `promptId`, wherever it is pending.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AnswerRequest {
    /// Its id.
    pub prompt_id: String,
    /// The answer.
    #[serde(flatten)]
    pub response: InteractionResponse,
}

/// One pending question, permission or confirmation, across sessions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct InboxItem {
    /// Id to answer it by.
    pub prompt_id: String,
    /// The session it is pending in.
    pub session_key: String,
    /// Question, permission or confirmation.
    pub kind: InteractionKind,
    /// One line saying what is asked.
    pub title: String,
    /// More context, when there is some.
    pub detail: Option<String>,
    /// For a permission: the tool that wants to run.
    pub tool_name: Option<String>,
    /// The questions.
    pub questions: Vec<Question>,
    /// Asked (ms since the epoch).
    #[ts(type = "number")]
    pub created_at: i64,
    /// When it expires unanswered (ms since the epoch); none: it waits.
    #[ts(type = "number | null")]
    pub expires_at: Option<i64>,
}

/// Reply to [`ClientRequest::Listen`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Listening {
    /// The address bound (a port of 0 is resolved).
    pub addr: String,
    /// The WebSocket URL (`ws://ADDR/ws`).
    pub ws_url: String,
    /// The browser UI's URL, with a read-and-control token in its fragment.
    pub ui_url: String,
    /// Over TLS: the fingerprint of the certificate's key (base64 of the SHA-256 of
    /// its SubjectPublicKeyInfo), which clients pin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub fingerprint: Option<String>,
}

/// Reply to [`ClientRequest::OpenTerminal`] and [`ClientRequest::AttachTerminal`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TerminalAttached {
    /// The session the terminal belongs to; its frames follow on this connection.
    pub session_key: String,
}

/// A request with the id its reply will carry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ClientMessage {
    /// Chosen by the client; echoed in the reply.
    #[ts(type = "number")]
    pub id: u64,
    /// The verb.
    #[serde(flatten)]
    pub request: ClientRequest,
}

/// What a server sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ServerMessage {
    /// The reply to request `id`.
    Reply {
        /// The request's id.
        #[ts(type = "number")]
        id: u64,
        /// The result.
        result: Value,
    },
    /// Request `id` failed.
    Error {
        /// The request's id.
        #[ts(type = "number")]
        id: u64,
        /// Why.
        error: WireError,
    },
    /// A patch for a subscribed session (boxed: it dwarfs the other variants).
    Patch(Box<PatchEvent>),
    /// Patches were dropped for this connection (it read too slowly): re-read the
    /// snapshots of the sessions it shows (all of them when `sessionKey` is absent).
    Resync {
        /// The session whose patches were dropped.
        session_key: Option<String>,
    },
    /// The daemon is going away (stopped, or restarting for another version).
    Closing {
        /// Why.
        reason: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_debug_names_no_value() {
        let env = ClientEnv([("API_KEY".to_string(), "sk-secret".to_string())].into());
        let shown = format!("{env:?}");
        assert!(
            shown.contains("API_KEY") && !shown.contains("sk-secret"),
            "{shown}"
        );
    }

    #[test]
    fn envs_differing_only_in_bookkeeping_start_the_same_agent() {
        let env = |pairs: &[(&str, &str)]| {
            ClientEnv(
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            )
        };
        let shell = env(&[("PATH", "/bin"), ("_", "/usr/bin/weft"), ("SHLVL", "1")]);
        let again = env(&[("PATH", "/bin"), ("_", "/usr/bin/env"), ("SHLVL", "2")]);
        assert!(shell.same_for_agents(&again));
        assert!(shell.differing(&again).is_empty());
        let shim = env(&[
            ("PATH", "/shim:/bin"),
            ("PYENV_VERSION", "3.11"),
            ("_", "x"),
        ]);
        assert!(!shell.same_for_agents(&shim));
        assert_eq!(shell.differing(&shim), ["PATH", "PYENV_VERSION"]);
    }

    #[test]
    fn every_control_verb_needs_control() {
        let stop = ClientRequest::Stop {
            session_key: "k".into(),
        };
        assert_eq!(stop.scope(), Scope::Control);
        assert_eq!(ClientRequest::Inbox {}.scope(), Scope::Read);
    }
}
