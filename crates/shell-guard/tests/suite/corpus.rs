//! `safe` held to what it means: every corpus line the classifier calls safe is run
//! with `bash -c` under strace, inside the real sandbox, in a workspace holding the
//! files the corpus names (an `evil.sh` that would `touch pwned`, a `bin/ls`, a git
//! repository…). The test fails if a line exec'd a program it does not name, or
//! opened a file for writing, created, renamed or removed one.
//!
//! It needs the sandbox and strace (scripts/setup.sh installs both): with `CI=true`
//! their absence fails the test; elsewhere it is skipped with the reason printed.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};

use weft_shell_guard::{classify, Context, Verdict};

use super::corpus;

const TRACED: &str = "trace=execve,execveat,open,openat,openat2,creat,rename,renameat,renameat2,\
unlink,unlinkat,mkdir,mkdirat,symlink,symlinkat,link,linkat,truncate";

/// Why the test cannot run here, if it cannot.
fn unavailable() -> Option<String> {
    let probe = weft_sandbox::probe();
    if probe.mechanism == weft_sandbox::Mechanism::Unavailable {
        return Some(format!("no sandbox: {}", probe.details));
    }
    let strace = Command::new("strace").arg("-V").output();
    if !strace.is_ok_and(|o| o.status.success()) {
        return Some("strace is not installed (scripts/setup.sh installs it)".into());
    }
    None
}

fn write(root: &Path, name: &str, text: &str) {
    let p = root.join(name);
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("{e}"));
    }
    std::fs::write(&p, text).unwrap_or_else(|e| panic!("{e}"));
}

fn executable(root: &Path, name: &str, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    write(root, name, text);
    std::fs::set_permissions(root.join(name), std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("{e}"));
}

/// The workspace the lines run in: the files they name, bait that would leave
/// `pwned` behind if run, and a git repository with one commit.
fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = ws.path();
    write(root, "README.md", "# hello\nhello world\n");
    write(root, "data.txt", "b 2\na 1\nc 3\na 1\n");
    write(root, "data2.txt", "a 1\nb 2\n");
    write(root, "payload.txt", "payload\n");
    write(root, "big.txt", &"line\n".repeat(100));
    write(root, "patterns.txt", "hello\n");
    write(root, "package.json", "{\"name\": \"x\"}\n");
    write(root, "src/main.rs", "fn main() {}\n");
    write(root, "evil.awk", "BEGIN { system(\"touch pwned\") }\n");
    for bait in ["evil.sh", "x.sh", "bin/ls", "bin/cat"] {
        executable(root, bait, "#!/bin/sh\ntouch pwned\n");
    }
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(root)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "first"]);
    ws
}

/// The programs a report names, as their file names (through wrappers too).
fn named(report: &weft_shell_guard::Report) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = ["bash".to_string()].into();
    for s in &report.simple {
        for k in &s.keys {
            if let Some(p) = k.first() {
                names.insert(p.rsplit('/').next().unwrap_or(p).to_string());
            }
        }
    }
    names
}

/// What a trace shows the line did that a safe line must not.
fn violations(trace: &str, allowed: &BTreeSet<String>) -> Vec<String> {
    let mut bad = Vec::new();
    for line in trace.lines() {
        // `PID syscall(args) = result`, or the first half of an unfinished one.
        let body = line.split_once(' ').map_or(line, |(_, b)| b).trim_start();
        let Some((call, args)) = body.split_once('(') else {
            continue;
        };
        let first = args.split('"').nth(1).unwrap_or("");
        match call {
            "execve" | "execveat" => {
                let program = first.rsplit('/').next().unwrap_or(first);
                if !allowed.contains(program) {
                    bad.push(format!("exec'd {first}: {line}"));
                }
            }
            "open" | "openat" | "openat2" => {
                let path = if call == "open" {
                    first
                } else {
                    args.split('"').nth(1).unwrap_or("")
                };
                let writes = ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"]
                    .iter()
                    .any(|f| args.contains(f));
                // git refreshes its index's stat cache under an optional lock when it
                // can take one (under bubblewrap .git is read-only and the attempt
                // fails): the one write a read-only git tries.
                let git_refresh = allowed.contains("git") && path.ends_with("/.git/index.lock");
                let harmless = matches!(path, "/dev/null" | "/dev/tty")
                    || path.starts_with("/dev/fd/")
                    || path.starts_with("/proc/self/fd/")
                    || git_refresh;
                if writes && !harmless {
                    bad.push(format!("opened {path} to write: {line}"));
                }
            }
            "creat" | "rename" | "renameat" | "renameat2" | "unlink" | "unlinkat" | "mkdir"
            | "mkdirat" | "symlink" | "symlinkat" | "link" | "linkat" | "truncate" => {
                bad.push(format!("{call}: {line}"));
            }
            _ => {}
        }
    }
    bad
}

/// Runs `line` traced in the sandbox; what it did that a safe line must not.
fn run_traced(line: &str, ws: &Path, allowed: &BTreeSet<String>) -> Vec<String> {
    let scratch = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let weft_home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let policy = weft_sandbox::Policy::new(ws, scratch.path(), weft_home.path());
    // strace writes its log into the sandbox's private /tmp (the scratch folder).
    let argv: Vec<String> = [
        "strace",
        "-f",
        "-qq",
        "-e",
        "signal=none",
        "-e",
        TRACED,
        "-o",
        "/tmp/trace",
        "bash",
        "-c",
        line,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut confined = match weft_sandbox::command(&policy, &argv) {
        Ok(Some(c)) => c,
        Ok(None) => return vec!["no sandbox to run it in".into()],
        Err(e) => return vec![format!("the sandbox would not run it: {e}")],
    };
    let out = confined
        .command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .env("LC_ALL", "C")
        .status();
    drop(confined.hold);
    if let Err(e) = out {
        return vec![format!("cannot run the sandbox: {e}")];
    }
    let trace = std::fs::read_to_string(scratch.path().join("trace")).unwrap_or_default();
    if trace.is_empty() {
        return vec!["strace wrote no trace (ptrace refused?)".into()];
    }
    violations(&trace, allowed)
}

#[test]
fn every_line_judged_safe_runs_nothing_it_does_not_name_and_writes_nothing() {
    if let Some(why) = unavailable() {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "CI=true and the corpus cannot run under strace in the sandbox: {why}"
        );
        eprintln!("SKIPPED: the safe corpus under strace ({why})");
        return;
    }
    let ws = workspace();
    let root = ws.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    let cx = Context::new(&root);
    let safe: Vec<(String, BTreeSet<String>)> = corpus()
        .into_iter()
        .map(|(_, line)| line)
        .filter_map(|line| {
            let r = classify(&line, &cx);
            (r.verdict == Verdict::Safe).then(|| {
                let names = named(&r);
                (line, names)
            })
        })
        .collect();
    assert!(safe.len() > 80, "only {} safe lines", safe.len());
    // Two at a time: the machine has two cores, each run is a sandbox and a trace.
    let (a, b) = safe.split_at(safe.len() / 2);
    let check = |part: &[(String, BTreeSet<String>)]| -> Vec<String> {
        part.iter()
            .flat_map(|(line, names)| {
                run_traced(line, &root, names)
                    .into_iter()
                    .map(move |v| format!("{line:?}: {v}"))
            })
            .collect()
    };
    let (bad_a, bad_b) = std::thread::scope(|s| {
        let h = s.spawn(|| check(a));
        let bad_b = check(b);
        (h.join().unwrap_or_default(), bad_b)
    });
    let bad: Vec<String> = bad_a.into_iter().chain(bad_b).collect();
    assert!(
        !root.join("pwned").exists(),
        "a safe line left pwned behind"
    );
    assert!(
        bad.is_empty(),
        "{} of {} safe lines did what safe lines must not:\n{}",
        bad.len(),
        safe.len(),
        bad.join("\n")
    );
    println!("{} safe lines traced clean", safe.len());
}

#[test]
fn the_trace_check_sees_an_exec_and_a_write() {
    // The checker itself, on a line that does both (not a corpus line).
    if unavailable().is_some() {
        return;
    }
    let ws = workspace();
    let names: BTreeSet<String> = ["bash".to_string(), "cat".to_string()].into();
    let bad = run_traced(
        "cat README.md; ./evil.sh; echo x > out.txt",
        ws.path(),
        &names,
    );
    assert!(bad.iter().any(|b| b.contains("evil.sh")), "{bad:?}");
    assert!(bad.iter().any(|b| b.contains("out.txt")), "{bad:?}");
}
