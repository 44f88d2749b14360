//! `run_turn`: one turn of one driver with no session, queue or persistence.

use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use weft_protocol::{
    Accumulator, DriverEvent, Interaction, InteractionResponse, UniversalSnapshot,
};

use crate::driver::{AgentDriver, AgentTurnInput, DriverContext, DriverResult, Steer, TurnSink};
use crate::time::now_ms;

type EventFn = Box<dyn Fn(&DriverEvent, &UniversalSnapshot) + Send + Sync>;
type AskFn = Box<dyn Fn(&Interaction) -> InteractionResponse + Send + Sync>;

/// What `run_turn` calls as the turn goes.
pub struct TurnCallbacks {
    /// Each event, with the snapshot after it.
    pub on_event: EventFn,
    /// Answers an interaction at once (default: cancel it).
    pub on_interaction: AskFn,
    /// Stops the turn when cancelled.
    pub cancel: CancellationToken,
}

impl Default for TurnCallbacks {
    fn default() -> Self {
        Self {
            on_event: Box::new(|_, _| {}),
            on_interaction: Box::new(|_| InteractionResponse::cancel()),
            cancel: CancellationToken::new(),
        }
    }
}

struct CallbackSink {
    acc: Mutex<Accumulator>,
    callbacks: TurnCallbacks,
    steer: Mutex<Option<mpsc::UnboundedSender<Steer>>>,
}

impl TurnSink for CallbackSink {
    fn emit(&self, event: DriverEvent) {
        let mut acc = self.acc.lock();
        acc.apply(&event, now_ms());
        (self.callbacks.on_event)(&event, acc.snapshot());
    }

    fn ask(&self, interaction: Interaction) -> oneshot::Receiver<InteractionResponse> {
        let (tx, rx) = oneshot::channel();
        let _ = tx.send((self.callbacks.on_interaction)(&interaction));
        rx
    }

    fn register_steer(&self) -> mpsc::UnboundedReceiver<Steer> {
        let (tx, rx) = mpsc::unbounded_channel();
        *self.steer.lock() = Some(tx);
        rx
    }
}

/// Runs one turn and returns the driver's result with the accumulated snapshot.
pub async fn run_turn(
    driver: Arc<dyn AgentDriver>,
    input: AgentTurnInput,
    callbacks: TurnCallbacks,
) -> (DriverResult, UniversalSnapshot) {
    let cancel = callbacks.cancel.clone();
    let start = UniversalSnapshot {
        agent: driver.id().to_string(),
        prompt: input.prompt.clone(),
        task_id: Some(input.task_id.clone()),
        session_id: input.session_id.clone(),
        model: input.model.clone(),
        effort: input.effort.clone(),
        phase: weft_protocol::Phase::Streaming,
        started_at: Some(now_ms()),
        ..Default::default()
    };
    let sink = Arc::new(CallbackSink {
        acc: Mutex::new(Accumulator::new(start)),
        callbacks,
        steer: Mutex::new(None),
    });
    let result = driver
        .run(input, DriverContext::new(cancel.clone(), sink.clone()))
        .await;
    let mut acc = sink.acc.lock().clone();
    if let Some(id) = &result.session_id {
        acc.apply(
            &DriverEvent::Session {
                session_id: id.clone(),
                model: None,
            },
            now_ms(),
        );
    }
    if acc.snapshot().text.is_empty() {
        if let Some(text) = result.text.clone().filter(|t| !t.is_empty()) {
            acc.apply(&DriverEvent::Text { delta: text }, now_ms());
        }
    }
    let stopped = cancel.is_cancelled();
    acc.finish(result.error.clone(), stopped || !result.ok, now_ms());
    (result, acc.into_snapshot())
}
