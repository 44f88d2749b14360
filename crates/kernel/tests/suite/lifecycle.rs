//! A session's lifecycle: queue order, stop and promotion, steer, interactions, seqs.

use std::sync::Arc;

use weft_protocol::{
    apply_in_place, InteractRequest, InteractionResponse, Phase, PromptAccepted, SteerOutcome,
    UniversalSnapshot,
};

use super::support::*;

#[tokio::test]
async fn three_prompts_run_in_order_without_clobbering() {
    let driver = Arc::new(ScriptDriver::default());
    let loom = loom_with(driver.clone());
    let a = send(&loom, prompt("hold:a", None)).await;
    let key = a.session_key.clone();
    // Running from the moment it is accepted; the driver's first words come after.
    wait_for(&loom, &key, "a started", |s| {
        running(&a.task_id)(s) && s.text == "started a"
    })
    .await;
    let b = send(&loom, prompt("b", Some(&key))).await;
    let c = send(&loom, prompt("c", Some(&key))).await;
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
    let history = history(&loom, &key).await;
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
    let key = hold(&loom, "x", None).await.session_key;
    let y = send(&loom, prompt("y", Some(&key))).await;
    loom.stop(&key).await.unwrap_or_else(|e| panic!("{e}"));
    let at = wait_for(&loom, &key, "y done", done_with(&y.task_id)).await;
    assert_eq!(at.snapshot.text, "reply to y");
    let history = history(&loom, &key).await;
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
    let t = send(&loom, prompt("steerable", None)).await;
    let key = t.session_key.clone();
    wait_for(&loom, &key, "waiting", |s| s.text == "waiting for steer").await;
    let outcome = loom
        .steer(&key, "go left".into())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(outcome, SteerOutcome::Injected);
    let at = wait_for(&loom, &key, "steered turn done", done_with(&t.task_id)).await;
    assert_eq!(at.snapshot.text, "waiting for steer got go left");
    assert!(has_notice(&at.snapshot, "steer sent into the running turn"));

    // A turn whose agent takes steers but has not asked for them yet (still starting):
    // the steer is held for it; a turn that ends without asking runs it next, with its
    // attachments (checked first: a missing file is refused, nothing held).
    hold(&loom, "h", Some(&key)).await;
    let files = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let notes = files.path().join("notes.md");
    std::fs::write(&notes, "# notes\n").unwrap_or_else(|e| panic!("{e}"));
    let missing = weft_kernel::Steer {
        text: "look".into(),
        attachments: vec![files.path().join("gone.md")],
    };
    assert!(loom.steer(&key, missing).await.is_err());
    let steer = weft_kernel::Steer {
        text: "later please".into(),
        attachments: vec![notes.clone()],
    };
    let outcome = loom
        .steer(&key, steer)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(outcome, SteerOutcome::Injected);
    let at = wait_for(&loom, &key, "steer held", |s| {
        has_notice(s, "steer held for the running turn")
    })
    .await;
    assert!(has_notice(&at.snapshot, "(attached: notes.md)"));
    driver.release("h");
    let history = wait_for_turns(&loom, &key, 3).await;
    assert!(has_notice(
        &history[1],
        "the turn ended before the agent took the steer"
    ));
    assert_eq!(history[2].prompt, "later please");
    assert_eq!(history[2].text, "reply to later please");
    assert_eq!(history[2].attachments, vec![notes.display().to_string()]);
}

#[tokio::test]
async fn a_steer_sent_while_the_turn_starts_reaches_it_and_one_the_agent_cannot_take_is_queued() {
    // Sent before the agent asked for steers (the kernel's checkpoint, the process
    // starting): it gets the steer once it asks.
    let driver = Arc::new(ScriptDriver::default());
    let loom = loom_with(driver.clone());
    let t = send(&loom, prompt("steerable after:ready", None)).await;
    let key = t.session_key.clone();
    wait_for(&loom, &key, "starting", |s| s.text == "starting; ").await;
    let outcome = loom
        .steer(&key, "early bird".into())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(outcome, SteerOutcome::Injected);
    driver.release("ready");
    let at = wait_for(&loom, &key, "steered turn done", done_with(&t.task_id)).await;
    assert_eq!(
        at.snapshot.text,
        "starting; waiting for steer got early bird"
    );
    assert_eq!(history(&loom, &key).await.len(), 1, "no turn of its own");

    // An agent that takes no steers mid-turn: queued as the next turn at once.
    driver
        .no_steer
        .store(true, std::sync::atomic::Ordering::Relaxed);
    hold(&loom, "h2", Some(&key)).await;
    let outcome = loom
        .steer(&key, "next, please".into())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(outcome, SteerOutcome::Queued);
    let at = wait_for(&loom, &key, "steer queued", |s| s.queued.len() == 1).await;
    assert!(at.snapshot.queued[0].steer);
    assert!(has_notice(&at.snapshot, "steer queued"));
    driver.release("h2");
    let history = wait_for_turns(&loom, &key, 3).await;
    assert_eq!(history[2].prompt, "next, please");
}

/// Sends `ask` and waits until its question is pending; returns the question's id.
async fn asked(loom: &weft_kernel::Loom, key: Option<&str>) -> (PromptAccepted, String) {
    let t = send(loom, prompt("ask", key)).await;
    let at = wait_for(loom, &t.session_key, "pending", |s| {
        s.interactions.len() == 1 && s.task_id.as_deref() == Some(&t.task_id)
    })
    .await;
    let id = at.snapshot.interactions[0].prompt_id.clone();
    (t, id)
}

async fn wait_for_turns(loom: &weft_kernel::Loom, key: &str, n: usize) -> Vec<UniversalSnapshot> {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let h = history(loom, key).await;
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
    let (t, id) = asked(&loom, None).await;
    let key = t.session_key.clone();
    assert!(!id.is_empty());
    answer(&loom, &key, &id, InteractionResponse::select("allow")).await;
    let at = wait_for(&loom, &key, "done", done_with(&t.task_id)).await;
    assert_eq!(at.snapshot.text, "answer=allow");
    assert!(at.snapshot.interactions.is_empty());
    assert!(has_notice(&at.snapshot, "\"May I?\" answered allow"));
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

/// A surface that sees the question leave the list (the Matrix bot edits its message
/// then) already has the notice of how it was answered: the notice's patch comes first.
#[tokio::test]
async fn the_answers_notice_comes_before_the_question_leaves_the_list() {
    let loom = loom_with(Arc::new(ScriptDriver::default()));
    let (t, id) = asked(&loom, None).await;
    let key = t.session_key.clone();
    let mut sub = loom.subscribe(&key).await.unwrap_or_else(|e| panic!("{e}"));
    let mut snap = sub.snapshot.snapshot.clone();
    answer(&loom, &key, &id, InteractionResponse::select("allow")).await;
    loop {
        let ev = sub.patches.recv().await.unwrap_or_else(|e| panic!("{e}"));
        apply_in_place(&mut snap, &ev.patch);
        if snap.interactions.is_empty() {
            break;
        }
    }
    assert!(
        has_notice(&snap, "\"May I?\" answered allow"),
        "the question left the list before its answer was told: {:?}",
        snap.notices
    );
}

#[tokio::test]
async fn an_interaction_can_be_cancelled_and_a_stop_cancels_it_too() {
    let loom = loom_with(Arc::new(ScriptDriver::default()));
    let (t, id) = asked(&loom, None).await;
    let key = t.session_key.clone();
    answer(&loom, &key, &id, InteractionResponse::cancel()).await;
    let at = wait_for(&loom, &key, "done", done_with(&t.task_id)).await;
    assert_eq!(at.snapshot.text, "cancelled");

    let (t2, _) = asked(&loom, Some(&key)).await;
    loom.stop(&key).await.unwrap_or_else(|e| panic!("{e}"));
    let at = wait_for(&loom, &key, "stopped", done_with(&t2.task_id)).await;
    assert!(at.snapshot.interactions.is_empty());
    assert!(at.snapshot.incomplete);
    assert!(
        has_notice(
            &at.snapshot,
            "\"May I?\" was cancelled: the turn was stopped"
        ),
        "{:?}",
        at.snapshot.notices
    );
}

#[tokio::test]
async fn subscribers_get_gap_free_seqs_that_rebuild_the_snapshot() {
    let driver = Arc::new(ScriptDriver::default());
    let loom = loom_with(driver.clone());
    let key = send(&loom, prompt("hold:s", None)).await.session_key;
    let mut sub = loom.subscribe(&key).await.unwrap_or_else(|e| panic!("{e}"));
    let mut all = loom.subscribe_all();
    let mut snap = sub.snapshot.snapshot.clone();
    let mut seq = sub.snapshot.seq;
    let b = send(&loom, prompt("b", Some(&key))).await;
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
    let now = snapshot(&loom, &key).await;
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
    let (f, at) = finish(&loom, prompt("fail", None)).await;
    let key = f.session_key;
    assert_eq!(at.snapshot.error.as_deref(), Some("scripted failure"));
    assert!(at.snapshot.incomplete);
    let (_, at) = finish(&loom, prompt("panic", Some(&key))).await;
    assert!(at
        .snapshot
        .error
        .as_deref()
        .is_some_and(|e| e.contains("crashed")));
    let (_, at) = finish(&loom, prompt("fine", Some(&key))).await;
    assert_eq!(at.snapshot.text, "reply to fine");
    assert_eq!(at.snapshot.error, None);
}

#[tokio::test]
async fn the_agent_session_id_is_kept_and_passed_back_for_resume() {
    let loom = loom_with(Arc::new(ScriptDriver::default()));
    let (a, first) = finish(&loom, prompt("one", None)).await;
    let key = a.session_key;
    let id = first.snapshot.session_id.clone();
    assert!(id.is_some());
    let (_, second) = finish(&loom, prompt("two", Some(&key))).await;
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
    let a = hold(&loom, "q", None).await;
    let key = a.session_key.clone();
    let mut ids = Vec::new();
    for text in ["b", "c", "d"] {
        ids.push(send(&loom, prompt(text, Some(&key))).await.task_id);
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
    assert_eq!(
        order(&snapshot(&loom, &key).await.snapshot),
        ["d", "b", "c"]
    );
    loom.requeue(&key, &ids[2], 99)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        order(&snapshot(&loom, &key).await.snapshot),
        ["b", "c", "d"],
        "past the end moves it last"
    );
    loom.dequeue(&key, &ids[0])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(order(&snapshot(&loom, &key).await.snapshot), ["c", "d"]);

    // Refused clearly: position 0, a prompt not queued (removed, or the running one).
    assert!(loom.requeue(&key, &ids[1], 0).await.is_err());
    let gone = loom.dequeue(&key, &ids[0]).await;
    assert!(matches!(gone, Err(e) if e.to_string().contains("is queued")));
    assert!(loom.dequeue(&key, &a.task_id).await.is_err());
    assert!(loom.dequeue("script:nope", &ids[1]).await.is_err());

    driver.release("q");
    wait_for(&loom, &key, "d done", done_with(&ids[2])).await;
    let history = history(&loom, &key).await;
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
    let a = send(&loom, prompt("hold:a", None)).await;
    let at = snapshot(&loom, &a.session_key).await;
    assert_eq!(at.snapshot.task_id.as_deref(), Some(a.task_id.as_str()));
    assert_eq!(at.snapshot.phase, Phase::Streaming);
    driver.release("a");
    wait_for(&loom, &a.session_key, "a done", done_with(&a.task_id)).await;
}
