//! A session's patches to a connection: batched, merged, and each batch sent only once
//! the store has committed what it shows.

use std::sync::Arc;

use weft_kernel::feed::{Patches, RecvError, TryRecvError};
use weft_protocol::{PatchEvent, ServerMessage};

use crate::service::Service;

fn patch_message(event: &PatchEvent) -> ServerMessage {
    ServerMessage::Patch(Box::new(event.clone()))
}

/// Every session's patches (a window); a lag becomes a resync of everything.
pub(super) async fn forward_all(
    service: Arc<Service>,
    out: tokio::sync::mpsc::Sender<bytes::Bytes>,
) {
    let patches = service.loom.subscribe_all();
    forward(&service, patches, &out, None).await;
}

/// The most messages held for one wait for the store (merged patches count once).
const FORWARD_BATCH: usize = 4096;

/// Sends `patches` to `out` in batches, each once the store has committed what it shows
/// (a client never sees what a crash would take back); a lag becomes a resync of `key`
/// (of everything when `None`). Within a batch, a session's consecutive patches that
/// [`SnapshotPatch::merge`](weft_protocol::SnapshotPatch::merge) can join travel as one
/// (`from`..=`seq`): a streamed reply is a patch per token, and a client decoding a
/// frame per token fell behind at a few hundred thousand a second and was resynced,
/// re-reading the whole snapshot each time. While one batch waits for its commit the
/// next is gathered (it waits for a commit of its own): a forwarder that stopped reading
/// during each wait lagged behind a fast turn by the channel's whole capacity.
pub(super) async fn forward(
    service: &Service,
    mut patches: Patches,
    out: &tokio::sync::mpsc::Sender<bytes::Bytes>,
    key: Option<String>,
) {
    let resync = || ServerMessage::Resync {
        session_key: key.clone(),
    };
    let mut next: Vec<ServerMessage> = Vec::new();
    let mut closed = false;
    loop {
        if next.is_empty() {
            match patches.recv_direct().await {
                Ok(ev) => join(&mut next, &ev),
                Err(RecvError::Overflowed(_)) => next.push(resync()),
                Err(RecvError::Closed) => return,
            }
        }
        // Everything already published joins this batch.
        drain(&mut patches, &mut next, &mut closed, &resync);
        let batch = std::mem::take(&mut next);
        let durable = service.durable();
        tokio::pin!(durable);
        // Polled, not woken per patch: a wake-up per streamed token cost the turn's own
        // task more than the token.
        let mut poll = tokio::time::interval(GATHER_EVERY);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                biased;
                () = &mut durable => break,
                _ = poll.tick(), if !closed && next.len() < FORWARD_BATCH => {
                    drain(&mut patches, &mut next, &mut closed, &resync);
                }
            }
        }
        for message in &batch {
            if out
                .send(weft_client::frame::encode_json(message))
                .await
                .is_err()
            {
                return;
            }
        }
        if closed && next.is_empty() {
            return;
        }
    }
}

/// How often a forwarder waiting for the store gathers what was published meanwhile:
/// well within the time a turn streaming a million patches a second takes to fill a
/// session's channel (4,096).
const GATHER_EVERY: std::time::Duration = std::time::Duration::from_millis(1);

/// Takes what is already published, up to [`FORWARD_BATCH`] messages.
fn drain(
    patches: &mut Patches,
    next: &mut Vec<ServerMessage>,
    closed: &mut bool,
    resync: &impl Fn() -> ServerMessage,
) {
    while !*closed && next.len() < FORWARD_BATCH {
        match patches.try_recv() {
            Ok(ev) => join(next, &ev),
            Err(TryRecvError::Overflowed(_)) => next.push(resync()),
            Err(TryRecvError::Empty) => break,
            Err(TryRecvError::Closed) => *closed = true,
        }
    }
}

/// Adds `ev` to the batch: merged into the last message when that is the same
/// session's patch just before it and the two can merge, else as a message of its own.
fn join(batch: &mut Vec<ServerMessage>, ev: &PatchEvent) {
    if let Some(ServerMessage::Patch(last)) = batch.last_mut() {
        if last.session_key == ev.session_key
            && last.seq + 1 == ev.seq
            && last.patch.merge(&ev.patch)
        {
            last.from.get_or_insert(last.seq);
            last.seq = ev.seq;
            return;
        }
    }
    batch.push(patch_message(ev));
}
