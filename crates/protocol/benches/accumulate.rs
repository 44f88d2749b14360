//! accumulate → patch → serialize, the per-event hot path of streaming.
//!
//! `turn_1m`: one turn of 1,000,000 text deltas, each folded into the snapshot, turned
//! into its patch and serialized as the wire's `PatchEvent`. `early` vs `late`: the
//! same 10,000 events into an empty snapshot and into one already holding 990,000
//! deltas (and 1,000 tool calls): per-event cost must not grow with the transcript.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::json;
use weft_protocol::{
    Accumulator, DriverEvent, PatchEvent, ToolCall, ToolKind, ToolStatus, UniversalSnapshot,
};

const TURN: u64 = 1_000_000;
const WINDOW: u64 = 10_000;

fn text(i: u64) -> DriverEvent {
    DriverEvent::Text {
        delta: if i.is_multiple_of(16) {
            "word\n".into()
        } else {
            "tok ".into()
        },
    }
}

fn tool(i: u64, status: ToolStatus) -> DriverEvent {
    DriverEvent::Tool {
        call: ToolCall {
            id: format!("call-{i}"),
            name: "Bash".into(),
            summary: format!("run step {i}"),
            input: json!({"command": "cargo test"}),
            result: (status != ToolStatus::Running).then(|| "ok".to_string()),
            status,
            kind: ToolKind::Shell,
            parent_id: None,
            changes: Vec::new(),
        },
    }
}

/// Mostly text, a tool call started and finished every 1,000 events.
fn event(i: u64) -> DriverEvent {
    match i % 1000 {
        500 => tool(i / 1000, ToolStatus::Running),
        999 => tool(i / 1000, ToolStatus::Done),
        _ => text(i),
    }
}

/// Folds events `range` into `acc`, serializing every patch; returns bytes written.
fn run(acc: &mut Accumulator, range: std::ops::Range<u64>, buf: &mut Vec<u8>) -> usize {
    let mut bytes = 0;
    for i in range {
        let patch = acc.apply(&event(i), i as i64);
        let wire = PatchEvent {
            session_key: "echo:bench".into(),
            seq: i + 1,
            from: None,
            patch,
        };
        buf.clear();
        let _ = serde_json::to_writer(&mut *buf, &wire);
        bytes += buf.len();
    }
    bytes
}

fn grown(n: u64) -> Accumulator {
    let mut acc = Accumulator::new(UniversalSnapshot::default());
    let mut buf = Vec::with_capacity(512);
    run(&mut acc, 0..n, &mut buf);
    acc
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("accumulate");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.throughput(Throughput::Elements(TURN));
    group.bench_function("turn_1m", |b| {
        let mut buf = Vec::with_capacity(512);
        b.iter(|| {
            let mut acc = Accumulator::new(UniversalSnapshot::default());
            black_box(run(&mut acc, 0..TURN, &mut buf));
            acc
        })
    });
    group.finish();

    let mut group = c.benchmark_group("per_event");
    group.throughput(Throughput::Elements(WINDOW));
    let start_late = TURN - WINDOW;
    group.bench_function("early", |b| {
        let mut buf = Vec::with_capacity(512);
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut acc = Accumulator::new(UniversalSnapshot::default());
                let t = Instant::now();
                black_box(run(&mut acc, 0..WINDOW, &mut buf));
                total += t.elapsed();
            }
            total
        })
    });
    let late = grown(start_late);
    group.bench_function("late", |b| {
        let mut buf = Vec::with_capacity(512);
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut acc = late.clone();
                let t = Instant::now();
                black_box(run(&mut acc, start_late..TURN, &mut buf));
                total += t.elapsed();
            }
            total
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
