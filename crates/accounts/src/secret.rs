//! Secret values and where they are kept.
//!
//! A [`Secret`] zeroes its memory when dropped and never shows itself: `Debug` and
//! `Serialize` both print `***`, so a secret that ends up in a log line, an event or a
//! JSON reply by mistake shows as that. The value leaves only through
//! [`Secret::expose`], which the injection code calls to put it into one spawn's
//! environment.
//!
//! Secrets are kept in the OS secret store ([`SecretServiceStore`]: the Secret Service
//! over D-Bus on Linux, one entry per account under service `weft`). There is no
//! clear-text fallback: without a secret service, an account takes its secret from a
//! variable of the daemon's environment or from a command instead (see
//! [`crate::SecretSource`]), and adding a stored secret fails with a message that says
//! so.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use parking_lot::Mutex;
use wait_timeout::ChildExt;
use zeroize::Zeroizing;

/// The keyring service every entry of Weft's is filed under.
pub const SERVICE: &str = "weft";

/// A secret value: zeroed on drop, `***` when printed or serialized.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Zeroizing<String>);

impl Secret {
    /// Wraps a value (the caller's copy should be dropped soon after).
    pub fn new(value: impl Into<String>) -> Self {
        Secret(Zeroizing::new(value.into()))
    }

    /// The value, for one spawn's environment.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// True when it holds nothing but whitespace.
    pub fn is_blank(&self) -> bool {
        self.0.trim().is_empty()
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

impl serde::Serialize for Secret {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("***")
    }
}

/// Why a secret could not be read or kept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    /// No secret service answers, or it is locked.
    #[error(
        "the OS secret store is not available ({0}); start and unlock a Secret Service \
         (GNOME Keyring, KeePassXC), or give the account its secret with --secret-env NAME \
         or --secret-command CMD"
    )]
    Unavailable(String),
    /// Anything else the store said.
    #[error("the OS secret store failed: {0}")]
    Failed(String),
}

/// Where secrets are kept, one entry per account id.
pub trait SecretStore: Send + Sync {
    /// The account's secret, if one is kept.
    fn get(&self, id: &str) -> Result<Option<Secret>, SecretError>;
    /// Keeps `secret` for the account (replacing any).
    fn set(&self, id: &str, secret: &Secret) -> Result<(), SecretError>;
    /// Forgets the account's secret (nothing kept is not an error).
    fn delete(&self, id: &str) -> Result<(), SecretError>;
}

/// The Secret Service (GNOME Keyring, KeePassXC, KWallet's bridge) over D-Bus.
#[derive(Debug, Default)]
pub struct SecretServiceStore;

fn entry(id: &str) -> Result<keyring::Entry, SecretError> {
    keyring::Entry::new(SERVICE, id).map_err(map_err)
}

fn map_err(e: keyring::Error) -> SecretError {
    match e {
        keyring::Error::PlatformFailure(inner) | keyring::Error::NoStorageAccess(inner) => {
            SecretError::Unavailable(inner.to_string())
        }
        other => SecretError::Failed(other.to_string()),
    }
}

impl SecretStore for SecretServiceStore {
    fn get(&self, id: &str) -> Result<Option<Secret>, SecretError> {
        match entry(id)?.get_password() {
            Ok(v) => Ok(Some(Secret::new(v))),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(map_err(e)),
        }
    }

    fn set(&self, id: &str, secret: &Secret) -> Result<(), SecretError> {
        entry(id)?.set_password(secret.expose()).map_err(map_err)
    }

    fn delete(&self, id: &str) -> Result<(), SecretError> {
        match entry(id)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(map_err(e)),
        }
    }
}

/// A store in memory, for unit tests: it can be made unavailable to see what a locked
/// or missing secret service does.
#[derive(Debug, Default)]
pub struct MemoryStore {
    entries: Mutex<std::collections::BTreeMap<String, Secret>>,
    unavailable: std::sync::atomic::AtomicBool,
}

impl MemoryStore {
    /// Makes every call fail as a locked secret service does (or not).
    pub fn set_unavailable(&self, yes: bool) {
        self.unavailable
            .store(yes, std::sync::atomic::Ordering::SeqCst);
    }

    fn check(&self) -> Result<(), SecretError> {
        if self.unavailable.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(SecretError::Unavailable("the collection is locked".into()));
        }
        Ok(())
    }

    /// How many secrets it holds.
    pub fn len(&self) -> usize {
        self.entries.lock().len()
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl SecretStore for MemoryStore {
    fn get(&self, id: &str) -> Result<Option<Secret>, SecretError> {
        self.check()?;
        Ok(self.entries.lock().get(id).cloned())
    }

    fn set(&self, id: &str, secret: &Secret) -> Result<(), SecretError> {
        self.check()?;
        self.entries.lock().insert(id.to_string(), secret.clone());
        Ok(())
    }

    fn delete(&self, id: &str) -> Result<(), SecretError> {
        self.check()?;
        self.entries.lock().remove(id);
        Ok(())
    }
}

/// How long a secret command may take.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(15);

/// The most a secret command may print: a key or a token is far smaller, and a
/// command that prints without end (`cat /dev/zero`) must not grow the daemon.
pub const MAX_COMMAND_OUTPUT: usize = 64 * 1024;

/// Runs blocking `work` (a secret command, a call to the OS secret store) on a thread
/// of its own when called on a multi-threaded tokio runtime, elsewhere inline. It used
/// `block_in_place`, which turns the calling worker into a blocking thread that tokio
/// ends after ten idle seconds: every agent later spawned from that thread died with
/// it (the parent-death signal follows the spawning *thread*, see
/// `weft_proctree::parent_death`), so a Claude process kept for a session's next turn
/// was killed about ten seconds after a turn on an account. The caller's thread waits
/// here: the kernel calls the accounts port from `spawn_blocking` for a spawn, so a
/// slow secret command holds no runtime worker.
pub fn off_the_runtime<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            std::thread::scope(|s| match s.spawn(work).join() {
                Ok(v) => v,
                Err(panic) => std::panic::resume_unwind(panic),
            })
        }
        _ => work(),
    }
}

/// Ends a secret command's process group (it leads its own), so a child of it
/// (`sleep`) holding the output open does not outlive it. Only while the group has a
/// member (the shell not yet reaped, or one holding the output), so its id cannot
/// have been reused.
fn kill_group(child: &mut std::process::Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// How long the output may stay open after the shell exited (a child it left behind
/// holding it) before the group is ended.
const AFTER_EXIT: Duration = Duration::from_millis(500);

/// Runs `command` with `/bin/sh -c` and takes its trimmed standard output as the
/// secret (its standard error is dropped: a helper may print the value there too).
/// At most [`COMMAND_TIMEOUT`] and [`MAX_COMMAND_OUTPUT`]; it blocks the calling
/// thread meanwhile (see [`off_the_runtime`]).
pub fn from_command(command: &str) -> Result<Secret, String> {
    let mut child = Command::new("/bin/sh")
        .args(["-c", command])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot run its secret command: {e}"))?;
    let Some(stdout) = child.stdout.take() else {
        kill_group(&mut child);
        return Err("its secret command has no output".to_string());
    };
    // One byte past the limit tells "too much" from "just enough"; the pipe then
    // closes, and a command still printing ends on SIGPIPE.
    let limit = u64::try_from(MAX_COMMAND_OUTPUT + 1).unwrap_or(u64::MAX);
    let (read_tx, read) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Zeroizing::new(Vec::new());
        let _ = stdout.take(limit).read_to_end(&mut buf);
        let _ = read_tx.send(buf);
    });
    let status = match child.wait_timeout(COMMAND_TIMEOUT) {
        Ok(Some(status)) => status,
        Ok(None) => {
            kill_group(&mut child);
            return Err(format!(
                "its secret command did not finish within {}s",
                COMMAND_TIMEOUT.as_secs()
            ));
        }
        Err(e) => {
            kill_group(&mut child);
            return Err(format!("waiting for its secret command: {e}"));
        }
    };
    let out = match read.recv_timeout(AFTER_EXIT) {
        Ok(out) => out,
        Err(_) => {
            // Something the shell started still holds the output: it goes with its group.
            kill_group(&mut child);
            read.recv_timeout(AFTER_EXIT)
                .map_err(|_| "its secret command's output did not end".to_string())?
        }
    };
    if out.len() > MAX_COMMAND_OUTPUT {
        return Err(format!(
            "its secret command printed more than {} KiB",
            MAX_COMMAND_OUTPUT / 1024
        ));
    }
    if !status.success() {
        return Err(format!("its secret command failed ({status})"));
    }
    let text = String::from_utf8(out.to_vec())
        .map_err(|_| "its secret command printed something that is not text".to_string())?;
    let secret = Secret::new(text.trim().to_string());
    drop(Zeroizing::new(text));
    if secret.is_blank() {
        return Err("its secret command printed nothing".into());
    }
    Ok(secret)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_never_shows_itself() {
        let s = Secret::new("sk-very-secret");
        assert_eq!(format!("{s:?}"), "***");
        assert_eq!(serde_json::to_string(&s).unwrap(), "\"***\"");
        assert_eq!(s.expose(), "sk-very-secret");
    }

    #[test]
    fn a_command_gives_its_trimmed_output() {
        assert_eq!(from_command("echo '  k-1  '").unwrap().expose(), "k-1");
        assert!(from_command("exit 3").unwrap_err().contains("failed"));
        assert!(from_command("true").unwrap_err().contains("nothing"));
    }

    /// A worker that ran `block_in_place` may later end as a blocking thread, and the
    /// agents it spawned die with it: the work runs on a thread of its own instead.
    #[test]
    fn blocking_work_runs_on_a_thread_of_its_own_on_a_multi_threaded_runtime() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        rt.block_on(async {
            let handle = tokio::spawn(async {
                let caller = std::thread::current().id();
                (caller, off_the_runtime(|| std::thread::current().id()))
            });
            let (caller, worker) = handle.await.unwrap();
            assert_ne!(caller, worker);
        });
        assert_eq!(
            off_the_runtime(|| std::thread::current().id()),
            std::thread::current().id(),
            "no runtime: inline"
        );
    }

    #[test]
    fn a_command_that_prints_without_end_is_refused_at_the_limit() {
        let e = from_command("cat /dev/zero").unwrap_err();
        assert!(e.contains("more than 64 KiB"), "{e}");
        let exact = format!("head -c {MAX_COMMAND_OUTPUT} /dev/zero | tr '\\0' k");
        assert_eq!(
            from_command(&exact).unwrap().expose().len(),
            MAX_COMMAND_OUTPUT
        );
    }

    #[test]
    fn a_locked_memory_store_says_so() {
        let store = MemoryStore::default();
        store.set("a", &Secret::new("x")).unwrap();
        store.set_unavailable(true);
        let e = store.get("a").unwrap_err();
        assert!(e.to_string().contains("--secret-env"), "{e}");
    }
}
