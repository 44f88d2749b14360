//! A fast turn's patches reach a subscribed client merged (`from`..=`seq`), and folding
//! them by the rule every surface uses rebuilds the daemon's snapshot exactly.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use weft_client::{Client, Event, Home};
use weft_kernel::{AgentDriver, AgentTurnInput, DriverContext, DriverResult};
use weft_protocol::verb;
use weft_protocol::{
    apply_in_place, AgentInfo, Capabilities, ClientRequest, DriverEvent, Phase, PromptAccepted,
    PromptRequest, ServerMessage, SnapshotAt,
};

const DELTAS: usize = 20_000;

/// Streams `DELTAS` numbered deltas as fast as the kernel takes them.
struct Fast;

#[async_trait]
impl AgentDriver for Fast {
    fn id(&self) -> &str {
        "fast"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }

    async fn info(&self) -> AgentInfo {
        AgentInfo {
            id: "fast".into(),
            name: "fast".into(),
            installed: true,
            version: None,
            capabilities: self.capabilities(),
            problem: None,
            facts: Default::default(),
        }
    }

    async fn run(&self, _input: AgentTurnInput, ctx: DriverContext) -> DriverResult {
        for i in 0..DELTAS {
            ctx.emit(DriverEvent::Text {
                delta: format!("{i:07} "),
            });
            if i % 64 == 63 {
                tokio::task::yield_now().await;
            }
        }
        DriverResult::ok()
    }
}

async fn snapshot(client: &Client, key: &str) -> SnapshotAt {
    client
        .send(verb::GetSnapshot {
            session_key: key.to_string(),
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fast_turn_reaches_a_subscriber_merged_and_whole() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let home = Home::at(dir.path().join("home"));
    let daemon = tokio::spawn(weft_daemon::run(weft_daemon::Options {
        home: home.clone(),
        idle: Duration::from_secs(600),
        listen: Vec::new(),
        extra_drivers: vec![Arc::new(Fast)],
    }));
    let hello = weft_client::hello_with_env("test");
    let (client, mut events) = loop {
        match Client::connect(&home, hello.clone()).await {
            Ok(c) => break c,
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    };
    // Re-reads go over a connection of their own, as a window's do.
    let (ask, mut ask_events) = Client::connect(&home, hello.clone())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    tokio::spawn(async move { while ask_events.recv().await.is_some() {} });
    client
        .send(verb::SubscribeAll {})
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let accepted: PromptAccepted = client
        .send(PromptRequest {
            prompt: "go".into(),
            agent: Some("fast".into()),
            workdir: Some(dir.path().to_string_lossy().into_owned()),
            ..Default::default()
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let key = accepted.session_key;
    let (mut snap, mut seq) = (Default::default(), 0u64);
    let (mut merged, mut frames) = (0u64, 0u64);
    let mut opened = false;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let next = tokio::time::timeout_at(deadline, events.recv())
            .await
            .unwrap_or_else(|_| panic!("timed out at seq {seq}"));
        match next {
            Some(Event::Message(ServerMessage::Patch(ev))) if ev.session_key == key => {
                frames += 1;
                if ev.from.is_some() {
                    merged += 1;
                }
                if !opened {
                    // A session new to this client: its start is read, as a window opens it.
                    opened = true;
                    let at = snapshot(&ask, &key).await;
                    (snap, seq) = (at.snapshot, at.seq);
                }
                if ev.seq <= seq {
                    continue;
                }
                if ev.first_seq() == seq + 1 {
                    apply_in_place(&mut snap, &ev.patch);
                    seq = ev.seq;
                } else {
                    let at = snapshot(&ask, &key).await;
                    (snap, seq) = (at.snapshot, at.seq);
                }
            }
            Some(Event::Message(ServerMessage::Resync { .. })) => {
                let at = snapshot(&ask, &key).await;
                (snap, seq) = (at.snapshot, at.seq);
            }
            Some(_) => continue,
            None => panic!("the daemon went away"),
        }
        if snap.phase == Phase::Done && snap.task_id.as_deref() == Some(&accepted.task_id) {
            break;
        }
    }
    let expected: String = (0..DELTAS).map(|i| format!("{i:07} ")).collect();
    assert!(
        snap.text == expected,
        "the folded text is not the whole reply"
    );
    // Patches after the end (the session's record) may still come: fold up to the
    // daemon's seq, then the two must be equal.
    let at = snapshot(&ask, &key).await;
    while seq < at.seq {
        match tokio::time::timeout_at(deadline, events.recv()).await {
            Ok(Some(Event::Message(ServerMessage::Patch(ev))))
                if ev.session_key == key && ev.first_seq() == seq + 1 =>
            {
                apply_in_place(&mut snap, &ev.patch);
                seq = ev.seq;
            }
            Ok(Some(_)) => {}
            _ => panic!("the patches up to seq {} never came (at {seq})", at.seq),
        }
    }
    assert_eq!(seq, at.seq);
    assert!(
        snap == at.snapshot,
        "the client's snapshot is not the daemon's"
    );
    assert!(merged > 0, "no patch arrived merged ({frames} frames)");
    assert!(
        frames < DELTAS as u64,
        "{frames} frames for {DELTAS} deltas"
    );
    drop(events);
    let _ = client.request(ClientRequest::DaemonStop {}).await;
    let _ = daemon.await;
}
