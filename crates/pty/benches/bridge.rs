//! Throughput from the child through the bridge to a viewer, and keystroke-to-echo
//! latency. `cargo bench -p weft-pty --bench bridge`.
//!
//! `burst_100mb`: a child writes 100 MB; a viewer attached from the start receives
//! every chunk (the screen is kept up to date on the way) until the child exits.
//! `keystroke_echo`: one byte written to a PTY running `cat`, until the terminal's
//! echo of it reaches the viewer.

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use weft_pty::{PtyBridge, PtySize, PtySpec};

const BYTES: u64 = 100_000_000;
const SIZE: PtySize = PtySize {
    rows: 40,
    cols: 120,
};

fn sh(script: &str) -> PtySpec {
    PtySpec {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
        env: Vec::new(),
        cwd: std::env::temp_dir(),
    }
}

fn burst() -> u64 {
    let script = format!("head -c {BYTES} /dev/zero | tr '\\0' 'a'");
    let Ok(bridge) = PtyBridge::spawn(&sh(&script), SIZE) else {
        return 0;
    };
    let mut attach = bridge.attach();
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return 0;
    };
    // A viewer task as the app runs one: awaits chunks, no core spent spinning.
    rt.block_on(async {
        let mut received = 0u64;
        let mut exited = false;
        loop {
            if exited && received >= bridge.output_len() {
                return received;
            }
            tokio::select! {
                chunk = attach.chunks.recv() => match chunk {
                    Ok(chunk) => received += chunk.data.len() as u64,
                    Err(RecvError::Lagged(n)) => panic!("viewer lagged by {n} chunks"),
                    Err(RecvError::Closed) => return received,
                },
                _ = bridge.wait(), if !exited => exited = true,
            }
        }
    })
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("pty");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(30));
    group.throughput(Throughput::Bytes(BYTES));
    group.bench_function("burst_100mb", |b| {
        b.iter(|| {
            let got = burst();
            assert!(got >= BYTES, "received {got}");
        })
    });
    group.finish();

    let mut group = c.benchmark_group("pty");
    let Ok(bridge) = PtyBridge::spawn(&sh("exec cat"), SIZE) else {
        return;
    };
    let mut attach = bridge.attach();
    group.bench_function("keystroke_echo", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let t = Instant::now();
                let _ = bridge.write(b"k");
                loop {
                    match attach.chunks.try_recv() {
                        Ok(chunk) if chunk.data.contains(&b'k') => break,
                        Ok(_) | Err(TryRecvError::Lagged(_)) => {}
                        Err(TryRecvError::Empty) => std::hint::spin_loop(),
                        Err(TryRecvError::Closed) => return total,
                    }
                }
                total += t.elapsed();
            }
            // Clear the line so `cat`'s buffer stays small.
            let _ = bridge.write(b"\x15");
            total
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
