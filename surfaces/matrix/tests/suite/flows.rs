//! What a user does from a phone, each test on its own daemon and bot.

use std::time::Duration;

use weft_protocol::verb;

use super::harness::{until, World};

const DONE: &str = "✅ Done";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_allow_list_and_a_session_started_from_the_control_room_streams_its_reply() {
    let Some(mut w) = World::new(true).await else {
        return;
    };
    let status = w.status();
    assert_eq!(status["user"], w.bot_id.as_str());
    assert_eq!(status["homeserver"], w.synapse.url.as_str());
    assert!(status["deviceId"].as_str().is_some_and(|d| !d.is_empty()));
    assert_eq!(
        status["verified"], true,
        "cross-signing was set up: {status}"
    );
    assert_eq!(status["allowed"], serde_json::json!([]));
    for key in [
        "homeserver",
        "user",
        "deviceId",
        "verified",
        "allowed",
        "rooms",
    ] {
        assert!(status.get(key).is_some(), "{key} missing from {status}");
    }
    // No secret in the surface's files.
    for file in ["config.json", "state.json"] {
        let text = std::fs::read_to_string(w.home.join("matrix").join(file)).unwrap_or_default();
        assert!(!text.contains("syt_"), "an access token in {file}");
    }
    let (ok, out) = w.matrix_cli(&["allow", "not-an-id"], None);
    assert!(!ok, "{out}");
    let stranger = "@someone:localhost";
    assert!(w.matrix_cli(&["allow", stranger], None).0);
    assert!(w.matrix_cli(&["deny", stranger], None).0);
    w.start_bot();
    let control = w.control_room().await;
    assert!(
        control
            .latest_encryption_state()
            .await
            .map(|s| s.is_encrypted())
            .unwrap_or(false),
        "the control room the bot makes is end-to-end encrypted"
    );
    assert_eq!(
        w.status()["allowed"],
        serde_json::json!([w.phone_id.clone()])
    );

    let (room, key) = w.new_session(&control, "hello from the phone").await;
    assert!(key.starts_with("echo:"), "{key}");
    let reply = w
        .wait_message(&room, "the streamed reply", |t| {
            t.contains("Echo: hello from the phone")
        })
        .await;
    w.wait_message(&room, "the done message", |t| t.starts_with(DONE))
        .await;
    // The reply was one message, edited (not a message per piece).
    let replies: Vec<_> = w
        .bot_messages(&room)
        .await
        .into_iter()
        .filter(|m| m.1.contains("Echo:"))
        .collect();
    assert_eq!(replies.len(), 1, "{replies:#?}");
    assert!(reply.2 >= 1, "the reply was edited into place");

    // A second prompt in the session's room continues the session.
    w.say(&room, "and a second one").await;
    w.wait_message(&room, "the second reply", |t| {
        t.contains("Echo: and a second one")
    })
    .await;
    let history = w
        .daemon(verb::GetHistory {
            session_key: key.clone(),
            limit: Some(10),
            before: None,
        })
        .await;
    assert_eq!(history.len(), 2, "two turns, each run once");

    w.say(&control, "sessions").await;
    w.wait_message(&control, "the session list", |t| t.contains(&key))
        .await;
    w.say(&control, "inbox").await;
    w.wait_message(&control, "the empty inbox", |t| t.contains("Nothing waits"))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permission_is_answered_by_number_and_by_reaction_and_closes_in_the_inbox() {
    let Some(mut w) = World::new(true).await else {
        return;
    };
    w.start_bot();
    let control = w.control_room().await;
    let (room, key) = w.new_session(&control, "ask permission please").await;
    let question = w
        .wait_message(&room, "the permission message", |t| {
            t.contains("Permission needed")
        })
        .await;
    assert!(question.1.contains("1. Allow once"), "{}", question.1);
    let inbox = w.daemon(verb::Inbox {}).await;
    assert_eq!(inbox.len(), 1, "the question waits in the inbox");
    w.say(&room, "1").await;
    w.wait_message(&room, "the closed question", |t| {
        t.starts_with("✔ Answered by")
    })
    .await;
    w.wait_message(&room, "the done message", |t| t.starts_with(DONE))
        .await;
    assert!(
        w.daemon(verb::Inbox {}).await.is_empty(),
        "closed in the inbox"
    );
    let (_, out) = w.weft(&["inbox"]);
    assert!(
        !out.contains("write_note"),
        "weft inbox still lists it: {out}"
    );

    // The same by reaction.
    w.say(&room, "once more, permission").await;
    let second = until("a second permission message", || {
        let w = &w;
        let room = room.clone();
        let first = question.0.clone();
        async move {
            w.bot_messages(&room)
                .await
                .into_iter()
                .find(|m| m.1.contains("Permission needed") && m.0 != first)
        }
    })
    .await;
    w.react(&room, &second.0, "✅").await;
    w.wait_edit(&room, &second.0, "the reaction's answer", |t| {
        t.starts_with("✔ Answered by")
    })
    .await;
    assert!(w.daemon(verb::Inbox {}).await.is_empty());
    let history = w
        .daemon(verb::GetHistory {
            session_key: key,
            limit: Some(10),
            before: None,
        })
        .await;
    assert_eq!(history.len(), 2);
    assert!(history.iter().all(|t| t.error.is_none()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_answered_elsewhere_is_edited_to_say_so() {
    let Some(mut w) = World::new(true).await else {
        return;
    };
    w.start_bot();
    let control = w.control_room().await;
    let (room, _key) = w.new_session(&control, "a question for you").await;
    let asked = w
        .wait_message(&room, "the question", |t| t.contains("Which color"))
        .await;
    let inbox = w.daemon(verb::Inbox {}).await;
    let id = inbox
        .first()
        .map(|i| i.prompt_id.clone())
        .unwrap_or_default();
    let (ok, out) = w.weft(&["answer", &id, "--select", "blue"]);
    assert!(ok, "{out}");
    // It says by whom and with what: the kernel's notice names the CLI.
    let closed = w
        .wait_edit(
            &room,
            &asked.0,
            "the question closed as answered with the weft command",
            |t| t.contains("with the weft command"),
        )
        .await;
    assert!(closed.to_lowercase().contains("answered blue"), "{closed}");
    w.wait_message(&room, "the reply", |t| t.contains("You picked blue"))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_during_a_turn_steers_it_and_stop_ends_it() {
    let Some(mut w) = World::new(true).await else {
        return;
    };
    w.start_bot();
    let control = w.control_room().await;
    let (room, key) = w.new_session(&control, "slow work please").await;
    w.wait_message(&room, "the reply message", |t| {
        !t.contains("control room") && !t.is_empty()
    })
    .await;
    w.say(&room, "go left instead").await;
    w.wait_message(&room, "the steer acknowledgement", |t| {
        t.starts_with("↪ Steered")
    })
    .await;
    w.wait_message(&room, "the steer in the reply", |t| {
        t.contains("Steered: \"go left instead\"")
    })
    .await;
    w.wait_message(&room, "the done message", |t| t.starts_with(DONE))
        .await;

    w.say(&room, "slow again").await;
    until("the second turn streaming", || {
        let w = &w;
        let key = key.clone();
        async move {
            let at = w.daemon(verb::GetSnapshot { session_key: key }).await;
            (at.snapshot.phase == weft_protocol::Phase::Streaming).then_some(())
        }
    })
    .await;
    w.say(&room, "!stop").await;
    w.wait_message(&room, "the stopped message", |t| t.starts_with("⏹ Stopped"))
        .await;
    let history = w
        .daemon(verb::GetHistory {
            session_key: key,
            limit: Some(10),
            before: None,
        })
        .await;
    assert_eq!(history.len(), 2);
    assert!(history.last().is_some_and(|t| t.incomplete));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_sent_to_the_room_reaches_the_agent() {
    let Some(mut w) = World::new(true).await else {
        return;
    };
    w.start_bot();
    let control = w.control_room().await;
    let (room, key) = w.new_session(&control, "hi").await;
    w.wait_message(&room, "the first turn's end", |t| t.starts_with(DONE))
        .await;
    // A real PNG (1x1), so the daemon's image check passes.
    let png: Vec<u8> = vec![
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0,
        0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89, 0, 0, 0, 0x0d, 0x49, 0x44,
        0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0, 0x1f, 0, 0x05, 0x00, 0x01, 0xff,
        0x89, 0x99, 0x3d, 0x1d, 0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
    ];
    room.send_attachment("dot.png", &mime::IMAGE_PNG, png.clone(), Default::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let turn = until("a turn with the image attached", || {
        let w = &w;
        let key = key.clone();
        async move {
            let history = w
                .daemon(verb::GetHistory {
                    session_key: key,
                    limit: Some(10),
                    before: None,
                })
                .await;
            history.into_iter().find(|t| !t.attachments.is_empty())
        }
    })
    .await;
    let path = &turn.attachments[0];
    assert!(path.ends_with("dot.png"), "{path}");
    assert_eq!(
        std::fs::read(path).unwrap_or_default(),
        png,
        "the agent got the image's bytes"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stranger_is_ignored_and_an_unencrypted_direct_chat_becomes_a_control_room() {
    let Some(mut w) = World::new(true).await else {
        return;
    };
    w.start_bot();
    let control = w.control_room().await;
    let (room, key) = w.new_session(&control, "hello").await;
    w.wait_message(&room, "the first turn's end", |t| t.starts_with(DONE))
        .await;
    // A stranger, invited into the session's room by the phone, speaks there.
    let stranger_name = format!("stranger{}", std::process::id());
    let (stranger, _sync) =
        super::harness::user_client(w.synapse, w.dir.path(), &stranger_name).await;
    let stranger_id = format!("@{stranger_name}:localhost");
    room.invite_user_by_id(
        stranger_id
            .as_str()
            .try_into()
            .unwrap_or_else(|e| panic!("{e}")),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let theirs = until("the stranger's invitation", || {
        let s = stranger.clone();
        async move { s.invited_rooms().into_iter().next() }
    })
    .await;
    theirs.join().await.unwrap_or_else(|e| panic!("{e}"));
    tokio::time::sleep(Duration::from_secs(1)).await;
    let their_room = stranger
        .get_room(room.room_id())
        .unwrap_or_else(|| panic!("not joined"));
    their_room
        .send(
            matrix_sdk::ruma::events::room::message::RoomMessageEventContent::text_plain(
                "rm -rf everything",
            ),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // The stranger also invites the bot into a room of their own.
    let request = matrix_sdk::ruma::api::client::room::create_room::v3::Request::new();
    let own = stranger
        .create_room(request)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    own.invite_user_by_id(
        w.bot_id
            .as_str()
            .try_into()
            .unwrap_or_else(|e| panic!("{e}")),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    // Then the phone opens an unencrypted direct chat with the bot: it is joined and
    // greeted, which shows the bot has handled everything sent before.
    let mut request = matrix_sdk::ruma::api::client::room::create_room::v3::Request::new();
    request.invite = vec![w
        .bot_id
        .as_str()
        .try_into()
        .unwrap_or_else(|e| panic!("{e}"))];
    request.is_direct = true;
    let dm = w
        .phone
        .create_room(request)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    w.wait_message(&dm, "the greeting in the phone's own direct chat", |t| {
        t.contains("control room")
    })
    .await;
    let history = w
        .daemon(verb::GetHistory {
            session_key: key,
            limit: Some(10),
            before: None,
        })
        .await;
    assert_eq!(history.len(), 1, "the stranger's message ran nothing");
    assert!(
        w.bot_log().contains("not on the allow-list"),
        "the stranger was logged: {}",
        w.bot_log()
    );
    let joined = own
        .members(matrix_sdk::RoomMemberships::JOIN)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        joined.iter().all(|m| m.user_id().as_str() != w.bot_id),
        "the bot did not join the stranger's room"
    );
    // In a room of three, the closing message mentions the user.
    w.say(&room, "one more").await;
    w.wait_message(&room, "a mention in the done message", |t| {
        t.contains(&w.phone_id) && t.contains(DONE)
    })
    .await;
}
