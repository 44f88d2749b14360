//! Why the user might want to look at a session, from one patch: a new question, or a
//! finished turn. The window notifies when it is not focused; the daemon when no
//! window is connected.

use std::collections::HashMap;

use weft_protocol::{PatchEvent, Phase};

/// Follows how many questions each session has pending, so only a new one is news.
#[derive(Debug, Default)]
pub struct Tracker {
    pending: HashMap<String, usize>,
}

impl Tracker {
    /// What to tell the user about `event`, if anything.
    pub fn news(&mut self, event: &PatchEvent) -> Option<(String, String)> {
        let before = self.pending.get(&event.session_key).copied().unwrap_or(0);
        if let Some(interactions) = &event.patch.interactions {
            self.pending
                .insert(event.session_key.clone(), interactions.len());
        }
        attention(event, before)
    }
}

/// Why the user might want to look, from one patch; `None` when nothing to say.
pub fn attention(event: &PatchEvent, pending_before: usize) -> Option<(String, String)> {
    let agent = event
        .session_key
        .split(':')
        .next()
        .unwrap_or("agent")
        .to_string();
    if let Some(interactions) = &event.patch.interactions {
        if interactions.len() > pending_before {
            let title = interactions
                .last()
                .map(|i| i.title.clone())
                .unwrap_or_default();
            return Some((format!("{agent} needs an answer"), title));
        }
    }
    if event.patch.phase == Some(Phase::Done) {
        let body = match (&event.patch.error, event.patch.incomplete) {
            (Some(Some(error)), _) => format!("failed: {error}"),
            (_, Some(true)) => "stopped".to_string(),
            _ => "finished its turn".to_string(),
        };
        return Some((format!("{agent} is done"), body));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_protocol::{Interaction, SnapshotPatch};

    fn event(patch: SnapshotPatch) -> PatchEvent {
        PatchEvent {
            session_key: "echo:1".into(),
            seq: 1,
            from: None,
            patch,
        }
    }

    #[test]
    fn a_new_interaction_or_a_finished_turn_wants_attention() {
        let asks = event(SnapshotPatch {
            interactions: Some(vec![Interaction {
                verdict: None,
                title: "Run it?".into(),
                ..Default::default()
            }]),
            ..Default::default()
        });
        assert_eq!(
            attention(&asks, 0),
            Some(("echo needs an answer".into(), "Run it?".into()))
        );
        assert_eq!(
            attention(&asks, 1),
            None,
            "an answered one going away is not news"
        );
        let done = event(SnapshotPatch {
            phase: Some(Phase::Done),
            ..Default::default()
        });
        assert_eq!(
            attention(&done, 0).map(|a| a.1),
            Some("finished its turn".into())
        );
        let failed = event(SnapshotPatch {
            phase: Some(Phase::Done),
            error: Some(Some("boom".into())),
            ..Default::default()
        });
        assert_eq!(
            attention(&failed, 0).map(|a| a.1),
            Some("failed: boom".into())
        );
        assert_eq!(attention(&event(SnapshotPatch::default()), 0), None);
    }
}
