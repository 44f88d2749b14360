//! The hub: every session's runner, the registered drivers, and the ports, behind the
//! `LoomIO` verbs.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;
use tokio::sync::broadcast;
use weft_protocol::{
    make_session_key, split_session_key, AgentInfo, InteractRequest, ModelInfo,
    OpenTerminalRequest, PatchEvent, PromptAccepted, PromptRequest, SearchHit, SessionInfo,
    SkillInfo, SnapshotAt, SteerOutcome, ToolInfo, UniversalSnapshot,
};

use crate::driver::AgentDriver;
use crate::error::KernelError;
use crate::io::{LoomIO, Subscription, TerminalOpened};
use crate::ports::{
    AgentLogin, Catalog, DeferToSurface, EmptyCatalog, InteractionHandler, MemoryStore,
    ModelResolver, NoTools, Passthrough, SessionRecord, SessionStore, SystemPromptBuilder,
    ToolProvider,
};
use crate::runner::{SessionRunner, Task};
use crate::time::now_ms;

/// Hub-wide patch buffer for `subscribe_all` (a window forwarding every session).
const ALL_CHANNEL: usize = 16384;

/// How long `list_agent_info` answers from its last probe.
const AGENT_INFO_TTL: std::time::Duration = std::time::Duration::from_secs(60);

/// The agent a prompt goes to when it names none.
pub const DEFAULT_AGENT: &str = "echo";

/// What every runner shares: the ports and the hub-wide patch channel.
pub(crate) struct KernelEnv {
    pub store: Arc<dyn SessionStore>,
    pub resolver: Arc<dyn ModelResolver>,
    pub tools: Arc<dyn ToolProvider>,
    pub prompt_builder: Arc<dyn SystemPromptBuilder>,
    pub catalog: Arc<dyn Catalog>,
    pub interactions: Arc<dyn InteractionHandler>,
    pub state_dir: PathBuf,
    pub all_patches: broadcast::Sender<Arc<PatchEvent>>,
    /// Set by `shutdown`: no new turn starts.
    pub closing: std::sync::atomic::AtomicBool,
    /// How long a session may sit idle before its agent process (if the driver keeps
    /// one) is closed; the next prompt resumes the agent session in a new one.
    pub idle_close: Option<std::time::Duration>,
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
    store: Option<Arc<dyn SessionStore>>,
    resolver: Arc<dyn ModelResolver>,
    tools: Arc<dyn ToolProvider>,
    prompt_builder: Arc<dyn SystemPromptBuilder>,
    catalog: Arc<dyn Catalog>,
    interactions: Arc<dyn InteractionHandler>,
    default_agent: String,
    idle_close: Option<std::time::Duration>,
}

impl LoomBuilder {
    /// Registers drivers (a later one with the same id replaces an earlier one).
    pub fn drivers(mut self, drivers: impl IntoIterator<Item = Arc<dyn AgentDriver>>) -> Self {
        self.drivers.extend(drivers);
        self
    }

    /// Registers one driver.
    pub fn driver(mut self, driver: Arc<dyn AgentDriver>) -> Self {
        self.drivers.push(driver);
        self
    }

    /// Uses this store instead of the SQLite one in the state dir.
    pub fn store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Keeps nothing on disk.
    pub fn in_memory(self) -> Self {
        self.store(Arc::new(MemoryStore::default()))
    }

    /// Sets the ModelResolver port.
    pub fn model_resolver(mut self, resolver: Arc<dyn ModelResolver>) -> Self {
        self.resolver = resolver;
        self
    }

    /// Sets the ToolProvider port.
    pub fn tool_provider(mut self, tools: Arc<dyn ToolProvider>) -> Self {
        self.tools = tools;
        self
    }

    /// Sets the SystemPromptBuilder port.
    pub fn system_prompt_builder(mut self, builder: Arc<dyn SystemPromptBuilder>) -> Self {
        self.prompt_builder = builder;
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

    /// How long a session may sit idle before its agent process is closed (default
    /// `WEFT_AGENT_IDLE_SECS`, else 10 minutes); `None` keeps them until shutdown.
    pub fn idle_close(mut self, after: Option<std::time::Duration>) -> Self {
        self.idle_close = after;
        self
    }

    /// The agent for prompts that name none (default `echo`).
    pub fn default_agent(mut self, id: impl Into<String>) -> Self {
        self.default_agent = id.into();
        self
    }

    /// Opens the store (SQLite at `<state_dir>/weft.db` unless one was given; a turn a
    /// crash left unfinished is recovered there) and builds the hub.
    pub fn open(self) -> Result<Arc<Loom>, KernelError> {
        let store = match self.store {
            Some(store) => store,
            None => Arc::new(weft_store::SqliteStore::open(
                &self.state_dir.join("weft.db"),
            )?),
        };
        let (all_patches, _) = broadcast::channel(ALL_CHANNEL);
        let drivers = self
            .drivers
            .into_iter()
            .map(|d| (d.id().to_string(), d))
            .collect();
        Ok(Arc::new(Loom {
            drivers,
            default_agent: self.default_agent,
            sessions: Mutex::new(HashMap::new()),
            agent_info: Mutex::new(None),
            env: Arc::new(KernelEnv {
                store,
                resolver: self.resolver,
                tools: self.tools,
                prompt_builder: self.prompt_builder,
                catalog: self.catalog,
                interactions: self.interactions,
                state_dir: self.state_dir,
                all_patches,
                closing: std::sync::atomic::AtomicBool::new(false),
                idle_close: self.idle_close,
            }),
        }))
    }
}

/// The kernel: drivers, sessions and ports behind the `LoomIO` verbs.
pub struct Loom {
    drivers: BTreeMap<String, Arc<dyn AgentDriver>>,
    default_agent: String,
    sessions: Mutex<HashMap<String, SessionRunner>>,
    env: Arc<KernelEnv>,
    agent_info: Mutex<Option<(std::time::Instant, Vec<AgentInfo>)>>,
}

impl Loom {
    /// A builder keeping state in `state_dir` (see [`crate::state::global_state_dir`]).
    pub fn builder(state_dir: impl Into<PathBuf>) -> LoomBuilder {
        LoomBuilder {
            state_dir: state_dir.into(),
            drivers: Vec::new(),
            store: None,
            resolver: Arc::new(AgentLogin),
            tools: Arc::new(NoTools),
            prompt_builder: Arc::new(Passthrough),
            catalog: Arc::new(EmptyCatalog),
            interactions: Arc::new(DeferToSurface),
            default_agent: DEFAULT_AGENT.into(),
            idle_close: idle_close_from_env(),
        }
    }

    /// The state folder.
    pub fn state_dir(&self) -> &Path {
        &self.env.state_dir
    }

    /// The driver registered under `id`.
    pub fn driver(&self, id: &str) -> Result<Arc<dyn AgentDriver>, KernelError> {
        self.drivers
            .get(id)
            .cloned()
            .ok_or_else(|| KernelError::UnknownAgent(id.to_string()))
    }

    /// Every registered driver, by id.
    pub fn drivers(&self) -> impl Iterator<Item = &Arc<dyn AgentDriver>> {
        self.drivers.values()
    }

    /// True while any session has a turn running or queued.
    pub fn is_busy(&self) -> bool {
        self.sessions.lock().values().any(SessionRunner::is_busy)
    }

    /// Stops every running turn, waits (bounded) for each to record its end, then lets
    /// every driver release its processes. No turn starts after this; prompts still
    /// queued are kept in the history as turns that did not run.
    pub async fn shutdown(&self) {
        self.env
            .closing
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let runners: Vec<SessionRunner> = self.sessions.lock().values().cloned().collect();
        for runner in &runners {
            let _ = runner.close_terminal();
            let _ = runner.stop();
        }
        let deadline = tokio::time::Instant::now() + crate::runner::STOP_GRACE;
        while runners.iter().any(SessionRunner::is_busy) && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        for driver in self.drivers.values() {
            driver.shutdown().await;
        }
    }

    /// The runner of an existing session: in memory, or loaded from the store.
    fn runner(&self, session_key: &str) -> Result<SessionRunner, KernelError> {
        if let Some(runner) = self.sessions.lock().get(session_key) {
            return Ok(runner.clone());
        }
        let unknown = || KernelError::UnknownSession(session_key.to_string());
        let (agent, _) = split_session_key(session_key).ok_or_else(unknown)?;
        let record = self
            .env
            .store
            .get_session(session_key)?
            .ok_or_else(unknown)?;
        let driver = self.driver(agent)?;
        let last = self
            .env
            .store
            .history(session_key)?
            .pop()
            .unwrap_or_else(|| UniversalSnapshot {
                agent: agent.to_string(),
                ..Default::default()
            });
        let mut sessions = self.sessions.lock();
        let runner = sessions
            .entry(session_key.to_string())
            .or_insert_with(|| SessionRunner::new(record, last, driver, self.env.clone()));
        Ok(runner.clone())
    }

    fn new_session(&self, request: &PromptRequest) -> Result<SessionRunner, KernelError> {
        let agent = request.agent.as_deref().unwrap_or(&self.default_agent);
        let driver = self.driver(agent)?;
        self.new_session_with(driver, request)
    }

    fn new_session_with(
        &self,
        driver: Arc<dyn AgentDriver>,
        request: &PromptRequest,
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
        let key = make_session_key(agent, &uuid::Uuid::new_v4().to_string());
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
        };
        self.env.store.upsert_session(&record)?;
        let empty = UniversalSnapshot {
            agent: agent.to_string(),
            ..Default::default()
        };
        let runner = SessionRunner::new(record, empty, driver, self.env.clone());
        self.sessions.lock().insert(key, runner.clone());
        Ok(runner)
    }
}

/// The workdir made absolute, or why it cannot be used.
fn checked_workdir(path: &Path) -> Result<PathBuf, KernelError> {
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

fn new_task_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

#[async_trait]
impl LoomIO for Loom {
    async fn prompt(&self, request: PromptRequest) -> Result<PromptAccepted, KernelError> {
        if request.prompt.trim().is_empty() {
            return Err(KernelError::BadRequest("the prompt is empty".into()));
        }
        let runner = match &request.session_key {
            Some(key) => {
                let runner = self.runner(key)?;
                checked_workdir(Path::new(&runner.record().workdir))?;
                runner
            }
            None => self.new_session(&request)?,
        };
        let session_key = runner.record().session_key;
        let task_id = new_task_id();
        runner.enqueue(Task {
            task_id: task_id.clone(),
            prompt: request.prompt,
            model: request.model,
            effort: request.effort,
            attachments: request.attachments.into_iter().map(PathBuf::from).collect(),
            steer: false,
            terminal: false,
        });
        Ok(PromptAccepted {
            session_key,
            task_id,
        })
    }

    async fn stop(&self, session_key: &str) -> Result<(), KernelError> {
        self.runner(session_key)?.stop()
    }

    async fn open_terminal(
        &self,
        request: OpenTerminalRequest,
    ) -> Result<TerminalOpened, KernelError> {
        let runner = match &request.session_key {
            Some(key) => {
                let runner = self.runner(key)?;
                checked_workdir(Path::new(&runner.record().workdir))?;
                runner
            }
            None => {
                let agent = request.agent.as_deref().unwrap_or(&self.default_agent);
                let driver = self.driver(agent)?;
                if !driver.capabilities().tui {
                    return Err(KernelError::NoTui(agent.to_string()));
                }
                self.new_session_with(
                    driver,
                    &PromptRequest {
                        workdir: request.workdir.clone(),
                        model: request.model.clone(),
                        ..Default::default()
                    },
                )?
            }
        };
        let record = runner.record();
        let driver = self.driver(&record.agent)?;
        let task_id = new_task_id();
        let spec = runner.open_terminal(task_id.clone(), |input| {
            driver
                .tui(input)
                .ok_or_else(|| KernelError::NoTui(record.agent.clone()))
        })?;
        Ok(TerminalOpened {
            session_key: record.session_key,
            task_id,
            spec,
        })
    }

    async fn close_terminal(&self, session_key: &str) -> Result<(), KernelError> {
        self.runner(session_key)?.close_terminal()
    }

    async fn steer(&self, session_key: &str, text: String) -> Result<SteerOutcome, KernelError> {
        if text.trim().is_empty() {
            return Err(KernelError::BadRequest("the steer message is empty".into()));
        }
        Ok(self.runner(session_key)?.steer(text, new_task_id()))
    }

    async fn interact(&self, request: InteractRequest) -> Result<(), KernelError> {
        self.runner(&request.session_key)?
            .interact(&request.prompt_id, request.response)
    }

    async fn subscribe(&self, session_key: &str) -> Result<Subscription, KernelError> {
        let (snapshot, patches) = self.runner(session_key)?.subscribe();
        Ok(Subscription { snapshot, patches })
    }

    fn subscribe_all(&self) -> broadcast::Receiver<Arc<PatchEvent>> {
        self.env.all_patches.subscribe()
    }

    async fn get_snapshot(&self, session_key: &str) -> Result<SnapshotAt, KernelError> {
        Ok(self.runner(session_key)?.snapshot_at())
    }

    async fn get_history(&self, session_key: &str) -> Result<Vec<UniversalSnapshot>, KernelError> {
        if !self.sessions.lock().contains_key(session_key)
            && self.env.store.get_session(session_key)?.is_none()
        {
            return Err(KernelError::UnknownSession(session_key.to_string()));
        }
        Ok(self.env.store.history(session_key)?)
    }

    async fn list_sessions(&self, workdir: Option<&str>) -> Result<Vec<SessionInfo>, KernelError> {
        let workdir = match workdir {
            Some(dir) => Some(
                checked_workdir(Path::new(dir))?
                    .to_string_lossy()
                    .into_owned(),
            ),
            None => None,
        };
        Ok(self.env.store.list_sessions(workdir.as_deref())?)
    }

    async fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, KernelError> {
        if query.trim().is_empty() {
            return Ok(Vec::new());
        }
        Ok(self.env.store.search(query, limit.clamp(1, 500))?)
    }

    async fn list_agent_info(&self) -> Vec<AgentInfo> {
        if let Some((at, infos)) = self.agent_info.lock().clone() {
            if at.elapsed() < AGENT_INFO_TTL {
                return infos;
            }
        }
        // Probing runs each agent's binary (seconds in all): done at most once a TTL.
        let infos = futures::future::join_all(self.drivers.values().map(|d| d.info())).await;
        *self.agent_info.lock() = Some((std::time::Instant::now(), infos.clone()));
        infos
    }

    async fn list_models(&self, agent: &str) -> Result<Vec<ModelInfo>, KernelError> {
        Ok(self.driver(agent)?.models().await)
    }

    async fn list_effort(&self, agent: &str) -> Result<Vec<String>, KernelError> {
        Ok(self.driver(agent)?.efforts())
    }

    async fn list_tools(&self) -> Vec<ToolInfo> {
        self.env.tools.tools()
    }

    async fn list_skills(&self, workdir: Option<&str>) -> Vec<SkillInfo> {
        self.env.catalog.skills(workdir.map(Path::new))
    }
}
