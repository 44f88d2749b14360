//! `weft serve`: makes the user's daemon (started if none runs) accept WebSocket
//! clients — and serve the browser UI — on an address, for as long as this command
//! runs. One JSON message per text frame, binary frames for terminals, the same wire
//! as the daemon's socket (see `weft_protocol::ClientRequest`). A token is always
//! required: in an `Authorization: Bearer` header or in the `hello`, never in a URL.
//!
//! Off loopback the listener is TLS (the home's self-signed certificate, or the user's
//! own with `--tls-cert/--tls-key`). `--print-token` makes a token for a phone or
//! another machine and shows, with it, the key's fingerprint and a QR code of the page's
//! URL with the token, to pair a phone by scanning it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use weft_client::Home;
use weft_protocol::verb;

use crate::client;

#[derive(Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on (port 0 picks a free one; the address is printed). Off
    /// loopback it is served over TLS.
    #[arg(long, default_value = "127.0.0.1:7777")]
    listen: String,
    /// Serve over TLS on loopback too (off loopback it always is).
    #[arg(long)]
    tls: bool,
    /// Your own certificate chain (PEM) instead of the self-signed one of WEFT_HOME.
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Make a token (named by --name, replacing one of that name), print it, the TLS
    /// key's fingerprint and a QR code of the page's URL with the token, and exit.
    #[arg(long)]
    print_token: bool,
    /// With --print-token: a token that may only read (sessions, history, patches).
    #[arg(long, requires = "print_token")]
    read_only: bool,
    /// With --print-token: the token's name (default `default`, or `read-only`).
    #[arg(long, requires = "print_token")]
    name: Option<String>,
}

impl ServeArgs {
    fn tls_files(&self) -> Option<(PathBuf, PathBuf)> {
        Some((self.tls_cert.clone()?, self.tls_key.clone()?))
    }
}

pub(crate) async fn serve(args: ServeArgs) -> ExitCode {
    if args.print_token {
        return print_token(&args);
    }
    let mut daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    // The daemon reads the files: it needs their full paths.
    let absolute = |p: &PathBuf| std::path::absolute(p).unwrap_or_else(|_| p.clone());
    let listening = match daemon
        .send(verb::Listen {
            addr: args.listen.clone(),
            tls: args.tls.then_some(true),
            tls_cert: args
                .tls_cert
                .as_ref()
                .map(|p| absolute(p).display().to_string()),
            tls_key: args
                .tls_key
                .as_ref()
                .map(|p| absolute(p).display().to_string()),
        })
        .await
    {
        Ok(l) => l,
        Err(code) => return code,
    };
    eprintln!("weft: serving on {}", listening.ws_url);
    eprintln!("weft: browser UI at {}", listening.ui_url);
    if let Some(fingerprint) = &listening.fingerprint {
        eprintln!("weft: TLS key fingerprint (SHA-256 of the SPKI): {fingerprint}");
        eprintln!(
            "weft: to pair a phone: weft serve --print-token --listen {} --name phone",
            listening.addr
        );
    }
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    loop {
        tokio::select! {
            _ = &mut ctrl_c => return ExitCode::SUCCESS,
            ev = daemon.events.recv() => match ev {
                Some(weft_client::Event::Disconnected(why)) | Some(weft_client::Event::Message(weft_protocol::ServerMessage::Closing { reason: why })) => {
                    eprintln!("weft: the daemon went away: {why}");
                    return ExitCode::FAILURE;
                }
                None => return ExitCode::FAILURE,
                Some(_) => {}
            }
        }
    }
}

/// The address a phone reaches `addr` at: itself, or for an unspecified one the first
/// address of this machine off loopback.
fn reachable(addr: SocketAddr) -> SocketAddr {
    if !addr.ip().is_unspecified() {
        return addr;
    }
    weft_daemon::tls::names_for(addr)
        .iter()
        .filter_map(|n| n.parse::<std::net::IpAddr>().ok())
        .find(|ip| !ip.is_loopback() && ip.is_ipv4() == addr.is_ipv4())
        .map(|ip| SocketAddr::new(ip, addr.port()))
        .unwrap_or(addr)
}

/// `weft serve --print-token`.
fn print_token(args: &ServeArgs) -> ExitCode {
    let home = Home::from_env();
    let _ = std::fs::create_dir_all(home.dir());
    let addr: SocketAddr = match args.listen.parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("weft: `{}` is not an IP:PORT address: {e}", args.listen);
            return ExitCode::from(crate::EXIT_USAGE);
        }
    };
    let name = args.name.clone().unwrap_or_else(|| {
        if args.read_only {
            "read-only".into()
        } else {
            "default".into()
        }
    });
    let scopes = crate::tokens::scopes(args.read_only);
    let token = match weft_daemon::tokens::replace(&home.tokens(), &name, scopes) {
        Ok(t) => t,
        Err(e) => {
            eprintln!(
                "weft: cannot make a token in {}: {e}",
                home.tokens().display()
            );
            return ExitCode::FAILURE;
        }
    };
    out!("{}", token.value);
    eprintln!("weft: token `{name}` (replaces any earlier one of that name; `weft tokens list`)");
    let tls = args.tls || args.tls_cert.is_some() || !addr.ip().is_loopback();
    let target = reachable(addr);
    let mut url = format!(
        "{}://{target}/#token={}",
        if tls { "https" } else { "http" },
        token.value
    );
    if tls {
        let identity = match args.tls_files() {
            Some((cert, key)) => weft_daemon::tls::from_files(&cert, &key),
            None => weft_daemon::tls::own(&home, &weft_daemon::tls::names_for(addr)),
        };
        match identity {
            Ok(identity) => {
                eprintln!(
                    "weft: TLS key fingerprint (SHA-256 of the SPKI): {}",
                    identity.fingerprint
                );
                // Base64's `+`, `/` and `=` escaped: a fragment's `+` reads as a space.
                url.push_str("&fp=");
                for c in identity.fingerprint.chars() {
                    match c {
                        '+' => url.push_str("%2B"),
                        '/' => url.push_str("%2F"),
                        '=' => url.push_str("%3D"),
                        c => url.push(c),
                    }
                }
            }
            Err(e) => {
                eprintln!("weft: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    match qrcode::QrCode::new(url.as_bytes()) {
        Ok(code) => {
            use qrcode::render::unicode::Dense1x2;
            let picture = code
                .render::<Dense1x2>()
                .dark_color(Dense1x2::Light)
                .light_color(Dense1x2::Dark)
                .build();
            eprintln!("weft: scan with the phone's camera to open {target} paired:\n{picture}");
        }
        Err(e) => eprintln!("weft: no QR code: {e}"),
    }
    eprintln!("weft: or open (the link holds the token: keep it to yourself): {url}");
    ExitCode::SUCCESS
}
