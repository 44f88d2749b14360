//! What the surface keeps on disk, all of it non-secret, under `$WEFT_HOME/matrix/`:
//! `config.json` (who it is and whom it obeys: the user's settings), `state.json`
//! (which room is which, where each reply streams, which events were handled: the
//! bot's own bookkeeping) and `store/`, the SDK's SQLite store, encrypted with a
//! passphrase kept in the OS secret store. The access token and that passphrase never
//! touch these files (see [`crate::secret`]).
//!
//! Both JSON files are written whole to a temporary file and renamed over the old one,
//! so a crash leaves the old or the new version, never half of one; both are 0600 in a
//! 0700 folder.

use std::collections::{BTreeMap, VecDeque};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{de::DeserializeOwned, Deserialize, Serialize};

/// How many handled event ids are remembered. Sync resumes from the stored token, so
/// only events of the last moments before a crash can come again; this many covers
/// far more than that.
const HANDLED_KEPT: usize = 5000;

/// The surface's folder and files.
#[derive(Debug, Clone)]
pub struct Paths {
    dir: PathBuf,
}

impl Paths {
    /// The folder of `home`.
    pub fn of(home: &weft_client::Home) -> Paths {
        Paths {
            dir: home.dir().join("matrix"),
        }
    }

    /// The user's settings.
    pub fn config(&self) -> PathBuf {
        self.dir.join("config.json")
    }

    /// The bot's bookkeeping.
    pub fn state(&self) -> PathBuf {
        self.dir.join("state.json")
    }

    /// The SDK's SQLite store.
    pub fn store(&self) -> PathBuf {
        self.dir.join("store")
    }

    /// Held by the one `weft-matrix run` of this home.
    pub fn lock(&self) -> PathBuf {
        self.dir.join("run.lock")
    }

    /// Makes the folder (0700) if it is missing.
    pub fn ensure(&self) -> anyhow::Result<()> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .with_context(|| format!("cannot make {}", self.dir.display()))
    }
}

/// The user's settings (`config.json`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Config {
    /// The homeserver's URL.
    pub homeserver: String,
    /// The bot's Matrix user id.
    pub user: String,
    /// The bot's device, reused on every start (a new device each start would lose
    /// the end-to-end keys of every room).
    pub device_id: String,
    /// The Matrix users who may control anything.
    pub allowed: Vec<String>,
    /// Each session gets a room of its own (off: it stays in the control room).
    pub room_per_session: bool,
    /// The least time between two edits of a streaming reply, in milliseconds.
    /// Synapse's default limit is about one event per 5 s after a burst of 10.
    pub edit_interval_ms: u64,
    /// Events older than this (ms since the epoch; the login) are never acted on, so
    /// what was said in a room before the bot joined runs nothing.
    pub since: i64,
    /// The bot's device is signed by its own cross-signing identity.
    pub verified: bool,
}

impl Config {
    /// The defaults of a fresh login.
    pub fn new(homeserver: String, user: String, device_id: String, since: i64) -> Config {
        Config {
            homeserver,
            user,
            device_id,
            allowed: Vec::new(),
            room_per_session: true,
            edit_interval_ms: 2000,
            since,
            verified: false,
        }
    }

    /// The settings in `paths`, if there are any.
    pub fn load(paths: &Paths) -> anyhow::Result<Option<Config>> {
        read_json(&paths.config())
    }

    /// Writes them back.
    pub fn save(&self, paths: &Paths) -> anyhow::Result<()> {
        paths.ensure()?;
        write_json(&paths.config(), self)
    }

    /// Whether `mxid` may control anything.
    pub fn is_allowed(&self, mxid: &str) -> bool {
        self.allowed.iter().any(|a| a == mxid)
    }
}

/// Where one turn's reply streams: the message being edited.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Stream {
    /// The turn.
    pub task_id: String,
    /// The reply message (edited as the turn goes on).
    pub event_id: String,
    /// The final text and the closing message went out.
    pub finished: bool,
}

/// A question or permission posted to a room.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Posted {
    /// The room.
    pub room_id: String,
    /// The message that asks it.
    pub event_id: String,
    /// The session it is pending in.
    pub session_key: String,
    /// Answered from this room (by whom, with what); none: not yet, or elsewhere.
    pub answered: Option<String>,
    /// The message was edited to say it is closed.
    pub closed: bool,
    /// When it was posted (ms since the epoch): a message that names no question
    /// answers the newest.
    pub asked_at: i64,
    /// Its title: the kernel's notice of its answer starts with it in quotes.
    pub title: String,
}

/// The room of one session.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct SessionRoom {
    /// `agent:id`.
    pub session_key: String,
    /// The allowed user it was opened for (mentioned when the room grows).
    pub user: String,
    /// The model the room's prompts ask for (`!model`).
    pub model: Option<String>,
    /// Its turns' replies, newest last (the last few only).
    pub stream: Option<Stream>,
}

/// The bot's bookkeeping (`state.json`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct State {
    /// Each allowed user's control room.
    pub control_rooms: BTreeMap<String, String>,
    /// Session rooms by room id (with roomPerSession off, a control room too).
    pub session_rooms: BTreeMap<String, SessionRoom>,
    /// Questions posted, by prompt id.
    pub questions: BTreeMap<String, Posted>,
    /// Matrix events already acted on (oldest first), so none is acted on twice.
    pub handled: VecDeque<String>,
}

impl State {
    /// The state in `paths` (empty when there is none yet).
    pub fn load(paths: &Paths) -> anyhow::Result<State> {
        Ok(read_json(&paths.state())?.unwrap_or_default())
    }

    /// Writes it back.
    pub fn save(&self, paths: &Paths) -> anyhow::Result<()> {
        paths.ensure()?;
        write_json(&paths.state(), self)
    }

    /// Marks `event_id` handled; false when it already was.
    pub fn first_time(&mut self, event_id: &str) -> bool {
        if self.handled.iter().any(|e| e == event_id) {
            return false;
        }
        self.handled.push_back(event_id.to_string());
        while self.handled.len() > HANDLED_KEPT {
            self.handled.pop_front();
        }
        true
    }

    /// Whether `room_id` is someone's control room.
    pub fn is_control(&self, room_id: &str) -> bool {
        self.control_rooms.values().any(|r| r == room_id)
    }
}

fn read_json<T: DeserializeOwned>(path: &Path) -> anyhow::Result<Option<T>> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .with_context(|| format!("{} is not valid", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    let tmp = path.with_extension("json.tmp");
    let bytes = serde_json::to_vec_pretty(value)?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    file.write_all(&bytes)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// Now, in ms since the epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_handled_once_and_the_memory_is_capped() {
        let mut s = State::default();
        assert!(s.first_time("$a"));
        assert!(!s.first_time("$a"));
        for i in 0..HANDLED_KEPT + 10 {
            s.first_time(&format!("${i}"));
        }
        assert_eq!(s.handled.len(), HANDLED_KEPT);
        assert!(s.first_time("$a"), "the oldest were forgotten");
    }

    #[test]
    fn state_survives_a_round_trip_with_private_files() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::of(&weft_client::Home::at(dir.path()));
        let mut s = State::default();
        s.control_rooms.insert("@u:x".into(), "!r:x".into());
        s.first_time("$e");
        s.save(&paths).unwrap();
        assert_eq!(State::load(&paths).unwrap(), s);
        let mode = std::fs::metadata(paths.state())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let dmode = std::fs::metadata(dir.path().join("matrix"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dmode & 0o777, 0o700);
    }
}
