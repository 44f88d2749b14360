//! The checkpoints port around every turn: called before the driver runs and after it
//! returns, turns numbered from 1 in history order across a change of agent, the turn's
//! diff in its snapshot and history, `degraded` while the port refuses, and restores only
//! between turns.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;
use weft_kernel::checkpoints::{CheckpointError, Checkpointer, RestoreRequest};
use weft_kernel::{AgentDriver, AgentTurnInput, DriverContext, DriverResult, Loom};
use weft_protocol::{AgentInfo, Capabilities, PromptRequest, Restored, TurnDiff};

use super::support::*;

type Log = Arc<Mutex<Vec<String>>>;

/// Logs each call; refuses every folder while `refuse` is set.
struct Recorder {
    log: Log,
    refuse: Mutex<bool>,
}

impl Checkpointer for Recorder {
    fn before_turn(
        &self,
        _: &str,
        _: &Path,
        turn: u32,
        _: &str,
    ) -> Result<String, CheckpointError> {
        if *self.refuse.lock() {
            return Err(CheckpointError::Unavailable("too many files".into()));
        }
        self.log.lock().push(format!("before {turn}"));
        Ok(format!("b{turn}"))
    }

    fn after_turn(
        &self,
        _: &str,
        _: &Path,
        turn: u32,
        _: &str,
        before: &str,
    ) -> Result<TurnDiff, CheckpointError> {
        self.log.lock().push(format!("after {turn}"));
        Ok(TurnDiff {
            turn,
            before: before.into(),
            after: format!("a{turn}"),
            ..Default::default()
        })
    }

    fn restore(&self, _: &str, _: &Path, r: &RestoreRequest) -> Result<Restored, CheckpointError> {
        self.log.lock().push(format!("restore {:?}", r.turn));
        Ok(Restored::default())
    }
}

/// Another agent, which logs its turns where the checkpoints do.
struct Logged(Log);

#[async_trait]
impl AgentDriver for Logged {
    fn id(&self) -> &str {
        "logged"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }
    async fn info(&self) -> AgentInfo {
        AgentInfo {
            id: "logged".into(),
            name: "logged".into(),
            installed: true,
            version: None,
            capabilities: Capabilities::default(),
            problem: None,
            facts: Default::default(),
        }
    }
    async fn run(&self, input: AgentTurnInput, _ctx: DriverContext) -> DriverResult {
        self.0.lock().push(format!("run {}", input.prompt));
        DriverResult {
            ok: true,
            session_id: Some("logged-1".into()),
            ..Default::default()
        }
    }
}

fn setup() -> (Arc<Loom>, Arc<ScriptDriver>, Arc<Recorder>, Log) {
    let log = Log::default();
    let recorder = Arc::new(Recorder {
        log: log.clone(),
        refuse: Mutex::new(false),
    });
    let script = Arc::new(ScriptDriver::default());
    let loom = open(
        script_loom(std::env::temp_dir(), script.clone())
            .driver(Arc::new(Logged(log.clone())))
            .checkpoints(recorder.clone())
            .in_memory(),
    );
    (loom, script, recorder, log)
}

#[tokio::test]
async fn every_turn_is_bracketed_and_numbered_across_a_change_of_agent() {
    let (loom, _, _, log) = setup();
    let (first, at) = finish(&loom, prompt("one", None)).await;
    let key = first.session_key;
    assert_eq!(at.snapshot.turn_diff.as_ref().map(|d| d.turn), Some(1));
    let to_logged = PromptRequest {
        agent: Some("logged".into()),
        ..prompt("two", Some(&key))
    };
    let (_, at) = finish(&loom, to_logged).await;
    assert_eq!(at.snapshot.agent, "logged");
    let (_, at) = finish(&loom, prompt("three", Some(&key))).await;
    let diff = at.snapshot.turn_diff.clone().unwrap_or_default();
    assert_eq!((diff.turn, diff.before.as_str()), (3, "b3"));
    assert_eq!(
        *log.lock(),
        [
            "before 1",
            "after 1",
            "before 2",
            "run two",
            "after 2",
            "before 3",
            "run three",
            "after 3"
        ],
        "the driver ran outside its turn's checkpoints"
    );
    let turns: Vec<u32> = history(&loom, &key)
        .await
        .iter()
        .filter_map(|s| s.turn_diff.as_ref().map(|d| d.turn))
        .collect();
    assert_eq!(turns, [1, 2, 3], "the history lacks the turns' diffs");
}

#[tokio::test]
async fn a_refused_folder_is_degraded_until_it_is_checkpointed() {
    let (loom, _, recorder, _) = setup();
    *recorder.refuse.lock() = true;
    let (first, at) = finish(&loom, prompt("one", None)).await;
    let key = first.session_key;
    assert!(at.snapshot.turn_diff.is_none());
    let degraded: Vec<(&str, &str)> = at
        .snapshot
        .degraded
        .iter()
        .map(|d| (d.capability.as_str(), d.reason.as_str()))
        .collect();
    assert_eq!(degraded, [("checkpoints", "too many files")]);
    *recorder.refuse.lock() = false;
    let (_, at) = finish(&loom, prompt("two", Some(&key))).await;
    assert!(
        at.snapshot.degraded.is_empty(),
        "{:?}",
        at.snapshot.degraded
    );
    assert_eq!(at.snapshot.turn_diff.map(|d| d.turn), Some(2));
}

#[tokio::test]
async fn a_restore_waits_for_no_turn_and_is_refused_during_one() {
    let (loom, script, _, log) = setup();
    let h = hold(&loom, "x", None).await;
    let key = h.session_key.clone();
    let refused = loom
        .restore_files(&key, RestoreRequest::default())
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(refused.contains("between turns"), "{refused}");
    script.release("x");
    wait_for(&loom, &key, "hold done", done_with(&h.task_id)).await;
    let request = RestoreRequest {
        turn: Some(1),
        ..Default::default()
    };
    loom.restore_files(&key, request)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        log.lock().last().map(String::as_str),
        Some("restore Some(1)")
    );
    // The session takes prompts again afterwards.
    finish(&loom, prompt("after", Some(&key))).await;
}
