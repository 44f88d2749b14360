//! One test's world: its own `WEFT_HOME` (so its own daemon), a bot account and a
//! "phone" account on the shared Synapse, `weft-matrix` logged in and running, and the
//! phone — a second matrix-sdk client with its own encrypted store — driven by the
//! test. Dropping it stops the bot and the daemon.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use matrix_sdk::room::MessagesOptions;
use matrix_sdk::ruma::events::reaction::ReactionEventContent;
use matrix_sdk::ruma::events::relation::Annotation;
use matrix_sdk::ruma::events::room::message::RoomMessageEventContent;
use matrix_sdk::ruma::{OwnedEventId, OwnedRoomId};
use matrix_sdk::{Client, Room, RoomState};
use serde_json::Value;
use weft_client::Home;
use weft_protocol::Verb;

use super::synapse::{self, Synapse};

static NEXT: AtomicU32 = AtomicU32::new(0);

/// How long a test waits for anything before it fails.
pub const WAIT: Duration = Duration::from_secs(90);

/// Whether a Secret Service answers; when none does, a test is skipped with the reason
/// printed, except under CI=true, where it fails.
pub fn keyring_or_skip() -> bool {
    // Probed once per test process: tests on several threads writing and deleting one
    // probe entry at once made each other's delete fail (NoEntry), read as "no store".
    static PROBE: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    let probe = PROBE.get_or_init(|| {
        keyring::Entry::new("weft", &format!("matrix:test-probe-{}", std::process::id()))
            .and_then(|e| e.set_password("probe").and_then(|_| e.delete_credential()))
            .map_err(|e| e.to_string())
    });
    match probe {
        Ok(()) => true,
        Err(e) => {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("no Secret Service under CI ({e}); run the tests under scripts/lib/with-keyring.sh");
            }
            eprintln!("SKIPPED: no Secret Service ({e}); run under scripts/lib/with-keyring.sh");
            false
        }
    }
}

/// The shared Synapse, or the reason there is none (a failure under CI).
pub fn synapse_or_skip() -> Option<&'static Synapse> {
    match synapse::server() {
        Ok(s) => Some(s),
        Err(e) => {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("no Synapse: {e}");
            }
            eprintln!("SKIPPED: no Synapse: {e}");
            None
        }
    }
}

/// The real `weft` (the main workspace builds it into the shared target folder).
fn weft_source() -> PathBuf {
    if let Some(bin) = std::env::var_os("WEFT_BIN") {
        return PathBuf::from(bin);
    }
    // The main workspace's target dir (this workspace's own may be elsewhere).
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("debug/weft")
}

/// Polls `f` until it gives Some, or fails the test saying `what`.
pub async fn until<T, F, Fut>(what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        if Instant::now() > deadline {
            panic!("timed out waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

pub struct World {
    pub synapse: &'static Synapse,
    pub dir: tempfile::TempDir,
    pub home: PathBuf,
    pub weft: PathBuf,
    pub bot_id: String,
    pub phone_id: String,
    pub phone: Client,
    /// More environment for the bot (and so for the daemon it starts and the agents
    /// of the turns it sends).
    pub bot_env: Vec<(String, String)>,
    bot: Option<Child>,
    sync: tokio::task::JoinHandle<()>,
}

/// A Matrix user's client logged in with a store of its own, syncing in the background.
pub async fn user_client(
    synapse: &Synapse,
    dir: &Path,
    user: &str,
) -> (Client, tokio::task::JoinHandle<()>) {
    synapse
        .register(user, &format!("pw-{user}"), false)
        .unwrap_or_else(|e| panic!("{e}"));
    let client = Client::builder()
        .homeserver_url(&synapse.url)
        .sqlite_store(dir.join(user), Some("phone-store"))
        .build()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    client
        .matrix_auth()
        .login_username(user, &format!("pw-{user}"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    client
        .sync_once(matrix_sdk::config::SyncSettings::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let syncing = client.clone();
    let sync = tokio::spawn(async move {
        let settings = matrix_sdk::config::SyncSettings::default().timeout(Duration::from_secs(5));
        let _ = syncing.sync(settings).await;
    });
    (client, sync)
}

impl World {
    /// A bot logged in and allowed to obey the phone; `lifted`: its message limit
    /// lifted on the homeserver.
    pub async fn new(lifted: bool) -> Option<World> {
        if !keyring_or_skip() {
            return None;
        }
        let synapse = synapse_or_skip()?;
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let tag = format!("{}x{n}", std::process::id());
        let dir = tempfile::Builder::new()
            .prefix("wm")
            .tempdir()
            .unwrap_or_else(|e| panic!("{e}"));
        let home = dir.path().join("h");
        std::fs::create_dir(&home).unwrap_or_else(|e| panic!("{e}"));
        // A copy of `weft` with no weft-matrix beside it: the daemon then supervises
        // no surface of its own, and the bot the test runs is the only one.
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap_or_else(|e| panic!("{e}"));
        let weft = bin.join("weft");
        let source = weft_source();
        assert!(
            source.is_file(),
            "no weft binary at {} (build it: cargo build -p weft-cli in the repository, or set WEFT_BIN)",
            source.display()
        );
        if std::fs::hard_link(&source, &weft).is_err() {
            std::fs::copy(&source, &weft).unwrap_or_else(|e| panic!("copying weft: {e}"));
        }
        let bot_user = format!("bot{tag}");
        let phone_user = format!("phone{tag}");
        synapse
            .register(&bot_user, "bot-password", false)
            .unwrap_or_else(|e| panic!("{e}"));
        let bot_id = format!("@{bot_user}:localhost");
        if lifted {
            synapse.lift_limit(&bot_id);
        }
        let (phone, sync) = user_client(synapse, dir.path(), &phone_user).await;
        let world = World {
            synapse,
            home,
            weft,
            bot_id,
            phone_id: format!("@{phone_user}:localhost"),
            phone,
            bot_env: Vec::new(),
            bot: None,
            sync,
            dir,
        };
        let out = world.matrix_cli(
            &[
                "login",
                "--homeserver",
                &synapse.url,
                "--user",
                &world.bot_id,
            ],
            Some("bot-password\n"),
        );
        assert!(out.0, "login failed: {}", out.1);
        Some(world)
    }

    /// Runs `weft-matrix ARGS` for this home: (success, stdout + stderr).
    pub fn matrix_cli(&self, args: &[&str], stdin: Option<&str>) -> (bool, String) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_weft-matrix"))
            .args(args)
            .env("WEFT_HOME", &self.home)
            .env("WEFT_BIN", &self.weft)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        if let Some(mut pipe) = child.stdin.take() {
            use std::io::Write;
            let _ = pipe.write_all(stdin.unwrap_or_default().as_bytes());
        }
        let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
        (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    }

    /// Runs `weft ARGS` for this home, in the bot's environment: (success, stdout).
    pub fn weft(&self, args: &[&str]) -> (bool, String) {
        let out = Command::new(&self.weft)
            .args(args)
            .env("WEFT_HOME", &self.home)
            .envs(self.bot_env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        let mut said = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            said.push_str(&String::from_utf8_lossy(&out.stderr));
        }
        (out.status.success(), said)
    }

    /// Allows the phone and starts the bot.
    pub fn start_bot(&mut self) {
        if !self.allowed() {
            let out = self.matrix_cli(&["allow", &self.phone_id.clone()], None);
            assert!(out.0, "{}", out.1);
        }
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join("bot.log"))
            .unwrap_or_else(|e| panic!("{e}"));
        let child = Command::new(env!("CARGO_BIN_EXE_weft-matrix"))
            .arg("run")
            .env("WEFT_HOME", &self.home)
            .env("WEFT_BIN", &self.weft)
            .env("WEFT_ECHO_DELAY_MS", "20")
            .env("WEFT_MATRIX_LOG", "weft_matrix=debug,matrix_sdk=warn,matrix_sdk::http_client=off,matrix_sdk_crypto::backups=error")
            .envs(self.bot_env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        self.bot = Some(child);
    }

    fn allowed(&self) -> bool {
        self.status()["allowed"]
            .as_array()
            .is_some_and(|a| a.iter().any(|u| u == self.phone_id.as_str()))
    }

    /// `weft-matrix status --json`.
    pub fn status(&self) -> Value {
        let (ok, out) = self.matrix_cli(&["status", "--json"], None);
        assert!(ok, "{out}");
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
    }

    /// The bot's process id.
    pub fn bot_pid(&self) -> Option<u32> {
        self.bot.as_ref().map(Child::id)
    }

    /// Kills the bot at once (as a crash would).
    pub fn kill_bot(&mut self) {
        if let Some(mut child) = self.bot.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// The bot's log so far (for failure messages).
    pub fn bot_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("bot.log")).unwrap_or_default()
    }

    /// Sends a verb to this home's daemon.
    pub async fn daemon<V: Verb>(&self, verb: V) -> V::Reply {
        let hello = weft_client::hello_with_env("test");
        let (client, _events) = weft_client::Client::connect(&Home::at(&self.home), hello)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let reply = client.send(verb).await.unwrap_or_else(|e| panic!("{e}"));
        client.close();
        reply
    }

    /// Joins the next room the bot invites the phone to.
    pub async fn join_invite(&self) -> Room {
        let phone = self.phone.clone();
        let room: Room = until("an invitation from the bot", || {
            let phone = phone.clone();
            async move { phone.invited_rooms().into_iter().next() }
        })
        .await;
        room.join().await.unwrap_or_else(|e| panic!("{e}"));
        let id = room.room_id().to_owned();
        until("the room joined", || {
            let phone = phone.clone();
            let id = id.clone();
            async move {
                phone
                    .get_room(&id)
                    .filter(|r| r.state() == RoomState::Joined)
            }
        })
        .await
    }

    /// Sends `text` from the phone.
    pub async fn say(&self, room: &Room, text: &str) -> OwnedEventId {
        room.send(RoomMessageEventContent::text_plain(text))
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .response
            .event_id
    }

    /// Reacts to `event` from the phone.
    pub async fn react(&self, room: &Room, event: &str, key: &str) {
        let event = OwnedEventId::try_from(event).unwrap_or_else(|e| panic!("{e}"));
        room.send(ReactionEventContent::new(Annotation::new(
            event,
            key.into(),
        )))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    }

    /// The bot's messages in `room`, oldest first, each as (event id, its text after
    /// every edit so far, how many edits it had).
    pub async fn bot_messages(&self, room: &Room) -> Vec<(String, String, usize)> {
        let events = timeline(room).await;
        let mut out: Vec<(String, String, usize)> = Vec::new();
        for ev in events {
            if ev["sender"] != self.bot_id.as_str() || ev["type"] != "m.room.message" {
                continue;
            }
            let content = &ev["content"];
            if content["m.relates_to"]["rel_type"] == "m.replace" {
                let target = content["m.relates_to"]["event_id"]
                    .as_str()
                    .unwrap_or_default();
                let body = content["m.new_content"]["body"]
                    .as_str()
                    .unwrap_or_default();
                if let Some(m) = out.iter_mut().find(|m| m.0 == target) {
                    m.1 = body.to_string();
                    m.2 += 1;
                }
                continue;
            }
            let id = ev["event_id"].as_str().unwrap_or_default().to_string();
            out.push((
                id,
                content["body"].as_str().unwrap_or_default().to_string(),
                0,
            ));
        }
        out
    }

    /// Waits for a bot message in `room` whose text satisfies `f`; that message.
    pub async fn wait_message(
        &self,
        room: &Room,
        what: &str,
        f: impl Fn(&str) -> bool,
    ) -> (String, String, usize) {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(m) = self.bot_messages(room).await.into_iter().find(|m| f(&m.1)) {
                return m;
            }
            if Instant::now() > deadline {
                let seen = self.bot_messages(room).await;
                panic!(
                    "timed out waiting for {what}; the bot said {seen:#?}\nits log:\n{}",
                    self.bot_log()
                );
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// Waits until the bot's message `id` in `room` reads as `f` wants (an edit).
    pub async fn wait_edit(
        &self,
        room: &Room,
        id: &str,
        what: &str,
        f: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let messages = self.bot_messages(room).await;
            if let Some(m) = messages.iter().find(|m| m.0 == id && f(&m.1)) {
                return m.1.clone();
            }
            if Instant::now() > deadline {
                panic!(
                    "timed out waiting for {what}; the bot said {messages:#?}\nits log:\n{}",
                    self.bot_log()
                );
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// The control room the bot made for the phone, joined.
    pub async fn control_room(&self) -> Room {
        let room = self.join_invite().await;
        self.wait_message(&room, "the control room's greeting", |t| {
            t.contains("control room")
        })
        .await;
        room
    }

    /// `new echo DIR PROMPT` in the control room; the session's room (joined) and key.
    pub async fn new_session(&self, control: &Room, prompt: &str) -> (Room, String) {
        let work = self.dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap_or_else(|e| panic!("{e}"));
        self.say(control, &format!("new echo {} {prompt}", work.display()))
            .await;
        let room = self.join_invite().await;
        let key = self.session_key_of(&room).await;
        (room, key)
    }

    /// The key of the session whose room `room` is, once the bot's state has it.
    pub async fn session_key_of(&self, room: &Room) -> String {
        let room_id: OwnedRoomId = room.room_id().to_owned();
        until("the session's room in the state", || {
            let id = room_id.to_string();
            let status = self.status();
            async move {
                status["rooms"]
                    .as_array()?
                    .iter()
                    .find(|r| r["roomId"] == id.as_str())?["sessionKey"]
                    .as_str()
                    .map(String::from)
            }
        })
        .await
    }
}

/// The room's last 200 events, oldest first, decrypted where they were encrypted.
pub async fn timeline(room: &Room) -> Vec<Value> {
    let mut options = MessagesOptions::backward();
    options.limit = 200u32.into();
    let Ok(messages) = room.messages(options).await else {
        return Vec::new();
    };
    let mut events: Vec<Value> = messages
        .chunk
        .iter()
        .filter_map(|e| e.raw().deserialize_as::<Value>().ok())
        .collect();
    events.reverse();
    events
}

impl Drop for World {
    fn drop(&mut self) {
        self.kill_bot();
        self.sync.abort();
        let _ = Command::new(&self.weft)
            .args(["daemon", "stop"])
            .env("WEFT_HOME", &self.home)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        // The bot's secrets go with its test.
        let _ = self.matrix_cli(&["logout"], None);
    }
}
