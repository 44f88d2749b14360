//! The sandbox's start overhead per command: `bash -c true` bare, under bubblewrap and
//! under the Landlock helper, interleaved (bare, bwrap, landlock, bare, …) so the
//! machine's load falls on each alike; `WEFT_BENCH_RUNS` rounds (default 200). Prints
//! each one's p50 / p99 and the overhead as p50 / p99 of the per-round difference to
//! the bare run beside it.
//! `cargo run --release -p weft-sandbox --example bench_start` (it is its own Landlock
//! helper, through a link named weft-sandbox-exec).

use std::process::{Command, Stdio};
use std::time::Instant;

use weft_sandbox::{command_with, probe_now, Mechanism, Policy};

fn time(mut c: Command) -> f64 {
    c.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let s = Instant::now();
    let ok = c.status().map(|s| s.success()).unwrap_or(false);
    assert!(ok, "the command failed");
    s.elapsed().as_secs_f64() * 1e3
}

fn time_warm(policy: &Policy) -> f64 {
    use std::io::Write;
    let Ok(Some(mut c)) = weft_sandbox::waiting_shell(policy) else {
        panic!("no waiting sandbox")
    };
    let mut child = c
        .command
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    std::thread::sleep(std::time::Duration::from_millis(60));
    let s = Instant::now();
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(b"true");
    }
    let ok = child.wait().map(|s| s.success()).unwrap_or(false);
    assert!(ok, "the waiting sandbox failed");
    s.elapsed().as_secs_f64() * 1e3
}

fn pct(v: &[f64], p: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn main() -> std::process::ExitCode {
    // This program is also the Landlock helper (the same code weft-cli's
    // weft-sandbox-exec runs), started through a link of that name.
    let mut args = std::env::args();
    let arg0 = args.next().unwrap_or_default();
    if std::path::Path::new(&arg0)
        .file_name()
        .is_some_and(|n| n == weft_sandbox::HELPER_NAME)
    {
        return weft_sandbox::exec_with(args);
    }
    let links = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let link = links.path().join(weft_sandbox::HELPER_NAME);
    std::os::unix::fs::symlink(std::env::current_exe().unwrap_or_default(), &link)
        .unwrap_or_else(|e| panic!("{e}"));
    std::env::set_var("WEFT_SANDBOX_HELPER", &link);
    let runs: usize = std::env::var("WEFT_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let scratch = weft_sandbox::scratch().unwrap_or_else(|e| panic!("{e}"));
    let home = work.path().join("weft-home");
    let policy = Policy::new(work.path(), scratch.path(), &home);
    let argv = ["bash".to_string(), "-c".into(), "true".into()];
    let mut probes = Vec::new();
    for force in ["bwrap", "landlock"] {
        let p = probe_now(Some(force));
        if p.mechanism == Mechanism::Unavailable {
            println!("{force}: skipped ({})", p.details);
        } else {
            probes.push((force, p));
        }
    }
    let bare = || {
        let mut c = Command::new("bash");
        c.args(["-c", "true"]);
        c
    };
    let mut bare_t = Vec::new();
    let mut under: Vec<(Vec<f64>, Vec<f64>)> = vec![(Vec::new(), Vec::new()); probes.len()];
    // bubblewrap started ahead (as the native agent's bash tool keeps one per session):
    // only writing the line and the run itself are timed, after a pause standing in for
    // the model's thinking.
    let mut warm = (Vec::new(), Vec::new());
    let warm_on = matches!(weft_sandbox::waiting_shell(&policy), Ok(Some(_)));
    for _ in 0..runs {
        let b = time(bare());
        bare_t.push(b);
        for (i, (force, p)) in probes.iter().enumerate() {
            let Ok(Some(c)) = command_with(p, &policy, &argv) else {
                panic!("{force}: no command")
            };
            let t = time(c.command);
            drop(c.hold);
            under[i].0.push(t);
            under[i].1.push(t - b);
        }
        if warm_on {
            let t = time_warm(&policy);
            warm.0.push(t);
            warm.1.push(t - b);
        }
    }
    println!(
        "bare:     p50 {:.2} ms, p99 {:.2} ms ({runs} runs)",
        pct(&bare_t, 0.5),
        pct(&bare_t, 0.99)
    );
    if warm_on {
        println!(
            "bwrap started ahead: p50 {:.2} ms, p99 {:.2} ms; overhead p50 {:.2} ms, p99 {:.2} ms",
            pct(&warm.0, 0.5),
            pct(&warm.0, 0.99),
            pct(&warm.1, 0.5),
            pct(&warm.1, 0.99)
        );
    }
    for ((force, _), (t, over)) in probes.iter().zip(&under) {
        println!(
            "{force}: p50 {:.2} ms, p99 {:.2} ms; overhead p50 {:.2} ms, p99 {:.2} ms",
            pct(t, 0.5),
            pct(t, 0.99),
            pct(over, 0.5),
            pct(over, 0.99)
        );
    }
    std::process::ExitCode::SUCCESS
}
