//! `weft-faults N [SEED] [--only KIND,KIND]`: injects N faults into turns through a real
//! `weft daemon` and prints the table of faults by kind × outcome. Exits 1 when any
//! fault lost an event, left a process, ended dishonestly, broke the next prompt or
//! left a client with another snapshot than the daemon's.

use std::process::ExitCode;

use weft_faults::{Config, Kind};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut only = Vec::new();
    let mut plain = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--only" {
            for name in it.next().map(String::as_str).unwrap_or_default().split(',') {
                match Kind::parse(name) {
                    Some(k) => only.push(k),
                    None => {
                        eprintln!("unknown fault kind {name:?}");
                        return ExitCode::from(2);
                    }
                }
            }
        } else {
            plain.push(a.clone());
        }
    }
    let faults = plain.first().and_then(|n| n.parse().ok()).unwrap_or(50);
    let seed = plain.get(1).and_then(|n| n.parse().ok()).unwrap_or(1);
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let agent = exe.with_file_name("weft-faults-agent");
    let weft = match weft_faults::procs::weft_bin() {
        Ok(w) => w,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let config = Config {
        faults,
        seed,
        agent,
        weft,
        only,
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let started = std::time::Instant::now();
    let report = match runtime.block_on(weft_faults::run(&config)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("weft-faults: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("{}", report.table());
    println!("wall time {:.0} s", started.elapsed().as_secs_f64());
    let violations = report.violations();
    for (i, kind, v) in &violations {
        println!("fault {i} {}: {}", kind.name(), v.join("; "));
    }
    if violations.is_empty() && report.left_behind == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
