//! A `TurnSink` for driving one driver directly in tests: it folds events into a
//! snapshot with the kernel's own `Accumulator`, records every event and question, and
//! answers questions by a policy (or holds them, or cancels them: [`SinkOptions`]).
//! `run`/`run_with` run one turn on it.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::{mpsc, oneshot, Notify};
use tokio_util::sync::CancellationToken;
use weft_kernel::driver::{
    AgentDriver, AgentTurnInput, DriverContext, DriverResult, Steer, TurnSink,
};
use weft_protocol::{
    Accumulator, DriverEvent, Interaction, InteractionResponse, Phase, UniversalSnapshot,
};

type Policy = Box<dyn Fn(&Interaction) -> Option<InteractionResponse> + Send + Sync>;

/// How a [`TestSink`] is set up.
#[derive(Debug, Clone)]
pub struct SinkOptions {
    agent: String,
    steer: bool,
    cancel_unanswered: bool,
}

impl Default for SinkOptions {
    fn default() -> Self {
        Self {
            agent: "test".into(),
            steer: false,
            cancel_unanswered: false,
        }
    }
}

impl SinkOptions {
    /// Agent `test`, no steer channel, unanswered interactions held.
    pub fn new() -> Self {
        Self::default()
    }

    /// The agent the snapshot names.
    pub fn agent(mut self, agent: &str) -> Self {
        self.agent = agent.into();
        self
    }

    /// Keeps the steer channel the driver registers, for [`TestSink::steer`] (without
    /// it the driver's channel is closed at once).
    pub fn steer(mut self) -> Self {
        self.steer = true;
        self
    }

    /// Cancels an interaction the policy does not answer, instead of holding it.
    pub fn cancel_unanswered(mut self) -> Self {
        self.cancel_unanswered = true;
        self
    }
}

/// Records a turn's events into a snapshot and answers its questions.
pub struct TestSink {
    acc: Mutex<Accumulator>,
    /// Every event, in order.
    pub events: Mutex<Vec<DriverEvent>>,
    /// Every interaction asked, in order.
    pub asked: Mutex<Vec<Interaction>>,
    policy: Mutex<Option<Policy>>,
    held: Mutex<VecDeque<(Interaction, oneshot::Sender<InteractionResponse>)>>,
    steer: Mutex<Option<mpsc::UnboundedSender<Steer>>>,
    options: SinkOptions,
    changed: Notify,
}

impl TestSink {
    /// A sink whose snapshot starts streaming, holding every interaction until
    /// [`TestSink::answer_with`] says otherwise.
    pub fn new() -> Arc<Self> {
        Self::with(SinkOptions::default())
    }

    /// A sink set up by `options`.
    pub fn with(options: SinkOptions) -> Arc<Self> {
        Arc::new(Self {
            acc: Mutex::new(Accumulator::new(UniversalSnapshot {
                phase: Phase::Streaming,
                agent: options.agent.clone(),
                ..Default::default()
            })),
            events: Mutex::new(Vec::new()),
            asked: Mutex::new(Vec::new()),
            policy: Mutex::new(None),
            held: Mutex::new(VecDeque::new()),
            steer: Mutex::new(None),
            options,
            changed: Notify::new(),
        })
    }

    /// Sends a steer into the running turn (false without [`SinkOptions::steer`] or
    /// once the driver dropped its end).
    pub fn steer(&self, text: &str) -> bool {
        self.steer_with(text.into())
    }

    /// Sends a steer with attachments into the running turn (see [`TestSink::steer`]).
    pub fn steer_with(&self, steer: Steer) -> bool {
        self.steer
            .lock()
            .as_ref()
            .is_some_and(|tx| tx.send(steer).is_ok())
    }

    /// How many interactions are held unanswered.
    pub fn held(&self) -> usize {
        self.held.lock().len()
    }

    /// Runs `f` on the accumulator behind the snapshot (to finish a turn another way
    /// than [`TestSink::finish`]).
    pub fn accumulate<R>(&self, f: impl FnOnce(&mut Accumulator) -> R) -> R {
        f(&mut self.acc.lock())
    }

    /// Answers every interaction with `f` (None: hold it).
    pub fn answer_with(
        &self,
        f: impl Fn(&Interaction) -> Option<InteractionResponse> + Send + Sync + 'static,
    ) {
        *self.policy.lock() = Some(Box::new(f));
    }

    /// The snapshot so far.
    pub fn snapshot(&self) -> UniversalSnapshot {
        self.acc.lock().snapshot().clone()
    }

    /// Ends the turn the way the kernel does and returns the final snapshot.
    pub fn finish(&self, result: &DriverResult, stopped: bool) -> UniversalSnapshot {
        let mut acc = self.acc.lock();
        if let Some(id) = &result.session_id {
            acc.apply(
                &DriverEvent::Session {
                    session_id: id.clone(),
                    model: None,
                },
                0,
            );
        }
        acc.finish(result.error.clone(), stopped || !result.ok, 0);
        acc.snapshot().clone()
    }

    /// Polls `pred` on the snapshot until it holds or `timeout` passes.
    pub async fn wait_for(
        &self,
        timeout: Duration,
        pred: impl Fn(&UniversalSnapshot) -> bool,
    ) -> bool {
        self.wait_for_held(timeout, |s, _| pred(s)).await
    }

    /// Polls `pred` on the snapshot and the number of held interactions until it holds
    /// or `timeout` passes.
    pub async fn wait_for_held(
        &self,
        timeout: Duration,
        pred: impl Fn(&UniversalSnapshot, usize) -> bool,
    ) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.changed.notified();
            if pred(&self.snapshot(), self.held()) {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return pred(&self.snapshot(), self.held());
            }
        }
    }
}

impl TurnSink for TestSink {
    fn emit(&self, event: DriverEvent) {
        self.acc.lock().apply(&event, 0);
        self.events.lock().push(event);
        self.changed.notify_waiters();
    }

    fn ask(&self, interaction: Interaction) -> oneshot::Receiver<InteractionResponse> {
        let (tx, rx) = oneshot::channel();
        self.asked.lock().push(interaction.clone());
        let answer = self.policy.lock().as_ref().and_then(|p| p(&interaction));
        match answer {
            Some(a) => {
                let _ = tx.send(a);
            }
            None if self.options.cancel_unanswered => {
                let _ = tx.send(InteractionResponse::cancel());
            }
            None => self.held.lock().push_back((interaction, tx)),
        }
        self.changed.notify_waiters();
        rx
    }

    fn register_steer(&self) -> mpsc::UnboundedReceiver<Steer> {
        let (tx, rx) = mpsc::unbounded_channel();
        if self.options.steer {
            *self.steer.lock() = Some(tx);
        }
        rx
    }
}

/// Runs one turn with `cancel`; returns the result and the finished snapshot.
pub async fn run_with(
    driver: &dyn AgentDriver,
    input: AgentTurnInput,
    sink: &Arc<TestSink>,
    cancel: CancellationToken,
) -> (DriverResult, UniversalSnapshot) {
    let ctx = DriverContext::new(cancel.clone(), sink.clone());
    let result = tokio::time::timeout(Duration::from_secs(120), driver.run(input, ctx))
        .await
        .unwrap_or_else(|_| panic!("the turn did not end in 120 s"));
    let snap = sink.finish(&result, cancel.is_cancelled());
    (result, snap)
}

/// Runs one turn to its end.
pub async fn run(
    driver: &dyn AgentDriver,
    input: AgentTurnInput,
    sink: &Arc<TestSink>,
) -> (DriverResult, UniversalSnapshot) {
    run_with(driver, input, sink, CancellationToken::new()).await
}

/// True when running under CI (`CI=true` or `CI=1`): a missing real binary then fails
/// a test instead of skipping it.
pub fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}
