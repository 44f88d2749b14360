//! Throughput from the child through the bridge to a viewer, and keystroke-to-echo
//! latency. `cargo bench -p weft-pty --bench bridge`.
//!
//! Two 100 MB workloads: `zeros` (`head | tr`, one long run of `a`, no newlines) and
//! `text` (`cat` of a log-like file: numbered lines, some coloured). For each:
//! - `raw_pty`: a bare portable-pty reader that only reads and discards: the
//!   kernel's PTY ceiling for that writer on this machine, nothing of ours;
//! - `to_viewer`: through `PtyBridge` until the last byte reaches a viewer task
//!   attached from the start (what a pane receives);
//! - `screen_caught_up`: until the bridge reports the exit, which it does once the
//!   kept screen has taken in every byte as well.
//!
//! `keystroke_echo`: one byte written to a PTY running `cat`, until the terminal's
//! echo of it reaches the viewer.

use std::io::Read;
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
        base_env: None,
        env: Vec::new(),
        cwd: std::env::temp_dir(),
        ..PtySpec::default()
    }
}

/// 100 MB of log-like text, as a build or a test run prints it.
fn text_file() -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("weft-pty-bench-{}.txt", std::process::id()));
    let mut text = Vec::with_capacity(BYTES as usize + 200);
    let mut i = 0u64;
    while (text.len() as u64) < BYTES {
        let line = if i.is_multiple_of(10) {
            format!("\x1b[32mPASS\x1b[0m test_{i:07} ... ok ({} ms)\n", i % 997)
        } else {
            let rule = "=".repeat((i % 40) as usize);
            format!("line {i:07}: the quick brown fox jumps over the lazy dog {rule}\n")
        };
        text.extend_from_slice(line.as_bytes());
        i += 1;
    }
    text.truncate(BYTES as usize);
    let _ = std::fs::write(&path, text);
    path
}

/// The kernel alone: spawn in a PTY, read everything, discard it.
fn raw_pty(script: &str) -> Duration {
    let start = Instant::now();
    let pty = portable_pty::native_pty_system();
    let size = portable_pty::PtySize {
        rows: SIZE.rows,
        cols: SIZE.cols,
        pixel_width: 0,
        pixel_height: 0,
    };
    let Ok(pair) = pty.openpty(size) else {
        return Duration::ZERO;
    };
    let mut cmd = portable_pty::CommandBuilder::new("sh");
    cmd.args(["-c", script]);
    let Ok(mut child) = pair.slave.spawn_command(cmd) else {
        return Duration::ZERO;
    };
    drop(pair.slave);
    let Ok(mut reader) = pair.master.try_clone_reader() else {
        return Duration::ZERO;
    };
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    while let Ok(n @ 1..) = reader.read(&mut buf) {
        total += n as u64;
    }
    let elapsed = start.elapsed();
    let _ = child.wait();
    assert!(total >= BYTES, "read {total}");
    elapsed
}

/// Through the bridge: the time until the last byte reaches the viewer, and until
/// the exit is reported (the kept screen has caught up).
fn through_bridge(script: &str) -> (Duration, Duration) {
    let start = Instant::now();
    let Ok(bridge) = PtyBridge::spawn(&sh(script), SIZE) else {
        return (Duration::ZERO, Duration::ZERO);
    };
    let mut attach = bridge.attach();
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return (Duration::ZERO, Duration::ZERO);
    };
    // A viewer task as the app runs one: awaits chunks, no core spent spinning.
    rt.block_on(async {
        let mut received = 0u64;
        let mut last_byte = Duration::ZERO;
        let mut exited = None;
        loop {
            if let Some(exit) = exited {
                if received >= bridge.output_len() {
                    assert!(received >= BYTES, "received {received}");
                    return (last_byte, exit);
                }
            }
            tokio::select! {
                chunk = attach.chunks.recv() => match chunk {
                    Ok(chunk) => {
                        received += chunk.data.len() as u64;
                        last_byte = start.elapsed();
                    }
                    Err(RecvError::Lagged(n)) => panic!("viewer lagged by {n} chunks"),
                    Err(RecvError::Closed) => return (last_byte, start.elapsed()),
                },
                _ = bridge.wait(), if exited.is_none() => exited = Some(start.elapsed()),
            }
        }
    })
}

fn bench(c: &mut Criterion) {
    let file = text_file();
    let workloads = [
        ("zeros", format!("head -c {BYTES} /dev/zero | tr '\\0' 'a'")),
        ("text", format!("cat {}", file.display())),
    ];
    let mut group = c.benchmark_group("pty");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(15));
    group.throughput(Throughput::Bytes(BYTES));
    for (name, script) in &workloads {
        group.bench_function(format!("raw_pty/{name}"), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| raw_pty(script)).sum())
        });
        group.bench_function(format!("to_viewer/{name}"), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| through_bridge(script).0).sum())
        });
        group.bench_function(format!("screen_caught_up/{name}"), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| through_bridge(script).1).sum())
        });
    }
    group.finish();
    let _ = std::fs::remove_file(&file);

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
