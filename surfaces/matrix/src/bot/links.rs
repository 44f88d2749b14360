//! The bot's links to daemons: this machine's, and one per host of the user's list
//! (`weft hosts add`), made the first time a session there needs it, through the same
//! path as the CLI's `--host` and the app (`weft_hosts::connect`: ssh and `weft
//! proxy`, or a `weft serve` over TLS).
//!
//! A session on a host is known here by its qualified key, `HOST/AGENT:ID` (the form
//! `weft --host` accepts); its host's daemon knows it as `AGENT:ID`. Patches from a
//! host are qualified as they arrive, so the followers and the rooms never see the
//! difference. A host's link that drops is made again (with backoff) while sessions of
//! that host are followed, and each is subscribed again: the host's daemon went on
//! with every turn meanwhile.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use weft_client::{Client, Event};
use weft_protocol::{ErrorCode, ServerMessage, Verb, WireError};

use super::Bot;

/// The host of a qualified key and the key its daemon knows; `None` for this machine.
pub fn split(key: &str) -> (Option<&str>, &str) {
    match key.split_once('/') {
        Some((host, rest)) if !host.is_empty() && !host.contains(':') => (Some(host), rest),
        _ => (None, key),
    }
}

/// The key this bot knows a session of `host` by.
pub fn qualify(host: Option<&str>, key: &str) -> String {
    match host {
        Some(h) => format!("{h}/{key}"),
        None => key.to_string(),
    }
}

/// What a host's link delivered, tagged with the host.
pub struct HostEvent {
    pub host: String,
    pub event: Event,
}

impl Bot {
    /// Sends `verb` to the daemon of `host` (this machine's when `None`), making the
    /// host's link when there is none.
    pub async fn send_on<V: Verb>(
        &self,
        host: Option<&str>,
        verb: V,
    ) -> Result<V::Reply, WireError> {
        match host {
            None => self.send(verb).await,
            Some(h) => self.host_client(h).await?.send(verb).await,
        }
    }

    /// The link to `host`'s daemon: the open one, or a new one.
    async fn host_client(&self, host: &str) -> Result<Arc<Client>, WireError> {
        let mut links = self.hosts.lock().await;
        if let Some(c) = links.get(host) {
            return Ok(c.clone());
        }
        let known = weft_hosts::Hosts::load(&self.home)
            .map_err(|e| WireError::new(ErrorCode::BadRequest, e.to_string()))?;
        known
            .get(host)
            .map_err(|e| WireError::new(ErrorCode::BadRequest, e.to_string()))?;
        let (client, mut events) = weft_hosts::connect(&self.home, host, super::SURFACE)
            .await
            .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))?;
        tracing::info!(host, "linked to the host's daemon");
        let client = Arc::new(client);
        links.insert(host.to_string(), client.clone());
        let tx = self.host_events.clone();
        let name = host.to_string();
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                let end = matches!(event, Event::Disconnected(_));
                let _ = tx.send(HostEvent {
                    host: name.clone(),
                    event,
                });
                if end {
                    break;
                }
            }
        });
        Ok(client)
    }

    /// The followed sessions of `host` (this machine's when `None`).
    pub fn followed_on(&self, host: Option<&str>) -> Vec<String> {
        self.followed()
            .into_iter()
            .filter(|k| split(k).0 == host)
            .collect()
    }
}

/// Handles what the hosts' links deliver: patches (qualified) into the followers, a
/// resync as a re-read, a dropped link made again while its sessions are followed.
pub async fn pump(bot: Arc<Bot>, mut rx: mpsc::UnboundedReceiver<HostEvent>) {
    while let Some(HostEvent { host, event }) = rx.recv().await {
        match event {
            Event::Message(ServerMessage::Patch(mut ev)) => {
                ev.session_key = qualify(Some(&host), &ev.session_key);
                bot.patched(*ev).await;
            }
            Event::Message(ServerMessage::Resync { .. }) => {
                for key in bot.followed_on(Some(&host)) {
                    bot.reread(&key).await;
                }
            }
            Event::Disconnected(why) => {
                tracing::warn!(host, "lost the host's daemon: {why}");
                bot.hosts.lock().await.remove(&host);
                tokio::spawn(relink(bot.clone(), host));
            }
            _ => {}
        }
    }
}

/// Makes `host`'s link again (with backoff) and subscribes its followed sessions, as
/// long as there are any.
async fn relink(bot: Arc<Bot>, host: String) {
    let mut backoff = Duration::from_millis(500);
    loop {
        if bot.followed_on(Some(&host)).is_empty() {
            return;
        }
        tokio::time::sleep(backoff).await;
        match bot.host_client(&host).await {
            Ok(_) => break,
            Err(e) => {
                tracing::warn!(host, "{e}; again in {} ms", backoff.as_millis());
                backoff = (backoff * 2).min(Duration::from_secs(30));
            }
        }
    }
    tracing::info!(host, "linked to the host's daemon again");
    for key in bot.followed_on(Some(&host)) {
        bot.subscribe(&key).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hosts_key_is_split_and_made_again() {
        assert_eq!(split("gpu/claude:abc"), (Some("gpu"), "claude:abc"));
        assert_eq!(split("claude:abc"), (None, "claude:abc"));
        // A key whose id holds a slash is this machine's.
        assert_eq!(split("acp:x/y"), (None, "acp:x/y"));
        assert_eq!(qualify(Some("gpu"), "echo:1"), "gpu/echo:1");
        assert_eq!(qualify(None, "echo:1"), "echo:1");
    }
}
