//! The Matrix surface's latencies and footprint (ignored by default; run by
//! surfaces/matrix/bench.sh). Times are the homeserver's own `origin_server_ts` and
//! the daemon's snapshot times, both from this machine's clock:
//! - first reply: the prompt message → the bot's reply message;
//! - final edit: the turn's end in the daemon → the reply's last edit;
//! - edits per turn, and the bot's RSS (now and peak).
//!
//! Each mode runs the same turns: an echo turn of about 9 s of streamed text.

use serde_json::{json, Value};
use weft_protocol::verb;

use super::harness::{timeline, World};

const TURNS: usize = 3;

fn rss_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

async fn measure(lifted: bool) -> Value {
    let Some(mut w) = World::new(lifted).await else {
        return Value::Null;
    };
    w.start_bot();
    let control = w.control_room().await;
    let (room, key) = w.new_session(&control, "warm up").await;
    w.wait_message(&room, "the warm-up turn's end", |t| {
        t.starts_with("✅ Done")
    })
    .await;
    let mut rows = Vec::new();
    for i in 0..TURNS {
        let prompt = format!("slow benchmark turn number {i}");
        let sent = w.say(&room, &prompt).await;
        let echo = format!("Echo: {prompt}");
        w.wait_message(&room, "the turn's reply", |t| t.contains(&echo))
            .await;
        // Its end in the daemon, then every edit of its reply.
        let turn = loop {
            let history = w
                .daemon(verb::GetHistory {
                    session_key: key.clone(),
                    limit: Some(20),
                    before: None,
                })
                .await;
            if let Some(t) = history.into_iter().find(|t| t.prompt == prompt) {
                break t;
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        };
        // Wait until the reply shows the whole text.
        w.wait_message(&room, "the final text", |t| t == turn.text)
            .await;
        let events = timeline(&room).await;
        let ts = |e: &Value| e["origin_server_ts"].as_i64().unwrap_or(0);
        let prompt_ts = events
            .iter()
            .find(|e| e["event_id"] == sent.as_str())
            .map(ts)
            .unwrap_or(0);
        // The reply is the message whose text became this turn's (under the default
        // limit the previous turn's closing message may come after this prompt).
        let reply_id = w
            .bot_messages(&room)
            .await
            .into_iter()
            .find(|m| m.1 == turn.text)
            .map(|m| m.0)
            .unwrap_or_default();
        let reply = events
            .iter()
            .find(|e| e["event_id"] == reply_id.as_str())
            .cloned()
            .unwrap_or_default();
        let edits: Vec<&Value> = events
            .iter()
            .filter(|e| {
                e["content"]["m.relates_to"]["rel_type"] == "m.replace"
                    && e["content"]["m.relates_to"]["event_id"] == reply_id.as_str()
            })
            .collect();
        let last_edit = edits.iter().map(|e| ts(e)).max().unwrap_or(0);
        rows.push(json!({
            "firstReplyMs": ts(&reply) - prompt_ts,
            "finalEditMs": last_edit - turn.updated_at,
            "edits": edits.len(),
            "turnMs": turn.updated_at - turn.started_at.unwrap_or(turn.updated_at),
        }));
        // This turn's closing message (the warm-up's is the first).
        super::harness::until("this turn's closing message", || {
            let w = &w;
            let room = room.clone();
            async move {
                let done = w
                    .bot_messages(&room)
                    .await
                    .iter()
                    .filter(|m| m.1.starts_with("✅ Done"))
                    .count();
                (done >= i + 2).then_some(())
            }
        })
        .await;
    }
    let (rss, peak) = w.bot_pid().map(rss_kib).unwrap_or_default();
    json!({"limits": if lifted { "lifted" } else { "synapse defaults" }, "turns": rows, "rssKiB": rss, "peakRssKiB": peak})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a benchmark: surfaces/matrix/bench.sh"]
async fn bench_matrix_surface() {
    for lifted in [true, false] {
        let result = measure(lifted).await;
        println!("BENCH {result}");
    }
}
