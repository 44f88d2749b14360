//! A session's lifecycle: queue order, stop and promotion, steer, interactions, seqs.

use std::sync::Arc;

use weft_protocol::{
    apply_in_place, InteractRequest, InteractionResponse, Phase, SteerOutcome, UniversalSnapshot,
};

use super::support::*;

#[tokio::test]
async fn three_prompts_run_in_order_without_clobbering() {
    let driver = Arc::new(ScriptDriver::default());
    let loom = loom_with(driver.clone());
    let a = loom
        .prompt(prompt("hold:a", None))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let key = a.session_key.clone();
    // Running from the moment it is accepted; the driver's first words come after.
    wait_for(&loom, &key, "a started", |s| {
        running(&a.task_id)(s) && s.text == "started a"
    })
    .await;
    let b = loom
        .prompt(prompt("b", Some(&key)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let c = loom
        .prompt(prompt("c", Some(&key)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let at = wait_for(&loom, &key, "two queued", |s| s.queued.len() == 2).await;
    let queued: Vec<&str> = at
        .snapshot
        .queued
        .iter()
        .map(|q| q.prompt.as_str())
        .collect();
    assert_eq!(queued, ["b", "c"]);
    assert_eq!(
        at.snapshot.text, "started a",
        "queued prompts must not touch the running turn"
    );

    driver.release("a");
    wait_for(&loom, &key, "c done", done_with(&c.task_id)).await;
    let history = loom
        .get_history(&key)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let turns: Vec<(&str, &str)> = history
        .iter()
        .map(|s| (s.prompt.as_str(), s.text.as_str()))
        .collect();
    assert_eq!(
        turns,
        [
            ("hold:a", "started a finished"),
            ("b", "reply to b"),
            ("c", "reply to c")
        ]
    );
    assert!(history
        .iter()
        .all(|s| s.phase == Phase::Done && !s.incomplete && s.error.is_none()));
    assert_ne!(b.task_id, c.task_id);
}

#[tokio::test]
async fn stop_ends_only_the_running_turn_and_the_next_starts() {
    let driver = Arc::new(ScriptDriver::default());
    let loom = loom_with(driver.clone());
    let x = loom
        .prompt(prompt("hold:x", None))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let key = x.session_key.clone();
    wait_for(&loom, &key, "x running", running(&x.task_id)).await;
    let y = loom
        .prompt(prompt("y", Some(&key)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    loom.stop(&key).await.unwrap_or_else(|e| panic!("{e}"));
    let at = wait_for(&loom, &key, "y done", done_with(&y.task_id)).await;
    assert_eq!(at.snapshot.text, "reply to y");
    let history = loom
        .get_history(&key)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(history.len(), 2);
    let stopped = &history[0];
    assert_eq!(
        stopped.text, "started x",
        "text received before the stop is kept"
    );
    assert!(stopped.incomplete);
    assert_eq!(stopped.error, None);
    assert!(stopped.notices.iter().any(|n| n.contains("stopped")));
    assert!(!history[1].incomplete);
}

#[tokio::test]
async fn steer_goes_into_a_turn_that_takes_it_else_is_queued() {
    let driver = Arc::new(ScriptDriver::default());
    let loom = loom_with(driver.clone());
    let t = loom
        .prompt(prompt("steerable", None))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let key = t.session_key.clone();
    wait_for(&loom, &key, "waiting", |s| s.text == "waiting for steer").await;
    let outcome = loom
        .steer(&key, "go left".into())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(outcome, SteerOutcome::Injected);
    let at = wait_for(&loom, &key, "steered turn done", done_with(&t.task_id)).await;
    assert_eq!(at.snapshot.text, "waiting for steer got go left");
    assert!(at
        .snapshot
        .notices
        .iter()
        .any(|n| n.contains("steer sent into the running turn")));

    // A turn that registered no steer handler: the steer waits as the next turn.
    let h = loom
        .prompt(prompt("hold:h", Some(&key)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    wait_for(&loom, &key, "h running", running(&h.task_id)).await;
    let outcome = loom
        .steer(&key, "later please".into())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(outcome, SteerOutcome::Queued);
    let at = wait_for(&loom, &key, "steer queued", |s| s.queued.len() == 1).await;
    assert!(at.snapshot.queued[0].steer);
    assert!(at
        .snapshot
        .notices
        .iter()
        .any(|n| n.contains("steer queued")));
    driver.release("h");
    let history = wait_for_turns(&loom, &key, 3).await;
    assert_eq!(history[2].prompt, "later please");
    assert_eq!(history[2].text, "reply to later please");
}

async fn wait_for_turns(loom: &weft_kernel::Loom, key: &str, n: usize) -> Vec<UniversalSnapshot> {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let h = loom
            .get_history(key)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        if h.len() >= n && h.iter().all(|s| s.phase == Phase::Done) {
            return h;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {n} turns: {h:#?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn an_interaction_is_answered_through_interact() {
    let loom = loom_with(Arc::new(ScriptDriver::default()));
    let t = loom
        .prompt(prompt("ask", None))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let key = t.session_key.clone();
    let at = wait_for(&loom, &key, "pending", |s| s.interactions.len() == 1).await;
    let id = at.snapshot.interactions[0].prompt_id.clone();
    assert!(!id.is_empty());
    loom.interact(InteractRequest {
        session_key: key.clone(),
        prompt_id: id.clone(),
        response: InteractionResponse::select("allow"),
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let at = wait_for(&loom, &key, "done", done_with(&t.task_id)).await;
    assert_eq!(at.snapshot.text, "answer=allow");
    assert!(at.snapshot.interactions.is_empty());
    assert!(at
        .snapshot
        .notices
        .iter()
        .any(|n| n.contains("\"May I?\" answered allow")));
    // Answering twice is an error, not a crash.
    let again = loom
        .interact(InteractRequest {
            session_key: key,
            prompt_id: id,
            response: InteractionResponse::cancel(),
        })
        .await;
    assert!(matches!(
        again,
        Err(weft_kernel::KernelError::NotPending { .. })
    ));
}

#[tokio::test]
async fn an_interaction_can_be_cancelled_and_a_stop_cancels_it_too() {
    let loom = loom_with(Arc::new(ScriptDriver::default()));
    let t = loom
        .prompt(prompt("ask", None))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let key = t.session_key.clone();
    let at = wait_for(&loom, &key, "pending", |s| s.interactions.len() == 1).await;
    loom.interact(InteractRequest {
        session_key: key.clone(),
        prompt_id: at.snapshot.interactions[0].prompt_id.clone(),
        response: InteractionResponse::cancel(),
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let at = wait_for(&loom, &key, "done", done_with(&t.task_id)).await;
    assert_eq!(at.snapshot.text, "cancelled");

    let t2 = loom
        .prompt(prompt("ask", Some(&key)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    wait_for(&loom, &key, "pending again", |s| {
        s.interactions.len() == 1 && s.task_id.as_deref() == Some(&t2.task_id)
    })
    .await;
    loom.stop(&key).await.unwrap_or_else(|e| panic!("{e}"));
    let at = wait_for(&loom, &key, "stopped", done_with(&t2.task_id)).await;
    assert!(at.snapshot.interactions.is_empty());
    assert!(at.snapshot.incomplete);
    assert!(
        at.snapshot
            .notices
            .iter()
            .any(|n| n.contains("\"May I?\" was cancelled: the turn was stopped")),
        "{:?}",
        at.snapshot.notices
    );
}

#[tokio::test]
async fn subscribers_get_gap_free_seqs_that_rebuild_the_snapshot() {
    let driver = Arc::new(ScriptDriver::default());
    let loom = loom_with(driver.clone());
    let a = loom
        .prompt(prompt("hold:s", None))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let key = a.session_key.clone();
    let mut sub = loom.subscribe(&key).await.unwrap_or_else(|e| panic!("{e}"));
    let mut all = loom.subscribe_all();
    let mut snap = sub.snapshot.snapshot.clone();
    let mut seq = sub.snapshot.seq;
    let b = loom
        .prompt(prompt("b", Some(&key)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    driver.release("s");
    loop {
        let ev = sub.patches.recv().await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ev.seq, seq + 1, "gap or repeat in the session's patches");
        seq = ev.seq;
        apply_in_place(&mut snap, &ev.patch);
        if snap.task_id.as_deref() == Some(&b.task_id) && snap.phase == Phase::Done {
            break;
        }
    }
    let now = loom
        .get_snapshot(&key)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(now.seq, seq);
    assert_eq!(now.snapshot, snap);
    // The hub-wide stream carries the same patches.
    let mut last = 0;
    while let Ok(ev) = all.try_recv() {
        if ev.session_key == key {
            assert!(last == 0 || ev.seq == last + 1);
            last = ev.seq;
        }
    }
    assert_eq!(last, seq);
}

#[tokio::test]
async fn a_failing_or_panicking_driver_ends_the_turn_with_an_error_and_the_next_works() {
    let loom = loom_with(Arc::new(ScriptDriver::default()));
    let f = loom
        .prompt(prompt("fail", None))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let key = f.session_key.clone();
    let at = wait_for(&loom, &key, "fail done", done_with(&f.task_id)).await;
    assert_eq!(at.snapshot.error.as_deref(), Some("scripted failure"));
    assert!(at.snapshot.incomplete);
    let p = loom
        .prompt(prompt("panic", Some(&key)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let at = wait_for(&loom, &key, "panic done", done_with(&p.task_id)).await;
    assert!(at
        .snapshot
        .error
        .as_deref()
        .is_some_and(|e| e.contains("crashed")));
    let ok = loom
        .prompt(prompt("fine", Some(&key)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let at = wait_for(&loom, &key, "ok done", done_with(&ok.task_id)).await;
    assert_eq!(at.snapshot.text, "reply to fine");
    assert_eq!(at.snapshot.error, None);
}

#[tokio::test]
async fn the_agent_session_id_is_kept_and_passed_back_for_resume() {
    let loom = loom_with(Arc::new(ScriptDriver::default()));
    let a = loom
        .prompt(prompt("one", None))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let key = a.session_key.clone();
    let first = wait_for(&loom, &key, "one done", done_with(&a.task_id)).await;
    let id = first.snapshot.session_id.clone();
    assert!(id.is_some());
    let b = loom
        .prompt(prompt("two", Some(&key)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let second = wait_for(&loom, &key, "two done", done_with(&b.task_id)).await;
    assert_eq!(
        second.snapshot.session_id, id,
        "the driver got the session id to resume"
    );
    let sessions = loom
        .list_sessions(None)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].title, "one");
    assert_eq!(sessions[0].session_id, id);
}

#[tokio::test]
async fn a_dequeued_prompt_never_runs_and_requeue_reorders_the_queue() {
    let driver = Arc::new(ScriptDriver::default());
    let loom = loom_with(driver.clone());
    let a = loom
        .prompt(prompt("hold:q", None))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let key = a.session_key.clone();
    wait_for(&loom, &key, "hold running", running(&a.task_id)).await;
    let mut ids = Vec::new();
    for text in ["b", "c", "d"] {
        ids.push(
            loom.prompt(prompt(text, Some(&key)))
                .await
                .unwrap_or_else(|e| panic!("{e}"))
                .task_id,
        );
    }
    let order = |s: &UniversalSnapshot| {
        s.queued
            .iter()
            .map(|q| q.prompt.clone())
            .collect::<Vec<_>>()
    };
    wait_for(&loom, &key, "three queued", |s| s.queued.len() == 3).await;

    loom.requeue(&key, &ids[2], 1)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let at = loom
        .get_snapshot(&key)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(order(&at.snapshot), ["d", "b", "c"]);
    loom.requeue(&key, &ids[2], 99)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let at = loom
        .get_snapshot(&key)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        order(&at.snapshot),
        ["b", "c", "d"],
        "past the end moves it last"
    );
    loom.dequeue(&key, &ids[0])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let at = loom
        .get_snapshot(&key)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(order(&at.snapshot), ["c", "d"]);

    // Refused clearly: position 0, a prompt not queued (removed, or the running one).
    assert!(loom.requeue(&key, &ids[1], 0).await.is_err());
    let gone = loom.dequeue(&key, &ids[0]).await;
    assert!(matches!(gone, Err(e) if e.to_string().contains("is queued")));
    assert!(loom.dequeue(&key, &a.task_id).await.is_err());
    assert!(loom.dequeue("script:nope", &ids[1]).await.is_err());

    driver.release("q");
    wait_for(&loom, &key, "d done", done_with(&ids[2])).await;
    let history = loom
        .get_history(&key)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let prompts: Vec<&str> = history.iter().map(|s| s.prompt.as_str()).collect();
    assert_eq!(
        prompts,
        ["hold:q", "c", "d"],
        "b was dequeued: it never ran"
    );
}

/// A prompt to an idle session is its running turn by the time it is accepted, so a
/// client that follows the session from then on (`weft run`) sees it at once; it was
/// once neither running nor queued for a moment, and taken for a dequeued prompt.
#[tokio::test]
async fn an_accepted_prompt_is_running_before_the_answer_reaches_its_client() {
    let driver = Arc::new(ScriptDriver::default());
    let loom = loom_with(driver.clone());
    let a = loom
        .prompt(prompt("hold:a", None))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let at = loom
        .get_snapshot(&a.session_key)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(at.snapshot.task_id.as_deref(), Some(a.task_id.as_str()));
    assert_eq!(at.snapshot.phase, Phase::Streaming);
    driver.release("a");
    wait_for(&loom, &a.session_key, "a done", done_with(&a.task_id)).await;
}
