//! Patch feeds: how a session's patches (and every session's, for a window) reach the
//! subscribers that forward them to clients.
//!
//! A feed is a bounded broadcast queue (`async-broadcast`) in overflow mode: publishing
//! never waits for a subscriber, and one that falls behind by a whole capacity is told
//! how many it missed ([`RecvError::Overflowed`]) and re-reads the snapshot. Unlike
//! tokio's broadcast channel, a patch is dropped once every subscriber has it rather
//! than held until its slot is reused, so the headroom costs memory only while
//! someone is actually behind: a streamed reply publishes a patch per token, and a
//! forwarder that waited a few milliseconds for a core (both busy with the turn, the
//! store and the client) fell 4,096 patches behind at a million a second and resynced,
//! re-reading a snapshot of up to 20 MB each time.

use std::sync::Arc;

use async_broadcast::{InactiveReceiver, Sender};
use weft_protocol::PatchEvent;

pub use async_broadcast::{RecvError, TryRecvError};

/// A subscriber's end of a feed: patches in order from when it subscribed.
pub type Patches = async_broadcast::Receiver<Arc<PatchEvent>>;

/// The publishing end of a feed.
pub(crate) struct Feed {
    tx: Sender<Arc<PatchEvent>>,
    /// Keeps the queue open while nobody subscribes (it closes with its last receiver).
    _open: InactiveReceiver<Arc<PatchEvent>>,
}

impl Feed {
    /// A feed that keeps at most `capacity` patches for its slowest subscriber.
    pub fn new(capacity: usize) -> Self {
        let (mut tx, rx) = async_broadcast::broadcast(capacity);
        tx.set_overflow(true);
        Self {
            tx,
            _open: rx.deactivate(),
        }
    }

    /// Publishes `event` to whoever subscribes now; with nobody, it is dropped.
    pub fn send(&self, event: Arc<PatchEvent>) {
        // Overflow mode never reports `Full`; `Inactive` is nobody listening.
        let _ = self.tx.try_broadcast(event);
    }

    /// A subscriber that gets every patch published from now on.
    pub fn subscribe(&self) -> Patches {
        self.tx.new_receiver()
    }

    /// How many subscribers there are.
    pub fn receiver_count(&self) -> usize {
        self.tx.receiver_count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_protocol::SnapshotPatch;

    fn seq(rx: &mut Patches) -> u64 {
        rx.try_recv().map_or_else(|e| panic!("{e}"), |ev| ev.seq)
    }

    fn event(seq: u64) -> Arc<PatchEvent> {
        Arc::new(PatchEvent {
            session_key: "s".into(),
            seq,
            from: None,
            patch: SnapshotPatch::default(),
        })
    }

    #[test]
    fn a_subscriber_gets_what_is_published_after_it_subscribed_in_order() {
        let feed = Feed::new(8);
        feed.send(event(1));
        let mut rx = feed.subscribe();
        assert_eq!(feed.receiver_count(), 1);
        feed.send(event(2));
        feed.send(event(3));
        assert_eq!(seq(&mut rx), 2);
        assert_eq!(seq(&mut rx), 3);
        assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
        drop(rx);
        assert_eq!(feed.receiver_count(), 0);
        // Still open with nobody subscribed: a later subscriber is served.
        feed.send(event(4));
        let mut rx = feed.subscribe();
        feed.send(event(5));
        assert_eq!(seq(&mut rx), 5);
    }

    #[test]
    fn a_subscriber_behind_by_the_capacity_is_told_how_many_it_missed_and_the_sender_never_waits() {
        let feed = Feed::new(4);
        let mut slow = feed.subscribe();
        for seq in 1..=10 {
            feed.send(event(seq));
        }
        assert_eq!(slow.try_recv(), Err(TryRecvError::Overflowed(6)));
        assert_eq!(seq(&mut slow), 7);
    }

    #[test]
    fn a_patch_every_subscriber_has_read_is_released() {
        let feed = Feed::new(1024);
        let mut rx = feed.subscribe();
        let ev = event(1);
        feed.send(ev.clone());
        assert_eq!(Arc::strong_count(&ev), 2);
        seq(&mut rx);
        assert_eq!(
            Arc::strong_count(&ev),
            1,
            "the feed still holds a read patch"
        );
    }
}
