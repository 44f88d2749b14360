//! `SessionRunner`: one per session. It owns the session's snapshot, runs its turns one
//! at a time in prompt order, folds driver events into patches, and persists them.
//!
//! All state sits behind one short-held mutex; nothing awaits while holding it. Patches
//! are numbered under that lock, so a subscriber that takes (snapshot, seq, receiver)
//! under it sees every later patch exactly once and in order.

mod accounts_switch;
mod ask;
mod checkpoint;
mod handover;
mod prepare;
mod queue;
mod steer;
mod switch;
mod terminal;

pub(crate) use prepare::{spawn_input as prepare_spawn, Held};
use queue::queued_list;
pub(crate) use switch::chosen;
use switch::{with_handover, Closing, Switch};

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use parking_lot::Mutex;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use weft_protocol::{
    Accumulator, ClientEnv, DriverEvent, Interaction, InteractionResponse, PatchEvent, Phase,
    SnapshotAt, SnapshotPatch, UniversalSnapshot,
};

use crate::driver::{AgentDriver, AgentTurnInput, DriverContext, DriverResult, Steer, TurnSink};
use crate::env::KernelEnv;
use crate::error::KernelError;
use crate::feed::{Feed, Patches};
use crate::ports::SessionRecord;
use crate::time::now_ms;

/// How long a stopped turn's driver gets to wind down before it is abandoned (its
/// future dropped, which kills its process).
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(10);

/// Per-session patch headroom: a subscriber further behind than this is told it
/// overflowed and re-reads the snapshot. 65,536 is 65 ms of a turn streaming a million
/// patches a second (16,384 still resynced one run in four on a loaded machine). The
/// price: the queue's 1 MB is allocated with the runner, and a subscriber that stops
/// reading holds up to 65,536 patches of about 1 KB each until it is resynced (at a
/// real agent's few hundred patches a second, minutes of them).
const SESSION_CHANNEL: usize = 65_536;

const TITLE_CHARS: usize = 80;

/// A turn made the running one: its driver input, its stop token, whether it is the
/// agent's own terminal.
type Begun = (AgentTurnInput, CancellationToken, bool);

/// A prompt waiting to run.
#[derive(Debug, Clone)]
pub(crate) struct Task {
    pub task_id: String,
    pub prompt: String,
    pub model: Option<String>,
    pub effort: Option<String>,
    pub attachments: Vec<PathBuf>,
    pub steer: bool,
    /// The agent's own terminal is open: the driver follows it instead of running a turn.
    pub terminal: bool,
    /// The environment of the client that sent it (see `AgentTurnInput::client_env`).
    pub client_env: Option<Arc<ClientEnv>>,
    /// The account to switch the session to from this turn on (`ambient`: the agent's
    /// own login); none: the session's.
    pub account: Option<String>,
    /// The domain pack asked for with this prompt (Weft's own agent).
    pub pack: Option<String>,
}

/// What a terminal turn's prompt reads as.
pub(crate) const TERMINAL_PROMPT: &str = "(the agent's own terminal)";

struct Running {
    task_id: String,
    /// The account the turn runs on, for folding its usage and limits into it.
    account: Option<String>,
    terminal: bool,
    cancel: CancellationToken,
    steer: Option<mpsc::UnboundedSender<Steer>>,
    /// The turn's agent takes steers, but has not asked for them yet (it is starting:
    /// the checkpoint, its process): steers sent meanwhile wait here for it, instead of
    /// becoming a turn of their own.
    takes_steer: bool,
    early: Vec<steer::EarlySteer>,
}

struct Pending {
    interaction: Interaction,
    answer: oneshot::Sender<InteractionResponse>,
    created_at: i64,
    expires_at: Option<i64>,
}

struct State {
    acc: Accumulator,
    seq: u64,
    record: SessionRecord,
    queue: VecDeque<Task>,
    running: Option<Running>,
    worker_active: bool,
    pending: Vec<Pending>,
    /// Turns started so far: an idle close is due only if none started since.
    turns_started: u64,
    /// What plugins gave an open terminal's spawn (a file its agent reads at start),
    /// held until that terminal's turn ends.
    held: Vec<Box<dyn std::any::Any + Send + Sync>>,
    /// A change of agent not yet confirmed by the new agent's first turn.
    switch: Option<Switch>,
    /// What the new agent's first turn starts from after a change of agent.
    handover: Option<String>,
    /// Agents this session moved off whose process is being closed, by agent id.
    closing: Vec<(String, Closing)>,
}

struct Shared {
    key: String,
    /// The agent the session runs on now (it changes only between turns).
    driver: Mutex<Arc<dyn AgentDriver>>,
    env: Arc<KernelEnv>,
    state: Mutex<State>,
    patches: Feed,
    /// The session's turns so far, to number each turn's checkpoints.
    turns: checkpoint::TurnCount,
}

/// One session's runtime.
#[derive(Clone)]
pub(crate) struct SessionRunner {
    shared: Arc<Shared>,
}

impl SessionRunner {
    /// A runner for `record`, starting from `snapshot` (the last turn's, or empty) at
    /// patch number `seq` (an evicted runner's successor continues its numbering).
    pub fn new(
        record: SessionRecord,
        snapshot: UniversalSnapshot,
        seq: u64,
        driver: Arc<dyn AgentDriver>,
        env: Arc<KernelEnv>,
    ) -> Self {
        let patches = Feed::new(SESSION_CHANNEL);
        let mut acc = Accumulator::new(snapshot);
        // A switch asked for before this runner was (re)built still shows as in flight.
        let recorded = (!acc.snapshot().agent.is_empty() && acc.snapshot().agent != record.agent)
            .then(|| record.agent.clone());
        let _ = acc.set_recorded_agent(recorded, acc.snapshot().updated_at);
        Self {
            shared: Arc::new(Shared {
                key: record.session_key.clone(),
                driver: Mutex::new(driver),
                env,
                state: Mutex::new(State {
                    acc,
                    seq,
                    record,
                    queue: VecDeque::new(),
                    running: None,
                    worker_active: false,
                    pending: Vec::new(),
                    turns_started: 0,
                    held: Vec::new(),
                    switch: None,
                    handover: None,
                    closing: Vec::new(),
                }),
                patches,
                turns: checkpoint::TurnCount::default(),
            }),
        }
    }

    /// Patches published so far (the current seq).
    pub fn seq(&self) -> u64 {
        self.shared.state.lock().seq
    }

    /// True when nothing holds this runner: no turn running or queued, no question
    /// pending, no one subscribed, no other reference (call it on the map's own). Such a runner can be dropped and rebuilt from the
    /// store when next needed.
    pub fn is_evictable(&self) -> bool {
        // Anyone else holding the runner (a verb between finding it and using it, an
        // idle-close timer) keeps it: evicting it then could give the session two.
        if Arc::strong_count(&self.shared) > 1 {
            return false;
        }
        let st = self.shared.state.lock();
        // A pending change of agent holds what to go back to only here.
        st.running.is_none()
            && st.switch.is_none()
            && st.queue.is_empty()
            && !st.worker_active
            && st.pending.is_empty()
            && self.shared.patches.receiver_count() == 0
    }

    /// Prompts waiting behind the running turn.
    pub fn queue_len(&self) -> usize {
        self.shared.state.lock().queue.len()
    }

    pub fn record(&self) -> SessionRecord {
        self.shared.state.lock().record.clone()
    }

    pub fn snapshot_at(&self) -> SnapshotAt {
        let st = self.shared.state.lock();
        let mut snapshot = st.acc.snapshot().clone();
        self.shared
            .env
            .plugins
            .decorate(&self.shared.key, &mut snapshot);
        SnapshotAt {
            session_key: self.shared.key.clone(),
            seq: st.seq,
            snapshot,
        }
    }

    pub fn subscribe(&self) -> (SnapshotAt, Patches) {
        let st = self.shared.state.lock();
        let rx = self.shared.patches.subscribe();
        let mut snapshot = st.acc.snapshot().clone();
        self.shared
            .env
            .plugins
            .decorate(&self.shared.key, &mut snapshot);
        let at = SnapshotAt {
            session_key: self.shared.key.clone(),
            seq: st.seq,
            snapshot,
        };
        (at, rx)
    }

    /// Queues `task`; starts the worker when the session is idle.
    pub fn enqueue(&self, task: Task) {
        let mut st = self.shared.state.lock();
        st.queue.push_back(task);
        if !st.worker_active {
            // Begun here, before the prompt is answered as accepted: a client that
            // follows the session from then on sees its turn running. Begun by the
            // worker, it was for a moment neither running nor in the snapshot's queue,
            // and `weft run` took it for a prompt someone had taken out of the queue.
            st.worker_active = true;
            if let Some(first) = self.shared.begin_next(&mut st) {
                let shared = self.shared.clone();
                tokio::spawn(async move { shared.work(Some(first)).await });
            }
        } else {
            // It waits behind a running turn, or for the worker between two turns or
            // closing an idle agent process: shown as queued meanwhile.
            let queued = queued_list(&st.queue);
            let patch = st.acc.set_queued(queued, now_ms());
            self.shared.publish(&mut st, patch);
        }
    }

    /// Stops the running turn (if any); its pending interactions are cancelled. A turn
    /// that is the agent's open terminal is ended by closing the terminal, not by stop.
    pub fn stop(&self) -> Result<(), KernelError> {
        let mut st = self.shared.state.lock();
        let Some(running) = &st.running else {
            return Ok(());
        };
        if running.terminal {
            return Err(KernelError::Busy(
                "the agent's own terminal is open for this session: close it to end it".into(),
            ));
        }
        running.cancel.cancel();
        self.shared.cancel_pending(&mut st, "the turn was stopped");
        Ok(())
    }
}

fn title_from(prompt: &str) -> String {
    let line = prompt.trim().lines().next().unwrap_or_default().trim();
    if line.chars().count() > TITLE_CHARS {
        let cut: String = line.chars().take(TITLE_CHARS).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}

impl Shared {
    fn publish(&self, st: &mut State, patch: SnapshotPatch) {
        if patch.is_empty() {
            return;
        }
        st.seq += 1;
        let event = Arc::new(PatchEvent {
            session_key: self.key.clone(),
            seq: st.seq,
            from: None,
            patch,
        });
        // No receiver is fine: nobody is watching this session.
        self.patches.send(event.clone());
        self.env.all_patches.send(event);
    }

    fn persist<T>(&self, what: &str, result: Result<T, crate::ports::StoreError>) {
        if let Err(e) = result {
            tracing::error!(session = %self.key, "store {what}: {e}");
        }
    }

    /// The store could not keep what the turn that just ended wrote (a full disk, a
    /// read-only home): its snapshot says so, rather than a success the history lacks.
    fn unsaved(&self, st: &mut State, e: &crate::ports::StoreError) {
        tracing::error!(session = %self.key, "store finish turn: {e}");
        let unsaved =
            format!("the session store could not save this turn ({e}); the history may lack it");
        let error = match st.acc.snapshot().error.clone() {
            Some(before) => format!("{before}; {unsaved}"),
            None => unsaved,
        };
        let patch = st.acc.finish(Some(error), true, now_ms());
        self.publish(st, patch);
    }

    /// Takes the next task and makes it the running turn; `None` when the queue is empty
    /// (the worker then ends).
    fn start_next(self: &Arc<Self>) -> Option<Begun> {
        let mut st = self.state.lock();
        self.begin_next(&mut st)
    }

    /// [`Self::start_next`] with the state already locked.
    fn begin_next(&self, st: &mut State) -> Option<Begun> {
        if self.env.closing.load(std::sync::atomic::Ordering::SeqCst) {
            let left: Vec<Task> = st.queue.drain(..).collect();
            self.record_not_run(st, left);
        }
        let Some(task) = st.queue.pop_front() else {
            st.worker_active = false;
            self.env.settled.notify_waiters();
            return None;
        };
        st.turns_started += 1;
        let now = now_ms();
        if st.record.title.is_empty() {
            st.record.title = title_from(&task.prompt);
        }
        if task.model.is_some() {
            st.record.model = task.model.clone();
        }
        if task.effort.is_some() {
            st.record.effort = task.effort.clone();
        }
        if let Some(a) = &task.account {
            st.record.account = chosen(a);
        }
        st.record.updated_at = now;
        // What the session runs without lasts from turn to turn, while it runs on the
        // agent that reported it; a driver clears what no longer holds.
        let prev = st.acc.snapshot();
        let degraded = if prev.agent == st.record.agent {
            prev.degraded.clone()
        } else {
            Vec::new()
        };
        let fresh = UniversalSnapshot {
            phase: Phase::Streaming,
            degraded,
            task_id: Some(task.task_id.clone()),
            session_id: st.record.session_id.clone(),
            agent: st.record.agent.clone(),
            model: st.record.model.clone(),
            effort: st.record.effort.clone(),
            prompt: task.prompt.clone(),
            attachments: task
                .attachments
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            terminal: task.terminal,
            queued: queued_list(&st.queue),
            started_at: Some(now),
            updated_at: now,
            ..Default::default()
        };
        let patch = st.acc.replace(fresh);
        self.publish(st, patch);
        self.persist("session", self.env.store.upsert_session(&st.record));
        self.persist(
            "begin turn",
            self.env
                .store
                .begin_turn(&self.key, &task.task_id, st.acc.snapshot()),
        );
        let cancel = CancellationToken::new();
        st.running = Some(Running {
            task_id: task.task_id.clone(),
            account: st.record.account.clone(),
            terminal: task.terminal,
            cancel: cancel.clone(),
            steer: None,
            takes_steer: !task.terminal && self.driver().capabilities().steer,
            early: Vec::new(),
        });
        if task.terminal {
            let patch = st.acc.apply(
                &DriverEvent::Notice {
                    text: "the agent's own terminal is open: what happens there shows here, and prompts queue until it closes".into(),
                },
                now,
            );
            self.publish(st, patch);
        }
        let input = self.input_for(st, &task);
        Some((input, cancel, task.terminal))
    }

    /// Prompts still queued when Weft closes are kept in the history as turns that did
    /// not run, so nothing the user sent is silently lost.
    fn record_not_run(&self, st: &State, tasks: Vec<Task>) {
        let now = now_ms();
        for task in tasks.into_iter().filter(|t| !t.terminal) {
            let snapshot = UniversalSnapshot {
                phase: Phase::Done,
                task_id: Some(task.task_id.clone()),
                session_id: st.record.session_id.clone(),
                agent: st.record.agent.clone(),
                model: task.model.or_else(|| st.record.model.clone()),
                effort: task.effort.or_else(|| st.record.effort.clone()),
                prompt: task.prompt,
                error: Some("not run: Weft closed before this queued prompt's turn".into()),
                incomplete: true,
                started_at: Some(now),
                updated_at: now,
                ..Default::default()
            };
            self.persist(
                "queued turn",
                self.env
                    .store
                    .begin_turn(&self.key, &task.task_id, &snapshot),
            );
            self.persist(
                "queued turn",
                self.env.store.finish_turn(&task.task_id, &snapshot),
            );
        }
    }

    fn input_for(&self, st: &State, task: &Task) -> AgentTurnInput {
        let mut input = AgentTurnInput {
            session_key: self.key.clone(),
            task_id: task.task_id.clone(),
            prompt: task.prompt.clone(),
            workdir: PathBuf::from(&st.record.workdir),
            session_id: st.record.session_id.clone(),
            model: st.record.model.clone(),
            effort: st.record.effort.clone(),
            attachments: task.attachments.clone(),
            state_dir: self.env.state_dir.clone(),
            client_env: task.client_env.clone(),
            account: st.record.account.clone(),
            pack: task.pack.clone(),
            fork: st.record.fork.clone(),
            ..Default::default()
        };
        with_handover(st, &mut input);
        if input.session_id.is_some() {
            let store = self.env.store.clone();
            let key = self.key.clone();
            let agent = st.record.agent.clone();
            let workdir = st.record.workdir.clone();
            input.lost_session_handover = Some(Arc::new(move || {
                let history = store.history(&key).unwrap_or_default();
                handover::after_lost_session(&agent, &workdir, &history)
            }));
        }
        input
    }

    /// The agent the session runs on now.
    fn driver(&self) -> Arc<dyn AgentDriver> {
        self.driver.lock().clone()
    }

    /// Runs `first` (a turn already begun), then each queued task, until none is left.
    async fn work(self: Arc<Self>, mut first: Option<Begun>) {
        while let Some((mut input, cancel, terminal)) = first.take().or_else(|| self.start_next()) {
            let task_id = input.task_id.clone();
            let driver = self.driver();
            let before = self.checkpoint_before(&input);
            for close in self.closing(driver.id()) {
                close.await;
            }
            let held = match prepare::spawn_input(&self.env, driver.id(), &mut input).await {
                Ok(held) => held,
                Err(e) => {
                    self.finish(&task_id, Some(DriverResult::failed(e)), false);
                    continue;
                }
            };
            let bracket = before.await.unwrap_or(None);
            let sink = Arc::new(RunnerSink {
                shared: self.clone(),
                task_id: task_id.clone(),
            });
            let ctx = DriverContext::new(cancel.clone(), sink);
            let run = if terminal {
                driver.follow_tui(input, ctx)
            } else {
                driver.run(input, ctx)
            };
            let run = AssertUnwindSafe(run).catch_unwind();
            let outcome = tokio::select! {
                r = run => Some(r.unwrap_or_else(|_| DriverResult::failed("the agent's driver crashed (panic); see the log"))),
                _ = async { cancel.cancelled().await; tokio::time::sleep(STOP_GRACE).await } => None,
            };
            self.checkpoint_after(bracket, &task_id).await;
            // Closing the terminal is how a terminal turn ends, not a stop.
            self.finish(&task_id, outcome, cancel.is_cancelled() && !terminal);
            drop(held);
        }
        if let Some(idle) = self.env.idle_close {
            let started = self.state.lock().turns_started;
            tokio::spawn(self.clone().close_when_idle(idle, started));
        }
    }

    /// After `idle` with no new turn, closes the agent's process for this session
    /// (drivers keep one per session; an app open for days would otherwise keep one per
    /// session ever touched). The next prompt resumes the agent session in a new one.
    fn close_when_idle(
        self: Arc<Self>,
        idle: Duration,
        started: u64,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
        Box::pin(async move {
            tokio::time::sleep(idle).await;
            {
                let mut st = self.state.lock();
                let closing = self.env.closing.load(std::sync::atomic::Ordering::SeqCst);
                if st.worker_active || st.turns_started != started || closing {
                    return;
                }
                // Prompts arriving meanwhile queue behind the close and run after it.
                st.worker_active = true;
            }
            tracing::debug!(session = %self.key, "closing the idle agent process");
            self.driver().close_session(&self.key).await;
            let queued = {
                let mut st = self.state.lock();
                if st.queue.is_empty() {
                    st.worker_active = false;
                }
                !st.queue.is_empty()
            };
            if queued {
                self.work(None).await;
            }
        })
    }

    fn finish(&self, task_id: &str, outcome: Option<DriverResult>, stopped: bool) {
        let mut st = self.state.lock();
        let now = now_ms();
        let (error, incomplete) = match outcome {
            Some(result) => {
                if let Some(id) = result.session_id {
                    let patch = st.acc.apply(
                        &DriverEvent::Session {
                            session_id: id.clone(),
                            model: None,
                        },
                        now,
                    );
                    self.publish(&mut st, patch);
                    st.record.session_id = Some(id);
                }
                if st.acc.snapshot().text.is_empty() {
                    if let Some(text) = result.text.filter(|t| !t.is_empty()) {
                        let patch = st.acc.apply(&DriverEvent::Text { delta: text }, now);
                        self.publish(&mut st, patch);
                    }
                }
                let error = match (result.ok, result.error) {
                    (_, Some(e)) => Some(e),
                    (false, None) if !stopped => Some("the agent reported a failure".into()),
                    _ => None,
                };
                (error, stopped || !result.ok)
            }
            None => (
                Some(format!(
                    "the agent did not stop within {}s of being asked; it was killed",
                    STOP_GRACE.as_secs()
                )),
                true,
            ),
        };
        if stopped {
            let patch = st.acc.apply(
                &DriverEvent::Notice {
                    text: "stopped by the user".into(),
                },
                now,
            );
            self.publish(&mut st, patch);
        }
        self.cancel_pending(&mut st, "the turn ended");
        self.settle_switch(&mut st, now);
        self.after_limit(&mut st, now);
        let patch = st.acc.finish(error, incomplete, now);
        self.publish(&mut st, patch);
        if let Some(account) = st.running.as_ref().and_then(|r| r.account.clone()) {
            self.env.accounts.turn_finished(&account, st.acc.snapshot());
        }
        // Steers the agent never asked for (its turn ended first) run next.
        let unread = st
            .running
            .as_mut()
            .map(|r| std::mem::take(&mut r.early))
            .unwrap_or_default();
        for early in unread.into_iter().rev() {
            let text = format!(
                "the turn ended before the agent took the steer; it runs as the next turn: {}",
                early.steer.text
            );
            let patch = st.acc.apply(&DriverEvent::Notice { text }, now);
            self.publish(&mut st, patch);
            st.queue.push_front(Task {
                task_id: early.task_id,
                prompt: early.steer.text,
                model: None,
                effort: None,
                attachments: early.steer.attachments,
                steer: true,
                terminal: false,
                client_env: early.client_env,
                account: None,
                pack: None,
            });
        }
        st.running = None;
        st.held.clear();
        st.record.updated_at = now;
        if let Err(e) = self.env.store.finish_turn(task_id, st.acc.snapshot()) {
            self.unsaved(&mut st, &e);
        }
        self.persist("session", self.env.store.upsert_session(&st.record));
    }
}

/// The running turn's view of its runner. Events from a turn that is no longer the
/// running one (an abandoned driver still talking) are dropped.
struct RunnerSink {
    shared: Arc<Shared>,
    task_id: String,
}

impl RunnerSink {
    fn is_current(&self, st: &State) -> bool {
        st.running
            .as_ref()
            .is_some_and(|r| r.task_id == self.task_id)
    }
}

impl TurnSink for RunnerSink {
    fn emit(&self, event: DriverEvent) {
        let shared = &self.shared;
        let mut st = shared.state.lock();
        if !self.is_current(&st) {
            return;
        }
        let patch = st.acc.apply(&event, now_ms());
        // Queued for the store before any client can see it: a transport that waits for
        // the store's commit before sending (the daemon's) then never shows a client
        // what a crash would lose.
        shared.persist(
            "event",
            shared.env.store.append_event(&self.task_id, &event),
        );
        shared.publish(&mut st, patch);
        if let Some(account) = st.running.as_ref().and_then(|r| r.account.as_deref()) {
            shared.env.accounts.observe(account, &event);
        }
        if let DriverEvent::Session { session_id, .. } = &event {
            if st.record.session_id.as_ref() != Some(session_id) {
                st.record.session_id = Some(session_id.clone());
                shared.persist("session", shared.env.store.upsert_session(&st.record));
            }
        }
    }

    fn ask(&self, interaction: Interaction) -> oneshot::Receiver<InteractionResponse> {
        self.ask_pending(interaction)
    }

    fn register_steer(&self) -> mpsc::UnboundedReceiver<Steer> {
        steer::register(&self.shared, &self.task_id)
    }
}

/// Whether the user trusted what the turn's workspace grants, read off the async
/// workers (it hashes the folder's granting files). A failed read is untrusted.
async fn workspace_trusted(input: &AgentTurnInput) -> bool {
    let state_dir = input.state_dir.clone();
    let workdir = input.workdir.clone();
    tokio::task::spawn_blocking(move || weft_workspace::trust::is_trusted(&state_dir, &workdir))
        .await
        .unwrap_or(false)
}
