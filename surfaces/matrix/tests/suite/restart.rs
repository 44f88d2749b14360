//! Restarts: of the daemon in the middle of a turn, and of the bot itself; and a turn
//! under Synapse's default message limit.

use weft_protocol::{verb, Phase};

use super::harness::{until, World};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_restart_mid_turn_neither_loses_the_reply_nor_answers_twice() {
    let Some(mut w) = World::new(true).await else {
        return;
    };
    w.start_bot();
    let control = w.control_room().await;
    let (room, key) = w.new_session(&control, "slow and long").await;
    // The turn streams into its reply message.
    let reply = w
        .wait_message(&room, "streamed text", |t| {
            t.contains("Echo: slow and long")
        })
        .await;
    let (ok, out) = w.weft(&["daemon", "stop"]);
    assert!(ok, "{out}");
    // The bot reconnects (starting a daemon again) and closes the cut turn with all the
    // text that was kept.
    w.wait_message(&room, "the stopped message", |t| t.starts_with("⏹ Stopped"))
        .await;
    let turn = w
        .daemon(verb::GetHistory {
            session_key: key.clone(),
            limit: Some(10),
            before: None,
        })
        .await;
    assert_eq!(turn.len(), 1, "the prompt ran once");
    let kept = turn[0].text.clone();
    let shown = until("the final edit with all the kept text", || {
        let w = &w;
        let room = room.clone();
        let id = reply.0.clone();
        let kept = kept.clone();
        async move {
            w.bot_messages(&room)
                .await
                .into_iter()
                .find(|m| m.0 == id && m.1 == kept)
        }
    })
    .await;
    assert_eq!(shown.1, kept);

    // The bot itself crashes and comes back: nothing is run or answered again.
    w.say(&room, "after the restart").await;
    w.wait_message(&room, "the next reply", |t| {
        t.contains("Echo: after the restart")
    })
    .await;
    let before = w.bot_messages(&room).await.len();
    w.kill_bot();
    w.start_bot();
    // A new message after the restart is handled, so everything before it was seen.
    w.say(&room, "last one").await;
    w.wait_message(&room, "the last reply", |t| t.contains("Echo: last one"))
        .await;
    until("the last turn done", || {
        let w = &w;
        let key = key.clone();
        async move {
            let at = w.daemon(verb::GetSnapshot { session_key: key }).await;
            (at.snapshot.phase == Phase::Done).then_some(())
        }
    })
    .await;
    let history = w
        .daemon(verb::GetHistory {
            session_key: key,
            limit: Some(10),
            before: None,
        })
        .await;
    let prompts: Vec<&str> = history.iter().map(|t| t.prompt.as_str()).collect();
    assert_eq!(
        prompts,
        ["slow and long", "after the restart", "last one"],
        "each prompt ran once"
    );
    let after = w.bot_messages(&room).await;
    let echoes = after
        .iter()
        .filter(|m| m.1.contains("Echo: after the restart"))
        .count();
    assert_eq!(echoes, 1, "no reply was sent twice: {after:#?}");
    assert!(after.len() > before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_synapses_default_limit_the_final_text_still_arrives_whole() {
    let Some(mut w) = World::new(false).await else {
        return;
    };
    w.start_bot();
    let control = w.control_room().await;
    let (room, key) = w
        .new_session(&control, "slow under the default limit")
        .await;
    w.wait_message(&room, "the done message", |t| t.starts_with("✅ Done"))
        .await;
    let at = w.daemon(verb::GetSnapshot { session_key: key }).await;
    let reply = w
        .bot_messages(&room)
        .await
        .into_iter()
        .find(|m| m.1.contains("Echo: slow under"))
        .unwrap_or_else(|| panic!("no reply"));
    assert_eq!(
        reply.1, at.snapshot.text,
        "the final edit carries the whole text"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_killed_mid_turn_resumes_editing_the_same_reply() {
    let Some(mut w) = World::new(true).await else {
        return;
    };
    w.start_bot();
    let control = w.control_room().await;
    let (room, key) = w.new_session(&control, "slow while the bot dies").await;
    let reply = w
        .wait_message(&room, "streamed text", |t| t.contains("Echo: slow while"))
        .await;
    w.kill_bot();
    w.start_bot();
    w.wait_message(&room, "the done message", |t| t.starts_with("✅ Done"))
        .await;
    let at = w.daemon(verb::GetSnapshot { session_key: key }).await;
    let text = at.snapshot.text.clone();
    w.wait_edit(
        &room,
        &reply.0,
        "the same message edited to the whole text",
        |t| t == text,
    )
    .await;
    let replies = w
        .bot_messages(&room)
        .await
        .into_iter()
        .filter(|m| m.1.contains("Echo: slow while"))
        .count();
    assert_eq!(replies, 1, "one reply message, resumed, not a second one");
}
