//! What a sandboxed command can and cannot do, for each mechanism that works here
//! (a missing one is skipped with its reason on stderr).
//!
//! The Landlock helper binary is built by weft-cli (beside `weft`), so this test
//! binary is its own helper: started through a link named `weft-sandbox-exec`, it is
//! the helper (hence `harness = false` and the small runner in `main`).

use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::OnceLock;

use weft_sandbox::{command_with, probe_now, Mechanism, Policy, Probe};

struct Dirs {
    work: tempfile::TempDir,
    /// Weft's home, outside /tmp (bubblewrap replaces /tmp whole, which would hide it
    /// for the wrong reason).
    home: tempfile::TempDir,
    /// This run's private scratch folder (as a session's under WEFT_HOME).
    temp: tempfile::TempDir,
    /// Another session's private scratch folder.
    other: tempfile::TempDir,
    outside: tempfile::TempDir,
}

fn dirs() -> Dirs {
    let d = || tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let private = || {
        let t = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap_or_else(|e| panic!("{e}"));
        weft_sandbox::private_temp(t.path()).unwrap_or_else(|e| panic!("{e}"));
        t
    };
    let dirs = Dirs {
        work: d(),
        home: private(),
        temp: private(),
        other: private(),
        outside: d(),
    };
    std::fs::write(dirs.other.path().join("theirs"), "theirs\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir(dirs.work.path().join(".git")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dirs.work.path().join(".git/HEAD"), "ref: x\n")
        .unwrap_or_else(|e| panic!("{e}"));
    dirs
}

static LINK: OnceLock<PathBuf> = OnceLock::new();

/// A link named `weft-sandbox-exec` to this test binary, in a folder of its own
/// outside /tmp (so a command under bubblewrap can run it too).
fn helper_link() -> &'static Path {
    LINK.get_or_init(|| {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap_or_else(|e| panic!("{e}"))
            .keep();
        let link = dir.join(weft_sandbox::HELPER_NAME);
        let me = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(me, &link).unwrap_or_else(|e| panic!("{e}"));
        link
    })
}

fn mechanism(force: &str) -> Option<Probe> {
    std::env::set_var("WEFT_SANDBOX_HELPER", helper_link());
    let p = probe_now(Some(force));
    if p.mechanism == Mechanism::Unavailable {
        eprintln!("SKIP {force}: {}", p.details);
        return None;
    }
    Some(p)
}

fn policy(d: &Dirs, net: bool) -> Policy {
    let mut policy = Policy::new(d.work.path(), d.temp.path(), d.home.path());
    policy.allow_network = net;
    policy
}

fn sh(p: &Probe, d: &Dirs, net: bool, line: &str) -> (bool, String) {
    run(
        p,
        &policy(d, net),
        &["bash".into(), "-c".into(), line.into()],
    )
}

fn run(p: &Probe, policy: &Policy, argv: &[String]) -> (bool, String) {
    let mut confined = command_with(p, policy, argv)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("no command"));
    let out = confined.command.output().unwrap_or_else(|e| panic!("{e}"));
    drop(confined.hold);
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// The helper's `--connect` exit code when it ran and no socket answered (the crate's
/// `NONE_REACHED`): a refusal, unlike a helper that could not even start.
const NONE_REACHED: i32 = 3;

/// `run`, and whether the helper ran and reached no socket.
fn reached_none(p: &Probe, policy: &Policy, argv: &[String]) -> (bool, String) {
    let mut confined = command_with(p, policy, argv)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("no command"));
    let out = confined.command.output().unwrap_or_else(|e| panic!("{e}"));
    drop(confined.hold);
    (
        out.status.code() == Some(NONE_REACHED),
        format!(
            "{:?}: {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

fn q(p: &Path) -> String {
    format!("'{}'", p.display())
}

fn confines(force: &str) {
    let Some(p) = mechanism(force) else { return };
    let d = dirs();
    let outside = d.outside.path().join("x");
    let (ok, out) = sh(&p, &d, false, &format!("echo no > {}", q(&outside)));
    assert!(
        !ok && !outside.exists(),
        "{force}: a write outside the workspace worked: {out}"
    );
    let (ok, out) = sh(&p, &d, false, "echo yes > inside.txt && cat inside.txt");
    assert!(ok && out.contains("yes"), "{force}: {out}");
    assert!(d.work.path().join("inside.txt").exists());
    // The private scratch folder is TMPDIR (and /tmp under bubblewrap); the host's
    // /tmp and another session's scratch folder are not writable.
    let (ok, out) = sh(&p, &d, false, "echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"");
    assert!(
        ok && out.contains('t'),
        "{force}: TMPDIR is not writable: {out}"
    );
    assert!(
        d.temp.path().join("t").exists(),
        "{force}: TMPDIR is not the private folder"
    );
    let host = std::env::temp_dir().join(format!("weft-sandbox-host-{}", std::process::id()));
    let (ok, out) = sh(&p, &d, false, &format!("echo no > {}", q(&host)));
    let host_written = host.exists();
    let _ = std::fs::remove_file(&host);
    assert!(
        !host_written,
        "{force}: the host's /tmp is writable: {ok} {out}"
    );
    let theirs = d.other.path().join("theirs");
    let (ok, out) = sh(&p, &d, false, &format!("echo mine > {}", q(&theirs)));
    assert!(
        !ok,
        "{force}: another session's scratch folder is writable: {out}"
    );
    assert_eq!(
        std::fs::read_to_string(&theirs).unwrap_or_default(),
        "theirs\n"
    );
    if p.mechanism == Mechanism::Bwrap {
        let (ok, out) = sh(&p, &d, false, "echo b > /tmp/b && echo $TMPDIR");
        assert!(ok && out.trim() == "/tmp", "{force}: {out}");
        assert!(
            d.temp.path().join("b").exists(),
            "{force}: /tmp is not the private folder"
        );
    }
    let (ok, _) = sh(&p, &d, false, "echo x > /etc/weft-sandbox-test");
    assert!(!ok && !Path::new("/etc/weft-sandbox-test").exists());
    if p.mechanism == Mechanism::Bwrap {
        let (ok, out) = sh(&p, &d, false, "echo bad > .git/HEAD");
        assert!(!ok, "{force}: .git is writable: {out}");
        let head = std::fs::read_to_string(d.work.path().join(".git/HEAD")).unwrap_or_default();
        assert_eq!(head, "ref: x\n");
    } else {
        eprintln!(
            "SKIP {force}: .git read-only is not enforceable with Landlock (rules only add access); \
             the permission step asks before a command naming a path in .git/.weft instead \
             (weft_shell_guard::policy::decide_under, tested in crates/shell-guard/tests/rules.rs)"
        );
    }
    // A child that forks many processes is still confined.
    let line = format!(
        "for i in $(seq 1 24); do ( sleep 0.05; echo x > {}/f$i; bash -c 'echo y > {}/g$i' ) & done; wait; true",
        q(d.outside.path()),
        q(d.outside.path())
    );
    let (_, out) = sh(&p, &d, false, &line);
    let escaped = std::fs::read_dir(d.outside.path())
        .map(|r| r.count())
        .unwrap_or(0);
    assert_eq!(escaped, 0, "{force}: forked children wrote outside: {out}");
}

fn network(force: &str) {
    let Some(p) = mechanism(force) else { return };
    let d = dirs();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let port = listener
        .local_addr()
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("{e}"));
    let accept = std::thread::spawn(move || {
        listener.set_nonblocking(false).ok();
        listener.accept().is_ok()
    });
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let (ok, out) = sh(&p, &d, false, &connect);
    assert!(
        !ok && !out.contains("connected"),
        "{force}: connected without network: {out}"
    );
    let (ok, out) = sh(&p, &d, true, &connect);
    assert!(
        ok && out.contains("connected"),
        "{force}: no connection with network allowed: {out}"
    );
    assert!(accept.join().unwrap_or(false));
}

/// The fake `$XDG_RUNTIME_DIR` main sets for this process (where D-Bus's session bus
/// and the daemon's fallback socket would be), outside /tmp.
static RUNTIME: OnceLock<PathBuf> = OnceLock::new();

fn runtime_dir() -> &'static Path {
    RUNTIME.get_or_init(|| {
        tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap_or_else(|e| panic!("{e}"))
            .keep()
    })
}

fn listen(path: &Path) -> UnixListener {
    let _ = std::fs::remove_file(path);
    UnixListener::bind(path).unwrap_or_else(|e| panic!("bind {}: {e}", path.display()))
}

fn connect_argv(paths: &[&Path]) -> Vec<String> {
    let mut argv = vec![helper_link().display().to_string(), "--connect".to_string()];
    argv.extend(paths.iter().map(|p| p.display().to_string()));
    argv
}

/// H1: no Unix socket of the host answers a sandboxed command, and Weft's home cannot
/// be read.
fn host_sockets(force: &str) {
    let Some(p) = mechanism(force) else { return };
    let d = dirs();
    let daemon_path = d.home.path().join("daemon.sock");
    let bus_path = runtime_dir().join("bus");
    let _daemon = listen(&daemon_path);
    let _bus = listen(&bus_path);
    std::fs::write(d.home.path().join("tokens"), "secret-token\n")
        .unwrap_or_else(|e| panic!("{e}"));
    // The way of trying works: outside the sandbox it connects.
    let outside = std::process::Command::new(helper_link())
        .args(["--connect"])
        .arg(&daemon_path)
        .arg(&bus_path)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(outside.status.success(), "{outside:?}");
    let (none, out) = reached_none(
        &p,
        &policy(&d, false),
        &connect_argv(&[&daemon_path, &bus_path]),
    );
    assert!(none, "{force}: a host socket answered from inside: {out}");
    // /run holds the system's sockets (the system bus, systemd's); try one there when
    // this user may make it.
    let run_path = PathBuf::from(format!("/run/weft-confine-{}.sock", std::process::id()));
    if let Ok(l) = UnixListener::bind(&run_path) {
        let (none, out) = reached_none(&p, &policy(&d, false), &connect_argv(&[&run_path]));
        drop(l);
        let _ = std::fs::remove_file(&run_path);
        assert!(none, "{force}: a socket in /run answered: {out}");
    }
    let (ok, out) = sh(
        &p,
        &d,
        false,
        &format!("cat {}", q(&d.home.path().join("tokens"))),
    );
    assert!(
        !ok && !out.contains("secret-token"),
        "{force}: Weft's home is readable: {out}"
    );
    // The workspace's own sockets: bubblewrap keeps them usable; under Landlock no Unix
    // socket can be made at all.
    let own_path = d.work.path().join("own.sock");
    let _own = listen(&own_path);
    let (ok, out) = run(&p, &policy(&d, true), &connect_argv(&[&own_path]));
    match p.mechanism {
        Mechanism::Bwrap => assert!(ok, "{force}: the workspace's own socket: {out}"),
        _ => assert!(
            !ok && out.contains("Operation not permitted"),
            "{force}: socket(AF_UNIX) is not refused: {out}"
        ),
    }
    // With the network allowed, still no host socket.
    let (none, out) = reached_none(
        &p,
        &policy(&d, true),
        &connect_argv(&[&daemon_path, &bus_path]),
    );
    assert!(
        none,
        "{force}: a host socket answered with the network allowed: {out}"
    );
}

/// A workspace (a worktree) inside Weft's home stays visible and writable while the
/// rest of the home is hidden.
fn workspace_inside_home(force: &str) {
    let Some(p) = mechanism(force) else { return };
    let d = dirs();
    let wt = d.home.path().join("worktrees/wt");
    std::fs::create_dir_all(&wt).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(wt.join("file.txt"), "in the worktree\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(d.home.path().join("weft.db"), "db\n").unwrap_or_else(|e| panic!("{e}"));
    let mut policy = Policy::new(&wt, d.temp.path(), d.home.path());
    policy.allow_network = false;
    let line = format!(
        "cat file.txt && echo more >> file.txt && cat {} ; true",
        q(&d.home.path().join("weft.db"))
    );
    let (_, out) = run(&p, &policy, &["bash".into(), "-c".into(), line]);
    assert!(out.contains("in the worktree"), "{force}: {out}");
    assert!(
        !out.contains("db\n"),
        "{force}: the home beside it is readable: {out}"
    );
    let after = std::fs::read_to_string(wt.join("file.txt")).unwrap_or_default();
    assert_eq!(after, "in the worktree\nmore\n", "{force}: {out}");
}

/// H3: `.git` and `.weft` stay read-only when absent, replaced, or a gitfile; a
/// symlinked one is refused; nothing is left behind.
fn planted_git_and_weft(force: &str) {
    let Some(p) = mechanism(force) else { return };
    if p.mechanism != Mechanism::Bwrap {
        eprintln!(
            "SKIP {force}: Landlock cannot keep .git/.weft read-only; every command that is \
             not safe asks under it (weft_shell_guard's policy, protects_git: false)"
        );
        return;
    }
    let d = dirs();
    let ws = d.work.path();
    let (ok, out) = sh(
        &p,
        &d,
        false,
        "mkdir -p .weft && echo '{\"PreToolUse\":[]}' > .weft/hooks.json && echo created",
    );
    assert!(!ok && !out.contains("created"), "{force}: {out}");
    assert!(
        !ws.join(".weft").exists(),
        "{force}: an empty .weft was left behind"
    );
    let (ok, out) = sh(
        &p,
        &d,
        false,
        "mv .git .git-aside && mkdir .git && echo planted > .git/HEAD && echo replaced",
    );
    assert!(!ok && !out.contains("replaced"), "{force}: {out}");
    let (ok, out) = sh(&p, &d, false, "rm -rf .git && echo removed");
    assert!(!ok && !out.contains("removed"), "{force}: {out}");
    let head = std::fs::read_to_string(ws.join(".git/HEAD")).unwrap_or_default();
    assert_eq!(head, "ref: x\n", "{force}");
    assert!(!ws.join(".git-aside").exists());
    // A symbolic link: the command does not run at all.
    let elsewhere = d.outside.path().join("weft-elsewhere");
    std::fs::create_dir(&elsewhere).unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(&elsewhere, ws.join(".weft")).unwrap_or_else(|e| panic!("{e}"));
    let refused = command_with(&p, &policy(&d, false), &["true".into()]);
    assert!(
        matches!(&refused, Err(weft_sandbox::Error::Symlink { .. })),
        "{force}: a symlinked .weft was accepted: {refused:?}"
    );
    let why = refused.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(why.contains("symbolic link"), "{why}");
    std::fs::remove_file(ws.join(".weft")).unwrap_or_else(|e| panic!("{e}"));
    // A worktree's .git is a file: bound read-only too.
    std::fs::remove_dir_all(ws.join(".git")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(ws.join(".git"), "gitdir: /elsewhere\n").unwrap_or_else(|e| panic!("{e}"));
    let (ok, out) = sh(
        &p,
        &d,
        false,
        "echo 'gitdir: /planted' > .git; rm -f .git; mv .git x; test -f .git && echo still",
    );
    assert!(out.contains("still"), "{force}: {ok} {out}");
    let gitfile = std::fs::read_to_string(ws.join(".git")).unwrap_or_default();
    assert_eq!(gitfile, "gitdir: /elsewhere\n", "{force}: {out}");
    // The workspace is otherwise writable, and nothing is left behind.
    let (ok, out) = sh(&p, &d, false, "echo fine > fine.txt");
    assert!(ok, "{force}: {out}");
    assert!(!ws.join(".weft").exists(), "{force}: .weft left behind");
}

/// L9: under Landlock, io_uring (whose IORING_OP_SOCKET makes a socket without the
/// socket system call) and x32 system calls are refused; python3 makes the calls.
fn landlock_refuses_io_uring_and_x32() {
    let Some(p) = mechanism("landlock") else {
        return;
    };
    let python = std::process::Command::new("python3")
        .arg("-c")
        .arg("1")
        .status();
    if !python.is_ok_and(|s| s.success()) {
        eprintln!("SKIP landlock_refuses_io_uring_and_x32: no python3");
        return;
    }
    let d = dirs();
    let script = "import ctypes, os\n\
        libc = ctypes.CDLL(None, use_errno=True)\n\
        def call(*a):\n\
        \x20   r = libc.syscall(*a)\n\
        \x20   return 'ok' if r >= 0 else os.strerror(ctypes.get_errno())\n\
        print('io_uring_setup:', call(425, 1, ctypes.create_string_buffer(120)))\n\
        print('x32 socket:', call(0x40000000 + 41, 1, 1, 0))\n";
    std::fs::write(d.work.path().join("calls.py"), script).unwrap_or_else(|e| panic!("{e}"));
    let (_, out) = sh(&p, &d, true, "python3 calls.py");
    assert!(
        out.contains("io_uring_setup: Operation not permitted"),
        "io_uring is not refused: {out}"
    );
    if cfg!(target_arch = "x86_64") {
        assert!(
            out.contains("x32 socket: Operation not permitted"),
            "an x32 call is not refused: {out}"
        );
    }
}

fn bwrap_confines_files_and_forks() {
    confines("bwrap");
}

fn landlock_confines_files_and_forks() {
    confines("landlock");
}

fn bwrap_network_only_when_allowed() {
    network("bwrap");
}

fn landlock_network_only_when_allowed() {
    network("landlock");
}

fn probe_names_a_mechanism() {
    let p = probe_now(None);
    let j = serde_json::to_value(&p).unwrap_or_default();
    assert!(
        matches!(
            j["mechanism"].as_str(),
            Some("bwrap" | "landlock" | "unavailable")
        ),
        "{j}"
    );
    assert!(!p.details.is_empty());
    let off = probe_now(Some("off"));
    assert_eq!(off.mechanism, Mechanism::Unavailable);
}

/// `weft sandbox --probe`'s fields, each measured: bubblewrap holds all three;
/// Landlock all but `.git`; no sandbox none.
fn probe_checks_measure_what_holds() {
    let home = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap_or_else(|e| panic!("{e}"));
    for force in ["bwrap", "landlock"] {
        let Some(p) = mechanism(force) else { continue };
        let c = weft_sandbox::check(&p, home.path());
        assert!(c.host_sockets_blocked, "{force}: {:?}", c.notes);
        assert_eq!(
            c.network,
            weft_sandbox::Reach::Blocked,
            "{force}: {:?}",
            c.notes
        );
        assert_eq!(
            c.git_read_only,
            p.mechanism == Mechanism::Bwrap,
            "{force}: {:?}",
            c.notes
        );
        let j = serde_json::to_value(&c).unwrap_or_default();
        assert!(
            j["hostSocketsBlocked"].is_boolean() && j["gitReadOnly"].is_boolean(),
            "{j}"
        );
        assert_eq!(j["network"], "blocked", "{j}");
    }
    let off = weft_sandbox::check(&probe_now(Some("off")), home.path());
    assert!(!off.host_sockets_blocked && !off.git_read_only);
    assert_eq!(off.network, weft_sandbox::Reach::Open);
    let left: Vec<_> = std::fs::read_dir(home.path())
        .map(|r| r.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "the probe left {left:?} in the home");
}

fn main() -> ExitCode {
    let mut args = std::env::args();
    let arg0 = args.next().unwrap_or_default();
    if Path::new(&arg0)
        .file_name()
        .is_some_and(|n| n == weft_sandbox::HELPER_NAME)
    {
        return weft_sandbox::exec_with(args);
    }
    // Where a session bus and the daemon's fallback socket would be; set before any
    // thread starts.
    std::env::set_var("XDG_RUNTIME_DIR", runtime_dir());
    let filters: Vec<String> = args.filter(|a| !a.starts_with('-')).collect();
    let tests: [(&str, fn()); 12] = [
        ("bwrap_hides_host_sockets", || host_sockets("bwrap")),
        ("landlock_hides_host_sockets", || host_sockets("landlock")),
        ("bwrap_keeps_a_worktree_in_the_home", || {
            workspace_inside_home("bwrap")
        }),
        ("landlock_keeps_a_worktree_in_the_home", || {
            workspace_inside_home("landlock")
        }),
        ("bwrap_keeps_planted_git_and_weft_out", || {
            planted_git_and_weft("bwrap")
        }),
        (
            "landlock_refuses_io_uring_and_x32",
            landlock_refuses_io_uring_and_x32,
        ),
        (
            "bwrap_confines_files_and_forks",
            bwrap_confines_files_and_forks,
        ),
        (
            "landlock_confines_files_and_forks",
            landlock_confines_files_and_forks,
        ),
        (
            "bwrap_network_only_when_allowed",
            bwrap_network_only_when_allowed,
        ),
        (
            "landlock_network_only_when_allowed",
            landlock_network_only_when_allowed,
        ),
        ("probe_names_a_mechanism", probe_names_a_mechanism),
        (
            "probe_checks_measure_what_holds",
            probe_checks_measure_what_holds,
        ),
    ];
    let mut failed = Vec::new();
    let mut ran = 0;
    for (name, test) in tests {
        if !filters.is_empty() && !filters.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        ran += 1;
        let ok = std::panic::catch_unwind(test).is_ok();
        println!("test {name} ... {}", if ok { "ok" } else { "FAILED" });
        if !ok {
            failed.push(name);
        }
    }
    if let Some(dir) = LINK.get().and_then(|l| l.parent()) {
        let _ = std::fs::remove_dir_all(dir);
    }
    if let Some(dir) = RUNTIME.get() {
        let _ = std::fs::remove_dir_all(dir);
    }
    println!(
        "\ntest result: {}. {} passed; {} failed",
        if failed.is_empty() { "ok" } else { "FAILED" },
        ran - failed.len(),
        failed.len()
    );
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
