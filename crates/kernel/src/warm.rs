//! The warm pool: agent processes started ahead of the turn that will use them, so a
//! prompt goes straight to a process that has already paid the CLI's start-up (node,
//! config, MCP servers, a resume).
//!
//! A process started ahead waits in its driver under a session key, with the very
//! input its turn will be given (the same preparation: trust, account, plugins), so the
//! driver's own "is the live process right for this turn" check hands it over. For a
//! session not made yet the key is reserved here, and the next new session of the same
//! agent, folder, model, effort, account and client environment is made under it.
//!
//! Bounded by `WEFT_WARM_POOL` processes (default 2, 0 turns the pool off) and
//! `WEFT_WARM_POOL_MB` of resident memory (default 1024): the oldest goes first. One
//! that no turn takes within `WEFT_WARM_POOL_SECS` (default: the idle close,
//! `WEFT_AGENT_IDLE_SECS`, 600 s) is closed. Never for a folder the user has not trusted: its own settings and MCP
//! servers would start.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use weft_protocol::{make_session_key, ClientEnv, PrewarmRequest, Prewarmed, WarmProcess};

use crate::driver::{AgentDriver, AgentTurnInput};
use crate::error::KernelError;
use crate::hub::{checked_workdir, Loom};
use crate::io::Caller;
use crate::runner::{chosen, Held};
use crate::time::now_ms;

const DEFAULT_PROCESSES: usize = 2;
const DEFAULT_MB: u64 = 1024;
const DEFAULT_EXPIRY: Duration = Duration::from_secs(600);

/// The pool's limits and the processes in it.
pub(crate) struct WarmPool {
    limit: usize,
    expiry: Option<Duration>,
    budget_bytes: u64,
    entries: Mutex<Vec<Warm>>,
}

/// One process waiting for its turn.
struct Warm {
    key: String,
    /// A key reserved for a session not made yet.
    new_session: bool,
    agent: String,
    workdir: PathBuf,
    model: Option<String>,
    effort: Option<String>,
    account: Option<String>,
    env: Option<Arc<ClientEnv>>,
    pid: u32,
    since: i64,
    driver: Arc<dyn AgentDriver>,
    /// What the plugins gave the spawn (a file it reads at start), held as long as the
    /// process waits.
    _held: Held,
}

/// What a new session asks for, to find a process reserved for it.
pub(crate) struct NewSession<'a> {
    pub agent: &'a str,
    pub workdir: &'a Path,
    pub model: Option<&'a str>,
    pub effort: Option<&'a str>,
    pub account: Option<&'a str>,
    pub env: Option<&'a Arc<ClientEnv>>,
}

impl WarmPool {
    /// Limits from `WEFT_WARM_POOL` and `WEFT_WARM_POOL_MB`.
    pub(crate) fn from_env() -> Self {
        let var = |n: &str| {
            std::env::var(n)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        Self {
            limit: var("WEFT_WARM_POOL").map_or(DEFAULT_PROCESSES, |n| n as usize),
            budget_bytes: var("WEFT_WARM_POOL_MB").unwrap_or(DEFAULT_MB) * 1024 * 1024,
            expiry: var("WEFT_WARM_POOL_SECS")
                .filter(|s| *s > 0)
                .map(Duration::from_secs),
            entries: Mutex::new(Vec::new()),
        }
    }

    /// The processes waiting, as `weft daemon status` shows them.
    pub(crate) fn list(&self) -> Vec<WarmProcess> {
        self.entries
            .lock()
            .iter()
            .map(|w| WarmProcess {
                agent: w.agent.clone(),
                workdir: w.workdir.display().to_string(),
                account: w.account.clone(),
                session_key: w.key.clone(),
                rss_bytes: tree_rss(w.pid),
                since: w.since,
            })
            .collect()
    }

    /// The key reserved for a new session like `s`, taken out of the pool (its process
    /// now belongs to that session).
    pub(crate) fn take_new(&self, s: &NewSession) -> Option<String> {
        let mut entries = self.entries.lock();
        let i = entries.iter().position(|w| {
            w.new_session
                && w.agent == s.agent
                && w.workdir == s.workdir
                && w.model.as_deref() == s.model
                && w.effort.as_deref() == s.effort
                && w.account.as_deref() == s.account.and_then(chosen).as_deref()
                && same_env(w.env.as_deref(), s.env.map(|e| e.as_ref()))
        });
        let Some(i) = i else {
            // A process started ahead for this folder that the prompt could not use
            // costs its memory and saves nothing: say why, or it looks like a slow pool.
            for w in entries
                .iter()
                .filter(|w| w.new_session && w.agent == s.agent && w.workdir == s.workdir)
            {
                tracing::info!(
                    session = %w.key,
                    why = %mismatch(w, s),
                    "a process started ahead for this folder does not fit the new session"
                );
            }
            return None;
        };
        Some(entries.remove(i).key)
    }

    /// A turn of `key` is about to start: its waiting process (if any) leaves the pool.
    /// What the warm spawn held is let go first, so the turn's own preparation (which
    /// writes the same files) is what stays.
    pub(crate) fn take(&self, key: &str) {
        self.entries.lock().retain(|w| w.key != key);
    }

    fn holds(&self, key: &str) -> bool {
        self.entries.lock().iter().any(|w| w.key == key)
    }

    /// Closes the oldest waiting processes until one more fits.
    async fn make_room(&self) {
        loop {
            let out = {
                let mut entries = self.entries.lock();
                let rss: u64 = entries.iter().map(|w| tree_rss(w.pid)).sum();
                let full = entries.len() >= self.limit || rss > self.budget_bytes;
                if !full || entries.is_empty() {
                    return;
                }
                entries.remove(0)
            };
            tracing::debug!(session = %out.key, "warm pool full: closing its oldest process");
            out.driver.close_session(&out.key).await;
        }
    }
}

impl Loom {
    /// The processes started ahead that no turn has taken yet.
    pub fn warm_processes(&self) -> Vec<WarmProcess> {
        self.warm.list()
    }

    /// Starts an agent's process ahead of the turn that will use it (see the module).
    pub async fn prewarm(
        self: &Arc<Self>,
        caller: &Caller,
        request: PrewarmRequest,
    ) -> Result<Prewarmed, KernelError> {
        let not = |why: &str| {
            Ok(Prewarmed {
                pid: None,
                reason: Some(why.to_string()),
            })
        };
        if self.warm.limit == 0 {
            return not("the warm pool is off (WEFT_WARM_POOL=0)");
        }
        let (driver, mut input, new_session) = match &request.session_key {
            Some(key) => {
                let runner = self.runner(key).await?;
                let Some(input) = runner.warm_input(caller.env.clone()) else {
                    return not(
                        "the session is busy (a turn running or queued, its process closing) \
                         or its next turn starts afresh",
                    );
                };
                (runner.agent_driver(), input, false)
            }
            None => {
                let agent = self.agent_for(request.agent.as_deref())?;
                let driver = self.driver(agent)?;
                let workdir = match &request.workdir {
                    Some(dir) => checked_workdir(Path::new(dir))?,
                    None => {
                        return Err(KernelError::BadRequest(
                            "name the new session's folder".into(),
                        ))
                    }
                };
                let input = AgentTurnInput {
                    session_key: make_session_key(agent, &uuid::Uuid::new_v4().to_string()),
                    task_id: format!("warm-{}", uuid::Uuid::new_v4()),
                    workdir,
                    model: request.model.clone(),
                    effort: request.effort.clone(),
                    state_dir: self.env.state_dir.clone(),
                    client_env: caller.env.clone(),
                    account: request.account.as_deref().and_then(chosen),
                    ..Default::default()
                };
                (driver, input, true)
            }
        };
        if self.warm.holds(&input.session_key) {
            return not("a process is already waiting for this session");
        }
        if new_session
            && self.warm.entries.lock().iter().any(|w| {
                w.new_session
                    && w.agent == driver.id()
                    && w.workdir == input.workdir
                    && w.model == input.model
                    && w.effort == input.effort
                    && w.account == input.account
                    && w.env == input.client_env
            })
        {
            return not("a process is already waiting for a new session like this one");
        }
        let held = crate::runner::prepare_spawn(&self.env, driver.id(), &mut input)
            .await
            .map_err(KernelError::AgentUnavailable)?;
        if !input.workspace_trusted {
            return not("the folder is not trusted: its own settings and servers would start");
        }
        self.warm.make_room().await;
        let key = input.session_key.clone();
        let warm = Warm {
            key: key.clone(),
            new_session,
            agent: driver.id().to_string(),
            workdir: input.workdir.clone(),
            model: input.model.clone(),
            effort: input.effort.clone(),
            account: input.account.clone(),
            env: input.client_env.clone(),
            pid: 0,
            since: now_ms(),
            driver: driver.clone(),
            _held: held,
        };
        let pid = match driver.prewarm(input).await {
            Ok(Some(pid)) => pid,
            Ok(None) => {
                return not("nothing to start ahead: the agent keeps no process, or one is live")
            }
            Err(e) => return Err(KernelError::AgentUnavailable(e)),
        };
        let since = warm.since;
        self.warm.entries.lock().push(Warm { pid, ..warm });
        tracing::info!(session = %key, pid, "agent process started ahead of its turn");
        let expiry = self
            .warm
            .expiry
            .or(self.env.idle_close)
            .unwrap_or(DEFAULT_EXPIRY);
        let loom = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep(expiry).await;
            let Some(loom) = loom.upgrade() else { return };
            let out = {
                let mut entries = loom.warm.entries.lock();
                let i = entries
                    .iter()
                    .position(|w| w.key == key && w.since == since);
                i.map(|i| entries.remove(i))
            };
            if let Some(out) = out {
                tracing::debug!(session = %key, "no turn took the warm process: closing it");
                out.driver.close_session(&key).await;
            }
        });
        Ok(Prewarmed {
            pid: Some(pid),
            reason: None,
        })
    }
}

/// Why the process `w` waits for does not fit the new session `s`.
fn mismatch(w: &Warm, s: &NewSession) -> String {
    let mut why = Vec::new();
    if w.model.as_deref() != s.model {
        why.push(format!("model {:?} (asked {:?})", w.model, s.model));
    }
    if w.effort.as_deref() != s.effort {
        why.push(format!("effort {:?} (asked {:?})", w.effort, s.effort));
    }
    if w.account.as_deref() != s.account.and_then(chosen).as_deref() {
        why.push(format!("account {:?} (asked {:?})", w.account, s.account));
    }
    match (w.env.as_deref(), s.env.map(|e| e.as_ref())) {
        (Some(a), Some(b)) if !a.same_for_agents(b) => why.push(format!(
            "environment differs in {}",
            a.differing(b).join(", ")
        )),
        (Some(_), None) | (None, Some(_)) => why.push("one has no client environment".into()),
        _ => {}
    }
    why.join("; ")
}

/// Whether two clients' environments start the same agent (see
/// [`ClientEnv::same_for_agents`]).
fn same_env(a: Option<&ClientEnv>, b: Option<&ClientEnv>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.same_for_agents(b),
        (None, None) => true,
        _ => false,
    }
}

/// Resident memory of `pid` and its descendants, in bytes (0 once gone).
fn tree_rss(pid: u32) -> u64 {
    if pid == 0 {
        return 0;
    }
    std::iter::once(pid)
        .chain(weft_proctree::descendants(pid))
        .map(|p| {
            std::fs::read_to_string(format!("/proc/{p}/status"))
                .ok()
                .and_then(|s| {
                    s.lines()
                        .find_map(|l| l.strip_prefix("VmRSS:"))
                        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                })
                .unwrap_or(0)
                * 1024
        })
        .sum()
}
