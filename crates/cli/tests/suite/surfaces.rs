//! Surfaces that are programs of their own (`weft-matrix`): `weft matrix …` runs the
//! one beside `weft` and no other, and the daemon keeps it running while it is
//! configured, restarts it after a failure and stops it with itself.
//!
//! The program here is a shell script standing where `weft-matrix` is installed: these
//! tests are about how `weft` finds, runs, restarts and stops it. The Matrix surface
//! itself is tested against a real Synapse in its own workspace (surfaces/matrix).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;
use weft_client::{Client, Home};
use weft_protocol::verb;

use super::support::{pid_alive, script, wait_for, Env};

/// `weft` hard-linked (or copied) into `dir`, so a program can be put beside it.
fn weft_in(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{e}"));
    let weft = dir.join("weft");
    let built = Path::new(env!("CARGO_BIN_EXE_weft"));
    if std::fs::hard_link(built, &weft).is_err() {
        std::fs::copy(built, &weft).unwrap_or_else(|e| panic!("copy weft: {e}"));
    }
    weft
}

fn run(weft: &Path, env: &Env, args: &[&str], stdin: &str) -> (i32, String, String) {
    use std::io::Write;
    let mut child = Command::new(weft)
        .args(args)
        .env("WEFT_HOME", env.home.path())
        .env("WEFT_DAEMON_IDLE_SECS", "120")
        .current_dir(env.work.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut input = child.stdin.take().unwrap_or_else(|| panic!("stdin"));
    input
        .write_all(stdin.as_bytes())
        .unwrap_or_else(|e| panic!("{e}"));
    drop(input);
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    env.keep_output(&out);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn weft_matrix_runs_the_program_beside_weft_and_no_other() {
    let env = Env::new();
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap_or_else(|e| panic!("{e}"));
    let bin = root.path().join("bin");
    let weft = weft_in(&bin);
    // One on PATH and one in the current folder: neither may run.
    let elsewhere = root.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap_or_else(|e| panic!("{e}"));
    let marker = root.path().join("wrong-program-ran");
    let wrong = format!("#!/bin/sh\ntouch '{}'\n", marker.display());
    script(&elsewhere, "weft-matrix", &wrong);
    script(env.work.path(), "weft-matrix", &wrong);
    let path = format!("{}:/usr/bin:/bin", elsewhere.display());
    let mut cmd = Command::new(&weft);
    let out = cmd
        .args(["matrix", "status"])
        .env("WEFT_HOME", env.home.path())
        .env("PATH", &path)
        .current_dir(env.work.path())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("weft-matrix is not installed beside"),
        "{stderr}"
    );
    // How to build it there from a checkout: into weft's own target folder.
    assert!(
        stderr.contains(&format!("--target-dir {}", root.path().display())),
        "{stderr}"
    );
    assert!(!marker.exists(), "a weft-matrix off PATH or the cwd ran");

    // Beside weft: it gets every argument (flags too), the terminal's stdin (the
    // password) and WEFT_HOME, and its exit code is weft's.
    script(
        &bin,
        "weft-matrix",
        "#!/bin/sh\nprintf '%s|' \"$@\"\necho\nread -r pw\necho \"stdin=$pw home=$WEFT_HOME\"\nexit 7\n",
    );
    let (code, stdout, stderr) = run(
        &weft,
        &env,
        &[
            "matrix",
            "login",
            "--homeserver",
            "http://127.0.0.1:1",
            "--user",
            "@me:localhost",
        ],
        "hunter2\n",
    );
    assert_eq!(code, 7, "{stderr}");
    assert!(
        stdout.starts_with("login|--homeserver|http://127.0.0.1:1|--user|@me:localhost|"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("stdin=hunter2 home={}", env.home.path().display())),
        "{stdout}"
    );
    // --help is the program's, not weft's.
    let (_, stdout, _) = run(&weft, &env, &["matrix", "--help"], "");
    assert!(stdout.starts_with("--help|"), "{stdout}");
    // It acts on this machine only.
    let (code, _, stderr) = run(&weft, &env, &["--host", "gpu", "matrix", "status"], "");
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("this machine only"), "{stderr}");
}

fn surface(env: &Env) -> Value {
    let (code, status, stderr) = env.json(&["daemon", "status", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    status["surfaces"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == "matrix"))
        .cloned()
        .unwrap_or_else(|| panic!("no matrix surface in {status}"))
}

fn running_pid(s: &Value) -> Option<u32> {
    (s["running"] == true)
        .then(|| s["pid"].as_u64())
        .flatten()
        .and_then(|p| u32::try_from(p).ok())
}

async fn reload(env: &Env) -> Value {
    let (client, _events) =
        Client::connect(&Home::at(env.home.path()), super::support::app_hello())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    let status = client
        .send(verb::ReloadSurface {
            name: "matrix".into(),
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    serde_json::to_value(status).unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_daemon_keeps_its_surface_running_restarts_it_and_stops_it() {
    let env = Env::new();
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap_or_else(|e| panic!("{e}"));
    let bin = root.path().join("bin");
    let weft = weft_in(&bin);
    let state = env.home.path().join("matrix");
    std::fs::create_dir_all(&state).unwrap_or_else(|e| panic!("{e}"));
    // A surface that fails while `fail` exists, has nothing to do while `off` does,
    // and otherwise runs until it is stopped.
    script(
        &bin,
        "weft-matrix",
        &format!(
            "#!/bin/sh\n[ \"$1\" = run ] || exit 64\necho $$ >> '{d}/runs'\n\
             if [ -e '{d}/fail' ]; then echo 'the homeserver did not answer' >&2; exit 3; fi\n\
             [ -e '{d}/off' ] && exit 0\nexec sleep 300\n",
            d = state.display()
        ),
    );
    // Any client starts the daemon (from this `weft`, so beside its program).
    let (code, _, stderr) = run(&weft, &env, &["sessions", "--json"], "");
    assert_eq!(code, 0, "{stderr}");
    let first = wait_for("the surface to run", 30, || running_pid(&surface(&env)));
    assert!(pid_alive(first));

    // Killed: started again, the failure said.
    let kill = |pid: u32| {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    };
    kill(first);
    let second = wait_for("a restart", 30, || {
        running_pid(&surface(&env)).filter(|p| *p != first)
    });
    let s = surface(&env);
    assert_eq!(s["restarts"], 1, "{s}");
    assert!(
        s["lastError"]
            .as_str()
            .unwrap_or_default()
            .contains("signal"),
        "{s}"
    );

    // A failing start: its last word is the reason; it is tried again once it can run.
    std::fs::write(state.join("fail"), "").unwrap_or_else(|e| panic!("{e}"));
    kill(second);
    wait_for("the failure to be seen", 30, || {
        let s = surface(&env);
        s["lastError"]
            .as_str()
            .is_some_and(|e| e.contains("the homeserver did not answer"))
            .then_some(())
    });
    std::fs::remove_file(state.join("fail")).unwrap_or_else(|e| panic!("{e}"));
    let third = wait_for("a restart after the failures", 60, || {
        running_pid(&surface(&env))
    });

    // Logged out (the program exits 0): reloaded, it stays stopped, not counted a failure.
    std::fs::write(state.join("off"), "").unwrap_or_else(|e| panic!("{e}"));
    let restarts = surface(&env)["restarts"].as_u64().unwrap_or_default();
    let _ = reload(&env).await;
    wait_for("the old process to end", 10, || {
        (!pid_alive(third)).then_some(())
    });
    wait_for("the surface to stay stopped", 10, || {
        let s = surface(&env);
        (s["running"] == false).then_some(())
    });
    assert_eq!(surface(&env)["restarts"].as_u64(), Some(restarts));

    // Configured again: a reload starts it; the daemon's stop ends it.
    std::fs::remove_file(state.join("off")).unwrap_or_else(|e| panic!("{e}"));
    let reloaded = reload(&env).await;
    assert_eq!(reloaded["name"], "matrix", "{reloaded}");
    let fourth = wait_for("the surface to run again", 30, || {
        running_pid(&surface(&env))
    });
    let (code, _, stderr) = run(&weft, &env, &["daemon", "stop"], "");
    assert_eq!(code, 0, "{stderr}");
    wait_for("the surface to end with the daemon", 10, || {
        (!pid_alive(fourth)).then_some(())
    });
    let runs = std::fs::read_to_string(state.join("runs")).unwrap_or_default();
    assert!(runs.lines().count() >= 5, "{runs}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_window_runs_the_surfaces_account_commands_through_the_daemon() {
    let env = Env::new();
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap_or_else(|e| panic!("{e}"));
    let bin = root.path().join("bin");
    let weft = weft_in(&bin);
    script(
        &bin,
        "weft-matrix",
        "#!/bin/sh\nread -r secret\nprintf '%s|' \"$@\"\necho \"home=$WEFT_HOME\"\n\
         [ \"$secret\" = right ] || { echo 'weft-matrix: M_FORBIDDEN' >&2; exit 1; }\n",
    );
    let (code, _, stderr) = run(&weft, &env, &["sessions", "--json"], "");
    assert_eq!(code, 0, "{stderr}");
    let (client, _events) =
        Client::connect(&Home::at(env.home.path()), super::support::app_hello())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    let command = |args: &[&str], stdin: Option<&str>| weft_protocol::SurfaceCommandRequest {
        name: "matrix".into(),
        args: args.iter().map(|a| a.to_string()).collect(),
        stdin: stdin.map(|s| weft_protocol::SecretText(s.into())),
    };
    let args = [
        "login",
        "--homeserver",
        "http://127.0.0.1:1",
        "--user",
        "@b:x",
    ];
    let out = client
        .send(command(&args, Some("right")))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout.trim(),
        format!(
            "login|--homeserver|http://127.0.0.1:1|--user|@b:x|home={}",
            env.home.path().display()
        )
    );
    let out = client
        .send(command(&args, Some("wrong")))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (out.code, out.stderr.trim()),
        (1, "weft-matrix: M_FORBIDDEN")
    );
    // `run` is the daemon's own; nothing but the account commands runs.
    for bad in [&["run"][..], &["--help"], &[]] {
        let err = client
            .send(command(bad, None))
            .await
            .err()
            .unwrap_or_else(|| panic!("{bad:?} ran"));
        assert!(
            err.to_string().contains("a surface's commands are"),
            "{err}"
        );
    }
    client.close();
}
