//! Ports: what the kernel needs from the world, each a trait with a working default.

use std::collections::HashMap;
use std::path::Path;

use parking_lot::Mutex;
pub use weft_protocol::{AskedInteraction, SessionRecord};
use weft_protocol::{
    DriverEvent, Interaction, InteractionResponse, SearchHit, SessionInfo, SkillInfo, ToolInfo,
    UniversalSnapshot,
};

/// A store's failure, as the kernel sees it (a store says why in words; the kernel
/// only reports it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StoreError(pub String);

impl StoreError {
    /// A failure of any store, in its own words.
    pub fn from_display(e: impl std::fmt::Display) -> Self {
        StoreError(e.to_string())
    }
}

use crate::driver::AgentTurnInput;

/// Where sessions, turns and every driver event are kept. The kernel knows no concrete
/// store: the service wires SQLite in (`weft-store-port`); the default keeps nothing.
///
/// Writes may be queued (streaming never waits on disk) but keep their order; reads see
/// every write made before them.
pub trait SessionStore: Send + Sync {
    /// Creates or updates a session's record.
    fn upsert_session(&self, record: &SessionRecord) -> Result<(), StoreError>;
    /// A session's record.
    fn get_session(&self, session_key: &str) -> Result<Option<SessionRecord>, StoreError>;
    /// Sessions, newest first, optionally only those in `workdir`.
    fn list_sessions(&self, workdir: Option<&str>) -> Result<Vec<SessionInfo>, StoreError>;
    /// A turn starts with `snapshot`.
    fn begin_turn(
        &self,
        session_key: &str,
        task_id: &str,
        snapshot: &UniversalSnapshot,
    ) -> Result<(), StoreError>;
    /// One driver event of a running turn.
    fn append_event(&self, task_id: &str, event: &DriverEvent) -> Result<(), StoreError>;
    /// A turn ended with `snapshot`.
    fn finish_turn(&self, task_id: &str, snapshot: &UniversalSnapshot) -> Result<(), StoreError>;
    /// Final snapshots of a session's finished turns, oldest first (a turn a crash left
    /// unfinished is included, rebuilt and marked incomplete; the running turn is not).
    fn history(&self, session_key: &str) -> Result<Vec<UniversalSnapshot>, StoreError>;
    /// Finished turns whose prompt or reply contain every word of `query` (the last
    /// one as a prefix), best match first, at most `limit`.
    fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, StoreError>;
    /// The newest `limit` finished turns before turn `before`, oldest first.
    fn history_page(
        &self,
        session_key: &str,
        limit: Option<u32>,
        before: Option<&str>,
    ) -> Result<Vec<UniversalSnapshot>, StoreError> {
        let mut all = self.history(session_key)?;
        if let Some(before) = before {
            if let Some(i) = all
                .iter()
                .position(|s| s.task_id.as_deref() == Some(before))
            {
                all.truncate(i);
            }
        }
        if let Some(limit) = limit {
            let skip = all.len().saturating_sub(limit as usize);
            all.drain(..skip);
        }
        Ok(all)
    }
    /// A question or permission was asked: kept until its outcome.
    fn ask_interaction(&self, _asked: &AskedInteraction) -> Result<(), StoreError> {
        Ok(())
    }
    /// Its outcome (`answered`, `cancelled`, `expired`), what it was, who gave it.
    fn resolve_interaction(
        &self,
        _prompt_id: &str,
        _outcome: &str,
        _detail: Option<&str>,
        _by: Option<&str>,
    ) -> Result<(), StoreError> {
        Ok(())
    }
}

#[derive(Default)]
struct MemoryState {
    sessions: HashMap<String, SessionRecord>,
    turns: Vec<(String, String, UniversalSnapshot)>,
}

/// A store that forgets on exit: for one-shot turns and tests.
#[derive(Default)]
pub struct MemoryStore {
    state: Mutex<MemoryState>,
}

impl SessionStore for MemoryStore {
    fn upsert_session(&self, record: &SessionRecord) -> Result<(), StoreError> {
        self.state
            .lock()
            .sessions
            .insert(record.session_key.clone(), record.clone());
        Ok(())
    }

    fn get_session(&self, session_key: &str) -> Result<Option<SessionRecord>, StoreError> {
        Ok(self.state.lock().sessions.get(session_key).cloned())
    }

    fn list_sessions(&self, workdir: Option<&str>) -> Result<Vec<SessionInfo>, StoreError> {
        let state = self.state.lock();
        let mut out: Vec<SessionInfo> = state
            .sessions
            .values()
            .filter(|r| workdir.is_none_or(|w| r.workdir == w))
            .map(|r| {
                let turns: Vec<&UniversalSnapshot> = state
                    .turns
                    .iter()
                    .filter(|(k, _, _)| *k == r.session_key)
                    .map(|(_, _, s)| s)
                    .collect();
                r.info(
                    turns.last().map(|s| s.phase).unwrap_or_default(),
                    turns.len() as u32,
                )
            })
            .collect();
        out.sort_by_key(|s| std::cmp::Reverse(s.updated_at));
        Ok(out)
    }

    fn begin_turn(
        &self,
        session_key: &str,
        task_id: &str,
        snapshot: &UniversalSnapshot,
    ) -> Result<(), StoreError> {
        self.state
            .lock()
            .turns
            .push((session_key.into(), task_id.into(), snapshot.clone()));
        Ok(())
    }

    fn append_event(&self, _task_id: &str, _event: &DriverEvent) -> Result<(), StoreError> {
        Ok(())
    }

    fn finish_turn(&self, task_id: &str, snapshot: &UniversalSnapshot) -> Result<(), StoreError> {
        if let Some(turn) = self.state.lock().turns.iter_mut().find(|t| t.1 == task_id) {
            turn.2 = snapshot.clone();
        }
        Ok(())
    }

    fn history(&self, session_key: &str) -> Result<Vec<UniversalSnapshot>, StoreError> {
        Ok(self
            .state
            .lock()
            .turns
            .iter()
            .filter(|(k, _, s)| k == session_key && s.phase == weft_protocol::Phase::Done)
            .map(|(_, _, s)| s.clone())
            .collect())
    }

    fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, StoreError> {
        // Plain case-insensitive matching, newest first: enough for a store that lives
        // as long as one run.
        let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let state = self.state.lock();
        Ok(state
            .turns
            .iter()
            .rev()
            .filter(|(_, _, s)| s.phase == weft_protocol::Phase::Done)
            .filter_map(|(key, task, s)| {
                let text = format!("{}\n{}", s.prompt, s.text);
                let lower = text.to_lowercase();
                words.iter().all(|w| lower.contains(w)).then(|| SearchHit {
                    session_key: key.clone(),
                    task_id: task.clone(),
                    snippet: text.chars().take(120).collect(),
                })
            })
            .take(limit)
            .collect())
    }
}

/// What an account gives one spawn. Its `Debug` names the variables only.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SpawnAccount {
    /// Variables to set (the account's, which may hold its secret).
    pub env: Vec<(String, String)>,
    /// Arguments to add.
    pub extra_args: Vec<String>,
    /// Start from a cleared environment plus an allow-list (see
    /// [`crate::driver::isolated_env`]) instead of the client's whole environment.
    pub isolated: bool,
}

impl std::fmt::Debug for SpawnAccount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpawnAccount")
            .field("env", &crate::driver::EnvNames(&self.env))
            .field("extra_args", &self.extra_args)
            .field("isolated", &self.isolated)
            .finish()
    }
}

/// The account id that means "the agent's own login": no account.
pub const AMBIENT: &str = "ambient";

/// Which account (model endpoint, credentials) a spawn gets. The default knows no
/// account: every turn uses the agent's own login (ambient).
pub trait Accounts: Send + Sync {
    /// Whether `account` can run turns of `agent`; the error names the account and
    /// says why not (unknown, another agent's, its secret gone, …).
    fn check(&self, agent: &str, account: &str) -> Result<(), String> {
        let _ = agent;
        Err(format!(
            "unknown account `{account}`: no accounts are set up"
        ))
    }

    /// What this turn's spawn gets for its `account` (none: ambient). An error fails
    /// the turn with that message before any process starts.
    fn resolve(&self, input: &AgentTurnInput) -> Result<SpawnAccount, String>;

    /// An event of a turn that ran on `account` (usage, limits), to fold into it.
    fn observe(&self, account: &str, event: &DriverEvent) {
        let _ = (account, event);
    }

    /// A turn on `account` ended with `snapshot` (its usage, its cost).
    fn turn_finished(&self, account: &str, snapshot: &UniversalSnapshot) {
        let _ = (account, snapshot);
    }

    /// Why `agent`'s own session cannot follow a move from account `from` to `to`
    /// (none: ambient), with `client_env` the environment of the client asking (what
    /// the ambient account runs with); `None` when it can (it resumes).
    fn switch_warning(
        &self,
        agent: &str,
        from: Option<&str>,
        to: Option<&str>,
        client_env: Option<&weft_protocol::ClientEnv>,
    ) -> Option<String> {
        let _ = (agent, from, to, client_env);
        None
    }

    /// When session `session_key` has opted in to switching accounts by itself: the
    /// account of `agent` to move to now that `from`'s limit is used up (the next one
    /// with capacity), if any.
    fn auto_switch_to(&self, session_key: &str, agent: &str, from: &str) -> Option<String> {
        let _ = (session_key, agent, from);
        None
    }

    /// How an account is named in a notice or a handover (none: ambient).
    fn describe(&self, account: Option<&str>) -> String {
        account.unwrap_or(AMBIENT).to_string()
    }
}

/// The agent's own login.
pub struct AgentLogin;

impl Accounts for AgentLogin {
    fn resolve(&self, input: &AgentTurnInput) -> Result<SpawnAccount, String> {
        match &input.account {
            Some(a) => Err(format!("unknown account `{a}`: no accounts are set up")),
            None => Ok(SpawnAccount::default()),
        }
    }
}

/// Tools Weft offers agents (over MCP). The default offers none.
pub trait ToolProvider: Send + Sync {
    /// The tools on offer.
    fn tools(&self) -> Vec<ToolInfo>;
}

/// No tools.
pub struct NoTools;

impl ToolProvider for NoTools {
    fn tools(&self) -> Vec<ToolInfo> {
        Vec::new()
    }
}

/// Skills and other catalog entries. The default is empty.
pub trait Catalog: Send + Sync {
    /// Skills visible from `workdir`.
    fn skills(&self, workdir: Option<&Path>) -> Vec<SkillInfo>;
}

/// Nothing in the catalog.
pub struct EmptyCatalog;

impl Catalog for EmptyCatalog {
    fn skills(&self, _workdir: Option<&Path>) -> Vec<SkillInfo> {
        Vec::new()
    }
}

/// Decides what happens to a new interaction before a surface sees it.
pub trait InteractionHandler: Send + Sync {
    /// An answer now, or `None` to leave it pending for a surface's `interact`.
    fn on_interaction(
        &self,
        session_key: &str,
        interaction: &Interaction,
    ) -> Option<InteractionResponse>;

    /// [`Self::on_interaction`] knowing the session's workspace; it may also add to the
    /// interaction (a verdict in its detail) before a surface sees it.
    fn on_interaction_in(
        &self,
        session_key: &str,
        workdir: &Path,
        interaction: &mut Interaction,
    ) -> Option<InteractionResponse> {
        let _ = workdir;
        self.on_interaction(session_key, interaction)
    }

    /// A surface's answer to `interaction` (as pending, with what
    /// [`Self::on_interaction_in`] added), before the agent gets it: a choice the
    /// handler added is carried out here and answered to the agent with one the agent
    /// offered. When the result differs from `response`, its `answers["reason"]` is
    /// noted in the session.
    fn on_answer(
        &self,
        session_key: &str,
        workdir: &Path,
        interaction: &Interaction,
        response: InteractionResponse,
    ) -> InteractionResponse {
        let _ = (session_key, workdir, interaction);
        response
    }
}

/// Leave every interaction to the surface (the desktop app, a TTY prompt).
pub struct DeferToSurface;

impl InteractionHandler for DeferToSurface {
    fn on_interaction(&self, _: &str, _: &Interaction) -> Option<InteractionResponse> {
        None
    }
}

/// Cancel every interaction at once, visibly: for one-shots nobody is there to answer.
pub struct AutoCancel;

impl InteractionHandler for AutoCancel {
    fn on_interaction(&self, _: &str, _: &Interaction) -> Option<InteractionResponse> {
        Some(InteractionResponse::cancel())
    }
}
