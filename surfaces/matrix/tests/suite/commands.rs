//! The `!` commands of a session's room, questions of several kinds, and files the
//! agent produces.

use matrix_sdk::ruma::events::relation::InReplyTo;
use matrix_sdk::ruma::events::room::message::{Relation, RoomMessageEventContent};
use matrix_sdk::ruma::OwnedEventId;
use weft_protocol::{verb, Phase};

use super::harness::{until, World};

const DONE: &str = "✅ Done";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_survey_takes_several_choices_and_free_text_in_a_reply() {
    let Some(mut w) = World::new(true).await else {
        return;
    };
    w.start_bot();
    let control = w.control_room().await;
    let (room, _key) = w.new_session(&control, "a survey please").await;
    let asked = w
        .wait_message(&room, "the survey", |t| t.contains("Which toppings?"))
        .await;
    assert!(asked.1.contains("several: 1,3"), "{}", asked.1);
    // A plain "1,3" is not enough for two questions; a reply with a line each is.
    let mut content = RoomMessageEventContent::text_plain("1,3\nfamily");
    let target = OwnedEventId::try_from(asked.0.as_str()).unwrap_or_else(|e| panic!("{e}"));
    content.relates_to = Some(Relation::Reply(
        matrix_sdk::ruma::events::relation::Reply::new(InReplyTo::new(target)),
    ));
    room.send(content).await.unwrap_or_else(|e| panic!("{e}"));
    w.wait_message(&room, "the echoed answers", |t| {
        t.contains("toppings=[cheese, basil]") && t.contains("size=[family]")
    })
    .await;
    w.wait_edit(&room, &asked.0, "the survey closed", |t| {
        t.starts_with("✔ Answered by")
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bang_commands_status_terminal_model_queue_and_agent() {
    let Some(mut w) = World::new(true).await else {
        return;
    };
    w.start_bot();
    let control = w.control_room().await;
    let (room, key) = w.new_session(&control, "hello").await;
    w.wait_message(&room, "the first turn's end", |t| t.starts_with(DONE))
        .await;
    // The file the agent produced came as an attachment, before the closing message.
    let messages = w.bot_messages(&room).await;
    assert!(
        messages.iter().any(|m| m.1.ends_with(".md")),
        "{messages:#?}"
    );

    w.say(&room, "!status").await;
    w.wait_message(&room, "the status", |t| {
        t.starts_with(&format!("{key}: Done"))
    })
    .await;
    w.say(&room, "!terminal").await;
    let terminal = w
        .wait_message(&room, "where the terminal is", |t| {
            t.contains("weft attach")
        })
        .await;
    assert!(
        !terminal.1.contains("http") && !terminal.1.contains("token="),
        "{}",
        terminal.1
    );

    w.say(&room, "!model echo-large").await;
    w.wait_message(&room, "the model noted", |t| t.contains("model echo-large"))
        .await;
    w.say(&room, "slow with the large model").await;
    until("the turn on the new model streaming", || {
        let w = &w;
        let key = key.clone();
        async move {
            let at = w.daemon(verb::GetSnapshot { session_key: key }).await;
            (at.snapshot.phase == Phase::Streaming).then_some(at.snapshot)
        }
    })
    .await;
    w.say(&room, "!queue then this").await;
    w.wait_message(&room, "the queue acknowledgement", |t| {
        t.starts_with("⏳ Queued behind")
    })
    .await;
    w.wait_message(&room, "the queued turn's reply", |t| {
        t.contains("Echo: then this")
    })
    .await;
    let history = w
        .daemon(verb::GetHistory {
            session_key: key.clone(),
            limit: Some(10),
            before: None,
        })
        .await;
    let prompts: Vec<&str> = history.iter().map(|t| t.prompt.as_str()).collect();
    assert_eq!(prompts, ["hello", "slow with the large model", "then this"]);
    assert_eq!(
        history[1].model.as_deref(),
        Some("echo-large"),
        "!model reached the agent"
    );

    w.say(&room, "!agent no-such-agent").await;
    w.wait_message(&room, "the refused switch", |t| t.starts_with("⚠"))
        .await;
    w.say(&room, "!nonsense").await;
    w.wait_message(&room, "the help", |t| t.contains("!steer TEXT"))
        .await;
}
