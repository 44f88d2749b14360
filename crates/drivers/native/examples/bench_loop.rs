//! The native loop's own cost against the scripted Anthropic server: run with
//! `cargo run --release -p weft-native --example bench_loop`.
//!
//! - Loop overhead per step: a 200-step turn (every reply one `update_plan` call, so the
//!   tool itself is in-process and cheap) — its wall time minus the time spent inside
//!   the model client (the HTTP round trip and SSE decoding), divided by the steps. What
//!   is left is Weft's: prompt assembly, the guard chain, tool dispatch, events, and the
//!   conversation appended to disk each step.
//! - Memory: the process's RSS before and after that 200-step session (history held in
//!   memory, the snapshot accumulated by the test sink), and the session file's size.
//!   The scripted server runs in a child process (this example with `--serve`): its
//!   recorder keeps every request, which is the test's memory, not Weft's.
//! - Compaction: the time to summarize that 200-step conversation into one message
//!   (one model round trip to the scripted server included).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use parking_lot::Mutex;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use weft_kernel::DriverContext;
use weft_native::config::{Endpoint, Protocol};
use weft_native::conversation::Message;
use weft_native::guard::SessionFlags;
use weft_native::model::{
    ModelClient, ModelError, ModelReply, ModelRequest, RetryPolicy, StreamEvent,
};
use weft_native::pack::{self, PermissionMode};
use weft_native::tools::{ToolRef, Workspace};
use weft_native::turn::{self, TurnSetup};
use weft_testkit::sink::TestSink;
use weft_testkit::{AnthropicServer, Script, Turn};

/// Times every call into the real client.
struct Timed {
    inner: Arc<dyn ModelClient>,
    nanos: AtomicU64,
    calls: AtomicU64,
}

#[async_trait]
impl ModelClient for Timed {
    fn origin(&self) -> &str {
        self.inner.origin()
    }
    fn provider_name(&self) -> &str {
        self.inner.provider_name()
    }
    async fn stream(
        &self,
        request: ModelRequest<'_>,
        cancel: &CancellationToken,
        sink: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<ModelReply, ModelError> {
        let t = Instant::now();
        let r = self.inner.stream(request, cancel, sink).await;
        self.nanos
            .fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
        self.calls.fetch_add(1, Ordering::Relaxed);
        r
    }
}

fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

const STEPS: usize = 200;

fn script() -> Script {
    let plan = json!({"steps": [{"text": "look", "status": "completed"}, {"text": "change", "status": "in_progress"}]});
    Script::new()
        .default_reply(
            Turn::new()
                .text("Next step.")
                .tool_use("t", "update_plan", plan),
        )
        .rule(
            weft_testkit::anthropic::when::no_tools(),
            Turn::text_reply(&"Summary of the work so far. ".repeat(40)),
        )
}

/// `--serve`: the scripted server, its address on stdout, until stdin closes.
async fn serve() {
    use tokio::io::AsyncReadExt;
    let server = AnthropicServer::start(script()).await.unwrap();
    println!("{}", server.base_url());
    let mut buf = [0u8; 1];
    let _ = tokio::io::stdin().read(&mut buf).await;
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    if std::env::args().any(|a| a == "--serve") {
        return serve().await;
    }
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap())
        .arg("--serve")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let base_url = lines.next_line().await.unwrap().unwrap();
    let endpoint = Endpoint {
        name: "scripted".into(),
        protocol: Protocol::AnthropicMessages,
        base_url,
        api_key: None,
        model: "bench".into(),
        models: Vec::new(),
        context_window: 10_000_000,
    };
    let timed = Arc::new(Timed {
        inner: endpoint.client(),
        nanos: AtomicU64::new(0),
        calls: AtomicU64::new(0),
    });
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let coding = pack::builtin("coding").unwrap();
    let mut tools: Vec<ToolRef> = coding.tools();
    tools.push(Arc::new(weft_native::tools::builtin::UpdatePlan));
    let setup = TurnSetup {
        client: timed.clone(),
        endpoint,
        pack: coding.clone(),
        tools,
        system: weft_native::prompt::system(coding.as_ref(), work.path(), None),
        max_steps: STEPS,
        retry: RetryPolicy::default(),
        env: Vec::new(),
        settings: Default::default(),
        home: home.path().to_path_buf(),
        session_id: "bench".into(),
        task_id: "t1".into(),
        effort: None,
        pack_name: "coding".into(),
        parent: None,
    };
    let ws = Workspace::new(work.path());
    let flags = SessionFlags {
        plan_mode: false.into(),
        permission: PermissionMode::Auto,
        allowed: Mutex::new(Default::default()),
        shell: Default::default(),
        workspace_trusted: false,
    };
    let sink = TestSink::new();
    let ctx = DriverContext::new(CancellationToken::new(), sink.clone());
    let mut messages = vec![Message::user("Work through the plan.")];
    // Warm up the connection pool and allocator with a short session first.
    {
        let mut warm = setup.clone();
        warm.max_steps = 5;
        warm.session_id = "warm".into();
        let mut m = messages.clone();
        turn::run(&warm, &ctx, &ws, &flags, &mut m).await;
    }
    timed.nanos.store(0, Ordering::Relaxed);
    timed.calls.store(0, Ordering::Relaxed);
    let before = rss_kb();
    let t = Instant::now();
    let result = turn::run(&setup, &ctx, &ws, &flags, &mut messages).await;
    let wall = t.elapsed();
    let after = rss_kb();
    assert!(
        result.error.unwrap_or_default().contains("maxSteps"),
        "the session did not run its 200 steps"
    );
    let model = Duration::from_nanos(timed.nanos.load(Ordering::Relaxed));
    let steps = timed.calls.load(Ordering::Relaxed);
    let own = wall.saturating_sub(model);
    let file = std::fs::metadata(weft_native::store::path(home.path(), "bench"))
        .map(|m| m.len())
        .unwrap_or(0);
    println!(
        "steps: {steps}; wall {:.1} ms; inside the model client {:.1} ms",
        wall.as_secs_f64() * 1e3,
        model.as_secs_f64() * 1e3
    );
    println!(
        "loop overhead per step: {:.3} ms (mean of {steps})",
        own.as_secs_f64() * 1e3 / steps as f64
    );
    println!(
        "model round trip per step (scripted server, loopback): {:.3} ms",
        model.as_secs_f64() * 1e3 / steps as f64
    );
    println!("RSS before {before} kB, after {after} kB: +{} kB for the {STEPS}-step session ({} messages held)", after.saturating_sub(before), messages.len());
    println!("session file: {} kB", file / 1024);
    let t = Instant::now();
    let done = weft_native::compact::compact(
        &mut messages,
        timed.as_ref(),
        "bench",
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    let took = t.elapsed();
    assert!(done);
    println!(
        "compaction of {} messages into {}: {:.1} ms (one scripted model round trip included)",
        2 * STEPS + 1,
        messages.len(),
        took.as_secs_f64() * 1e3
    );
}
