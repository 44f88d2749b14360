//! The cost of a turn's checkpoint in a large repository (BENCHMARKS.md, issue 35).
//!
//! For 30,000 and 100,000 generated files (committed, `core.untrackedCache=true`, the
//! index refreshed by one `git status` as a user's would be), each run edits ten tracked
//! files in place and times the turn as the daemon brackets it: the start snapshot
//! (`snapshot_if_changed`: nothing changed since the last turn), the end snapshot, and
//! the turn's diff. Each run's line says how each snapshot found its changes (the watch's
//! paths, nothing, or a whole `git status`).
//! `cargo run --release -p weft-checkpoint --example bench_checkpoint [SIZES…] [--runs N]`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use weft_checkpoint::Checkpoints;

const CHANGED: usize = 10;

fn main() {
    let mut sizes = Vec::new();
    let mut runs = 10;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--runs" {
            runs = args.next().and_then(|n| n.parse().ok()).unwrap_or(runs);
        } else if let Ok(n) = arg.parse::<usize>() {
            sizes.push(n);
        }
    }
    if sizes.is_empty() {
        sizes = vec![30_000, 100_000];
    }
    println!("git: {}", git(Path::new("."), &["--version"]).trim());
    for n in sizes {
        bench(n, runs);
    }
}

fn bench(files: usize, runs: usize) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let started = Instant::now();
    generate(&repo, files);
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["config", "core.untrackedCache", "true"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "generated"]);
    // Past git's racy-timestamp window, so the refreshed index trusts its stat data, as a
    // user's index does a second after their last `git status`.
    std::thread::sleep(Duration::from_millis(1100));
    git(&repo, &["status", "--porcelain"]);
    println!(
        "{files} files: generated, committed and indexed in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    // BENCH_NO_WATCH=1: every snapshot runs `git status` over everything (the cost before
    // the watch).
    let options = weft_checkpoint::Options {
        watch: std::env::var_os("BENCH_NO_WATCH").is_none(),
        ..Default::default()
    };
    let cp = Checkpoints::open_with(&repo, &dir.path().join("shadow"), options).unwrap();
    let key = "bench:1";
    let mut end = Vec::new();
    let mut start = Vec::new();
    let mut diffs = Vec::new();
    let mut turns = Vec::new();
    cp.snapshot(key, "warm-up").unwrap();
    for run in 0..runs {
        // A turn as the daemon brackets it: the checkpoint before (nothing changed since
        // the last turn's), the agent's ten edits, the checkpoint after, the turn's diff.
        let t = Instant::now();
        let pre = cp.snapshot_if_changed(key, "weft turn N before").unwrap();
        start.push(t.elapsed());
        let start_look = cp.looked_at();
        for i in 0..CHANGED {
            let path = repo.join(file_path(i * (files / CHANGED) + run % 7));
            std::fs::write(&path, format!("run {run} changed file {i}\n")).unwrap();
        }
        let t = Instant::now();
        let post = cp.snapshot(key, "weft turn N after").unwrap();
        end.push(t.elapsed());
        let end_look = cp.looked_at();
        let t = Instant::now();
        let diff = cp.diff(&pre.commit, &post.commit).unwrap();
        diffs.push(t.elapsed());
        assert_eq!(diff.files.len(), CHANGED);
        turns.push(start[run] + end[run] + diffs[run]);
        if std::env::var_os("BENCH_VERBOSE").is_some() {
            println!(
                "  run {run}: start {} ({start_look:?}), end {} ({end_look:?}), diff {}",
                ms(start[run]),
                ms(end[run]),
                ms(diffs[run])
            );
        }
    }
    println!(
        "load {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    println!(
        "{files} files, {CHANGED} changed: snapshot p50 {} p90 {} (min {}, max {}); \
         nothing changed: p50 {} p90 {}; the turn's diff p50 {}; \
         a turn in all (before + after + diff) p50 {} p90 {}; {runs} runs",
        ms(pct(&end, 50)),
        ms(pct(&end, 90)),
        ms(pct(&end, 0)),
        ms(pct(&end, 100)),
        ms(pct(&start, 50)),
        ms(pct(&start, 90)),
        ms(pct(&diffs, 50)),
        ms(pct(&turns, 50)),
        ms(pct(&turns, 90)),
    );
}

/// 100 files a folder, 10 folders a parent: the shape of a large source tree.
fn file_path(i: usize) -> String {
    format!("d{:03}/s{}/f{i}.txt", i / 1000, (i / 100) % 10)
}

fn generate(repo: &Path, files: usize) {
    for i in 0..files {
        let path = repo.join(file_path(i));
        if i % 100 == 0 {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        }
        std::fs::write(&path, format!("file {i}\nsome text of a source file\n")).unwrap();
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=bench", "-c", "user.email=bench@localhost"])
        .args([
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn pct(samples: &[Duration], p: usize) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    let i = (sorted.len().saturating_sub(1) * p) / 100;
    sorted[i]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}
