//! Parse throughput of the codex normalizer on a large recorded stream: the recorded
//! `codex app-server` transcripts (0.171.0: deltas, items, token usage, approvals),
//! their server lines repeated to ~20 MB, each parsed as JSON-RPC and normalized as the
//! driver does.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use weft_codex::normalize::Normalizer;
use weft_codex::rpc::{parse, Incoming};

fn recorded_stream() -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut lines = Vec::new();
    for name in [
        "t_app_basic.jsonl",
        "t_app_approval.jsonl",
        "t_app_steer.jsonl",
        "t_app_interrupt.jsonl",
        "t_app_filechange.jsonl",
        "t_app_reasoning.jsonl",
    ] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        for l in text.lines() {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            if v["dir"] == "out" && v["msg"].is_object() {
                lines.push(v["msg"].to_string().into_bytes());
            }
        }
    }
    let one: usize = lines.iter().map(|l| l.len() + 1).sum();
    let copies = (20 << 20) / one + 1;
    let mut all = Vec::with_capacity(lines.len() * copies);
    for _ in 0..copies {
        all.extend(lines.iter().cloned());
    }
    all
}

fn bench(c: &mut Criterion) {
    let stream = recorded_stream();
    let bytes: usize = stream.iter().map(|l| l.len() + 1).sum();
    eprintln!("stream: {} bytes, {} lines", bytes, stream.len());
    let mut group = c.benchmark_group("codex_normalize");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sample_size(10);
    group.bench_function("recorded_stream", |b| {
        b.iter(|| {
            let mut norm = Normalizer::new(Some("mock".into()));
            norm.begin_turn(None);
            let mut events = Vec::new();
            let mut n = 0usize;
            for line in &stream {
                if let Ok(Incoming::Notification { method, params }) = parse(line) {
                    if norm.notification(&method, params, &mut events).is_some() {
                        norm.begin_turn(None);
                    }
                }
                n += events.len();
                events.clear();
            }
            black_box(n)
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
