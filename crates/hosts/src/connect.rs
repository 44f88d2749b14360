//! A client's connection to a host's daemon, whatever the transport: `ssh … weft
//! proxy` (first contact made when this weft was never checked there) or a `weft
//! serve` straight over TLS. The one path the app, the CLI's `--host` and the Matrix
//! surface share.

use std::time::Duration;

use tokio::sync::mpsc;
use weft_client::{Client, Event, Home};

use crate::{direct, link, HostError, Ssh};

/// The hello to another machine's daemon from `surface`: no environment of this one
/// (its keys and variables stay here; the host's turns run with the host's own).
pub fn remote_hello(surface: &str) -> weft_protocol::Hello {
    weft_protocol::Hello {
        version: weft_client::VERSION.to_string(),
        surface: surface.into(),
        env: None,
        token: None,
        proof: None,
    }
}

/// Connects `surface` to host `name`'s daemon (which `weft proxy` starts there when
/// none runs). A weft removed from the host by hand is put back once.
pub async fn connect(
    home: &Home,
    name: &str,
    surface: &str,
) -> Result<(Client, mpsc::Receiver<Event>), HostError> {
    let ssh = Ssh::from_env(home);
    let unreachable = |why: String| HostError::Unreachable {
        host: name.to_string(),
        why,
    };
    let mut again = false;
    loop {
        let host = link::ready(home, &ssh, name, again).await?;
        if host.direct() {
            return direct::connect(&host, remote_hello(surface))
                .await
                .map_err(unreachable);
        }
        let link = link::open(&ssh, &host)?;
        let stderr = link.stderr();
        let e = match Client::connect_over(link, remote_hello(surface)).await {
            Ok(connected) => return Ok(connected),
            Err(e) => e,
        };
        let said = stderr.text(Duration::from_secs(5)).await;
        // Each login shell says "missing" its own way (bash, csh, fish).
        let missing = ["No such file", "not found", "Unknown command"]
            .iter()
            .any(|m| said.contains(m));
        if missing && !again {
            again = true;
            continue;
        }
        return Err(unreachable(if said.is_empty() {
            format!("cannot reach its daemon: {e}")
        } else {
            format!("cannot reach its daemon: {}", said.trim())
        }));
    }
}
