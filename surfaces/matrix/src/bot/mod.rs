//! `weft-matrix run`: the bot. Two connections meet here: the Matrix client (its sync
//! delivers what the users say) and the daemon client (its subscriptions deliver what
//! the agents do).
//!
//! - What users say goes through one queue and is handled in order ([`incoming`]), each
//!   event once: its id is written to `state.json` before it is acted on, and sync
//!   resumes from the SDK store's token, so a restart neither misses nor repeats one.
//! - Each session with a room has a follower: the session's snapshot kept current from
//!   its patches in a `watch` channel, which coalesces by nature, and a task that draws
//!   it into the room ([`render`]) at the rate the homeserver allows.
//! - The daemon connection is remade when it drops (a daemon restart), and every
//!   session is subscribed again; the renderers pick up where their state says.
//! - Sessions on other machines go through a link per host ([`links`]), made when
//!   first needed and remade the same way.

mod incoming;
mod links;
pub mod questions;
mod render;

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use matrix_sdk::config::SyncSettings;
use matrix_sdk::event_handler::Ctx;
use matrix_sdk::ruma::events::reaction::OriginalSyncReactionEvent;
use matrix_sdk::ruma::events::room::member::StrippedRoomMemberEvent;
use matrix_sdk::ruma::events::room::message::OriginalSyncRoomMessageEvent;
use matrix_sdk::ruma::OwnedRoomId;
use matrix_sdk::{Room, RoomState};
use parking_lot::Mutex;
use tokio::sync::{mpsc, watch};
use weft_client::{Event, Home};
use weft_protocol::{
    apply_in_place, ServerMessage, SnapshotAt, UniversalSnapshot, Verb, WireError,
};

use crate::config::{Config, Paths, State};
use crate::secret::{self, Kind};

/// What is logged by default. The SDK's HTTP layer logs a harmless 404 (account data
/// not set yet) as an error, and its backups warn about a backup the bot never made;
/// the bot logs its own failures with their context.
const DEFAULT_LOG: &str =
    "weft_matrix=info,matrix_sdk=warn,matrix_sdk::http_client=off,matrix_sdk_crypto::backups=error";

/// The name the daemon knows this surface by.
pub const SURFACE: &str = "matrix";

/// What a user did in a room, queued for [`incoming::handle`].
pub enum Incoming {
    /// A message.
    Message(Room, Box<OriginalSyncRoomMessageEvent>),
    /// A reaction.
    Reaction(Room, Box<OriginalSyncReactionEvent>),
    /// An invitation of the bot.
    Invite(Room, Box<StrippedRoomMemberEvent>),
}

/// One followed session: its snapshot (None until the subscription answered) and the
/// seq it is current at.
struct Follower {
    tx: watch::Sender<Option<UniversalSnapshot>>,
    seq: u64,
}

/// The running bot.
pub struct Bot {
    pub paths: Paths,
    pub matrix: matrix_sdk::Client,
    /// The bot's own Matrix id.
    pub me: String,
    pub config: Mutex<Config>,
    pub state: tokio::sync::Mutex<State>,
    home: Home,
    daemon: tokio::sync::RwLock<Arc<weft_client::Client>>,
    /// The links to hosts' daemons, by host name.
    hosts: tokio::sync::Mutex<HashMap<String, Arc<weft_client::Client>>>,
    /// Where the hosts' links deliver (see [`links::pump`]).
    host_events: mpsc::UnboundedSender<links::HostEvent>,
    /// By qualified key ([`links::split`]).
    followers: Mutex<HashMap<String, Follower>>,
}

impl Bot {
    /// Sends a verb to the daemon.
    pub async fn send<V: Verb>(&self, verb: V) -> Result<V::Reply, WireError> {
        let client = self.daemon.read().await.clone();
        client.send(verb).await
    }

    /// A room the bot is in.
    pub fn room(&self, id: &str) -> Option<Room> {
        let id = OwnedRoomId::try_from(id).ok()?;
        self.matrix.get_room(&id)
    }

    /// Writes the state (the caller holds its lock).
    pub fn save(&self, state: &State) {
        if let Err(e) = state.save(&self.paths) {
            tracing::error!("cannot save the state: {e:#}");
        }
    }

    /// The config as the user last wrote it (`weft matrix allow` changes it while the
    /// bot runs).
    pub fn config(&self) -> Config {
        if let Ok(Some(fresh)) = Config::load(&self.paths) {
            *self.config.lock() = fresh;
        }
        self.config.lock().clone()
    }

    /// Follows session `key` into room `room_id`: subscribes and starts its renderer
    /// (once per session).
    pub async fn follow(self: &Arc<Self>, key: &str, room_id: &str) {
        let rx = {
            let mut followers = self.followers.lock();
            if followers.contains_key(key) {
                return;
            }
            let (tx, rx) = watch::channel(None);
            followers.insert(key.to_string(), Follower { tx, seq: 0 });
            rx
        };
        self.subscribe(key).await;
        tokio::spawn(render::run(
            self.clone(),
            room_id.to_string(),
            key.to_string(),
            rx,
        ));
    }

    /// Subscribes to `key` and sets its snapshot to what the reply says.
    async fn subscribe(&self, key: &str) {
        let (host, local) = links::split(key);
        let verb = weft_protocol::verb::Subscribe {
            session_key: local.to_string(),
        };
        match self.send_on(host, verb).await {
            Ok(at) => self.set(key, at),
            Err(e) => tracing::warn!(session = key, "cannot subscribe: {e}"),
        }
    }

    /// Session `key`'s snapshot, from the daemon it runs on.
    pub async fn snapshot(&self, key: &str) -> Result<SnapshotAt, WireError> {
        let (host, local) = links::split(key);
        let verb = weft_protocol::verb::GetSnapshot {
            session_key: local.to_string(),
        };
        self.send_on(host, verb).await
    }

    fn set(&self, key: &str, at: SnapshotAt) {
        if let Some(f) = self.followers.lock().get_mut(key) {
            f.seq = at.seq;
            f.tx.send_replace(Some(at.snapshot));
        }
    }

    /// Re-reads the whole snapshot of `key` (a seq gap, or the daemon said to).
    async fn reread(&self, key: &str) {
        match self.snapshot(key).await {
            Ok(at) => self.set(key, at),
            Err(e) => tracing::warn!(session = key, "cannot re-read: {e}"),
        }
    }

    /// Applies a pushed patch in order; a gap asks for the whole snapshot.
    async fn patched(&self, ev: weft_protocol::PatchEvent) {
        let gap = {
            let mut followers = self.followers.lock();
            let Some(f) = followers.get_mut(&ev.session_key) else {
                return;
            };
            if ev.seq <= f.seq || f.tx.borrow().is_none() {
                return;
            }
            if ev.first_seq() == f.seq + 1 {
                f.seq = ev.seq;
                f.tx.send_modify(|s| {
                    if let Some(s) = s {
                        apply_in_place(s, &ev.patch);
                    }
                });
                false
            } else {
                true
            }
        };
        if gap {
            self.reread(&ev.session_key).await;
        }
    }

    fn followed(&self) -> Vec<String> {
        self.followers.lock().keys().cloned().collect()
    }
}

/// Connects to the daemon of `home`, starting one when none runs (the `weft` beside
/// this program, or `WEFT_BIN`).
async fn connect(home: &Home) -> anyhow::Result<weft_client::start::Connected> {
    let hello = weft_client::hello_with_env(SURFACE);
    weft_client::start::connect_or_start(home, hello, None)
        .await
        .context("cannot reach the Weft daemon")
}

/// Reads what the daemon pushes; when the connection drops, makes a new one (with
/// backoff) and subscribes every followed session again.
async fn pump(bot: Arc<Bot>, mut events: mpsc::Receiver<Event>) {
    loop {
        while let Some(event) = events.recv().await {
            match event {
                Event::Message(ServerMessage::Patch(ev)) => bot.patched(*ev).await,
                Event::Message(ServerMessage::Resync { .. }) => {
                    for key in bot.followed_on(None) {
                        bot.reread(&key).await;
                    }
                }
                Event::Disconnected(why) => {
                    tracing::warn!("lost the daemon: {why}");
                    break;
                }
                _ => {}
            }
        }
        let mut backoff = Duration::from_millis(250);
        events = loop {
            tokio::time::sleep(backoff).await;
            match connect(&bot.home).await {
                Ok(c) => {
                    *bot.daemon.write().await = Arc::new(c.client);
                    break c.events;
                }
                Err(e) => {
                    tracing::warn!("{e:#}; again in {} ms", backoff.as_millis());
                    backoff = (backoff * 2).min(Duration::from_secs(10));
                }
            }
        };
        tracing::info!("reconnected to the daemon");
        for key in bot.followed_on(None) {
            bot.subscribe(&key).await;
        }
    }
}

/// Takes the lock only one bot of a home holds; None when another holds it.
fn lock(paths: &Paths) -> anyhow::Result<Option<std::fs::File>> {
    paths.ensure()?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(paths.lock())
        .context("opening the lock")?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(e).context("taking the lock"),
    }
}

pub async fn run(home: Home, paths: Paths) -> anyhow::Result<ExitCode> {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("WEFT_MATRIX_LOG")
                .unwrap_or_else(|_| DEFAULT_LOG.into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
    let Some(config) = Config::load(&paths)?.filter(|c| !c.user.is_empty()) else {
        eprintln!("weft-matrix: not logged in; nothing to run");
        return Ok(ExitCode::SUCCESS);
    };
    let Some(_lock) = lock(&paths)? else {
        eprintln!("weft-matrix: another weft-matrix runs for this home; leaving it be");
        return Ok(ExitCode::SUCCESS);
    };
    let token = secret::get(&config.user, Kind::Token)?;
    let passphrase = secret::get(&config.user, Kind::Passphrase)?;
    let (Some(token), Some(passphrase)) = (token, passphrase) else {
        anyhow::bail!(
            "the secrets of {} are missing from the OS secret store; log in again",
            config.user
        );
    };
    let matrix = crate::matrix::client(&config.homeserver, &paths.store(), &passphrase).await?;
    crate::matrix::restore(&matrix, &config.user, &config.device_id, &token).await?;
    drop((token, passphrase));
    let connected = connect(&home).await?;
    let state = State::load(&paths)?;
    let (host_events, host_rx) = mpsc::unbounded_channel();
    let bot = Arc::new(Bot {
        paths,
        me: config.user.clone(),
        matrix: matrix.clone(),
        config: Mutex::new(config),
        state: tokio::sync::Mutex::new(state),
        home,
        daemon: tokio::sync::RwLock::new(Arc::new(connected.client)),
        hosts: tokio::sync::Mutex::new(HashMap::new()),
        host_events,
        followers: Mutex::new(HashMap::new()),
    });
    tokio::spawn(pump(bot.clone(), connected.events));
    tokio::spawn(links::pump(bot.clone(), host_rx));
    let (tx, mut rx) = mpsc::unbounded_channel();
    add_handlers(&matrix, tx);
    // Sessions already in rooms: follow them again (a reply cut by a restart resumes).
    let rooms: Vec<(String, String)> = {
        let state = bot.state.lock().await;
        state
            .session_rooms
            .iter()
            .map(|(room, s)| (s.session_key.clone(), room.clone()))
            .collect()
    };
    for (key, room) in rooms {
        bot.follow(&key, &room).await;
    }
    let sync = tokio::spawn({
        let matrix = matrix.clone();
        async move {
            let settings = SyncSettings::default().timeout(Duration::from_secs(30));
            matrix.sync(settings).await
        }
    });
    tokio::pin!(sync);
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("SIGTERM")?;
    let mut tick = tokio::time::interval(Duration::from_secs(3));
    tracing::info!(user = %bot.me, "weft-matrix runs");
    loop {
        tokio::select! {
            Some(incoming) = rx.recv() => incoming::handle(&bot, incoming).await,
            _ = tick.tick() => incoming::ensure_control_rooms(&bot).await,
            _ = term.recv() => {
                tracing::info!("stopping (SIGTERM)");
                return Ok(ExitCode::SUCCESS);
            }
            ended = &mut sync => {
                let why = match ended {
                    Ok(Ok(())) => "sync ended".to_string(),
                    Ok(Err(e)) => e.to_string(),
                    Err(e) => e.to_string(),
                };
                anyhow::bail!("Matrix sync stopped: {why}");
            }
        }
    }
}

/// Puts what users do on the queue; the handlers themselves do nothing slow.
fn add_handlers(matrix: &matrix_sdk::Client, tx: mpsc::UnboundedSender<Incoming>) {
    matrix.add_event_handler_context(tx);
    matrix.add_event_handler(
        |ev: OriginalSyncRoomMessageEvent, room: Room, tx: Ctx<mpsc::UnboundedSender<Incoming>>| async move {
            let _ = tx.send(Incoming::Message(room, Box::new(ev)));
        },
    );
    matrix.add_event_handler(
        |ev: OriginalSyncReactionEvent, room: Room, tx: Ctx<mpsc::UnboundedSender<Incoming>>| async move {
            let _ = tx.send(Incoming::Reaction(room, Box::new(ev)));
        },
    );
    matrix.add_event_handler(
        |ev: StrippedRoomMemberEvent, room: Room, tx: Ctx<mpsc::UnboundedSender<Incoming>>| async move {
            if room.state() == RoomState::Invited {
                let _ = tx.send(Incoming::Invite(room, Box::new(ev)));
            }
        },
    );
}
