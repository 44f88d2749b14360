//! Agents die with the process that started them.
//!
//! When Weft's kernel dies without running its destructors (SIGKILL, OOM, a panic
//! with `panic = "abort"`), nothing kills the agents it started: they are re-parented
//! to init and go on, holding their sessions' files and the user's API quota. Linux
//! lets a child ask for a signal when its parent dies: `prctl(PR_SET_PDEATHSIG,
//! SIGKILL)`. [`die_with_parent`] makes a `Command` do that in the child, between
//! `fork` and `exec`, through `CommandExt::pre_exec`.
//!
//! This is the only module of the workspace allowed `unsafe` (the workspace forbids
//! it; this crate denies it and lifts it here alone), because `pre_exec` is unsafe.
//! Why this use is sound:
//!
//! - The hook runs in the forked child, where only async-signal-safe work is allowed
//!   (another thread of the parent may have held the allocator's lock at the fork).
//!   It makes two raw system calls (`prctl`, `getppid`), reads one `u32` it captured by
//!   copy, and builds its error from a raw errno (`io::Error::from_raw_os_error`
//!   stores the number inline): no allocation, no lock, no shared memory.
//! - It touches no file descriptor, so it cannot break the pipes `std` set up.
//! - It returns an error rather than exiting, so `std` reports the failed start to
//!   the parent (if one is left) through its own error pipe, as for a failed `exec`.
//!
//! The race: if the parent dies after `fork` but before `prctl`, the signal never
//! comes (the parent the setting refers to is already gone). So after `prctl` the
//! hook checks that its parent is still the process that forked it, and fails the
//! start if not: the child then exits without running the agent.
//!
//! Caveats, which callers must respect:
//! - "Parent" means the *thread* that forked, not the process: the signal comes when
//!   that thread exits. Spawn only from threads that live as long as the agent should:
//!   an async runtime's worker threads (tokio's multi-thread workers, or the thread
//!   running a current-thread runtime), never `spawn_blocking` or a short-lived
//!   `std::thread` (tokio ends idle blocking threads after ten seconds, and their
//!   agents would die with them). Nor may the process use `tokio::task::block_in_place`:
//!   it hands the worker's place to a new thread and the old one may later end as a
//!   blocking thread, taking the agents it had started with it.
//! - The setting is not inherited across `fork`: the agent dies with Weft, the
//!   tools it started do not. Those are the process tree's job ([`crate::kill_tree`]
//!   on close, [`crate::ledger`] after a crash).
//! - `execve` of a set-user-id or set-group-id program, or one with file
//!   capabilities, clears the setting; agents are ordinary programs.
//! - Linux only: elsewhere [`die_with_parent`] does nothing.
#![allow(unsafe_code)]

use std::process::Command;

/// Makes the child `cmd` starts receive SIGKILL when the thread that starts it (see
/// the module's caveats) exits, and refuse to start if that parent is already gone.
#[cfg(target_os = "linux")]
pub fn die_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;

    use nix::errno::Errno;
    use nix::sys::signal::Signal;

    // Read before the fork: the child compares its parent against this.
    let parent = std::process::id();
    // SAFETY: the hook runs between fork and exec and only makes async-signal-safe
    // system calls, allocates nothing and touches no descriptor (see the module docs).
    unsafe {
        cmd.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)
                .map_err(|e| std::io::Error::from_raw_os_error(e as i32))?;
            if u32::try_from(nix::unistd::getppid().as_raw()).ok() != Some(parent) {
                return Err(std::io::Error::from_raw_os_error(Errno::ESRCH as i32));
            }
            Ok(())
        });
    }
}

/// Does nothing off Linux (there is no parent-death signal to ask for).
#[cfg(not(target_os = "linux"))]
pub fn die_with_parent(_cmd: &mut Command) {}

#[cfg(all(test, target_os = "linux"))]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::os::unix::process::ExitStatusExt;
    use std::time::{Duration, Instant};

    use super::*;

    #[test]
    fn the_child_is_killed_when_the_thread_that_started_it_ends() {
        // The thread is the "parent" the signal follows (the caveat in the docs), so a
        // thread that starts a child and ends stands in for a kernel that dies.
        let mut child = std::thread::spawn(|| {
            let mut cmd = Command::new("sleep");
            cmd.arg("300");
            die_with_parent(&mut cmd);
            cmd.spawn().unwrap()
        })
        .join()
        .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("the child outlived the thread that started it");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(status.signal(), Some(libc_sigkill()));
    }

    #[test]
    fn a_child_with_the_hook_runs_normally() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "exit 7"]);
        die_with_parent(&mut cmd);
        assert_eq!(cmd.status().unwrap().code(), Some(7));
    }

    fn libc_sigkill() -> i32 {
        nix::sys::signal::Signal::SIGKILL as i32
    }
}
