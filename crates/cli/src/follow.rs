//! Following one session from a CLI client: its snapshot kept current from the
//! subscription — patches applied in seq order, and a gap or a resync answered by
//! re-reading the whole snapshot — for `weft run` and `weft wait` alike.

use std::process::ExitCode;

use tokio::sync::mpsc;
use weft_client::{Client, Event};
use weft_protocol::verb;
use weft_protocol::{apply_in_place, PatchEvent, ServerMessage, SnapshotAt, UniversalSnapshot};

use crate::client::{fail, Daemon};

/// A session's snapshot as the subscription has brought it so far.
pub(crate) struct Followed {
    pub key: String,
    pub snap: UniversalSnapshot,
    pub seq: u64,
}

/// How the snapshot changed.
pub(crate) enum Change {
    /// This patch was applied, in order.
    Patched(Box<PatchEvent>),
    /// The whole snapshot was re-read (a seq gap, or the daemon said to resync).
    Reread,
}

/// Why following stopped.
pub(crate) enum Lost {
    /// The daemon said it is going, and why.
    Closing(String),
    /// The connection ended (why, when known).
    Disconnected(Option<String>),
    /// Re-reading the snapshot failed (already printed).
    Failed(ExitCode),
}

impl Daemon {
    /// Subscribes to `key`: its snapshot now; its patches follow on the events.
    pub(crate) async fn follow(&self, key: &str) -> Result<Followed, ExitCode> {
        let at: SnapshotAt = self
            .send(verb::Subscribe {
                session_key: key.to_string(),
            })
            .await?;
        Ok(Followed {
            key: key.to_string(),
            snap: at.snapshot,
            seq: at.seq,
        })
    }
}

impl Followed {
    /// Waits for the next change of this session (other sessions' messages are
    /// skipped). Takes the client and the events apart, so a caller can still send
    /// requests (a stop on Ctrl-C) while this waits.
    pub(crate) async fn next(
        &mut self,
        client: &Client,
        events: &mut mpsc::Receiver<Event>,
    ) -> Result<Change, Lost> {
        loop {
            match events.recv().await {
                Some(Event::Message(ServerMessage::Patch(ev))) if ev.session_key == self.key => {
                    if ev.seq <= self.seq {
                        continue;
                    }
                    if ev.first_seq() == self.seq + 1 {
                        apply_in_place(&mut self.snap, &ev.patch);
                        self.seq = ev.seq;
                        return Ok(Change::Patched(ev));
                    }
                    return self.reread(client).await;
                }
                Some(Event::Message(ServerMessage::Resync { .. })) => {
                    return self.reread(client).await
                }
                Some(Event::Message(ServerMessage::Closing { reason })) => {
                    return Err(Lost::Closing(reason))
                }
                Some(Event::Disconnected(why)) => return Err(Lost::Disconnected(Some(why))),
                None => return Err(Lost::Disconnected(None)),
                Some(_) => {}
            }
        }
    }

    /// Starts again from the whole snapshot.
    pub(crate) async fn reread(&mut self, client: &Client) -> Result<Change, Lost> {
        let at: SnapshotAt = client
            .send(verb::GetSnapshot {
                session_key: self.key.clone(),
            })
            .await
            .map_err(|e| Lost::Failed(fail(&e)))?;
        (self.snap, self.seq) = (at.snapshot, at.seq);
        Ok(Change::Reread)
    }
}
