//! The hub: every session's runner, the registered drivers, and the ports, behind the
//! kernel's verbs (`verbs.rs`).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use weft_protocol::{
    make_session_key, split_session_key, AgentInfo, PromptRequest, UniversalSnapshot,
};

use crate::driver::AgentDriver;
use crate::env::KernelEnv;
use crate::error::KernelError;
use crate::feed::Feed;
use crate::index::{SessionIndex, StoreIndex};
use crate::ports::{
    Accounts, AgentLogin, Catalog, DeferToSurface, EmptyCatalog, InteractionHandler, MemoryStore,
    NoTools, SessionRecord, SessionStore, StoreError, ToolProvider,
};
use crate::roster::{DriverSource, Roster};
use crate::runner::SessionRunner;
use crate::time::now_ms;

/// Hub-wide patch headroom for `subscribe_all` (a window forwarding every session, the
/// notifier). Smaller than a session's: every connection that follows everything
/// holds up to this many patches (~1 KB each) while it does not read, and a window
/// re-reads only the sessions it shows.
const ALL_CHANNEL: usize = 16_384;

/// How long `list_agent_info` answers from its last probe.
pub(crate) const AGENT_INFO_TTL: std::time::Duration = std::time::Duration::from_secs(60);

/// `WEFT_INTERACTION_TIMEOUT_SECS` (default: none, a question waits forever).
fn interaction_timeout_from_env() -> Option<std::time::Duration> {
    std::env::var("WEFT_INTERACTION_TIMEOUT_SECS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|s| *s > 0)
        .map(std::time::Duration::from_secs)
}

/// `WEFT_AGENT_IDLE_SECS` (default 600; 0 keeps idle agent processes until exit).
fn idle_close_from_env() -> Option<std::time::Duration> {
    let secs = std::env::var("WEFT_AGENT_IDLE_SECS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(DEFAULT_IDLE_CLOSE_SECS);
    (secs > 0).then(|| std::time::Duration::from_secs(secs))
}

const DEFAULT_IDLE_CLOSE_SECS: u64 = 600;

/// Builds a [`Loom`]. Every port has a working default.
pub struct LoomBuilder {
    state_dir: PathBuf,
    drivers: Vec<Arc<dyn AgentDriver>>,
    driver_source: Option<Arc<dyn DriverSource>>,
    store: Option<Arc<dyn SessionStore>>,
    index: Option<Arc<dyn SessionIndex>>,
    accounts: Arc<dyn Accounts>,
    tools: Arc<dyn ToolProvider>,
    catalog: Arc<dyn Catalog>,
    interactions: Arc<dyn InteractionHandler>,
    checkpoints: Arc<dyn crate::checkpoints::Checkpointer>,
    plugins: Vec<Arc<dyn crate::plugin::Plugin>>,
    default_agent: Option<String>,
    idle_close: Option<std::time::Duration>,
    interaction_timeout: Option<std::time::Duration>,
    skills_dirs: Vec<weft_agent_spec::spec::SkillsDir>,
}

impl LoomBuilder {
    /// How long a question waits for an answer before it expires (default
    /// `WEFT_INTERACTION_TIMEOUT_SECS`, else forever).
    pub fn interaction_timeout(mut self, after: Option<std::time::Duration>) -> Self {
        self.interaction_timeout = after;
        self
    }

    /// Registers drivers (a later one with the same id replaces an earlier one).
    pub fn drivers(mut self, drivers: impl IntoIterator<Item = Arc<dyn AgentDriver>>) -> Self {
        self.drivers.extend(drivers);
        self
    }

    /// The agents' own skills folders (each spec's), where a user's skill of a Weft
    /// skill's name is a conflict `list_skills` names.
    pub fn skills_dirs(
        mut self,
        dirs: impl IntoIterator<Item = weft_agent_spec::spec::SkillsDir>,
    ) -> Self {
        self.skills_dirs.extend(dirs);
        self
    }

    /// Takes drivers from `source` too, looked at again when an agent is not found and
    /// when agents are listed, so one added there needs no restart (a driver registered
    /// here wins over the source's of the same id).
    pub fn driver_source(mut self, source: Arc<dyn DriverSource>) -> Self {
        self.driver_source = Some(source);
        self
    }

    /// Registers one driver.
    pub fn driver(mut self, driver: Arc<dyn AgentDriver>) -> Self {
        self.drivers.push(driver);
        self
    }

    /// Keeps sessions in this store (the service gives SQLite; the default keeps nothing).
    pub fn store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Lists, searches, adopts and marks sessions through this index (the service gives
    /// the session library; the default reads the store as it is).
    pub fn index(mut self, index: Arc<dyn SessionIndex>) -> Self {
        self.index = Some(index);
        self
    }

    /// Keeps nothing on disk.
    pub fn in_memory(self) -> Self {
        self.store(Arc::new(MemoryStore::default()))
    }

    /// Sets the Accounts port.
    pub fn accounts(mut self, accounts: Arc<dyn Accounts>) -> Self {
        self.accounts = accounts;
        self
    }

    /// Sets the ToolProvider port.
    pub fn tool_provider(mut self, tools: Arc<dyn ToolProvider>) -> Self {
        self.tools = tools;
        self
    }

    /// Sets the Catalog port.
    pub fn catalog(mut self, catalog: Arc<dyn Catalog>) -> Self {
        self.catalog = catalog;
        self
    }

    /// Sets the InteractionHandler port.
    pub fn interaction_handler(mut self, handler: Arc<dyn InteractionHandler>) -> Self {
        self.interactions = handler;
        self
    }

    /// Where each turn's checkpoints go (default: none are kept).
    pub fn checkpoints(mut self, checkpoints: Arc<dyn crate::checkpoints::Checkpointer>) -> Self {
        self.checkpoints = checkpoints;
        self
    }

    /// Registers a plugin; plugins compose in registration order.
    pub fn plugin(mut self, plugin: Arc<dyn crate::plugin::Plugin>) -> Self {
        self.plugins.push(plugin);
        self
    }

    /// How long a session may sit idle before its agent process is closed (default
    /// `WEFT_AGENT_IDLE_SECS`, else 10 minutes); `None` keeps them until shutdown.
    pub fn idle_close(mut self, after: Option<std::time::Duration>) -> Self {
        self.idle_close = after;
        self
    }

    /// The agent for prompts that name none (unset: the only registered driver, if
    /// there is exactly one).
    pub fn default_agent(mut self, id: impl Into<String>) -> Self {
        self.default_agent = Some(id.into());
        self
    }

    /// Builds the hub over the store given (none: one that keeps nothing on disk).
    pub fn open(self) -> Result<Arc<Loom>, KernelError> {
        let store = self
            .store
            .unwrap_or_else(|| Arc::new(MemoryStore::default()));
        let index = self
            .index
            .unwrap_or_else(|| Arc::new(StoreIndex(store.clone())));
        let all_patches = Feed::new(ALL_CHANNEL);
        // A later driver with the same id replaces an earlier one.
        let mut unique: BTreeMap<String, Arc<dyn AgentDriver>> = BTreeMap::new();
        for d in self.drivers {
            unique.insert(d.id().to_string(), d);
        }
        let drivers = Roster::new(unique.into_values().collect(), self.driver_source);
        let default_agent = self.default_agent.or_else(|| {
            let all = drivers.all();
            (all.len() == 1).then(|| all[0].id().to_string())
        });
        Ok(Arc::new(Loom {
            drivers,
            default_agent,
            sessions: Mutex::new(HashMap::new()),
            index,
            agent_info: Mutex::new(None),
            env: Arc::new(KernelEnv {
                store,
                accounts: self.accounts,
                tools: self.tools,
                catalog: self.catalog,
                interactions: self.interactions,
                checkpoints: self.checkpoints,
                plugins: crate::plugin::Plugins::new(self.plugins),
                state_dir: self.state_dir,
                skills_dirs: self.skills_dirs,
                all_patches,
                closing: std::sync::atomic::AtomicBool::new(false),
                idle_close: self.idle_close,
                interaction_timeout: self.interaction_timeout,
                settled: tokio::sync::Notify::new(),
            }),
            evicted_seq: Mutex::new(HashMap::new()),
            terminals: crate::terminals::Registry::default(),
            warm: crate::warm::WarmPool::from_env(),
        }))
    }
}

/// The kernel: drivers, sessions and ports behind its verbs.
pub struct Loom {
    pub(crate) drivers: Roster,
    pub(crate) default_agent: Option<String>,
    pub(crate) sessions: Mutex<HashMap<String, SessionRunner>>,
    /// The read model of sessions and the writer of their marks.
    pub(crate) index: Arc<dyn SessionIndex>,
    pub(crate) env: Arc<KernelEnv>,
    /// What the drivers said of themselves, when, and at which roster generation.
    pub(crate) agent_info: Mutex<Option<(std::time::Instant, u64, Vec<AgentInfo>)>>,
    /// The last seq of each evicted runner, so its successor numbers on from there and
    /// a client following the session never sees seq go backwards.
    evicted_seq: Mutex<HashMap<String, u64>>,
    pub(crate) terminals: crate::terminals::Registry,
    /// Agent processes started ahead of their turn.
    pub(crate) warm: crate::warm::WarmPool,
}

impl Loom {
    /// A builder keeping state in `state_dir` (see [`crate::state::global_state_dir`]).
    pub fn builder(state_dir: impl Into<PathBuf>) -> LoomBuilder {
        LoomBuilder {
            state_dir: state_dir.into(),
            drivers: Vec::new(),
            driver_source: None,
            store: None,
            index: None,
            accounts: Arc::new(AgentLogin),
            tools: Arc::new(NoTools),
            catalog: Arc::new(EmptyCatalog),
            interactions: Arc::new(DeferToSurface),
            checkpoints: Arc::new(crate::checkpoints::NoCheckpoints),
            plugins: Vec::new(),
            skills_dirs: Vec::new(),
            default_agent: None,
            idle_close: idle_close_from_env(),
            interaction_timeout: interaction_timeout_from_env(),
        }
    }

    /// The agent a request names, else the default one.
    pub(crate) fn agent_for<'a>(&'a self, named: Option<&'a str>) -> Result<&'a str, KernelError> {
        named.or(self.default_agent.as_deref()).ok_or_else(|| {
            KernelError::BadRequest("name an agent: this kernel has no default one".into())
        })
    }

    /// The state folder.
    pub fn state_dir(&self) -> &Path {
        &self.env.state_dir
    }

    /// The driver registered under `id`.
    pub fn driver(&self, id: &str) -> Result<Arc<dyn AgentDriver>, KernelError> {
        self.drivers
            .get(id)
            .ok_or_else(|| KernelError::UnknownAgent(id.to_string()))
    }

    /// Every registered driver, by id.
    pub fn drivers(&self) -> Vec<Arc<dyn AgentDriver>> {
        self.drivers.all()
    }

    /// True while any session has a turn running or queued.
    pub fn is_busy(&self) -> bool {
        self.sessions.lock().values().any(SessionRunner::is_busy)
    }

    /// How many sessions have a turn running or queued.
    pub fn busy_sessions(&self) -> usize {
        self.sessions
            .lock()
            .values()
            .filter(|r| r.is_busy())
            .count()
    }

    /// How many interactions wait for an answer, across sessions.
    pub fn pending_interactions(&self) -> usize {
        self.sessions
            .lock()
            .values()
            .map(SessionRunner::pending_count)
            .sum()
    }

    /// Drops the runners nothing holds (no turn, no question, no subscriber); the next
    /// verb for such a session rebuilds its runner from the store. Returns how many.
    pub fn evict_idle(&self) -> usize {
        let mut sessions = self.sessions.lock();
        let idle: Vec<String> = sessions
            .iter()
            .filter(|(_, r)| r.is_evictable())
            .map(|(k, _)| k.clone())
            .collect();
        let mut seqs = self.evicted_seq.lock();
        for key in &idle {
            if let Some(runner) = sessions.remove(key) {
                seqs.insert(key.clone(), runner.seq());
            }
        }
        idle.len()
    }

    /// Stops every running turn and closes every terminal, waits (bounded) for each turn
    /// to record its end, then lets every driver release its processes, all drivers at
    /// once. No turn starts after this; prompts still queued are kept in the history as
    /// turns that did not run.
    pub async fn shutdown(&self) {
        self.env
            .closing
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.close_all_terminals().await;
        let runners: Vec<SessionRunner> = self.sessions.lock().values().cloned().collect();
        for runner in &runners {
            let _ = runner.close_terminal();
            let _ = runner.stop();
        }
        let deadline = tokio::time::Instant::now() + crate::runner::STOP_GRACE;
        loop {
            // Registered before the check, so a worker ending in between is not missed.
            let settled = self.env.settled.notified();
            if !runners.iter().any(SessionRunner::is_busy) {
                break;
            }
            if tokio::time::timeout_at(deadline, settled).await.is_err() {
                break;
            }
        }
        futures::future::join_all(self.drivers.to_shut_down().iter().map(|d| d.shutdown())).await;
    }

    /// The runner of an existing session: in memory, or loaded from the store (off the
    /// async workers: a read may wait on the disk).
    pub(crate) async fn runner(&self, session_key: &str) -> Result<SessionRunner, KernelError> {
        if let Some(runner) = self.sessions.lock().get(session_key) {
            return Ok(runner.clone());
        }
        let unknown = || KernelError::UnknownSession(session_key.to_string());
        let (agent, _) = split_session_key(session_key).ok_or_else(unknown)?;
        let key = session_key.to_string();
        let (record, last) = self
            .blocking(move |store| {
                let Some(record) = store.get_session(&key)? else {
                    return Ok(None);
                };
                let last = store.history_page(&key, Some(1), None)?.pop();
                Ok(Some((record, last)))
            })
            .await?
            .ok_or_else(unknown)?;
        // The agent it runs on now: a session that changed agent keeps its first key.
        let driver = self.driver(&record.agent)?;
        // The one a pending change of agent would go back to.
        let left = record
            .switch
            .as_ref()
            .and_then(|s| self.driver(&s.agent).ok());
        let last = last.unwrap_or_else(|| UniversalSnapshot {
            agent: agent.to_string(),
            ..Default::default()
        });
        let seq = self
            .evicted_seq
            .lock()
            .get(session_key)
            .copied()
            .unwrap_or(0);
        let mut sessions = self.sessions.lock();
        let runner = sessions.entry(session_key.to_string()).or_insert_with(|| {
            SessionRunner::new(record, last, seq, driver, self.env.clone()).with_saved_switch(left)
        });
        Ok(runner.clone())
    }

    /// Runs a call of the session index on a blocking thread.
    pub(crate) async fn indexed<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn SessionIndex) -> Result<T, crate::error::IndexError> + Send + 'static,
    ) -> Result<T, KernelError> {
        let index = self.index.clone();
        tokio::task::spawn_blocking(move || f(index.as_ref()))
            .await
            .map_err(|e| KernelError::Internal(format!("a session index call failed: {e}")))?
            .map_err(KernelError::from)
    }

    /// Runs a store call on a blocking thread.
    pub(crate) async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn SessionStore) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, KernelError> {
        let store = self.env.store.clone();
        tokio::task::spawn_blocking(move || f(store.as_ref()))
            .await
            .map_err(|e| KernelError::Internal(format!("a store call failed: {e}")))?
            .map_err(KernelError::from)
    }

    pub(crate) fn new_session(
        &self,
        request: &PromptRequest,
        caller: &crate::io::Caller,
    ) -> Result<SessionRunner, KernelError> {
        let agent = self.agent_for(request.agent.as_deref())?;
        let driver = self.driver(agent)?;
        self.new_session_for(driver, request, Some(caller))
    }

    pub(crate) fn new_session_with(
        &self,
        driver: Arc<dyn AgentDriver>,
        request: &PromptRequest,
    ) -> Result<SessionRunner, KernelError> {
        self.new_session_for(driver, request, None)
    }

    /// A new session of `driver`; `caller`'s environment picks a process started ahead
    /// for such a session, whose reserved key the session then takes.
    pub(crate) fn new_session_for(
        &self,
        driver: Arc<dyn AgentDriver>,
        request: &PromptRequest,
        caller: Option<&crate::io::Caller>,
    ) -> Result<SessionRunner, KernelError> {
        let agent = driver.id().to_string();
        let agent = agent.as_str();
        let workdir = match &request.workdir {
            Some(dir) => PathBuf::from(dir),
            None => std::env::current_dir().map_err(|e| KernelError::BadWorkdir {
                path: ".".into(),
                reason: e.to_string(),
            })?,
        };
        let workdir = checked_workdir(&workdir)?;
        let warm = caller.and_then(|c| {
            self.warm.take_new(&crate::warm::NewSession {
                agent,
                workdir: &workdir,
                model: request.model.as_deref(),
                effort: request.effort.as_deref(),
                account: request.account.as_deref(),
                env: c.env.as_ref(),
            })
        });
        let key =
            warm.unwrap_or_else(|| make_session_key(agent, &uuid::Uuid::new_v4().to_string()));
        let now = now_ms();
        let record = SessionRecord {
            session_key: key.clone(),
            agent: agent.to_string(),
            session_id: None,
            workdir: workdir.to_string_lossy().into_owned(),
            title: String::new(),
            model: request.model.clone(),
            effort: request.effort.clone(),
            created_at: now,
            updated_at: now,
            account: request.account.as_deref().and_then(crate::runner::chosen),
            fork: None,
            switch: None,
        };
        self.env.store.upsert_session(&record)?;
        let empty = UniversalSnapshot {
            agent: agent.to_string(),
            ..Default::default()
        };
        let runner = SessionRunner::new(record, empty, 0, driver, self.env.clone());
        self.sessions.lock().insert(key, runner.clone());
        Ok(runner)
    }
}

/// The workdir made absolute, or why it cannot be used.
pub(crate) fn checked_workdir(path: &Path) -> Result<PathBuf, KernelError> {
    let bad = |reason: &str| KernelError::BadWorkdir {
        path: path.display().to_string(),
        reason: reason.to_string(),
    };
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => bad("does not exist"),
        _ => bad(&format!("cannot be read: {e}")),
    })?;
    if !meta.is_dir() {
        return Err(bad("is not a folder"));
    }
    std::fs::canonicalize(path).map_err(|e| bad(&format!("cannot be resolved: {e}")))
}
