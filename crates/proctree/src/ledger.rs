//! A record of every agent process group Weft starts, so a kernel that died without
//! cleaning up can end what it left behind when it starts again.
//!
//! Agents already die with the kernel ([`crate::parent_death`]); this is the second
//! line, for what that misses (a leader started some other way, a platform without the
//! signal). The kernel service installs a [`Ledger`] that keeps entries in its store
//! ([`install`]); whatever starts an agent group reports it ([`record_started`] when
//! the leader is running, [`record_ended`] once the group is killed). With nothing
//! installed both are no-ops, so libraries and tests need no set-up.
//!
//! An entry is the leader's pid and its start time (`/proc/PID/stat` field 22, clock
//! ticks since boot), because pids are reused: on start, the service passes the
//! entries its predecessor left to [`reap`], which kills a group only if its leader
//! is still the very process that was recorded. A leader that is gone (the usual case:
//! the parent-death signal killed it) is skipped, since its pid may now belong to
//! anyone; the tools it had started in other sessions were re-parented and are out of
//! reach, as documented in [`crate::parent_death`].

use std::sync::{Arc, RwLock};

/// Where agent groups are recorded (the kernel service's store).
///
/// Called on the thread that starts or ends a process, often an async runtime's
/// worker: an implementation must not block (hand the entry to a writer; do not write
/// a database inline).
pub trait Ledger: Send + Sync {
    /// The group led by `pid`, started at `start_ticks`, is running.
    fn started(&self, pid: u32, start_ticks: u64);
    /// The group led by `pid` has been killed, or ended by itself: forget it.
    fn ended(&self, pid: u32);
}

static INSTALLED: RwLock<Option<Arc<dyn Ledger>>> = RwLock::new(None);

fn installed() -> Option<Arc<dyn Ledger>> {
    // A poisoned lock only means a ledger panicked; the slot itself is intact.
    INSTALLED.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Makes `ledger` the process-wide ledger (replacing any other).
pub fn install(ledger: Arc<dyn Ledger>) {
    *INSTALLED.write().unwrap_or_else(|e| e.into_inner()) = Some(ledger);
}

/// Removes the process-wide ledger: reports are dropped again.
pub fn uninstall() {
    *INSTALLED.write().unwrap_or_else(|e| e.into_inner()) = None;
}

/// Reports that the group led by `pid` is running, with its start time, to the
/// installed ledger; returns that start time. Nothing is reported when no ledger is
/// installed or the start time cannot be read (the process is already gone).
pub fn record_started(pid: u32) -> Option<u64> {
    let ledger = installed()?;
    let ticks = start_ticks(pid)?;
    ledger.started(pid, ticks);
    Some(ticks)
}

/// Reports that the group led by `pid` is gone to the installed ledger, if any.
pub fn record_ended(pid: u32) {
    if let Some(ledger) = installed() {
        ledger.ended(pid);
    }
}

/// When process `pid` started, in clock ticks since boot (`/proc/PID/stat` field 22):
/// with the pid, it names one process for good, across pid reuse. None when there is
/// no such process (or no `/proc`).
pub fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so fields are
    // counted after the last `)`; the first one there is field 3.
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(22 - 3)?
        .parse()
        .ok()
}

/// Kills ([`crate::kill_tree`]) each group in `leftovers` (leader pid, its recorded
/// start time) whose leader is still that same process; a pid now naming a different
/// process (its start time differs) or none is left alone. Returns the leaders killed.
/// The caller forgets the entries afterwards.
pub fn reap(leftovers: &[(u32, u64)]) -> Vec<u32> {
    let me = std::process::id();
    leftovers
        .iter()
        .filter(|(pid, ticks)| *pid != me && start_ticks(*pid) == Some(*ticks))
        .map(|(pid, _)| {
            crate::kill_tree(*pid);
            *pid
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Command};
    use std::sync::Mutex;
    use std::time::{Duration, Instant};

    use super::*;

    fn sleeper() -> Child {
        Command::new("sleep")
            .arg("300")
            .process_group(0)
            .spawn()
            .unwrap()
    }

    fn exits_within(child: &mut Child, wait: Duration) -> bool {
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            if child.try_wait().unwrap().is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    #[test]
    fn start_ticks_is_field_22_and_differs_between_processes() {
        let me = start_ticks(std::process::id()).unwrap();
        assert!(me > 0);
        let mut child = sleeper();
        let theirs = start_ticks(child.id()).unwrap();
        assert!(theirs >= me);
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(start_ticks(child.id()), None);
        assert_eq!(start_ticks(u32::MAX), None);
    }

    #[test]
    fn reap_kills_a_leader_whose_start_matches_and_spares_one_whose_does_not() {
        let mut recorded = sleeper();
        let mut reused = sleeper();
        let ticks = start_ticks(recorded.id()).unwrap();
        let other = start_ticks(reused.id()).unwrap();
        // The second entry stands for a pid reused since it was recorded: same pid, a
        // start time that is not the one on record.
        let killed = reap(&[(recorded.id(), ticks), (reused.id(), other + 1)]);
        assert_eq!(killed, vec![recorded.id()]);
        assert!(exits_within(&mut recorded, Duration::from_secs(5)));
        assert!(!exits_within(&mut reused, Duration::from_millis(300)));
        reused.kill().unwrap();
        reused.wait().unwrap();
        // Reaping our own process is never done, whatever the entry says.
        let me = std::process::id();
        assert!(reap(&[(me, start_ticks(me).unwrap())]).is_empty());
    }

    struct Recorder(Mutex<Vec<String>>);

    impl Ledger for Recorder {
        fn started(&self, pid: u32, start_ticks: u64) {
            self.0
                .lock()
                .unwrap()
                .push(format!("start {pid} {start_ticks}"));
        }
        fn ended(&self, pid: u32) {
            self.0.lock().unwrap().push(format!("end {pid}"));
        }
    }

    #[test]
    fn reports_reach_the_installed_ledger_only() {
        let mut child = sleeper();
        let pid = child.id();
        // Nothing installed: nothing to report to, no error.
        assert_eq!(record_started(pid), None);
        let rec = Arc::new(Recorder(Mutex::new(Vec::new())));
        install(rec.clone());
        let ticks = record_started(pid).unwrap();
        record_ended(pid);
        uninstall();
        record_ended(pid);
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(
            *rec.0.lock().unwrap(),
            vec![format!("start {pid} {ticks}"), format!("end {pid}")]
        );
    }
}
