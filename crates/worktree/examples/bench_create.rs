//! The cost of a session's worktree in a large repository (BENCHMARKS.md, issue 35).
//!
//! For 30,000 and 100,000 generated files (committed; one ignored `.env` and a trusted
//! `.weft/worktree.toml` whose `include` copies it, so the ignored-file walk is part of
//! the figure), each run times `Worktrees::create` (branch, `git worktree add`, which
//! checks out every file, the registry, `include`) and then `Worktrees::remove`.
//! `cargo run --release -p weft-worktree --example bench_create [SIZES…] [--runs N]`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use weft_worktree::{Registry, Worktrees};

fn main() {
    let mut sizes = Vec::new();
    let mut runs = 5;
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
    std::fs::create_dir_all(repo.join(".weft")).unwrap();
    std::fs::write(repo.join(".weft/worktree.toml"), "include = [\".env*\"]\n").unwrap();
    std::fs::write(repo.join(".gitignore"), ".env*\n").unwrap();
    std::fs::write(repo.join(".env"), "KEY=1\n").unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "generated"]);
    git(&repo, &["status", "--porcelain"]);
    println!(
        "{files} files: generated and committed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let wts = Worktrees {
        root: dir.path().join("worktrees"),
        registry: Registry::new(&dir.path().join("home")),
        port_base: 40000,
    };
    let mut create = Vec::new();
    let mut remove = Vec::new();
    for run in 0..runs {
        let t = Instant::now();
        let made = wts.create(&repo, &format!("run{run}"), None, true).unwrap();
        create.push(t.elapsed());
        assert_eq!(made.included.len(), 1);
        let t = Instant::now();
        wts.remove(&made.entry.path, &[]).unwrap();
        remove.push(t.elapsed());
    }
    println!(
        "{files} files: create p50 {} p90 {} (min {}, max {}); remove p50 {} (max {}); {runs} runs; load {}",
        ms(pct(&create, 50)),
        ms(pct(&create, 90)),
        ms(pct(&create, 0)),
        ms(pct(&create, 100)),
        ms(pct(&remove, 50)),
        ms(pct(&remove, 100)),
        std::fs::read_to_string("/proc/loadavg").unwrap_or_default().split(' ').next().unwrap_or("?"),
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
    sorted[(sorted.len().saturating_sub(1) * p) / 100]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}
