//! `weft-load [SECONDS] [ECHO] [CLAUDE]`: ECHO echo sessions at full speed and CLAUDE
//! real claude sessions (default 60 s, 16 and 4) streaming at once through one daemon,
//! two clients subscribed to all and one that reads nothing until the end. Prints the
//! figures; exits 1 when a snapshot disagrees or the daemon's memory kept growing.

use std::process::ExitCode;
use std::time::Duration;

use weft_faults::load::{self, LoadConfig};

fn main() -> ExitCode {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let weft = match weft_faults::procs::weft_bin() {
        Ok(w) => w,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let config = LoadConfig {
        duration: Duration::from_secs(args.first().copied().unwrap_or(60)),
        echo: args.get(1).copied().unwrap_or(16) as usize,
        claude: args.get(2).copied().unwrap_or(4) as usize,
        min_patches: 0,
        weft,
    };
    let Ok(runtime) = tokio::runtime::Runtime::new() else {
        return ExitCode::FAILURE;
    };
    let r = match runtime.block_on(load::run(&config)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("weft-load: {e}");
            return ExitCode::FAILURE;
        }
    };
    let warm = r.daemon_rss.len() / 5;
    let mib = |k: u64| k as f64 / 1024.0;
    let peak = |s: &[u64]| s.iter().copied().max().unwrap_or(0);
    println!(
        "{} sessions ({} claude) for {:.0} s: {} turns ({} with an error)",
        r.sessions, r.claude_sessions, r.seconds, r.turns, r.failed_turns
    );
    println!(
        "patches folded by the two reading clients: {:?}; snapshots re-read: {:?}",
        &r.patches[..2.min(r.patches.len())],
        &r.rereads[..2.min(r.rereads.len())]
    );
    println!(
        "the client that read nothing until the end: {} requests answered meanwhile, then {} patches folded, {} resyncs, {} snapshots re-read",
        r.idle_replies,
        r.patches.last().copied().unwrap_or(0),
        r.idle_resyncs,
        r.rereads.last().copied().unwrap_or(0)
    );
    let daemon_slope = load::slope(&r.daemon_rss, warm);
    println!(
        "daemon RSS: first {:.1} MiB, peak {:.1} MiB, last {:.1} MiB, slope after warm-up {:.1} KiB/s",
        mib(r.daemon_rss.first().copied().unwrap_or(0)),
        mib(peak(&r.daemon_rss)),
        mib(r.daemon_rss.last().copied().unwrap_or(0)),
        daemon_slope
    );
    println!(
        "clients' process RSS: first {:.1} MiB, peak {:.1} MiB, last {:.1} MiB, slope after warm-up {:.1} KiB/s",
        mib(r.client_rss.first().copied().unwrap_or(0)),
        mib(peak(&r.client_rss)),
        mib(r.client_rss.last().copied().unwrap_or(0)),
        load::slope(&r.client_rss, warm)
    );
    println!(
        "snapshots equal (each client = daemon = store): {} of {}",
        r.equal, r.sessions
    );
    for u in &r.unequal {
        println!("  {u}");
    }
    if r.unequal.is_empty() && r.equal == r.sessions {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
