//! Parse throughput of the Claude normalizer on a large recorded stream: the recorded
//! partial-message transcripts of the real CLI (2.1.197), repeated to ~20 MB of
//! stream-json, parsed and normalized line by line as the driver does.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use weft_claude::lines::{parse, Parsed};
use weft_claude::normalize::Normalizer;

fn recorded_stream() -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut lines = Vec::new();
    for name in [
        "t_steer.jsonl",
        "t_interrupt.jsonl",
        "t_multiturn.jsonl",
        "t_permission_stdio.jsonl",
        "t_steer_tool.jsonl",
    ] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        for l in text.lines() {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            if v["dir"] == "out" {
                lines.push(v["msg"].to_string().into_bytes());
            }
        }
    }
    let raw = std::fs::read_to_string(dir.join("sample_print_tool.jsonl")).unwrap();
    lines.extend(raw.lines().map(|l| l.as_bytes().to_vec()));
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
    let mut group = c.benchmark_group("claude_normalize");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sample_size(10);
    group.bench_function("recorded_stream", |b| {
        b.iter(|| {
            let mut norm = Normalizer::new(0.0);
            let mut events = Vec::new();
            let mut n = 0usize;
            for line in &stream {
                if let Parsed::Line(l) = parse(line) {
                    n += norm.line(l, &mut events).len();
                }
                events.clear();
            }
            black_box(n)
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
