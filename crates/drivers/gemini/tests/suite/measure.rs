//! Whole-process turn latency against the scripted server (not a test: run with
//! `cargo test --release -p weft-gemini --test all measure -- --ignored --nocapture`;
//! figures in BENCHMARKS.md).

use std::time::{Duration, Instant};

use serde_json::json;
use weft_kernel::AgentDriver;
use weft_testkit::gemini::{Script, Turn};
use weft_testkit::GeminiServer;

use super::support::*;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, not a test"]
async fn measure_turn_latency() {
    let Some(_) = gemini_bin() else { return };
    let server = GeminiServer::start(Script::new().default_reply(Turn::text_reply("ok")))
        .await
        .unwrap();
    let (mut cold, mut warm, mut resumed) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..5 {
        let h = Home::new(json!({}));
        let d = driver();
        let key = format!("gemini:m{i}");
        let t = Instant::now();
        let (r, _) = run(
            &d,
            h.input(&key, "one", &server.base_url()),
            &TestSink::new(),
        )
        .await;
        cold.push(t.elapsed());
        assert!(r.ok);
        let mut input = h.input(&key, "two", &server.base_url());
        input.session_id = r.session_id.clone();
        let t = Instant::now();
        let (r2, _) = run(&d, input, &TestSink::new()).await;
        warm.push(t.elapsed());
        assert!(r2.ok);
        d.shutdown().await;
        let d2 = driver();
        let mut input = h.input(&key, "three", &server.base_url());
        input.session_id = r.session_id.clone();
        let t = Instant::now();
        let (r3, _) = run(&d2, input, &TestSink::new()).await;
        resumed.push(t.elapsed());
        assert!(r3.ok);
    }
    eprintln!(
        "gemini turn latency (median of 5): cold ACP (spawn, initialize, session/new, prompt) {:?}; warm ACP {:?}; headless --resume {:?}",
        median(cold),
        median(warm),
        median(resumed)
    );
}
