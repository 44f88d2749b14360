//! The bot's side of Matrix: its client (SQLite store, restored device) and the few
//! ways it writes to a room, each with its own retry budget.
//!
//! The SDK retries a 429 after the server's `retry_after`, but by default without a
//! limit on attempts (up to 15 minutes): one slow edit would then hold every later one.
//! So an edit gets a short budget (a later edit carries the same text anyway), and
//! what must arrive — a reply's final text, a "done" or a question — a long one.

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use matrix_sdk::authentication::matrix::MatrixSession;
use matrix_sdk::config::RequestConfig;
use matrix_sdk::ruma::events::reaction::ReactionEventContent;
use matrix_sdk::ruma::events::relation::Annotation;
use matrix_sdk::ruma::events::room::message::{ReplacementMetadata, RoomMessageEventContent};
use matrix_sdk::ruma::events::Mentions;
use matrix_sdk::ruma::{OwnedDeviceId, OwnedEventId, OwnedUserId};
use matrix_sdk::{Client, Room, SessionMeta, SessionTokens};

/// The most of a reply one message carries, in bytes. An event may be 64 KiB in all,
/// and an edit carries its body twice (the fallback and `m.new_content`).
pub const BODY_MAX: usize = 24_000;

/// Requests in general: a bounded number of retries, so a homeserver that is down
/// makes a request fail instead of hang.
pub fn default_config() -> RequestConfig {
    RequestConfig::new()
        .retry_limit(4)
        .max_retry_time(Duration::from_secs(60))
        .timeout(Duration::from_secs(30))
}

/// A reaction: give up quickly, it is only a shortcut.
fn edit_config() -> RequestConfig {
    RequestConfig::new()
        .retry_limit(2)
        .max_retry_time(Duration::from_secs(15))
        .timeout(Duration::from_secs(15))
}

/// A streaming edit: no retry at all. A 429 comes back at once with the server's
/// `retry_after`, so the streamer skips edits until then instead of one edit waiting
/// in the SDK while newer text piles up behind it.
fn stream_config() -> RequestConfig {
    RequestConfig::new()
        .disable_retry()
        .timeout(Duration::from_secs(15))
}

/// Why a streaming edit did not go out.
#[derive(Debug)]
pub enum Refused {
    /// The homeserver's rate limit: try again after this long.
    Limited(Duration),
    /// Anything else (the next edit carries the text anyway).
    Failed(matrix_sdk::Error),
}

/// One streaming edit of the bot's message `original`, sent once.
pub async fn stream_edit(room: &Room, original: &OwnedEventId, body: &str) -> Result<(), Refused> {
    use matrix_sdk::ruma::api::error::{ErrorKind, LimitExceededErrorData, RetryAfter};
    let content = RoomMessageEventContent::text_plain(body)
        .make_replacement(ReplacementMetadata::new(original.clone(), None));
    match room
        .send(content)
        .with_request_config(stream_config())
        .await
    {
        Ok(_) => Ok(()),
        Err(e) => match e.client_api_error_kind() {
            Some(ErrorKind::LimitExceeded(LimitExceededErrorData { retry_after, .. })) => {
                let wait = match retry_after {
                    Some(RetryAfter::Delay(d)) => *d,
                    Some(RetryAfter::DateTime(at)) => at
                        .duration_since(std::time::SystemTime::now())
                        .unwrap_or_default(),
                    None => Duration::from_secs(5),
                };
                Err(Refused::Limited(wait))
            }
            _ => Err(Refused::Failed(e)),
        },
    }
}

/// What must arrive: ride out the rate limit (Synapse asks for about 5 s a message
/// at its defaults) and short outages.
fn must_config() -> RequestConfig {
    RequestConfig::new()
        .retry_limit(12)
        .max_retry_time(Duration::from_secs(180))
        .timeout(Duration::from_secs(30))
}

/// A client for `homeserver` over the store at `store`.
pub async fn client(homeserver: &str, store: &Path, passphrase: &str) -> anyhow::Result<Client> {
    Client::builder()
        .homeserver_url(homeserver)
        .sqlite_store(store, Some(passphrase))
        .request_config(default_config())
        .build()
        .await
        .with_context(|| format!("cannot open the Matrix client for {homeserver}"))
}

/// Restores the bot's device (never a new one: that would lose its end-to-end keys).
pub async fn restore(
    client: &Client,
    user: &str,
    device_id: &str,
    token: &str,
) -> anyhow::Result<()> {
    let user_id: OwnedUserId = user.try_into().context("the configured user id")?;
    let device_id: OwnedDeviceId = device_id.into();
    let session = MatrixSession {
        meta: SessionMeta { user_id, device_id },
        tokens: SessionTokens {
            access_token: token.to_string(),
            refresh_token: None,
        },
    };
    client
        .restore_session(session)
        .await
        .context("cannot restore the bot's Matrix session")
}

/// Plain text, mentioning `mention` (in the body too, so every app shows it).
pub fn text(body: &str, mention: Option<&str>) -> RoomMessageEventContent {
    match mention.and_then(|m| OwnedUserId::try_from(m).ok()) {
        Some(user) => RoomMessageEventContent::text_plain(format!("{user}: {body}"))
            .add_mentions(Mentions::with_user_ids([user])),
        None => RoomMessageEventContent::text_plain(body),
    }
}

/// Sends a new message that must arrive; its event id.
pub async fn send(room: &Room, content: RoomMessageEventContent) -> anyhow::Result<OwnedEventId> {
    let sent = room
        .send(content)
        .with_request_config(must_config())
        .await
        .context("sending a message")?;
    Ok(sent.response.event_id)
}

/// Replaces the text of the bot's message `original` (an `m.replace` edit). `must`:
/// the final edit, which must arrive; otherwise a streaming one that may be dropped.
pub async fn edit(
    room: &Room,
    original: &OwnedEventId,
    body: &str,
    must: bool,
) -> anyhow::Result<()> {
    let content = RoomMessageEventContent::text_plain(body)
        .make_replacement(ReplacementMetadata::new(original.clone(), None));
    let config = if must { must_config() } else { edit_config() };
    room.send(content)
        .with_request_config(config)
        .await
        .context("editing a message")?;
    Ok(())
}

/// Adds reaction `key` to `event` (a shortcut to an answer); may be dropped.
pub async fn react(room: &Room, event: &OwnedEventId, key: &str) -> anyhow::Result<()> {
    let content = ReactionEventContent::new(Annotation::new(event.clone(), key.to_string()));
    room.send(content)
        .with_request_config(edit_config())
        .await
        .context("reacting")?;
    Ok(())
}

/// `text` cut into pieces of at most `max` bytes, at line ends where it can be, never
/// inside a character; nothing is lost and the pieces joined give `text` back.
pub fn split(text: &str, max: usize) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while rest.len() > max {
        let mut end = max;
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        // A line end in the second half of the piece is a nicer cut.
        if let Some(nl) = rest[..end].rfind('\n').filter(|&nl| nl >= end / 2) {
            end = nl + 1;
        }
        pieces.push(&rest[..end]);
        rest = &rest[end..];
    }
    pieces.push(rest);
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_keeps_every_byte_and_every_character_whole() {
        let text = format!("{}\n{}", "é".repeat(30), "ab".repeat(40));
        let pieces = split(&text, 25);
        assert!(pieces.iter().all(|p| p.len() <= 25));
        assert_eq!(pieces.concat(), text);
        assert_eq!(split("short", 25), ["short"]);
    }
}
