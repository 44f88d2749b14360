//! The sandbox's start overhead per command: `bash -c true` bare, under bubblewrap and
//! under the Landlock helper, 100 runs each (p50 / p99).
//! `cargo run --release -p weft-sandbox --example bench_start`

use std::process::{Command, Stdio};
use std::time::Instant;

use weft_sandbox::{command_with, probe_now, Mechanism, Policy};

fn time(mut make: impl FnMut() -> Command) -> (f64, f64) {
    let mut t = Vec::new();
    for _ in 0..100 {
        let mut c = make();
        c.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let s = Instant::now();
        let ok = c.status().map(|s| s.success()).unwrap_or(false);
        t.push(s.elapsed().as_secs_f64() * 1e3);
        assert!(ok, "the command failed");
    }
    t.sort_by(f64::total_cmp);
    (t[49], t[98])
}

fn main() {
    let work = std::env::temp_dir().join("weft-sandbox-bench");
    let _ = std::fs::create_dir_all(&work);
    let argv = ["bash".to_string(), "-c".into(), "true".into()];
    let (p50, p99) = time(|| {
        let mut c = Command::new("bash");
        c.args(["-c", "true"]);
        c
    });
    println!("bare:     p50 {p50:.2} ms, p99 {p99:.2} ms");
    let policy = Policy::new(&work);
    for force in ["bwrap", "landlock"] {
        let p = probe_now(Some(force));
        if p.mechanism == Mechanism::Unavailable {
            println!("{force}: skipped ({})", p.details);
            continue;
        }
        let (s50, s99) =
            time(|| command_with(&p, &policy, &argv).unwrap_or_else(|| Command::new("false")));
        println!(
            "{force}: p50 {s50:.2} ms, p99 {s99:.2} ms (overhead p50 {:.2} ms)",
            s50 - p50
        );
    }
}
