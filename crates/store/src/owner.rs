//! Which process a running turn belongs to, so opening the store in a second process
//! (the CLI beside the app, two `weft run`s) never "recovers" a turn that is alive.
//!
//! An owner is `pid:start`, the start time (clock ticks since boot, from `/proc`)
//! guarding against a reused pid. Where `/proc` is not there, the start is 0 and a
//! turn whose pid is reused by another process would be left running until that
//! process ends: a lost recovery, never a false one.

use std::sync::OnceLock;

fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces and parentheses).
    let rest = stat.rsplit_once(')')?.1;
    // A zombie has exited; only its parent has not reaped it yet (a daemon killed
    // while nobody waits for it): it owns nothing any more.
    if matches!(rest.split_whitespace().next(), Some("Z" | "X")) {
        return None;
    }
    // `rest` starts at field 3 (state); the start time is field 22.
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// This process's owner string.
pub(crate) fn current() -> &'static str {
    static OWNER: OnceLock<String> = OnceLock::new();
    OWNER.get_or_init(|| {
        let pid = std::process::id();
        format!("{pid}:{}", start_time(pid).unwrap_or(0))
    })
}

/// True when `owner` names another process that is still running.
pub(crate) fn is_other_live_process(owner: Option<&str>) -> bool {
    let Some(owner) = owner else {
        return false;
    };
    if owner == current() {
        // A turn of an earlier store in this very process: that store is gone.
        return false;
    }
    let Some((pid, start)) = owner.split_once(':') else {
        return false;
    };
    let (Ok(pid), Ok(start)) = (pid.parse::<u32>(), start.parse::<u64>()) else {
        return false;
    };
    match start_time(pid) {
        Some(now) => start == 0 || now == start,
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_not_other_and_a_dead_one_is_not_live() {
        assert!(!is_other_live_process(Some(current())));
        assert!(!is_other_live_process(None));
        assert!(!is_other_live_process(Some("garbage")));
        // pid 1 is alive, but not with this start time.
        assert!(!is_other_live_process(Some("1:18446744073709551615")));
        let init = format!("1:{}", start_time(1).unwrap_or(0));
        assert!(is_other_live_process(Some(&init)));
    }
}
