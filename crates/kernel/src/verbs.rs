//! The verbs, each taking the [`Caller`] that asks: its environment goes to the agents
//! its turns start, its surface to the record of who answered what; the plain forms are
//! the same verbs for a caller in the kernel's own process.

use std::path::{Path, PathBuf};

use weft_protocol::{
    AgentInfo, InboxItem, InteractRequest, InteractionResponse, ModelInfo, OpenTerminalRequest,
    PromptAccepted, PromptRequest, SearchHit, SessionAction, SessionInfo, SkillInfo, SnapshotAt,
    SteerOutcome, ToolInfo, UniversalSnapshot,
};

use crate::driver::Steer;
use crate::env::new_task_id;
use crate::error::KernelError;
use crate::feed::Patches;
use crate::hub::{checked_workdir, Loom, AGENT_INFO_TTL};
use crate::io::{Caller, Subscription, TerminalOpened};
use crate::runner::Task;

/// A session's queue holds at most this many prompts: a peer cannot grow it without end.
pub const MAX_QUEUED: usize = 1000;

impl Loom {
    /// Drops the agents' probed infos, so the next `list_agent_info` probes again (an
    /// agent was just installed or updated).
    pub fn forget_agent_info(&self) {
        *self.agent_info.lock() = None;
    }

    /// Starts (or queues) a turn for `caller`.
    pub async fn prompt_as(
        &self,
        caller: &Caller,
        request: PromptRequest,
    ) -> Result<PromptAccepted, KernelError> {
        if request.prompt.trim().is_empty() {
            return Err(KernelError::BadRequest("the prompt is empty".into()));
        }
        // Before any session is made: a bad attachment changes nothing.
        for path in &request.attachments {
            weft_attachments::check(Path::new(path))
                .map_err(|e| KernelError::BadRequest(e.to_string()))?;
        }
        let runner = match &request.session_key {
            Some(key) => {
                let runner = match self.runner(key).await {
                    // Not Weft's: an agent's own session (Continue from the library)
                    // becomes one of Weft's on its agent session id.
                    Err(KernelError::UnknownSession(_)) => {
                        let k = key.clone();
                        if !self.indexed(move |index| index.adopt(&k)).await? {
                            return Err(KernelError::UnknownSession(key.clone()));
                        }
                        self.runner(key).await?
                    }
                    found => found?,
                };
                checked_workdir(Path::new(&runner.record().workdir))?;
                let agent = request
                    .agent
                    .clone()
                    .unwrap_or_else(|| runner.record().agent);
                if let Some(account) = &request.account {
                    self.check_account(&agent, account)?;
                    if agent == runner.record().agent {
                        self.refuse_unconfirmed_switch(caller, &runner, account)?;
                    }
                }
                if agent != runner.record().agent {
                    // A change of agent: the new one starts from the session's history.
                    let driver = self.driver(&agent)?;
                    let k = key.clone();
                    let history = self.blocking(move |store| store.history(&k)).await?;
                    runner.switch_agent(driver, &history)?;
                }
                runner
            }
            None => {
                if let Some(account) = &request.account {
                    let agent = self.agent_for(request.agent.as_deref())?;
                    self.check_account(agent, account)?;
                }
                self.new_session(&request, caller)?
            }
        };
        // The turn takes the process started ahead for it, if any.
        self.warm.take(&runner.record().session_key);
        if runner.queue_len() >= MAX_QUEUED {
            return Err(KernelError::Busy(format!(
                "{MAX_QUEUED} prompts are already queued in this session"
            )));
        }
        let session_key = runner.record().session_key;
        if let Some(choices) = &request.mcp {
            crate::mcp::set_session_overrides(&self.env.state_dir, &session_key, choices)?;
        }
        let task_id = new_task_id();
        runner.enqueue(Task {
            task_id: task_id.clone(),
            prompt: request.prompt,
            model: request.model,
            effort: request.effort,
            attachments: request.attachments.into_iter().map(PathBuf::from).collect(),
            steer: false,
            terminal: false,
            client_env: caller.env.clone(),
            account: request.account,
            pack: request.pack,
        });
        Ok(PromptAccepted {
            session_key,
            task_id,
        })
    }

    /// Refuses an account the accounts port cannot run `agent`'s turns on (the session, if
    /// any, is left as it was).
    fn check_account(&self, agent: &str, account: &str) -> Result<(), KernelError> {
        if crate::runner::chosen(account).is_none() {
            return Ok(());
        }
        self.env
            .accounts
            .check(agent, account.trim())
            .map_err(KernelError::Account)
    }

    /// Sends a message into the running turn, or queues it.
    pub async fn steer_as(
        &self,
        caller: &Caller,
        session_key: &str,
        steer: Steer,
    ) -> Result<SteerOutcome, KernelError> {
        if steer.text.trim().is_empty() {
            return Err(KernelError::BadRequest("the steer message is empty".into()));
        }
        // Checked like a prompt's, before anything is sent.
        for path in &steer.attachments {
            weft_attachments::check(path).map_err(|e| KernelError::BadRequest(e.to_string()))?;
        }
        let runner = self.runner(session_key).await?;
        if runner.queue_len() >= MAX_QUEUED {
            return Err(KernelError::Busy(format!(
                "{MAX_QUEUED} prompts are already queued in this session"
            )));
        }
        Ok(runner.steer(steer, new_task_id(), caller.env.clone()))
    }

    /// Opens the agent's own terminal UI's turn for a session (see
    /// [`Loom::open_terminal`]); the caller's environment is the program's.
    pub async fn open_terminal_as(
        &self,
        caller: &Caller,
        request: OpenTerminalRequest,
    ) -> Result<TerminalOpened, KernelError> {
        let runner = match &request.session_key {
            Some(key) => {
                let runner = self.runner(key).await?;
                checked_workdir(Path::new(&runner.record().workdir))?;
                if let Some(account) = &request.account {
                    self.check_account(&runner.record().agent, account)?;
                }
                runner
            }
            None => {
                let agent = self.agent_for(request.agent.as_deref())?;
                let driver = self.driver(agent)?;
                if !driver.capabilities().tui {
                    return Err(KernelError::NoTui(agent.to_string()));
                }
                if let Some(account) = &request.account {
                    self.check_account(agent, account)?;
                }
                self.new_session_with(
                    driver,
                    &PromptRequest {
                        workdir: request.workdir.clone(),
                        model: request.model.clone(),
                        account: request.account.clone(),
                        ..Default::default()
                    },
                )?
            }
        };
        let record = runner.record();
        let driver = self.driver(&record.agent)?;
        let task_id = new_task_id();
        let trusted = {
            let (state_dir, workdir) = (self.env.state_dir.clone(), record.workdir.clone());
            tokio::task::spawn_blocking(move || {
                weft_workspace::trust::is_trusted(&state_dir, Path::new(&workdir))
            })
            .await
            .unwrap_or(false)
        };
        if let Some(input) = runner.unmade_fork_input(
            task_id.clone(),
            caller.env.clone(),
            request.account.clone(),
            trusted,
        )? {
            let made = driver.fork_for_tui(&input).await.map_err(|e| {
                KernelError::AgentUnavailable(format!("cannot open the fork in the terminal: {e}"))
            })?;
            if let Some(id) = made {
                tracing::info!(session = %record.session_key, "the fork was made for its terminal");
                runner.adopt_session_id(&id);
            }
        }
        let (spec, base_env) = runner.open_terminal(
            task_id.clone(),
            caller.env.clone(),
            request.account.clone(),
            trusted,
            |input| {
                driver
                    .tui(input)
                    .ok_or_else(|| KernelError::NoTui(record.agent.clone()))
            },
        )?;
        Ok(TerminalOpened {
            session_key: record.session_key,
            task_id,
            spec,
            base_env,
        })
    }

    /// Takes a queued prompt out of a session's queue; it never runs.
    pub async fn dequeue(&self, session_key: &str, task_id: &str) -> Result<(), KernelError> {
        self.runner(session_key).await?.dequeue(task_id)
    }

    /// Moves a queued prompt to `position` in its session's queue (1 runs next).
    pub async fn requeue(
        &self,
        session_key: &str,
        task_id: &str,
        position: usize,
    ) -> Result<(), KernelError> {
        self.runner(session_key).await?.requeue(task_id, position)
    }

    /// Answers an interaction of a session, recording `caller` as who answered.
    pub async fn interact_as(
        &self,
        caller: &Caller,
        request: InteractRequest,
    ) -> Result<(), KernelError> {
        self.runner(&request.session_key).await?.interact(
            &request.prompt_id,
            request.response,
            &caller.surface,
        )
    }

    /// Answers an interaction by its id alone, wherever it is pending.
    pub async fn answer_as(
        &self,
        caller: &Caller,
        prompt_id: &str,
        response: InteractionResponse,
    ) -> Result<(), KernelError> {
        let runner = self
            .sessions
            .lock()
            .values()
            .find(|r| r.has_pending(prompt_id))
            .cloned();
        match runner {
            Some(runner) => runner.interact(prompt_id, response, &caller.surface),
            None => Err(KernelError::BadRequest(format!(
                "no question or permission `{prompt_id}` is waiting for an answer; `weft inbox` lists those that are"
            ))),
        }
    }

    /// Every pending interaction across sessions, oldest first.
    pub fn inbox(&self) -> Vec<InboxItem> {
        let runners: Vec<_> = self.sessions.lock().values().cloned().collect();
        let mut items: Vec<InboxItem> = runners.iter().flat_map(|r| r.inbox()).collect();
        items.sort_by(|a, b| {
            a.created_at
                .cmp(&b.created_at)
                .then(a.prompt_id.cmp(&b.prompt_id))
        });
        items
    }

    /// A page of a session's past turns: the newest `limit` before turn `before`.
    pub async fn history_page(
        &self,
        session_key: &str,
        limit: Option<u32>,
        before: Option<String>,
    ) -> Result<Vec<UniversalSnapshot>, KernelError> {
        let known = self.sessions.lock().contains_key(session_key);
        let key = session_key.to_string();
        self.blocking(move |store| {
            if !known && store.get_session(&key)?.is_none() {
                return Ok(None);
            }
            store.history_page(&key, limit, before.as_deref()).map(Some)
        })
        .await?
        .ok_or_else(|| KernelError::UnknownSession(session_key.to_string()))
    }
}

/// The verbs every surface calls, in the kernel's own process (as the caller
/// [`Caller::local`]); the API layer calls their `_as` forms with its caller.
impl Loom {
    /// The kernel's verbs.
    /// Starts (or queues) a turn.
    pub async fn prompt(&self, request: PromptRequest) -> Result<PromptAccepted, KernelError> {
        self.prompt_as(&Caller::local(), request).await
    }

    /// Stops the running turn of a session; the next queued prompt starts.
    pub async fn stop(&self, session_key: &str) -> Result<(), KernelError> {
        self.runner(session_key).await?.stop()
    }

    /// Sends a message into the running turn, or queues it.
    pub async fn steer(
        &self,
        session_key: &str,
        steer: Steer,
    ) -> Result<SteerOutcome, KernelError> {
        self.steer_as(&Caller::local(), session_key, steer).await
    }

    /// Opens the agent's own terminal UI for a session. While it is open the session has
    /// one writer: structured prompts queue until `close_terminal`.
    pub async fn open_terminal(
        &self,
        request: OpenTerminalRequest,
    ) -> Result<TerminalOpened, KernelError> {
        self.open_terminal_as(&Caller::local(), request).await
    }

    /// The terminal closed: the structured rail takes the session back.
    pub async fn close_terminal(&self, session_key: &str) -> Result<(), KernelError> {
        self.runner(session_key).await?.close_terminal()
    }

    /// Answers a pending interaction.
    pub async fn interact(&self, request: InteractRequest) -> Result<(), KernelError> {
        self.interact_as(&Caller::local(), request).await
    }

    /// One session's snapshot, then its patches.
    pub async fn subscribe(&self, session_key: &str) -> Result<Subscription, KernelError> {
        let (snapshot, patches) = self.runner(session_key).await?.subscribe();
        Ok(Subscription { snapshot, patches })
    }

    /// Every session's patches (what a window forwards). On `Overflowed`, re-read
    /// snapshots.
    pub fn subscribe_all(&self) -> Patches {
        self.env.all_patches.subscribe()
    }

    /// One session's current snapshot.
    pub async fn get_snapshot(&self, session_key: &str) -> Result<SnapshotAt, KernelError> {
        Ok(self.runner(session_key).await?.snapshot_at())
    }

    /// Final snapshots of a session's turns, oldest first.
    pub async fn get_history(
        &self,
        session_key: &str,
    ) -> Result<Vec<UniversalSnapshot>, KernelError> {
        self.history_page(session_key, None, None).await
    }

    /// Sessions, pinned first, then newest first; archived ones left out.
    pub async fn list_sessions(
        &self,
        workdir: Option<&str>,
    ) -> Result<Vec<SessionInfo>, KernelError> {
        self.list_sessions_with(workdir, false).await
    }

    /// The same, with the archived ones too (each marked) when `archived`.
    pub async fn list_sessions_with(
        &self,
        workdir: Option<&str>,
        archived: bool,
    ) -> Result<Vec<SessionInfo>, KernelError> {
        let workdir = match workdir {
            Some(dir) => Some(
                checked_workdir(Path::new(dir))?
                    .to_string_lossy()
                    .into_owned(),
            ),
            None => None,
        };
        self.indexed(move |index| index.list_sessions(workdir.as_deref(), archived))
            .await
    }

    /// Renames, pins, archives or deletes a session's record (through the session
    /// index, so every list shows the change).
    pub async fn manage_session(
        &self,
        session_key: &str,
        action: SessionAction,
    ) -> Result<(), KernelError> {
        let key = session_key.to_string();
        self.indexed(move |index| index.manage(&key, &action)).await
    }

    /// Past turns whose prompt or reply contain every word of `query` (the last one as
    /// a prefix), best match first, at most `limit`.
    pub async fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, KernelError> {
        if query.trim().is_empty() {
            return Ok(Vec::new());
        }
        let query = query.to_string();
        self.indexed(move |index| index.search(&query, limit.clamp(1, 500)))
            .await
    }

    /// Every registered agent, installed or not.
    pub async fn list_agent_info(&self) -> Vec<AgentInfo> {
        // An agent added to (or changed in) agents.json shows at once.
        self.drivers.refresh();
        let generation = self.drivers.generation();
        if let Some((at, seen, infos)) = self.agent_info.lock().clone() {
            if at.elapsed() < AGENT_INFO_TTL && seen == generation {
                return infos;
            }
        }
        // Probing runs each agent's binary (seconds in all): done at most once a TTL.
        let infos = futures::future::join_all(self.drivers.all().iter().map(|d| d.info())).await;
        *self.agent_info.lock() = Some((std::time::Instant::now(), generation, infos.clone()));
        infos
    }

    /// An agent's models.
    pub async fn list_models(&self, agent: &str) -> Result<Vec<ModelInfo>, KernelError> {
        Ok(self.driver(agent)?.models().await)
    }

    /// An agent's reasoning efforts: those `model` takes, when one is named.
    pub async fn list_effort(
        &self,
        agent: &str,
        model: Option<&str>,
    ) -> Result<Vec<String>, KernelError> {
        let driver = self.driver(agent)?;
        Ok(match model.filter(|m| !m.is_empty()) {
            Some(m) => driver.model_efforts(m).await,
            None => driver.efforts(),
        })
    }

    /// Tools: without `agent`, those the ToolProvider offers every agent; with it, that
    /// agent's own in `workdir` (default: the home folder) as it reports them, then the
    /// ToolProvider's. An agent that cannot list them yet says why.
    pub async fn list_tools(
        &self,
        agent: Option<&str>,
        workdir: Option<&str>,
    ) -> Result<Vec<ToolInfo>, KernelError> {
        let offered = self.env.tools.tools();
        let Some(agent) = agent.filter(|a| !a.is_empty()) else {
            return Ok(offered);
        };
        let driver = self.driver(agent)?;
        let workdir = match workdir.filter(|w| !w.is_empty()) {
            Some(w) => PathBuf::from(w),
            None => std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("/")),
        };
        let workdir = workdir
            .canonicalize()
            .map_err(|e| KernelError::BadWorkdir {
                path: workdir.display().to_string(),
                reason: e.to_string(),
            })?;
        let state_dir = self.env.state_dir.clone();
        let trusted = {
            let (s, w) = (state_dir.clone(), workdir.clone());
            tokio::task::spawn_blocking(move || weft_workspace::trust::is_trusted(&s, &w))
                .await
                .unwrap_or(false)
        };
        let mut input = crate::driver::AgentTurnInput {
            workdir,
            state_dir,
            workspace_trusted: trusted,
            ..Default::default()
        };
        // As a turn's spawn gets them: an agent that starts its servers itself (Codex)
        // takes them as spawn arguments, not from `mcp_servers`.
        let held = self
            .env
            .plugins
            .apply(agent, &mut input, true)
            .map_err(KernelError::AgentUnavailable)?;
        let listed = driver.tools(&input).await;
        drop(held);
        let mut tools = listed.map_err(KernelError::AgentUnavailable)?;
        for t in offered {
            if !tools.iter().any(|k| k.name == t.name) {
                tools.push(t);
            }
        }
        Ok(tools)
    }

    /// Skills visible from a folder.
    pub async fn list_skills(&self, workdir: Option<&str>) -> Vec<SkillInfo> {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let workdir = workdir.map(Path::new);
        let mut out = crate::skills::list(
            &self.env.state_dir,
            workdir,
            home.as_deref(),
            &self.env.skills_dirs,
        );
        let more: Vec<SkillInfo> = self.env.catalog.skills(workdir);
        for s in more {
            if !out.iter().any(|o| o.name == s.name) {
                out.push(s);
            }
        }
        out
    }
}
