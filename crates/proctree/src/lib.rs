//! Killing a child and everything it started.
//!
//! Weft starts every agent in a process group of its own and kills the group when the
//! session ends. That is not enough: agents run tools in new sessions (Claude Code's
//! Bash tool, codex's pseudo-terminals), which leave the group, and would outlive the
//! agent. So a kill here freezes the group first (SIGSTOP: no new forks while we look),
//! walks `/proc` for every descendant of the leader, then SIGKILLs the group and each
//! descendant. A descendant that double-forked away before the freeze and was adopted
//! by init is out of reach; none of the agents do that to their tools.
//!
//! Linux only in substance: where `/proc` is missing, only the group is killed.
//!
//! Two more guards for a kernel that dies without cleaning up: [`parent_death`] makes
//! an agent receive SIGKILL when the kernel dies (the only `unsafe` in the workspace,
//! audited there), and [`ledger`] records every group started so the next kernel can
//! end what is left ([`ledger::reap`]).

pub mod ledger;
pub mod parent_death;

pub use parent_death::die_with_parent;

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::{getpgid, Pid};

/// Every live descendant of `root` (children, their children, …), from `/proc`.
pub fn descendants(root: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let parents: Vec<(u32, u32)> = dir
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // `pid (comm) state ppid …`; comm may hold spaces and parentheses.
            let ppid = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            Some((pid, ppid))
        })
        .collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    found.remove(0);
    found
}

fn pid(n: u32) -> Option<Pid> {
    i32::try_from(n).ok().filter(|n| *n > 0).map(Pid::from_raw)
}

/// SIGKILLs the process group `pgid` and nothing else: what a leader just reaped left
/// in its group. Call it only while the id is known to be that group's (a member keeps
/// it reserved; an empty group's id is free for the kernel to reuse).
pub fn kill_group(pgid: u32) {
    if let Some(group) = pid(pgid) {
        let _ = killpg(group, Signal::SIGKILL);
    }
}

/// SIGKILLs the process group led by `leader` and every descendant of `leader`,
/// wherever its group. Safe to call on a leader that is already gone.
pub fn kill_tree(leader: u32) {
    let Some(group) = pid(leader) else {
        return;
    };
    let _ = killpg(group, Signal::SIGSTOP);
    // Walk again until nothing new turns up: `/proc` is not read atomically, and a fork
    // in flight when its parent was frozen still completes — its child, missed by the
    // first walk, would outlive the kill (seen under load: a tool's `sleep` left behind).
    let mut stopped: Vec<u32> = Vec::new();
    for _ in 0..8 {
        let fresh: Vec<u32> = descendants(leader)
            .into_iter()
            .filter(|p| !stopped.contains(p))
            .collect();
        if fresh.is_empty() {
            break;
        }
        for p in fresh.iter().filter_map(|p| pid(*p)) {
            let _ = kill(p, Signal::SIGSTOP);
        }
        stopped.extend(fresh);
    }
    // A descendant that leads a group of its own (a tool started in a new session) takes
    // its group with it, so a child that got into that group after the walk goes too.
    let led: Vec<Pid> = stopped
        .iter()
        .filter_map(|p| pid(*p))
        .filter(|p| getpgid(Some(*p)).is_ok_and(|g| g == *p))
        .collect();
    let _ = killpg(group, Signal::SIGKILL);
    // And the leader by its pid: one that is not (or no longer) its group's leader —
    // a process that called setsid, or one found by pid rather than spawned as a
    // group — is in no group of that number.
    let _ = kill(group, Signal::SIGKILL);
    for g in &led {
        let _ = killpg(*g, Signal::SIGKILL);
    }
    for p in stopped.iter().filter_map(|p| pid(*p)) {
        let _ = kill(p, Signal::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use std::process::Command;
    use std::time::{Duration, Instant};

    use super::*;

    fn alive(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit_once(')')
                .and_then(|(_, r)| r.split_whitespace().next())
                .is_some_and(|state| state != "Z")
        })
    }

    #[test]
    fn a_tool_that_left_the_group_is_killed_with_it() {
        use std::os::unix::process::CommandExt;
        // The leader starts a child in a new session (setsid), as an agent's shell tool does.
        let mut leader = Command::new("sh")
            .args(["-c", "setsid sleep 300 & sleep 300 & wait"])
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        let root = leader.id();
        let deadline = Instant::now() + Duration::from_secs(5);
        while descendants(root).len() < 2 {
            assert!(Instant::now() < deadline, "children never started");
            std::thread::sleep(Duration::from_millis(10));
        }
        let found = descendants(root);
        kill_tree(root);
        let _ = leader.wait();
        let deadline = Instant::now() + Duration::from_secs(5);
        while found.iter().any(|p| alive(*p)) {
            assert!(Instant::now() < deadline, "left behind: {found:?}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
