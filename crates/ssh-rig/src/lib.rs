//! Real OpenSSH servers for tests: a rig starts its own `sshd -D` on a free loopback
//! port with a host key it makes, logs in throwaway users it makes (each with its own
//! login shell and an authorized key made by the test), and is reached through an ssh
//! config file of its own (what `WEFT_SSH_CONFIG` names). Dropping the rig ends the
//! shared ssh connections under the control folders it was told of, stops the
//! servers, kills whatever still runs as its users and deletes them.
//!
//! Needs root (to make users) and Debian's `openssh-server` (and `fish` and `csh` for
//! the users whose shells they are: scripts/setup.sh `setup_ssh_hosts`). Missing,
//! [`SshRig::new`] says why, and a test under CI=true fails rather than skips.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const SSHD: &str = "/usr/sbin/sshd";

/// A user made for one test.
pub struct User {
    pub name: String,
    pub home: PathBuf,
}

/// The servers, users and ssh config of one test.
pub struct SshRig {
    dir: tempfile::TempDir,
    users: Vec<User>,
    sshds: Vec<Child>,
    /// `(alias, lines)` of the ssh config.
    aliases: Vec<(String, String)>,
    /// Where the programs under test keep their shared connections' sockets.
    control_dirs: Vec<PathBuf>,
}

fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"))
}

/// Why this machine cannot run the rig, if it cannot.
fn missing() -> Option<String> {
    if !nix::unistd::getuid().is_root() {
        return Some("the hosts tests make throwaway users: they need root".into());
    }
    for need in [SSHD, "/usr/bin/fish", "/usr/bin/csh", "/usr/sbin/useradd"] {
        if !Path::new(need).exists() {
            return Some(format!(
                "{need} is missing (scripts/setup.sh setup_ssh_hosts installs it)"
            ));
        }
    }
    None
}

/// A name no other test or run uses.
fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!(
        "{prefix}{:x}",
        (std::process::id() ^ nanos.rotate_left(7)).wrapping_add(n * 7919) & 0xff_ffff
    )
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `useradd` and `userdel` lock /etc/passwd: parallel tests retry.
fn retried(program: &str, args: &[&str]) -> Output {
    let mut out = run(program, args);
    for _ in 0..50 {
        if out.status.success() || !String::from_utf8_lossy(&out.stderr).contains("lock") {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        out = run(program, args);
    }
    out
}

fn keygen(path: &Path) {
    let made = run(
        "ssh-keygen",
        &[
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-f",
            &path.display().to_string(),
        ],
    );
    assert!(made.status.success(), "ssh-keygen: {made:?}");
}

impl SshRig {
    /// A rig, or none (with the reason printed) where the tests cannot run; under
    /// CI=true that is a failure.
    pub fn new() -> Option<SshRig> {
        if let Some(why) = missing() {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "the hosts tests cannot run: {why}"
            );
            eprintln!("SKIPPED: {why}");
            return None;
        }
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        keygen(&dir.path().join("id"));
        // Debian's sshd wants its privilege separation folder.
        let _ = std::fs::create_dir_all("/run/sshd");
        Some(SshRig {
            dir,
            users: Vec::new(),
            sshds: Vec::new(),
            aliases: Vec::new(),
            control_dirs: Vec::new(),
        })
    }

    /// Ends the shared connections whose sockets (`cm-%C`, Weft's naming) are in `dir`
    /// when the rig is dropped.
    pub fn control_dir(&mut self, dir: &Path) {
        self.control_dirs.push(dir.to_path_buf());
    }

    /// A user whose login shell is `shell`, who logs in with the rig's key.
    pub fn user(&mut self, shell: &str) -> (String, PathBuf) {
        let name = unique("weft-t-");
        let out = retried("useradd", &["-m", "-s", shell, &name]);
        assert!(out.status.success(), "useradd {name}: {out:?}");
        // useradd leaves the password `!`, which sshd reads as a locked account even
        // for a key; `*` is no password at all, and not locked.
        let out = retried("usermod", &["-p", "*", &name]);
        assert!(out.status.success(), "usermod {name}: {out:?}");
        let home = PathBuf::from("/home").join(&name);
        let ssh = home.join(".ssh");
        std::fs::create_dir_all(&ssh).unwrap_or_else(|e| panic!("{e}"));
        let public =
            std::fs::read(self.dir.path().join("id.pub")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(ssh.join("authorized_keys"), public).unwrap_or_else(|e| panic!("{e}"));
        let out = run(
            "chown",
            &["-R", &format!("{name}:{name}"), &ssh.display().to_string()],
        );
        assert!(out.status.success(), "chown: {out:?}");
        self.users.push(User {
            name: name.clone(),
            home: home.clone(),
        });
        (name, home)
    }

    /// Starts an sshd for `users` with `extra` config lines; its port and log file.
    pub fn sshd(&mut self, users: &[&str], extra: &str) -> (u16, PathBuf) {
        let n = self.sshds.len();
        let d = self.dir.path();
        let hostkey = d.join(format!("hostkey{n}"));
        keygen(&hostkey);
        let port = free_port();
        let config = d.join(format!("sshd{n}.conf"));
        std::fs::write(
            &config,
            format!(
                "ListenAddress 127.0.0.1\nPort {port}\nHostKey {}\nPidFile {}\nUsePAM no\n\
                 StrictModes no\nAllowUsers {}\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\n{extra}\n",
                hostkey.display(),
                d.join(format!("sshd{n}.pid")).display(),
                users.join(" "),
            ),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let log = d.join(format!("sshd{n}.log"));
        let file = std::fs::File::create(&log).unwrap_or_else(|e| panic!("{e}"));
        let child = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .unwrap_or_else(|e| panic!("sshd: {e}"));
        self.sshds.push(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            assert!(!text.contains("fatal"), "sshd failed: {text}");
            if text.contains("Server listening") {
                break;
            }
            assert!(Instant::now() < deadline, "sshd did not listen: {text}");
            std::thread::sleep(Duration::from_millis(50));
        }
        (port, log)
    }

    /// A `Host` alias in the rig's ssh config.
    pub fn alias(&mut self, alias: &str, port: u16, user: &str, extra: &str) {
        self.aliases.push((
            alias.to_string(),
            format!("  HostName 127.0.0.1\n  Port {port}\n  User {user}\n{extra}"),
        ));
        self.write_config();
    }

    fn write_config(&self) {
        let d = self.dir.path();
        let mut text = String::new();
        for (alias, lines) in &self.aliases {
            text.push_str(&format!("Host {alias}\n{lines}\n"));
        }
        text.push_str(&format!(
            "Host *\n  IdentityFile {}\n  IdentitiesOnly yes\n  UserKnownHostsFile {}\n  \
             StrictHostKeyChecking accept-new\n  LogLevel ERROR\n",
            d.join("id").display(),
            d.join("known_hosts").display()
        ));
        std::fs::write(self.config(), text).unwrap_or_else(|e| panic!("{e}"));
    }

    /// The rig's ssh config file.
    pub fn config(&self) -> PathBuf {
        self.dir.path().join("ssh_config")
    }

    /// The processes of `user` that are alive (zombies waiting for a reaper are not).
    pub fn live_processes(user: &str) -> Vec<String> {
        let out = run("ps", &["-u", user, "-o", "pid=,stat=,args="]);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::trim)
            .filter(|l| {
                l.split_whitespace()
                    .nth(1)
                    .is_some_and(|s| !s.starts_with('Z'))
            })
            .map(String::from)
            .collect()
    }
}

impl Drop for SshRig {
    fn drop(&mut self) {
        for dir in &self.control_dirs {
            let control = format!("ControlPath={}/cm-%C", dir.display());
            for (alias, _) in &self.aliases {
                let _ = Command::new("ssh")
                    .arg("-F")
                    .arg(self.config())
                    .args(["-o", &control, "-O", "exit"])
                    .arg(alias)
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
            }
        }
        for sshd in &mut self.sshds {
            let _ = sshd.kill();
            let _ = sshd.wait();
        }
        for user in &self.users {
            let _ = run("pkill", &["-KILL", "-u", &user.name]);
            let _ = wait_for_gone(&user.name);
            let _ = retried("userdel", &["-r", "-f", &user.name]);
            let _ = std::fs::remove_dir_all(&user.home);
        }
    }
}

fn wait_for_gone(user: &str) -> bool {
    for _ in 0..100 {
        if SshRig::live_processes(user).is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}
