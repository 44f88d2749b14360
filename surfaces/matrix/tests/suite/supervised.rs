//! The surface as users get it: `weft-matrix` installed beside `weft`, started by the
//! daemon (not by the test), started again by it after a crash, and stopped with it.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use super::harness::{until, World};

fn daemon_status(weft: &Path, home: &Path) -> Option<Value> {
    let out = Command::new(weft)
        .args(["daemon", "status", "--json"])
        .env("WEFT_HOME", home)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    serde_json::from_slice(&out.stdout).ok()
}

/// The pid of the `weft-matrix run` the daemon supervises, while it runs.
fn supervised_pid(weft: &Path, home: &Path) -> Option<u32> {
    let status = daemon_status(weft, home)?;
    let surface = status["surfaces"]
        .as_array()?
        .iter()
        .find(|s| s["name"] == "matrix")?
        .clone();
    (surface["running"] == true)
        .then(|| surface["pid"].as_u64())
        .flatten()
        .and_then(|p| u32::try_from(p).ok())
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(')').map(|(_, r)| r.trim_start().to_string()))
        .is_some_and(|r| !r.starts_with('Z') && !r.starts_with('X'))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daemon_runs_the_bot_beside_weft_restarts_it_after_a_crash_and_stops_it() {
    let Some(w) = World::new(true).await else {
        return;
    };
    let (ok, out) = w.matrix_cli(&["allow", &w.phone_id.clone()], None);
    assert!(ok, "{out}");
    // Installed as the package has it: beside `weft`.
    let beside = w.weft.with_file_name("weft-matrix");
    let built = Path::new(env!("CARGO_BIN_EXE_weft-matrix"));
    if std::fs::hard_link(built, &beside).is_err() {
        std::fs::copy(built, &beside).unwrap_or_else(|e| panic!("{e}"));
    }
    // Any client starts the daemon; the daemon starts the bot.
    let (ok, out) = w.weft(&["sessions", "--json"]);
    assert!(ok, "{out}");
    let (weft, home) = (w.weft.clone(), w.home.clone());
    let first = until("the daemon to run the bot", || {
        let (weft, home) = (weft.clone(), home.clone());
        async move { supervised_pid(&weft, &home) }
    })
    .await;
    let log = || std::fs::read_to_string(w.home.join("logs/matrix.log")).unwrap_or_default();

    let control = w.control_room().await;
    let (room, _key) = w.new_session(&control, "hello from a supervised bot").await;
    w.wait_message(&room, "the reply", |t| {
        t.contains("Echo: hello from a supervised bot")
    })
    .await;

    // A crash: the daemon starts it again, and the new one answers the next prompt
    // (and only that one: the first is not run twice).
    let _ = Command::new("kill")
        .args(["-9", &first.to_string()])
        .status();
    let second = until("the daemon to restart the bot", || {
        let (weft, home) = (weft.clone(), home.clone());
        async move { supervised_pid(&weft, &home).filter(|p| *p != first) }
    })
    .await;
    w.say(&room, "after the crash").await;
    w.wait_message(&room, "the reply after the restart", |t| {
        t.contains("Echo: after the crash")
    })
    .await;
    let echoes: Vec<String> = w
        .bot_messages(&room)
        .await
        .into_iter()
        .map(|m| m.1)
        .filter(|t| t.contains("Echo: hello from a supervised bot"))
        .collect();
    assert_eq!(
        echoes.len(),
        1,
        "the first prompt ran again: {echoes:#?}\n{}",
        log()
    );
    let status = daemon_status(&weft, &home).unwrap_or_default();
    assert!(
        status["surfaces"][0]["restarts"].as_u64() >= Some(1),
        "{status}"
    );

    // The daemon's stop ends the bot too.
    let (ok, out) = w.weft(&["daemon", "stop"]);
    assert!(ok, "{out}");
    until("the bot to end with the daemon", || async move {
        (!alive(second)).then_some(())
    })
    .await;
}
