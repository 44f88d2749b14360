//! The app's links to other machines' daemons: one per host of the user's hosts list
//! (`weft hosts add`, or the app's host picker), through the transport the CLI uses —
//! `ssh -T HOST …/weft proxy` over OpenSSH's shared ControlMaster connection
//! (crates/hosts), the daemon's framing spoken over it by `weft_client`.
//!
//! Each link subscribes to every session of its host and hands what the host pushes to
//! the windows, named as the windows know it ([`crate::route`]: `HOST/agent:id`). A
//! link that drops (the network, a sleeping laptop, the host's daemon restarting) is
//! made again with backoff (0.2 s doubling to 10 s) and the windows are told to resync,
//! so each open session re-reads its snapshot at its current seq: nothing the host's
//! daemon did meanwhile is lost, and the turns went on there regardless (they belong to
//! the host's daemon, never to the SSH connection).
//!
//! A host's questions are news here as this machine's are ([`crate::forward`]): each
//! link keeps a tracker of the questions its host has pending (kept across reconnects),
//! notifies of a new one named with the host, and when the link is made again compares
//! the host's inbox with what it knew, so a question asked while the link was down is
//! news once it is back. (At the first link to a host, its pending questions are the
//! inbox's to show, not news.)
//!
//! The hello says no environment: this machine's variables and keys stay here (as
//! `weft --host` does). `ssh` runs in batch mode: a host that wants a password or a new
//! host key fails with ssh's own words, shown in the host picker, instead of hanging.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde::Serialize;
use tokio::sync::mpsc;
use weft_client::attention::{Notice, Tracker};
use weft_client::{Client, Event, Home};
use weft_protocol::{ClientRequest, ErrorCode, InboxItem, ServerMessage, WireError};

/// A host's link as the host picker shows it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct HostLinkState {
    /// The host's name.
    pub name: String,
    /// Its ssh destination.
    pub destination: String,
    /// Its home folder, as first contact found it (where its folder browser starts).
    pub home: Option<String>,
    /// Whether its daemon is connected now.
    pub connected: bool,
    /// Why the last attempt failed, while not connected.
    pub error: Option<String>,
}

/// Where a host's pushed messages go (the windows, through the local link).
pub trait Windows: Send + Sync + 'static {
    /// A message a host pushed, already named as the windows know it.
    fn message(&self, message: serde_json::Value);
    /// A terminal frame a host pushed, already named.
    fn frame(&self, frame: Vec<u8>);
    /// Something of a host the user may want to look at (a new question, a finished
    /// turn), named with the host.
    fn notify(&self, notice: Notice);
}

#[derive(Default)]
struct HostLink {
    client: Option<Arc<Client>>,
    error: Option<String>,
    /// Bumped when the host is removed or added again: an old pump stops.
    generation: u64,
}

/// Every remote host's link.
#[derive(Default)]
pub struct Remotes {
    links: Mutex<BTreeMap<String, HostLink>>,
    /// Serializes connecting, per host.
    connecting: Mutex<BTreeMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Each host's pending questions as last seen, across its reconnects.
    trackers: Mutex<BTreeMap<String, Tracker>>,
}

fn unreachable(host: &str, why: impl std::fmt::Display) -> WireError {
    WireError::new(
        ErrorCode::Internal,
        format!("host {host} is not reachable: {why}"),
    )
}

impl Remotes {
    /// The names of the hosts in the user's list (what [`crate::route`] reads as hosts).
    pub fn names(&self) -> Vec<String> {
        weft_hosts::Hosts::load(&Home::from_env())
            .map(|h| h.hosts.into_iter().map(|h| h.name).collect())
            .unwrap_or_default()
    }

    /// Each host of the list with its link's state.
    pub fn states(&self) -> Vec<HostLinkState> {
        let hosts = weft_hosts::Hosts::load(&Home::from_env()).unwrap_or_default();
        let links = self.links.lock();
        hosts
            .hosts
            .into_iter()
            .map(|h| {
                let link = links.get(&h.name);
                HostLinkState {
                    connected: link.is_some_and(|l| l.client.is_some()),
                    error: link.and_then(|l| l.error.clone()),
                    name: h.name,
                    destination: h.destination,
                    home: h.home,
                }
            })
            .collect()
    }

    /// The live client of host `name`, if connected now.
    pub fn connected(&self, name: &str) -> Option<Arc<Client>> {
        self.links.lock().get(name).and_then(|l| l.client.clone())
    }

    /// The client of host `name`, connecting if there is none (first contact when this
    /// app's weft was never checked there).
    pub async fn client(
        self: &Arc<Self>,
        name: &str,
        windows: Arc<dyn Windows>,
    ) -> Result<Arc<Client>, WireError> {
        if let Some(c) = self.connected(name) {
            return Ok(c);
        }
        let gate = self
            .connecting
            .lock()
            .entry(name.to_string())
            .or_default()
            .clone();
        let _guard = gate.lock().await;
        if let Some(c) = self.connected(name) {
            return Ok(c);
        }
        let generation = self
            .links
            .lock()
            .entry(name.to_string())
            .or_default()
            .generation;
        match connect(name).await {
            Ok((client, events)) => {
                let client = Arc::new(client);
                {
                    let mut links = self.links.lock();
                    let link = links.entry(name.to_string()).or_default();
                    if link.generation != generation {
                        return Err(unreachable(name, "it was removed meanwhile"));
                    }
                    link.client = Some(client.clone());
                    link.error = None;
                }
                tokio::spawn(self.clone().pump(
                    name.to_string(),
                    generation,
                    client.clone(),
                    events,
                    windows,
                ));
                Ok(client)
            }
            Err(e) => {
                if let Some(link) = self.links.lock().get_mut(name) {
                    link.error = Some(e.message.clone());
                }
                Err(e)
            }
        }
    }

    /// Connects every host of the list in the background (each retries by itself).
    pub fn connect_all(self: &Arc<Self>, windows: Arc<dyn Windows>) {
        for name in self.names() {
            self.keep_connected(name, windows.clone());
        }
    }

    /// Connects host `name` in the background, retrying with backoff until it is
    /// connected or removed; the windows are told to resync once it is.
    pub fn keep_connected(self: &Arc<Self>, name: String, windows: Arc<dyn Windows>) {
        let this = self.clone();
        tokio::spawn(async move {
            let generation = this
                .links
                .lock()
                .entry(name.clone())
                .or_default()
                .generation;
            let mut pause = Duration::from_millis(200);
            loop {
                if crate::quitting() || this.generation(&name) != Some(generation) {
                    return;
                }
                match this.client(&name, windows.clone()).await {
                    Ok(_) => break,
                    Err(e) => {
                        tracing::warn!(host = %name, "connecting: {e}");
                        tokio::time::sleep(pause).await;
                        pause = (pause * 2).min(Duration::from_secs(10));
                    }
                }
            }
            // Whatever the windows show of this host is re-read at its current seq.
            windows.message(resync_all());
        });
    }

    /// Compares host `name`'s inbox with the questions its tracker knew of: each one
    /// asked while the link was down is news. The first link to a host only learns them.
    async fn catch_up(&self, name: &str, client: &Client, windows: &dyn Windows) {
        let items = match client.request(ClientRequest::Inbox {}).await {
            Ok(reply) => serde_json::from_value::<Vec<InboxItem>>(reply),
            Err(e) => {
                tracing::debug!(host = %name, "reading its inbox: {e}");
                return;
            }
        };
        let items = match items {
            Ok(items) => items,
            Err(e) => {
                tracing::warn!(host = %name, "its inbox: {e}");
                return;
            }
        };
        let notices = {
            let mut trackers = self.trackers.lock();
            let first = !trackers.contains_key(name);
            let notices = trackers
                .entry(name.to_string())
                .or_default()
                .sweep(Some(name), &items);
            if first {
                Vec::new()
            } else {
                notices
            }
        };
        for notice in notices {
            windows.notify(notice);
        }
    }

    /// What a patch of host `name` is news of, if anything.
    fn news(&self, name: &str, event: &weft_protocol::PatchEvent) -> Option<Notice> {
        self.trackers
            .lock()
            .entry(name.to_string())
            .or_default()
            .notice(Some(name), event)
    }

    fn generation(&self, name: &str) -> Option<u64> {
        self.links.lock().get(name).map(|l| l.generation)
    }

    /// Forgets host `name`'s link (it was removed): its pump stops, nothing reconnects.
    pub fn forget(&self, name: &str) {
        let mut links = self.links.lock();
        if let Some(link) = links.get_mut(name) {
            link.generation += 1;
            link.error = None;
            if let Some(client) = link.client.take() {
                drop(client);
            }
        }
        drop(links);
        self.trackers.lock().remove(name);
    }

    /// Hands a host's pushed events to the windows until its link drops, then makes it
    /// again.
    async fn pump(
        self: Arc<Self>,
        name: String,
        generation: u64,
        client: Arc<Client>,
        mut events: mpsc::Receiver<Event>,
        windows: Arc<dyn Windows>,
    ) {
        if let Err(e) = client.request(ClientRequest::SubscribeAll {}).await {
            tracing::warn!(host = %name, "subscribing: {e}");
        }
        // Subscribed first: a question asked from here on comes as a patch.
        self.catch_up(&name, &client, windows.as_ref()).await;
        let why = loop {
            match events.recv().await {
                // The host's daemon going away is this link's to handle (it
                // reconnects), not the windows' banner about this machine's daemon.
                Some(Event::Message(ServerMessage::Closing { reason })) => {
                    tracing::info!(host = %name, %reason, "the host's daemon is closing");
                }
                Some(Event::Message(message)) => match serde_json::to_value(&message) {
                    Ok(mut v) => {
                        if let ServerMessage::Patch(event) = &message {
                            if let Some(notice) = self.news(&name, event) {
                                windows.notify(notice);
                            }
                        }
                        crate::route::tag(&mut v, &name);
                        windows.message(v);
                    }
                    Err(e) => tracing::warn!("cannot encode a host's message: {e}"),
                },
                Some(Event::Terminal(mut frame)) => {
                    frame.session_key = format!("{name}/{}", frame.session_key);
                    windows.frame(frame.encode());
                }
                Some(Event::Disconnected(why)) => break why,
                None => break "the connection ended".to_string(),
            }
            if self.generation(&name) != Some(generation) {
                return;
            }
        };
        tracing::warn!(host = %name, %why, "lost the host's daemon; reconnecting");
        {
            let mut links = self.links.lock();
            if let Some(link) = links.get_mut(&name) {
                if link
                    .client
                    .as_ref()
                    .is_some_and(|c| Arc::ptr_eq(c, &client))
                {
                    link.client = None;
                    link.error = Some(why);
                }
            }
        }
        drop(client);
        if self.generation(&name) == Some(generation) && !crate::quitting() {
            self.keep_connected(name, windows);
        }
    }
}

/// The message that makes each window re-read every open session.
pub fn resync_all() -> serde_json::Value {
    serde_json::json!({"type": "resync", "sessionKey": null})
}

/// Opens `ssh … weft proxy` to host `name` (first contact if needed), or its `weft
/// serve` over TLS, and says hello.
async fn connect(name: &str) -> Result<(Client, mpsc::Receiver<Event>), WireError> {
    weft_hosts::connect(&Home::from_env(), name, "app")
        .await
        .map_err(|e| match e {
            weft_hosts::HostError::Unreachable { why, .. } => unreachable(name, why),
            e => unreachable(name, e),
        })
}

/// Adds host `name` at `destination` to the user's list and makes first contact
/// (copying this weft there when needed), as `weft hosts add` does.
pub async fn add(name: &str, destination: &str) -> Result<(), WireError> {
    let home = Home::from_env();
    let bad = |e: weft_hosts::HostError| {
        let code = match e {
            weft_hosts::HostError::Invalid(_) | weft_hosts::HostError::Unknown(_) => {
                ErrorCode::BadRequest
            }
            _ => ErrorCode::Internal,
        };
        WireError::new(code, e.to_string())
    };
    let mut hosts = weft_hosts::Hosts::load(&home).map_err(bad)?;
    hosts.add(name, destination).map_err(bad)?;
    hosts.save(&home).map_err(bad)?;
    let ssh = weft_hosts::Ssh::from_env(&home);
    weft_hosts::link::ready(&home, &ssh, name, true)
        .await
        .map(drop)
        .map_err(|e| {
            WireError::new(
                ErrorCode::Internal,
                format!("host {name} was added, but first contact failed: {e}"),
            )
        })
}

/// Runs this app's `weft` with `args` (the hosts verbs that live in the CLI: status,
/// remove), answering its stdout or its stderr as the error.
pub async fn run_weft(args: &[&str]) -> Result<String, WireError> {
    let exe = weft_client::start::weft_binary().ok_or_else(|| {
        WireError::new(
            ErrorCode::Internal,
            "this app's weft binary was not found (set WEFT_BIN)",
        )
    })?;
    let out = tokio::process::Command::new(exe)
        .args(args)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| WireError::new(ErrorCode::Internal, format!("running weft: {e}")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(WireError::new(
            ErrorCode::Internal,
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ))
    }
}
