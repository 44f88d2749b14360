//! A session changes agent between turns: key and history stay, the new agent starts
//! from a handover, a switch during a turn is refused, a new agent that fails to start
//! leaves the session on its old one.

use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;
use weft_kernel::{AgentDriver, AgentTurnInput, DriverContext, DriverResult, Loom};
use weft_protocol::{AgentInfo, Capabilities, DriverEvent, PromptRequest};

use super::support::*;

/// Records each turn's system prompt; `nostart` fails before any session exists.
#[derive(Default)]
struct Other {
    seen: Mutex<Vec<(Option<String>, Option<String>)>>,
    /// What each turn's handover for a lost session reads (empty: none was offered).
    lost_handovers: Mutex<Vec<String>>,
}

#[async_trait]
impl AgentDriver for Other {
    fn id(&self) -> &str {
        "other"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }
    async fn info(&self) -> AgentInfo {
        AgentInfo {
            id: "other".into(),
            name: "other".into(),
            installed: true,
            version: None,
            capabilities: Capabilities::default(),
            problem: None,
            facts: Default::default(),
        }
    }
    async fn run(&self, input: AgentTurnInput, ctx: DriverContext) -> DriverResult {
        self.seen
            .lock()
            .push((input.session_id.clone(), input.system_prompt.clone()));
        self.lost_handovers.lock().push(
            input
                .lost_session_handover
                .as_ref()
                .map(|h| h())
                .unwrap_or_default(),
        );
        if input.prompt == "nostart" {
            return DriverResult::failed("other: cannot start");
        }
        if input.prompt == "degrade" {
            ctx.emit(DriverEvent::Degraded {
                capability: "context".into(),
                reason: Some("its session could not be loaded".into()),
            });
        }
        let id = input.session_id.unwrap_or_else(|| "other-1".into());
        ctx.emit(DriverEvent::Session {
            session_id: id.clone(),
            model: None,
        });
        ctx.emit(DriverEvent::Text {
            delta: format!("other says {}", input.prompt),
        });
        DriverResult {
            ok: true,
            session_id: Some(id),
            ..Default::default()
        }
    }
}

/// A session that has run one turn on the script agent, on a loom that also has `other`.
async fn after_one_turn(script: Arc<ScriptDriver>, other: Arc<Other>) -> (Arc<Loom>, String) {
    let loom = open(
        script_loom(std::env::temp_dir(), script)
            .driver(other)
            .in_memory(),
    );
    let (a, _) = finish(&loom, prompt("name the colour teal", None)).await;
    (loom, a.session_key)
}

/// The agent of each turn so far, oldest first.
async fn agents(loom: &Loom, key: &str) -> Vec<String> {
    let history = loom.get_history(key).await.unwrap_or_default();
    history.into_iter().map(|s| s.agent).collect()
}

fn to(agent: &str, text: &str, key: &str) -> PromptRequest {
    PromptRequest {
        agent: Some(agent.into()),
        ..prompt(text, Some(key))
    }
}

#[tokio::test]
async fn an_idle_session_moves_to_another_agent_with_a_handover() {
    let script = Arc::new(ScriptDriver::default());
    let other = Arc::new(Other::default());
    let (loom, key) = after_one_turn(script.clone(), other.clone()).await;

    // Refused while a turn runs; the running turn goes on.
    let h = hold(&loom, "x", Some(&key)).await;
    let refused = loom.prompt(to("other", "now you", &key)).await;
    let why = refused.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(why.contains("only between turns"), "{why}");
    script.release("x");
    wait_for(&loom, &key, "hold done", done_with(&h.task_id)).await;

    // A new agent that does not start leaves the session where it was.
    let (_, at) = finish(&loom, to("other", "nostart", &key)).await;
    assert_eq!(at.snapshot.agent, "other");
    assert!(
        has_notice(&at.snapshot, "stays on script"),
        "{:?}",
        at.snapshot.notices
    );
    let sessions = loom.list_sessions(None).await.unwrap_or_default();
    assert_eq!(sessions[0].agent, "script");
    assert_eq!(sessions[0].session_key, key);

    // Now it moves: the same key, the new agent's first turn starts from the handover.
    let (b, at) = finish(&loom, to("other", "go on", &key)).await;
    assert_eq!(at.snapshot.agent, "other");
    assert_eq!(at.snapshot.text, "other says go on");
    let (sid, system) = other.seen.lock().last().cloned().unwrap_or_default();
    assert_eq!(sid, None, "a new session of the new agent");
    let system = system.unwrap_or_default();
    assert!(system.contains("name the colour teal"), "{system}");
    assert!(system.contains("reply to name the colour teal"), "{system}");
    assert_eq!(b.session_key, key);

    // Its next turn resumes its own session, with no handover.
    finish(&loom, prompt("and again", Some(&key))).await;
    let (sid, system) = other.seen.lock().last().cloned().unwrap_or_default();
    assert_eq!(sid.as_deref(), Some("other-1"));
    assert_eq!(system, None);
    assert_eq!(
        agents(&loom, &key).await,
        ["script", "script", "other", "other", "other"]
    );
}

#[tokio::test]
async fn the_switch_verb_moves_an_idle_session_and_the_snapshot_tells_recorded_from_running() {
    let script = Arc::new(ScriptDriver::default());
    let other = Arc::new(Other::default());
    let (loom, key) = after_one_turn(script.clone(), other.clone()).await;
    let me = weft_kernel::Caller::local();

    // Refused while a turn runs, with the reason; the turn goes on, nothing moves.
    let h = hold(&loom, "x", Some(&key)).await;
    let refused = loom.switch_agent_as(&me, &key, "other").await;
    let why = refused.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(why.contains("only between turns"), "{why}");
    assert!(loom.switch_agent_as(&me, &key, "nope").await.is_err());
    script.release("x");
    let at = wait_for(&loom, &key, "hold done", done_with(&h.task_id)).await;
    assert_eq!(at.snapshot.recorded_agent, None);

    // Idle: the switch is in flight until the next turn runs.
    loom.switch_agent_as(&me, &key, "other")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let at = snapshot(&loom, &key).await;
    assert_eq!(
        at.snapshot.agent, "script",
        "the agent that ran the last turn"
    );
    assert_eq!(at.snapshot.recorded_agent.as_deref(), Some("other"));

    // A failed start: the turn shows the agent that failed, the record is back.
    let (_, at) = finish(&loom, prompt("nostart", Some(&key))).await;
    assert_eq!(at.snapshot.agent, "other");
    assert_eq!(at.snapshot.recorded_agent.as_deref(), Some("script"));

    // Again, and this time it starts: the next plain prompt runs on the new agent
    // from the handover, and the two agree.
    loom.switch_agent_as(&me, &key, "other")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (_, at) = finish(&loom, prompt("go on", Some(&key))).await;
    assert_eq!(at.snapshot.agent, "other");
    assert_eq!(at.snapshot.recorded_agent, None);
    let (_, system) = other.seen.lock().last().cloned().unwrap_or_default();
    assert!(
        system.unwrap_or_default().contains("name the colour teal"),
        "the handover"
    );
    assert_eq!(
        agents(&loom, &key).await,
        ["script", "script", "other", "other"]
    );
}

/// What a session runs without lasts from turn to turn on its agent (until a driver
/// clears it) and goes with a change of agent; a resumed turn is offered the handover
/// a driver gives an agent that cannot reload its session.
#[tokio::test]
async fn what_a_session_runs_without_lasts_across_turns_and_not_across_agents() {
    let script = Arc::new(ScriptDriver::default());
    let other = Arc::new(Other::default());
    let (loom, key) = after_one_turn(script.clone(), other.clone()).await;
    let (_, at) = finish(&loom, to("other", "degrade", &key)).await;
    assert_eq!(at.snapshot.degraded.len(), 1, "{:?}", at.snapshot.degraded);
    assert_eq!(
        other.lost_handovers.lock().last().map(String::as_str),
        Some(""),
        "a new session: nothing to lose"
    );

    let (_, at) = finish(&loom, prompt("and again", Some(&key))).await;
    assert_eq!(at.snapshot.degraded[0].capability, "context");
    let offered = other
        .lost_handovers
        .lock()
        .last()
        .cloned()
        .unwrap_or_default();
    assert!(offered.contains("could not be"), "{offered}");
    assert!(offered.contains("name the colour teal"), "{offered}");
    assert!(offered.contains("other says degrade"), "{offered}");

    let (_, at) = finish(&loom, to("script", "back", &key)).await;
    assert!(
        at.snapshot.degraded.is_empty(),
        "{:?}",
        at.snapshot.degraded
    );
}
