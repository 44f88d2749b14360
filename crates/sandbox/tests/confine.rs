//! What a sandboxed command can and cannot do, for each mechanism that works here
//! (a missing one is skipped with its reason on stderr).

use std::net::TcpListener;
use std::path::Path;

use weft_sandbox::{command_with, probe_now, Mechanism, Policy, Probe};

struct Dirs {
    work: tempfile::TempDir,
    temp: tempfile::TempDir,
    outside: tempfile::TempDir,
}

fn dirs() -> Dirs {
    let d = || tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dirs = Dirs {
        work: d(),
        temp: d(),
        outside: d(),
    };
    std::fs::create_dir(dirs.work.path().join(".git")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dirs.work.path().join(".git/HEAD"), "ref: x\n")
        .unwrap_or_else(|e| panic!("{e}"));
    dirs
}

fn mechanism(force: &str) -> Option<Probe> {
    std::env::set_var(
        "WEFT_SANDBOX_HELPER",
        env!("CARGO_BIN_EXE_weft-sandbox-exec"),
    );
    let p = probe_now(Some(force));
    if p.mechanism == Mechanism::Unavailable {
        eprintln!("SKIP {force}: {}", p.details);
        return None;
    }
    Some(p)
}

fn sh(p: &Probe, d: &Dirs, net: bool, line: &str) -> (bool, String) {
    let policy = Policy {
        workdir: d.work.path().into(),
        temp: d.temp.path().into(),
        allow_network: net,
    };
    let out = command_with(p, &policy, &["bash".into(), "-c".into(), line.into()])
        .unwrap_or_else(|| panic!("no command"))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    (
        out.status.success(),
        format!(
            "{}{}",
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
    let (ok, out) = sh(&p, &d, false, &format!("echo t > {}/t", q(d.temp.path())));
    assert!(ok, "{force}: the temp folder is not writable: {out}");
    let (ok, _) = sh(&p, &d, false, "echo x > /etc/weft-sandbox-test");
    assert!(!ok && !Path::new("/etc/weft-sandbox-test").exists());
    if p.mechanism == Mechanism::Bwrap {
        let (ok, out) = sh(&p, &d, false, "echo bad > .git/HEAD");
        assert!(!ok, "{force}: .git is writable: {out}");
        let head = std::fs::read_to_string(d.work.path().join(".git/HEAD")).unwrap_or_default();
        assert_eq!(head, "ref: x\n");
    } else {
        eprintln!(
            "SKIP {force}: .git read-only is not enforceable with Landlock (rules only add access)"
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

#[test]
fn bwrap_confines_files_and_forks() {
    confines("bwrap");
}

#[test]
fn landlock_confines_files_and_forks() {
    confines("landlock");
}

#[test]
fn bwrap_network_only_when_allowed() {
    network("bwrap");
}

#[test]
fn landlock_network_only_when_allowed() {
    network("landlock");
}

#[test]
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
