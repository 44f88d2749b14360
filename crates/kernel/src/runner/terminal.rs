//! The terminal verbs: the agent's own terminal opens as a turn of the session (a fork
//! its terminal cannot make is made by the driver first), and closing it ends that turn.

use std::sync::Arc;

use weft_protocol::ClientEnv;

use super::{chosen, SessionRunner, State, Task, TERMINAL_PROMPT};
use crate::driver::{AgentTurnInput, TuiSpec};
use crate::error::KernelError;

impl SessionRunner {
    /// Ends the terminal turn when the agent's terminal closes; queued prompts then run
    /// on the structured rail, resuming the same agent session.
    pub fn close_terminal(&self) -> Result<(), KernelError> {
        let st = self.shared.state.lock();
        match &st.running {
            Some(r) if r.terminal => {
                r.cancel.cancel();
                Ok(())
            }
            _ => Err(KernelError::BadRequest(format!(
                "no terminal is open for session `{}`",
                self.shared.key
            ))),
        }
    }

    /// The terminal turn's task and its input, with the environment its account and the
    /// accounts port give it.
    fn terminal_input(
        &self,
        st: &State,
        task_id: String,
        client_env: Option<Arc<ClientEnv>>,
        account: Option<String>,
    ) -> Result<(Task, AgentTurnInput), KernelError> {
        let task = Task {
            task_id,
            prompt: TERMINAL_PROMPT.into(),
            model: None,
            effort: None,
            attachments: Vec::new(),
            steer: false,
            terminal: true,
            client_env,
            account,
            pack: None,
        };
        let mut input = self.shared.input_for(st, &task);
        if let Some(a) = &task.account {
            input.account = chosen(a);
        }
        let spawn = self
            .shared
            .env
            .accounts
            .resolve(&input)
            .map_err(KernelError::Account)?;
        input.env = spawn.env;
        input.extra_args.extend(spawn.extra_args);
        input.isolated = spawn.isolated;
        Ok((task, input))
    }

    /// The input a driver makes a fork with before the session's terminal opens: only
    /// for a fork that has no agent session of its own yet (the driver decides whether
    /// its terminal can make it), with the environment its terminal would get.
    pub fn unmade_fork_input(
        &self,
        task_id: String,
        client_env: Option<Arc<ClientEnv>>,
        account: Option<String>,
        workspace_trusted: bool,
    ) -> Result<Option<AgentTurnInput>, KernelError> {
        let st = self.shared.state.lock();
        if st.record.fork.is_none() || st.record.session_id.is_some() || st.running.is_some() {
            return Ok(None);
        }
        let (_, mut input) = self.terminal_input(&st, task_id, client_env, account)?;
        input.workspace_trusted = workspace_trusted;
        Ok(Some(input))
    }

    /// The agent session a driver made for this session (a fork made before its
    /// terminal opened), unless it has one by now.
    pub fn adopt_session_id(&self, id: &str) {
        let mut st = self.shared.state.lock();
        if st.record.session_id.is_some() {
            return;
        }
        st.record.session_id = Some(id.to_string());
        self.shared
            .persist("session", self.shared.env.store.upsert_session(&st.record));
    }

    /// Queues the terminal turn if the session is idle, returning the input its
    /// terminal should be started with. `session_id` (when the driver fixes the id of a
    /// new agent session) is recorded first so the structured rail resumes it later.
    pub fn open_terminal(
        &self,
        task_id: String,
        client_env: Option<Arc<ClientEnv>>,
        account: Option<String>,
        workspace_trusted: bool,
        spec_for: impl FnOnce(&AgentTurnInput) -> Result<TuiSpec, KernelError>,
    ) -> Result<(TuiSpec, Option<Arc<ClientEnv>>), KernelError> {
        let mut st = self.shared.state.lock();
        if st.running.is_some() || !st.queue.is_empty() {
            return Err(KernelError::Busy(
                "a turn is running or queued in this session: stop it or wait before opening the agent's terminal".into(),
            ));
        }
        let (task, mut input) = self.terminal_input(&st, task_id, client_env, account)?;
        input.workspace_trusted = workspace_trusted;
        let is_first = input.session_id.is_none();
        let held = self
            .shared
            .env
            .plugins
            .apply(self.shared.driver().id(), &mut input, is_first)
            .map_err(KernelError::Plugin)?;
        let spec = spec_for(&input)?;
        st.held.extend(held);
        if task.account.is_some() {
            st.record.account = input.account.clone();
        }
        let base_env = input
            .isolated
            .then(|| Arc::new(ClientEnv(input.base_env())));
        if let Some(id) = &spec.session_id {
            st.record.session_id = Some(id.clone());
            self.shared
                .persist("session", self.shared.env.store.upsert_session(&st.record));
        }
        drop(st);
        self.enqueue(task);
        Ok((spec, base_env))
    }
}
