//! `weft proxy`: this machine's daemon over stdin/stdout, for a client on another
//! machine that runs `ssh HOST …/weft proxy` (`weft --host NAME …`).
//!
//! It starts the daemon when none runs, exactly as a local client does (and with the
//! same version rule: a daemon older than this `weft` is replaced only once it has
//! nothing running; a busy one is used as it is). Then it bridges bytes. The one frame
//! it reads is the first, the client's hello, which it rewrites: the environment is
//! dropped (a remote client's keys and variables stay on its own machine; turns here
//! run with this host's environment), and the proof that the caller runs outside
//! Weft's sandbox is this process's own reading of `client.key` (the remote client
//! cannot read it; a command inside the sandbox here cannot either, so running
//! `weft proxy` there gains it nothing).
//!
//! Before anything else it writes `weft_hosts::link::MARKER`, so a client can tell its
//! stream from what a login shell's rc file printed first.
//!
//! SSH gives a command without a terminal no hangup when the link drops: the proxy
//! ends when its stdin ends or the daemon hangs up, and the daemon, started detached
//! with its stdio on /dev/null, is never tied to the SSH session.

use std::process::ExitCode;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use weft_client::{frame, Home};
use weft_protocol::{ClientMessage, ClientRequest, Hello};

/// Bridges stdio to the daemon of `WEFT_HOME` until either side ends. Exits the
/// process itself: tokio's stdin reads on a thread that nothing can interrupt, so a
/// runtime waiting for it after the daemon hung up would never end.
pub(crate) async fn proxy() -> ExitCode {
    let code = match bridge().await {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("weft proxy: {e}");
            1
        }
    };
    std::process::exit(code)
}

async fn bridge() -> Result<(), String> {
    // First, what tells the client where the stream starts: a login shell's rc file
    // may have printed before us (see `weft_hosts::link::MARKER`).
    let mut stdout = tokio::io::stdout();
    stdout
        .write_all(weft_hosts::link::MARKER)
        .await
        .and(stdout.flush().await)
        .map_err(|e| format!("writing to the client: {e}"))?;
    let home = Home::from_env();
    let program = std::env::current_exe().ok();
    // A connection of our own first: it starts the daemon or waits out one restarting
    // for this version, as `connect_or_start` does for every local client.
    let probe = Hello {
        version: weft_client::VERSION.to_string(),
        surface: "proxy".into(),
        env: None,
        token: None,
        proof: None,
    };
    let connected = weft_client::start::connect_or_start(&home, probe, program.as_deref())
        .await
        .map_err(|e| e.to_string())?;
    connected.client.close();
    let socket = tokio::net::UnixStream::connect(home.socket())
        .await
        .map_err(|e| format!("cannot reach the daemon's socket: {e}"))?;
    weft_client::check_listener(&home, &socket).map_err(|e| e.to_string())?;
    let mut stdin = tokio::io::stdin();
    let hello = read_frame(&mut stdin).await?;
    let hello = rewrite_hello(&hello, &home)?;
    let (mut from_daemon, mut to_daemon) = socket.into_split();
    to_daemon
        .write_all(&(hello.len() as u32).to_be_bytes())
        .await
        .and(to_daemon.write_all(&hello).await)
        .map_err(|e| format!("writing to the daemon: {e}"))?;
    let up = async {
        let _ = tokio::io::copy(&mut stdin, &mut to_daemon).await;
        // The client is gone: the daemon sees its connection end.
        let _ = to_daemon.shutdown().await;
    };
    let down = async {
        let _ = tokio::io::copy(&mut from_daemon, &mut stdout).await;
        let _ = stdout.flush().await;
    };
    // Either end closing ends the bridge: the daemon's goodbye has been copied by then,
    // and a client that left needs nothing more.
    tokio::select! {
        () = up => {}
        () = down => {}
    }
    Ok(())
}

/// One length-delimited frame from `input` (see `weft_client::frame`).
async fn read_frame(input: &mut (impl AsyncReadExt + Unpin)) -> Result<Vec<u8>, String> {
    let mut len = [0u8; 4];
    input
        .read_exact(&mut len)
        .await
        .map_err(|e| format!("no hello from the client: {e}"))?;
    let len = u32::from_be_bytes(len) as usize;
    if len > frame::MAX_FRAME {
        return Err(format!("a first frame of {len} bytes is not a hello"));
    }
    let mut bytes = vec![0u8; len];
    input
        .read_exact(&mut bytes)
        .await
        .map_err(|e| format!("the client's hello was cut short: {e}"))?;
    Ok(bytes)
}

/// The client's hello with no environment and this host's proof.
fn rewrite_hello(bytes: &[u8], home: &Home) -> Result<Vec<u8>, String> {
    let message: ClientMessage =
        serde_json::from_slice(bytes).map_err(|e| format!("the first frame is no hello: {e}"))?;
    let ClientRequest::Hello(hello) = message.request else {
        return Err("the first frame is not a hello".into());
    };
    let proof = std::fs::read_to_string(home.client_key())
        .map(|k| k.trim().to_string())
        .ok()
        .filter(|k| !k.is_empty());
    let hello = Hello {
        env: None,
        proof,
        ..hello
    };
    let message = ClientMessage {
        id: message.id,
        request: ClientRequest::Hello(hello),
    };
    serde_json::to_vec(&message).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_protocol::ClientEnv;

    #[test]
    fn the_hello_loses_the_clients_environment_and_carries_this_hosts_proof() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = Home::at(dir.path());
        std::fs::write(home.client_key(), "host-key\n").unwrap_or_else(|e| panic!("{e}"));
        let sent = ClientMessage {
            id: 1,
            request: ClientRequest::Hello(Hello {
                version: "9.9.9".into(),
                surface: "cli".into(),
                env: Some(ClientEnv(
                    [("ANTHROPIC_API_KEY".to_string(), "sk-laptop".to_string())].into(),
                )),
                token: None,
                proof: Some("guess".into()),
            }),
        };
        let bytes = serde_json::to_vec(&sent).unwrap_or_else(|e| panic!("{e}"));
        let out = rewrite_hello(&bytes, &home).unwrap_or_else(|e| panic!("{e}"));
        let text = String::from_utf8_lossy(&out);
        assert!(!text.contains("sk-laptop"), "{text}");
        let got: ClientMessage = serde_json::from_slice(&out).unwrap_or_else(|e| panic!("{e}"));
        let ClientRequest::Hello(hello) = got.request else {
            panic!("not a hello: {text}")
        };
        assert!(hello.env.is_none());
        assert_eq!(hello.proof.as_deref(), Some("host-key"));
        assert_eq!(hello.version, "9.9.9");
        let other = serde_json::to_vec(&ClientMessage {
            id: 2,
            request: ClientRequest::Inbox {},
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(rewrite_hello(&other, &home).is_err());
    }
}
