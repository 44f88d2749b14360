//! Why the user might want to look at a session, from one patch: a new question, or a
//! finished turn. The window notifies when it is not focused; the daemon when no
//! window is connected.
//!
//! A remote host's daemon cannot notify this machine's desktop (it may have none, and
//! the app is its client), so the app's link to each host keeps a [`Tracker`] of its
//! own and asks [`Tracker::notice`] with the host's name: the notice says which host
//! ("claude on gpu needs an answer", as the inbox card writes it) and names the session
//! as the windows do (`gpu/claude:id`), with the window's address that opens it. A link
//! that was down compares the host's inbox with what it knew ([`Tracker::sweep`]), so
//! a question asked meanwhile is news once it is back.

use std::collections::HashMap;

use weft_protocol::{InboxItem, PatchEvent, Phase};

/// A notification to show: what it says, and the session it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// Its summary ("claude on gpu needs an answer").
    pub title: String,
    /// Its body (the question's title, "finished its turn", …).
    pub body: String,
    /// The session, as the windows name it (`HOST/agent:id` for a remote host's).
    pub session_key: String,
    /// Whether it is a question (a finished turn is not).
    pub question: bool,
}

impl Notice {
    /// The window's address that shows the session (`#/s/<key>`, the key encoded as
    /// the UI's `encodeURIComponent` does).
    pub fn address(&self) -> String {
        format!("#/s/{}", uri_component(&self.session_key))
    }
}

/// `s` encoded as JavaScript's `encodeURIComponent` does (UTF-8 bytes, all but
/// `A-Z a-z 0-9 - _ . ! ~ * ' ( )` as `%XX`).
pub fn uri_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

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

    /// What to tell the user about `event` of host `host` (`None`: this machine), as
    /// a [`Notice`] naming the host and the session as the windows know them.
    pub fn notice(&mut self, host: Option<&str>, event: &PatchEvent) -> Option<Notice> {
        let question = event.patch.interactions.as_ref().is_some_and(|now| {
            now.len() > self.pending.get(&event.session_key).copied().unwrap_or(0)
        });
        let (title, body) = self.news(event)?;
        Some(on_host(host, &event.session_key, title, body, question))
    }

    /// Compares host `host`'s inbox (`items`, as the host names them) with the
    /// questions this tracker knew of: a notice for each session with more now (the
    /// last one asked), and the counts taken from the inbox from here on.
    pub fn sweep(&mut self, host: Option<&str>, items: &[InboxItem]) -> Vec<Notice> {
        let mut now: HashMap<String, (usize, &InboxItem)> = HashMap::new();
        for item in items {
            let entry = now.entry(item.session_key.clone()).or_insert((0, item));
            entry.0 += 1;
            if item.created_at >= entry.1.created_at {
                entry.1 = item;
            }
        }
        let mut notices: Vec<Notice> = now
            .iter()
            .filter(|(key, (count, _))| *count > self.pending.get(*key).copied().unwrap_or(0))
            .map(|(key, (_, last))| {
                let title = format!("{} needs an answer", agent_of(key));
                on_host(host, key, title, last.title.clone(), true)
            })
            .collect();
        notices.sort_by(|a, b| a.session_key.cmp(&b.session_key));
        self.pending = now.into_iter().map(|(k, (n, _))| (k, n)).collect();
        notices
    }
}

fn agent_of(session_key: &str) -> &str {
    session_key.split(':').next().unwrap_or("agent")
}

/// The notice for `title` (which begins with the agent's name) on `host`: "claude on
/// gpu needs an answer", the key `gpu/claude:id`.
fn on_host(host: Option<&str>, key: &str, title: String, body: String, question: bool) -> Notice {
    match host {
        None => Notice {
            title,
            body,
            session_key: key.to_string(),
            question,
        },
        Some(host) => {
            let agent = agent_of(key);
            let rest = title.strip_prefix(agent).unwrap_or(&title);
            Notice {
                title: format!("{agent} on {host}{rest}"),
                body,
                session_key: format!("{host}/{key}"),
                question,
            }
        }
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

    fn asks(n: usize) -> PatchEvent {
        event(SnapshotPatch {
            interactions: Some(
                (0..n)
                    .map(|i| Interaction {
                        title: format!("Run step {i}?"),
                        ..Default::default()
                    })
                    .collect(),
            ),
            ..Default::default()
        })
    }

    #[test]
    fn a_hosts_question_names_the_host_and_opens_its_session() {
        let mut tracker = Tracker::default();
        let notice = tracker.notice(Some("gpu"), &asks(1));
        assert_eq!(
            notice,
            Some(Notice {
                title: "echo on gpu needs an answer".into(),
                body: "Run step 0?".into(),
                session_key: "gpu/echo:1".into(),
                question: true,
            })
        );
        assert_eq!(
            notice.map(|n| n.address()),
            Some("#/s/gpu%2Fecho%3A1".into())
        );
        // The same question again (a later patch repeating it) is not news.
        assert_eq!(tracker.notice(Some("gpu"), &asks(1)), None);
        let done = tracker.notice(
            Some("gpu"),
            &event(SnapshotPatch {
                phase: Some(Phase::Done),
                ..Default::default()
            }),
        );
        assert_eq!(
            done.map(|n| (n.title, n.question)),
            Some(("echo on gpu is done".into(), false))
        );
        // This machine's: as before, the key unchanged.
        let local = Tracker::default().notice(None, &asks(1));
        assert_eq!(
            local.map(|n| (n.title, n.session_key)),
            Some(("echo needs an answer".into(), "echo:1".into()))
        );
    }

    fn item(key: &str, title: &str, at: i64) -> InboxItem {
        InboxItem {
            prompt_id: format!("p{at}"),
            session_key: key.into(),
            kind: weft_protocol::InteractionKind::UserInput,
            title: title.into(),
            detail: None,
            tool_name: None,
            questions: vec![],
            created_at: at,
            expires_at: None,
        }
    }

    #[test]
    fn a_question_asked_while_the_link_was_down_is_news_when_it_is_back() {
        let mut tracker = Tracker::default();
        assert!(tracker.notice(Some("gpu"), &asks(1)).is_some());
        // Back: the inbox holds the one it knew and a new one elsewhere, and a second
        // question in the first session.
        let inbox = [
            item("echo:1", "Run step 0?", 1),
            item("claude:9", "Which file?", 2),
            item("echo:1", "Run step 1?", 3),
        ];
        let notices = tracker.sweep(Some("gpu"), &inbox);
        let said: Vec<_> = notices
            .iter()
            .map(|n| (n.title.as_str(), n.body.as_str(), n.address()))
            .collect();
        assert_eq!(
            said,
            vec![
                (
                    "claude on gpu needs an answer",
                    "Which file?",
                    "#/s/gpu%2Fclaude%3A9".to_string()
                ),
                (
                    "echo on gpu needs an answer",
                    "Run step 1?",
                    "#/s/gpu%2Fecho%3A1".to_string()
                ),
            ]
        );
        // Nothing new since: nothing to say; and the counts follow the inbox.
        assert!(tracker.sweep(Some("gpu"), &inbox).is_empty());
        assert_eq!(tracker.notice(Some("gpu"), &asks(2)), None);
    }

    #[test]
    fn keys_are_encoded_as_the_windows_encode_them() {
        assert_eq!(
            uri_component("gpu/claude:a-b_c.d"),
            "gpu%2Fclaude%3Aa-b_c.d"
        );
        assert_eq!(uri_component("x y+é"), "x%20y%2B%C3%A9");
    }
}
