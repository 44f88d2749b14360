//! What a sandboxed command can and cannot do, for each mechanism that works here
//! (a missing one is skipped with its reason on stderr).
//!
//! The Landlock helper binary is built by weft-cli (beside `weft`), so this test
//! binary is its own helper: started through a link named `weft-sandbox-exec`, it is
//! the helper (hence `harness = false` and the small runner in `main`).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::OnceLock;

use weft_sandbox::{command_with, probe_now, Mechanism, Policy, Probe};

struct Dirs {
    work: tempfile::TempDir,
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

/// A link named `weft-sandbox-exec` to this test binary, in a folder of its own.
fn helper_link() -> &'static Path {
    LINK.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}")).keep();
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

fn main() -> ExitCode {
    let mut args = std::env::args();
    let arg0 = args.next().unwrap_or_default();
    if Path::new(&arg0)
        .file_name()
        .is_some_and(|n| n == weft_sandbox::HELPER_NAME)
    {
        return weft_sandbox::exec_with(args);
    }
    let filters: Vec<String> = args.filter(|a| !a.starts_with('-')).collect();
    let tests: [(&str, fn()); 5] = [
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
