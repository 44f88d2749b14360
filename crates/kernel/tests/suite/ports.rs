//! The ports' defaults, and `run_turn` without a hub.

use std::sync::Arc;

use weft_kernel::ports::{AutoCancel, InteractionHandler};
use weft_kernel::{run_turn, AgentTurnInput, Loom, TurnCallbacks};
use weft_protocol::{Choice, Interaction, InteractionResponse, Phase};

use super::support::*;

fn handled_by(handler: Arc<dyn InteractionHandler>) -> Arc<Loom> {
    open(
        script_loom(std::env::temp_dir(), Arc::new(ScriptDriver::default()))
            .interaction_handler(handler)
            .in_memory(),
    )
}

#[tokio::test]
async fn auto_cancel_answers_interactions_at_once_and_says_so() {
    let loom = handled_by(Arc::new(AutoCancel));
    let (_, at) = finish(&loom, prompt("ask", None)).await;
    assert_eq!(at.snapshot.text, "cancelled");
    assert!(has_notice(&at.snapshot, "answered automatically"));
    assert!(loom
        .list_tools(None, None)
        .await
        .unwrap_or_default()
        .is_empty());
    assert!(loom.list_skills(None).await.is_empty());
    assert!(loom
        .list_effort("script", None)
        .await
        .unwrap_or_default()
        .is_empty());
}

/// Adds a choice of its own and carries it out as the agent's `yes`.
struct AddsAChoice(parking_lot::Mutex<Vec<std::path::PathBuf>>);

impl InteractionHandler for AddsAChoice {
    fn on_interaction(&self, _: &str, _: &Interaction) -> Option<InteractionResponse> {
        None
    }
    fn on_interaction_in(
        &self,
        _: &str,
        _: &std::path::Path,
        interaction: &mut Interaction,
    ) -> Option<InteractionResponse> {
        interaction.questions[0].choices.push(Choice {
            label: "Mine".into(),
            value: "mine".into(),
        });
        None
    }
    fn on_answer(
        &self,
        _: &str,
        workdir: &std::path::Path,
        interaction: &Interaction,
        response: InteractionResponse,
    ) -> InteractionResponse {
        if response.value.as_deref() != Some("mine") {
            return response;
        }
        assert!(interaction.questions[0]
            .choices
            .iter()
            .any(|c| c.value == "mine"));
        self.0.lock().push(workdir.to_path_buf());
        let mut r = InteractionResponse::select("yes");
        r.answers.insert("reason".into(), "carried out mine".into());
        r
    }
}

#[tokio::test]
async fn the_handler_carries_out_its_own_choice_before_the_agent_gets_the_answer() {
    let handler = Arc::new(AddsAChoice(parking_lot::Mutex::new(Vec::new())));
    let loom = handled_by(handler.clone());
    for (picked, text) in [("mine", "answer=yes"), ("other", "answer=other")] {
        let t = send(&loom, prompt("ask", None)).await;
        let key = t.session_key.clone();
        let at = wait_for(&loom, &key, "pending", |s| s.interactions.len() == 1).await;
        let asked = &at.snapshot.interactions[0];
        assert_eq!(asked.questions[0].choices[0].value, "mine");
        answer(
            &loom,
            &key,
            &asked.prompt_id,
            InteractionResponse::select(picked),
        )
        .await;
        let at = wait_for(&loom, &key, "done", done_with(&t.task_id)).await;
        assert_eq!(at.snapshot.text, text);
        let notices = at.snapshot.notices.join("\n");
        if picked == "mine" {
            // The record keeps what the user picked, and what was made of it.
            assert!(notices.contains("\"May I?\" answered Mine"), "{notices}");
            assert!(
                notices.contains("\"May I?\": carried out mine"),
                "{notices}"
            );
        } else {
            assert!(!notices.contains("carried out"), "{notices}");
        }
    }
    assert_eq!(*handler.0.lock(), vec![std::env::temp_dir()]);
}

#[tokio::test]
async fn run_turn_runs_one_turn_with_callbacks() {
    let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let log = seen.clone();
    let callbacks = TurnCallbacks {
        on_event: Box::new(move |ev, _| log.lock().push(format!("{ev:?}"))),
        on_interaction: Box::new(|_| InteractionResponse::select("yes")),
        ..Default::default()
    };
    let input = AgentTurnInput {
        prompt: "ask".into(),
        task_id: "t1".into(),
        workdir: std::env::temp_dir(),
        ..Default::default()
    };
    let (result, snap) = run_turn(Arc::new(ScriptDriver::default()), input, callbacks).await;
    assert!(result.ok);
    assert_eq!(snap.text, "answer=yes");
    assert_eq!(snap.phase, Phase::Done);
    assert_eq!(snap.agent, "script");
    assert_eq!(snap.session_id.as_deref(), Some("native-t1"));
    assert!(seen.lock().len() >= 2);
}

#[test]
fn state_dirs_follow_weft_home() {
    let dir = weft_kernel::state::workspace_state_dir(std::path::Path::new("/w"));
    assert_eq!(dir, std::path::Path::new("/w/.weft"));
    // WEFT_HOME wins over HOME (read, not set: tests share the process environment).
    let global = weft_kernel::state::global_state_dir();
    match std::env::var_os("WEFT_HOME").filter(|v| !v.is_empty()) {
        Some(home) => assert_eq!(global, std::path::PathBuf::from(home)),
        None => assert!(global.ends_with(".weft")),
    }
}

#[tokio::test]
async fn agent_info_is_probed_once_then_cached() {
    let driver = Arc::new(ScriptDriver::default());
    let loom = loom_with(driver.clone());
    let first = loom.list_agent_info().await;
    let second = loom.list_agent_info().await;
    assert_eq!(first, second);
    assert_eq!(first[0].id, "script");
    assert_eq!(
        driver.info_calls.load(std::sync::atomic::Ordering::SeqCst),
        1
    );
}
