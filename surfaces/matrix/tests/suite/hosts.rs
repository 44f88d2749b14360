//! A session on another machine, started and driven from the phone: `new HOST:AGENT`
//! runs it in the host's own daemon, reached over a real OpenSSH server the test
//! starts (`weft_ssh_rig`), as `weft --host` and the app reach it.

use std::os::unix::fs::PermissionsExt;

use weft_ssh_rig::SshRig;

use super::harness::{until, World};

const DONE: &str = "✅ Done";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_on_a_host_is_started_prompted_relinked_and_listed_from_the_phone() {
    let Some(mut rig) = SshRig::new() else {
        return;
    };
    let Some(mut w) = World::new(true).await else {
        return;
    };
    let (user, host_home) = rig.user("/bin/bash");
    let (port, _) = rig.sshd(&[&user], "");
    rig.alias("gpu", port, &user, "");
    // The shared ssh connections' sockets: in this test's runtime folder, which the
    // rig closes when dropped.
    let runtime = w.dir.path().join("run");
    std::fs::create_dir(&runtime).unwrap_or_else(|e| panic!("{e}"));
    std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700))
        .unwrap_or_else(|e| panic!("{e}"));
    rig.control_dir(&runtime.join("weft"));
    for (k, v) in [
        ("WEFT_SSH_CONFIG", rig.config()),
        ("XDG_RUNTIME_DIR", runtime.clone()),
    ] {
        w.bot_env.push((k.to_string(), v.display().to_string()));
    }
    let (ok, out) = w.weft(&["hosts", "add", "gpu", "gpu"]);
    assert!(ok, "weft hosts add: {out}");
    w.start_bot();
    let control = w.control_room().await;

    // Started on the host, in a folder under the host user's home (`~` is theirs).
    std::fs::create_dir_all(host_home.join("proj")).unwrap_or_else(|e| panic!("{e}"));
    let chown = std::process::Command::new("chown")
        .args(["-R", &format!("{user}:{user}")])
        .arg(host_home.join("proj"))
        .status()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(chown.success());
    w.say(&control, "new gpu:echo ~/proj hello from the phone to gpu")
        .await;
    let room = w.join_invite().await;
    let key = w.session_key_of(&room).await;
    let local = key
        .strip_prefix("gpu/")
        .unwrap_or_else(|| panic!("a host's session is known by a qualified key: {key}"));
    assert!(local.starts_with("echo:"), "{key}");
    w.wait_message(&room, "the reply streamed from the host", |t| {
        t.contains("Echo: hello from the phone to gpu")
    })
    .await;
    w.wait_message(&room, "the done message", |t| t.starts_with(DONE))
        .await;

    // It ran there: the host's daemon has it, in the host user's folder; this
    // machine's daemon does not.
    let (ok, listed) = w.weft(&["--host", "gpu", "sessions", "--all", "--json"]);
    assert!(ok, "{listed}");
    let there: serde_json::Value =
        serde_json::from_str(&listed).unwrap_or_else(|e| panic!("{e}: {listed}"));
    let row = there
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["sessionKey"] == local)
        .unwrap_or_else(|| panic!("{local} not on the host: {there}"));
    assert_eq!(
        row["workdir"].as_str(),
        Some(host_home.join("proj").display().to_string().as_str()),
        "{row}"
    );
    let (_, here) = w.weft(&["sessions", "--all", "--json"]);
    assert!(!here.contains(local), "not on this machine: {here}");

    // A message in the room is the next prompt, on the host.
    w.say(&room, "and a second one").await;
    w.wait_message(&room, "the second reply", |t| {
        t.contains("Echo: and a second one")
    })
    .await;
    let (_, history) = w.weft(&["--host", "gpu", "history", local, "--json"]);
    assert!(history.contains("and a second one"), "{history}");

    // The link drops (the host's `weft proxy` killed, as a dropped connection ends
    // it): the bot links again, subscribes again, and the next prompt streams back.
    let killed = std::process::Command::new("pkill")
        .args(["-u", &user, "-f", "weft proxy"])
        .status()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        killed.success(),
        "no weft proxy ran for the bot on the host"
    );
    until("the bot to notice the link is gone", || {
        let log = w.bot_log();
        async move { log.contains("lost the host's daemon").then_some(()) }
    })
    .await;
    w.say(&room, "a third one after the link dropped").await;
    w.wait_message(&room, "the reply over the new link", |t| {
        t.contains("Echo: a third one after the link dropped")
    })
    .await;

    // `!status` and `!terminal` speak of the host.
    w.say(&room, "!status").await;
    w.wait_message(&room, "the status", |t| t.starts_with(&format!("{key}:")))
        .await;
    w.say(&room, "!terminal").await;
    w.wait_message(&room, "where the terminal is", |t| {
        t.contains(&format!("weft --host gpu attach {local}"))
    })
    .await;

    // The control room lists it with its host.
    w.say(&control, "sessions").await;
    w.wait_message(&control, "the list with the host's session", |t| {
        t.contains(&format!("• {key} "))
    })
    .await;

    // A host that is not in the list is refused, saying so.
    w.say(&control, "new nowhere:echo ~/proj hi").await;
    w.wait_message(&control, "the refusal", |t| {
        t.starts_with("⚠ Not started") && t.contains("nowhere")
    })
    .await;
}
