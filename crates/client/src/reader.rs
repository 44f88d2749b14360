//! The connection's reader: replies go to their waiters, pushed messages to the
//! surface's bounded queue, and the socket is read all the time.
//!
//! Replies and pushed events share one socket. If the reader waited for room in the
//! surface's queue, a surface that stopped reading events (but still makes requests)
//! would stop the socket being read, and its replies would wait behind events nobody
//! reads: a hang. So the reader never waits for the surface. When the queue is full
//! it drops what the daemon pushes and remembers what that cost ([`Missed`]); once the
//! surface has read half its queue the surface is handed the catch-up, in the daemon's own terms:
//! a `resync` of every session (it re-reads its snapshots, as after a daemon-side
//! lag), each terminal whose frames were dropped re-attached (its next frame is the
//! whole screen; output older than that screen is dropped), a terminal that exited in
//! the meantime its exit frame, and the daemon's goodbye. Memory stays bounded by the
//! queue whatever the surface does.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use futures::{Stream, StreamExt};
use parking_lot::Mutex;
use tokio::sync::mpsc;
use weft_protocol::{frame_kind, ClientMessage, ClientRequest, ServerMessage, TerminalFrame};

use crate::frame::{self, ServerFrame};
use crate::{Event, Waiters};

/// What a surface missed while its queue was full.
#[derive(Debug, Default)]
pub(crate) struct Missed {
    /// Patches (or the daemon's resyncs) were dropped.
    resync: bool,
    /// Terminals whose frames were dropped: `Some(exit frame)` once one exited.
    terminals: BTreeMap<String, Option<TerminalFrame>>,
    /// The daemon's goodbye.
    closing: Option<ServerMessage>,
}

impl Missed {
    fn is_empty(&self) -> bool {
        !self.resync && self.terminals.is_empty() && self.closing.is_none()
    }

    fn add(&mut self, event: Event) {
        match event {
            Event::Message(m @ ServerMessage::Closing { .. }) => self.closing = Some(m),
            Event::Message(_) => self.resync = true,
            Event::Terminal(t) => {
                let exit = (t.kind == frame_kind::EXIT).then_some(t.clone());
                let slot = self.terminals.entry(t.session_key).or_default();
                if exit.is_some() {
                    *slot = exit;
                }
            }
            Event::Disconnected(_) => {}
        }
    }
}

/// The catch-up state, shared with the client's request path: a surface that detaches
/// a terminal must not find it re-attached behind its back.
#[derive(Debug, Default)]
pub(crate) struct Catchup {
    missed: Missed,
    /// Terminals re-attached whose fresh screen has not arrived: their older output is
    /// dropped.
    rescreen: HashSet<String>,
}

impl Catchup {
    /// The surface detached `key`: nothing of it is re-attached or awaited.
    pub(crate) fn detached(&mut self, key: &str) {
        self.missed.terminals.remove(key);
        self.rescreen.remove(key);
    }

    #[cfg(test)]
    pub(crate) fn missed_terminals(&self) -> usize {
        self.missed.terminals.len() + self.rescreen.len()
    }
}

/// How much of the queue must be free before the catch-up is handed over: a surface
/// reading one event at a time would otherwise be resynced once per event.
const ROOM: usize = crate::EVENTS / 2;

/// Everything the reader shares with the client.
pub(crate) struct Shared {
    pub waiters: Waiters,
    pub catchup: Arc<Mutex<Catchup>>,
    pub next_id: Arc<AtomicU64>,
    /// Weak: the client's own sender going away is what ends the connection's writer.
    pub out: mpsc::WeakSender<Bytes>,
}

/// Reads `stream` until it ends; see the module's comment.
pub(crate) async fn read(
    mut stream: impl Stream<Item = std::io::Result<BytesMut>> + Unpin,
    shared: Shared,
    events: mpsc::Sender<Event>,
) {
    let mut behind = false;
    let why = loop {
        let bytes = tokio::select! {
            biased;
            permits = events.reserve_many(ROOM), if behind => {
                let Ok(mut permits) = permits else {
                    // Nobody listens for pushed events any more; replies still matter.
                    shared.catchup.lock().missed = Missed::default();
                    behind = false;
                    continue;
                };
                for key in take_reattach(&shared.catchup) {
                    reattach_terminal(&shared, key).await;
                }
                for permit in permits.by_ref() {
                    let Some(event) = next_catchup(&shared.catchup) else {
                        break;
                    };
                    permit.send(event);
                }
                behind = !shared.catchup.lock().missed.is_empty();
                continue;
            }
            next = stream.next() => match next {
                Some(Ok(b)) => b,
                Some(Err(e)) => break format!("the connection failed: {e}"),
                None => break "the daemon closed the connection".to_string(),
            },
        };
        let event = match frame::decode_server(&bytes) {
            Ok(ServerFrame::Message(ServerMessage::Reply { id, result })) => {
                if let Some(w) = shared.waiters.lock().as_mut().and_then(|w| w.remove(&id)) {
                    let _ = w.send(Ok(result));
                }
                continue;
            }
            Ok(ServerFrame::Message(ServerMessage::Error { id: 0, error })) => {
                // The daemon could not read which request this answers (ids start at
                // 1): every request in flight may be the one, and waiting for a reply
                // that never comes would hang its caller.
                for (_, w) in shared.waiters.lock().iter_mut().flat_map(|w| w.drain()) {
                    let _ = w.send(Err(error.clone()));
                }
                continue;
            }
            Ok(ServerFrame::Message(ServerMessage::Error { id, error })) => {
                if let Some(w) = shared.waiters.lock().as_mut().and_then(|w| w.remove(&id)) {
                    let _ = w.send(Err(error));
                }
                continue;
            }
            Ok(ServerFrame::Message(m)) => Event::Message(m),
            Ok(ServerFrame::Terminal(t)) => {
                let mut catchup = shared.catchup.lock();
                if catchup.rescreen.contains(&t.session_key) {
                    if t.kind == frame_kind::DATA {
                        // Older than the screen the re-attach asked for.
                        continue;
                    }
                    catchup.rescreen.remove(&t.session_key);
                }
                Event::Terminal(t)
            }
            Err(e) => {
                tracing::warn!("ignoring a frame from the daemon: {e}");
                continue;
            }
        };
        if behind {
            // Order matters: nothing newer goes ahead of the catch-up.
            shared.catchup.lock().missed.add(event);
            continue;
        }
        match events.try_send(event) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(event)) => {
                shared.catchup.lock().missed.add(event);
                behind = true;
            }
            // Nobody listens for pushed events; replies still matter.
            Err(mpsc::error::TrySendError::Closed(_)) => {}
        }
    };
    // Whoever still waits for a reply gets an error, not a hang; so does whoever asks
    // from now on.
    *shared.waiters.lock() = None;
    let _ = take_reattach(&shared.catchup);
    while let Some(event) = next_catchup(&shared.catchup) {
        if events.send(event).await.is_err() {
            return;
        }
    }
    let _ = events.send(Event::Disconnected(why)).await;
}

/// Moves the terminals to re-attach into the set awaiting their screens (all at once:
/// their screens come back through the queue like any frame).
fn take_reattach(catchup: &Mutex<Catchup>) -> Vec<String> {
    let mut c = catchup.lock();
    let live: Vec<String> = c
        .missed
        .terminals
        .iter()
        .filter(|(_, exit)| exit.is_none())
        .map(|(k, _)| k.clone())
        .collect();
    for key in &live {
        c.missed.terminals.remove(key);
        c.rescreen.insert(key.clone());
    }
    live
}

/// The next event of the catch-up, in order: the resync, the exit frames of terminals
/// that ended meanwhile, the goodbye.
fn next_catchup(catchup: &Mutex<Catchup>) -> Option<Event> {
    let mut c = catchup.lock();
    let missed = &mut c.missed;
    if std::mem::take(&mut missed.resync) {
        return Some(Event::Message(ServerMessage::Resync { session_key: None }));
    }
    while let Some((_, exit)) = missed.terminals.pop_first() {
        if let Some(exit) = exit {
            return Some(Event::Terminal(exit));
        }
    }
    missed.closing.take().map(Event::Message)
}

/// Asks for `key`'s screen again (its reply has no waiter: the frames that follow are
/// what counts).
async fn reattach_terminal(shared: &Shared, key: String) {
    let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
    let request = ClientMessage {
        id,
        request: ClientRequest::AttachTerminal { session_key: key },
    };
    if let Some(out) = shared.out.upgrade() {
        let _ = out.send(frame::encode_json(&request)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Client, Home, EVENTS, VERSION};
    use futures::SinkExt;
    use tokio::net::UnixListener;
    use tokio_util::codec::Framed;
    use weft_protocol::{Hello, PatchEvent, SnapshotPatch, Welcome};

    fn patch(seq: u64) -> Bytes {
        frame::encode_json(&ServerMessage::Patch(Box::new(PatchEvent {
            session_key: "echo:1".into(),
            seq,
            from: None,
            patch: SnapshotPatch::default(),
        })))
    }

    fn terminal(kind: u8, offset: u64) -> Bytes {
        let frame = TerminalFrame {
            session_key: "claude:1".into(),
            kind,
            offset,
            payload: b"x".to_vec(),
        };
        Bytes::from(frame.encode())
    }

    fn reply(id: u64) -> Bytes {
        frame::encode_json(&ServerMessage::Reply {
            id,
            result: serde_json::Value::Null,
        })
    }

    /// A stand-in daemon: greets, then answers each request with the frames `on` makes
    /// of it (pushed messages first, as a daemon streaming to this connection would).
    async fn stand_in(
        home: &Home,
        on: impl Fn(u64, &ClientRequest) -> Vec<Bytes> + Send + 'static,
    ) -> (Client, mpsc::Receiver<Event>) {
        // A daemon's socket folder is private, and a client checks that it is.
        std::fs::set_permissions(
            home.dir(),
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        crate::paths::make_socket_dir(home.dir()).unwrap_or_else(|e| panic!("{e}"));
        let listener = UnixListener::bind(home.socket()).unwrap_or_else(|e| panic!("{e}"));
        tokio::spawn(async move {
            let Ok((socket, _)) = listener.accept().await else {
                return;
            };
            let mut framed = Framed::new(socket, frame::codec());
            while let Some(Ok(bytes)) = framed.next().await {
                let Ok(frame::ClientFrame::Message(msg)) = frame::decode_client(&bytes) else {
                    continue;
                };
                let frames = if let ClientRequest::Hello(_) = msg.request {
                    let welcome = Welcome {
                        version: VERSION.into(),
                        pid: 1,
                        scopes: Vec::new(),
                        restarting: false,
                    };
                    vec![frame::encode_json(&ServerMessage::Reply {
                        id: msg.id,
                        result: serde_json::to_value(welcome).unwrap_or_default(),
                    })]
                } else {
                    on(msg.id, &msg.request)
                };
                for f in frames {
                    if framed.send(f).await.is_err() {
                        return;
                    }
                }
            }
        });
        let hello = Hello {
            version: VERSION.into(),
            surface: "test".into(),
            env: None,
            token: None,
            ..Default::default()
        };
        Client::connect(home, hello)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    }

    async fn next(events: &mut mpsc::Receiver<Event>) -> Event {
        tokio::time::timeout(std::time::Duration::from_secs(20), events.recv())
            .await
            .unwrap_or_else(|_| panic!("no event came"))
            .unwrap_or_else(|| panic!("the events ended"))
    }

    async fn answered(client: &Client, request: ClientRequest) {
        tokio::time::timeout(std::time::Duration::from_secs(20), client.request(request))
            .await
            .unwrap_or_else(|_| panic!("the reply is stuck behind the unread events"))
            .unwrap_or_else(|e| panic!("{e}"));
    }

    const FLOOD: u64 = 3 * EVENTS as u64;

    #[tokio::test]
    async fn a_surface_that_reads_no_events_still_gets_its_replies_then_one_resync() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = Home::at(dir.path());
        // Each inbox request comes after FLOOD patches; agent info after one marker.
        let (client, mut events) = stand_in(&home, |id, request| {
            let mut frames = Vec::new();
            match request {
                ClientRequest::Inbox {} => frames.extend((1..=FLOOD).map(patch)),
                _ => frames.push(patch(1_000_000)),
            }
            frames.push(reply(id));
            frames
        })
        .await;
        for _ in 0..3 {
            answered(&client, ClientRequest::Inbox {}).await;
        }
        // What the surface finds when it reads again: the queue's worth, then one
        // resync for all it missed, then what came after.
        for seq in 1..=EVENTS as u64 {
            match next(&mut events).await {
                Event::Message(ServerMessage::Patch(p)) => assert_eq!(p.seq, seq),
                other => panic!("patch {seq} expected, got {other:?}"),
            }
        }
        match next(&mut events).await {
            Event::Message(ServerMessage::Resync { session_key: None }) => {}
            other => panic!("a resync of everything expected, got {other:?}"),
        }
        answered(&client, ClientRequest::ListAgentInfo {}).await;
        match next(&mut events).await {
            Event::Message(ServerMessage::Patch(p)) => assert_eq!(p.seq, 1_000_000),
            other => panic!("the marker patch expected, got {other:?}"),
        }
        assert_eq!(client.catchup.lock().missed_terminals(), 0);
    }

    #[tokio::test]
    async fn a_terminal_whose_frames_were_dropped_is_re_attached_and_shows_its_screen() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = Home::at(dir.path());
        let (client, mut events) = stand_in(&home, |id, request| {
            let mut frames = Vec::new();
            match request {
                ClientRequest::Inbox {} => {
                    frames.extend((0..FLOOD).map(|i| terminal(frame_kind::DATA, i)));
                    frames.push(reply(id));
                }
                ClientRequest::AttachTerminal { .. } => {
                    // Output the old attachment had in flight, then the fresh screen.
                    frames.push(terminal(frame_kind::DATA, FLOOD));
                    frames.push(reply(id));
                    frames.push(terminal(frame_kind::SCREEN, 500_000));
                    frames.push(terminal(frame_kind::DATA, 500_000));
                }
                _ => {
                    frames.push(patch(1_000_000));
                    frames.push(reply(id));
                }
            }
            frames
        })
        .await;
        answered(&client, ClientRequest::Inbox {}).await;
        for offset in 0..EVENTS as u64 {
            match next(&mut events).await {
                Event::Terminal(t) => assert_eq!((t.kind, t.offset), (frame_kind::DATA, offset)),
                other => panic!("terminal data expected, got {other:?}"),
            }
        }
        let seen: Vec<(u8, u64)> = [next(&mut events).await, next(&mut events).await]
            .into_iter()
            .map(|e| match e {
                Event::Terminal(t) => (t.kind, t.offset),
                other => panic!("a terminal frame expected, got {other:?}"),
            })
            .collect();
        assert_eq!(
            seen,
            vec![(frame_kind::SCREEN, 500_000), (frame_kind::DATA, 500_000)]
        );
        assert_eq!(client.catchup.lock().missed_terminals(), 0);
    }

    #[tokio::test]
    async fn a_terminal_detached_while_behind_is_not_re_attached() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = Home::at(dir.path());
        let (client, mut events) = stand_in(&home, |id, request| {
            let mut frames = Vec::new();
            match request {
                ClientRequest::Inbox {} => {
                    frames.extend((0..FLOOD).map(|i| terminal(frame_kind::DATA, i)));
                }
                ClientRequest::AttachTerminal { .. } => {
                    frames.push(terminal(frame_kind::SCREEN, 500_000));
                }
                ClientRequest::DetachTerminal { .. } => {}
                _ => frames.push(patch(1_000_000)),
            }
            frames.push(reply(id));
            frames
        })
        .await;
        answered(&client, ClientRequest::Inbox {}).await;
        answered(
            &client,
            ClientRequest::DetachTerminal {
                session_key: "claude:1".into(),
            },
        )
        .await;
        for _ in 0..EVENTS {
            assert!(matches!(next(&mut events).await, Event::Terminal(_)));
        }
        answered(&client, ClientRequest::ListAgentInfo {}).await;
        match next(&mut events).await {
            Event::Message(ServerMessage::Patch(p)) => assert_eq!(p.seq, 1_000_000),
            other => panic!("no screen, the marker patch expected, got {other:?}"),
        }
    }
}
