//! No orphan when the process that started an agent is SIGKILLed: the agent gets the
//! parent-death signal. The "kernel" is the probe binary; the "agent" its `sleep`.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn alive(pid: u32) -> bool {
    // A zombie is dead: in a container nobody may reap it soon.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(')')
            .and_then(|(_, r)| r.split_whitespace().next())
            .is_some_and(|state| state != "Z")
    })
}

fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

#[test]
fn the_agent_dies_when_its_kernel_is_killed() {
    let mut probe = Command::new(env!("CARGO_BIN_EXE_weft-agent-process-probe"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(probe.stdout.take().unwrap());
    let mut started = None;
    let mut child = None;
    let mut line = String::new();
    while child.is_none() {
        line.clear();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "the probe said nothing"
        );
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["started", pid, ticks] => {
                started = Some((pid.parse::<u32>().unwrap(), ticks.parse::<u64>().unwrap()))
            }
            ["child", pid] => child = Some(pid.parse::<u32>().unwrap()),
            _ => panic!("unexpected: {line}"),
        }
    }
    let child = child.unwrap();
    assert!(alive(child) && cmdline(child).contains("sleep 300"));
    // The ledger heard of it with its real start time.
    assert_eq!(
        started,
        Some((child, weft_proctree::ledger::start_ticks(child).unwrap()))
    );

    probe.kill().unwrap();
    probe.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(child) {
        if Instant::now() > deadline {
            weft_proctree::kill_tree(child);
            panic!("the agent outlived its kernel");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
