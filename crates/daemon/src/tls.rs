//! TLS for WebSocket listeners: the certificate a listener presents and the accept
//! loop that does the handshakes.
//!
//! Each `WEFT_HOME` has one private key, `tls/key.pem` (0600, ECDSA P-256, made by
//! rcgen on first use). A listener issues itself a self-signed certificate from that
//! key for the names it is reached by (loopback, the machine's host name, the listen
//! address or, for an unspecified one, every address of the machine), written to
//! `tls/cert.pem` for a user to install. Clients pin the key's fingerprint (see
//! `weft_client::tls`), which stays the same across those certificates. A user's own
//! certificate and key (`--tls-cert/--tls-key`) are used as they are.
//!
//! Handshakes happen off the accept loop, at most [`HANDSHAKING`] at once and each
//! within [`HANDSHAKE_WITHIN`]: a peer that opens a connection and says nothing (or
//! speaks plain HTTP) holds nothing for long and gets nothing.

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;
use weft_client::Home;

/// How long a peer has to finish its TLS handshake.
pub const HANDSHAKE_WITHIN: Duration = Duration::from_secs(10);

/// TLS handshakes under way at once, per listener; more connections wait in the
/// kernel's backlog.
pub const HANDSHAKING: usize = 32;

/// What a listener presents: its certificate chain and key, and the key's fingerprint.
pub struct Identity {
    /// The chain, leaf first.
    pub certs: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    /// The leaf's key fingerprint (base64 of the SHA-256 of its SubjectPublicKeyInfo).
    pub fingerprint: String,
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identity")
            .field("fingerprint", &self.fingerprint)
            .finish_non_exhaustive()
    }
}

impl Identity {
    /// True when the leaf certificate is valid for `host` (a DNS name or an IP
    /// address): a `Host` the certificate names is this listener's own.
    pub fn names(&self, host: &str) -> bool {
        let Some(leaf) = self.certs.first() else {
            return false;
        };
        let Ok(cert) = webpki::EndEntityCert::try_from(leaf) else {
            return false;
        };
        let Ok(name) = ServerName::try_from(host.to_string()) else {
            return false;
        };
        cert.verify_is_valid_for_subject_name(&name).is_ok()
    }

    /// A rustls acceptor presenting this identity.
    pub fn acceptor(&self) -> Result<TlsAcceptor, String> {
        let config =
            rustls::ServerConfig::builder_with_provider(Arc::new(weft_client::tls::provider()))
                .with_safe_default_protocol_versions()
                .map_err(|e| e.to_string())?
                .with_no_client_auth()
                .with_single_cert(self.certs.clone(), self.key.clone_key())
                .map_err(|e| format!("the certificate and key do not go together: {e}"))?;
        Ok(TlsAcceptor::from(Arc::new(config)))
    }
}

/// The home's TLS folder.
pub fn dir(home: &Home) -> PathBuf {
    home.dir().join("tls")
}

/// The home's private key (0600).
pub fn key_path(home: &Home) -> PathBuf {
    dir(home).join("key.pem")
}

/// The home's last issued certificate (to install on a phone).
pub fn cert_path(home: &Home) -> PathBuf {
    dir(home).join("cert.pem")
}

/// The home's key, made (0600) on first use.
fn own_key(home: &Home) -> Result<rcgen::KeyPair, String> {
    let path = key_path(home);
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir(home))
        .map_err(|e| format!("cannot make {}: {e}", dir(home).display()))?;
    let read = |path: &Path| -> Result<rcgen::KeyPair, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        rcgen::KeyPair::from_pem(&text).map_err(|e| format!("{}: {e}", path.display()))
    };
    if path.exists() {
        return read(&path);
    }
    let key = rcgen::KeyPair::generate().map_err(|e| format!("cannot make a key: {e}"))?;
    // `create_new`: two listeners starting at once keep one key (the loser reads it).
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
    {
        Ok(mut file) => {
            file.write_all(key.serialize_pem().as_bytes())
                .and_then(|()| file.sync_all())
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            Ok(key)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read(&path),
        Err(e) => Err(format!("cannot write {}: {e}", path.display())),
    }
}

/// The machine's host name, if it has one.
fn host_name() -> Option<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_ascii_lowercase())
}

/// The names a listener on `addr` is reached by: loopback's, the host name (and its
/// `.local`), and the address itself or, when it is unspecified, every address of the
/// machine's interfaces.
pub fn names_for(addr: SocketAddr) -> Vec<String> {
    let mut names = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
    ];
    if let Some(host) = host_name() {
        names.push(format!("{host}.local"));
        names.push(host);
    }
    let ip = addr.ip();
    if ip.is_unspecified() {
        if let Ok(addrs) = nix::ifaddrs::getifaddrs() {
            for a in addrs {
                let Some(storage) = a.address else { continue };
                let found: Option<IpAddr> = if let Some(v4) = storage.as_sockaddr_in() {
                    Some(IpAddr::V4(v4.ip()))
                } else {
                    storage.as_sockaddr_in6().map(|v6| IpAddr::V6(v6.ip()))
                };
                if let Some(found) = found {
                    names.push(found.to_string());
                }
            }
        }
    } else {
        names.push(ip.to_string());
    }
    let mut seen = std::collections::HashSet::new();
    names.retain(|n| seen.insert(n.clone()));
    names
}

/// The home's identity for `names`: a certificate issued from the home's key.
pub fn own(home: &Home, names: &[String]) -> Result<Identity, String> {
    let key = own_key(home)?;
    let mut params = rcgen::CertificateParams::new(names.to_vec())
        .map_err(|e| format!("cannot name a certificate {names:?}: {e}"))?;
    params.distinguished_name = rcgen::DistinguishedName::new();
    params.distinguished_name.push(
        rcgen::DnType::CommonName,
        format!(
            "Weft on {}",
            host_name().unwrap_or_else(|| "this machine".into())
        ),
    );
    let cert = params
        .self_signed(&key)
        .map_err(|e| format!("cannot make a certificate: {e}"))?;
    let path = cert_path(home);
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, cert.pem())
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let der = cert.der().clone();
    let fingerprint = weft_client::tls::fingerprint(&der).map_err(|e| e.to_string())?;
    Ok(Identity {
        certs: vec![der],
        key: PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        fingerprint,
    })
}

/// The user's own certificate chain and key (PEM files).
pub fn from_files(cert: &Path, key: &Path) -> Result<Identity, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| format!("cannot read {}: {e}", cert.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: {e}", cert.display()))?;
    let leaf = certs
        .first()
        .ok_or_else(|| format!("{} holds no certificate", cert.display()))?;
    let fingerprint = weft_client::tls::fingerprint(leaf).map_err(|e| e.to_string())?;
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| format!("cannot read a private key from {}: {e}", key.display()))?;
    Ok(Identity {
        certs,
        key,
        fingerprint,
    })
}

/// A listener whose connections come out of their TLS handshake: what `axum::serve`
/// is given instead of the bare [`TcpListener`].
pub struct TlsListener {
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    addr: SocketAddr,
    accepting: tokio::task::JoinHandle<()>,
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

impl TlsListener {
    /// Accepts on `tcp`, handshaking with `acceptor`.
    pub fn new(tcp: TcpListener, acceptor: TlsAcceptor) -> std::io::Result<TlsListener> {
        let addr = tcp.local_addr()?;
        let (tx, ready) = mpsc::channel(HANDSHAKING);
        let slots = Arc::new(tokio::sync::Semaphore::new(HANDSHAKING));
        let accepting = tokio::spawn(async move {
            loop {
                let Ok(permit) = slots.clone().acquire_owned().await else {
                    return;
                };
                let (stream, peer) = match tcp.accept().await {
                    Ok(s) => s,
                    Err(e) => {
                        tracing::warn!("accepting a TLS connection failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let (acceptor, tx) = (acceptor.clone(), tx.clone());
                tokio::spawn(async move {
                    let shaken =
                        tokio::time::timeout(HANDSHAKE_WITHIN, acceptor.accept(stream)).await;
                    drop(permit);
                    match shaken {
                        Ok(Ok(tls)) => {
                            let _ = tx.send((tls, peer)).await;
                        }
                        Ok(Err(e)) => tracing::debug!(%peer, "a TLS handshake failed: {e}"),
                        Err(_) => tracing::debug!(%peer, "a TLS handshake took too long"),
                    }
                });
            }
        });
        Ok(TlsListener {
            ready,
            addr,
            accepting,
        })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(next) => next,
            // The accept loop ended: nothing will ever come.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_home_key_is_made_once_private_and_its_fingerprint_kept_across_names() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = Home::at(dir.path());
        let first =
            own(&home, &["localhost".into(), "127.0.0.1".into()]).unwrap_or_else(|e| panic!("{e}"));
        let mode = std::fs::metadata(key_path(&home)).map(|m| m.permissions().mode() & 0o777);
        assert_eq!(mode.ok(), Some(0o600));
        let second = own(&home, &["10.1.2.3".into(), "box.example".into()])
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(first.fingerprint, second.fingerprint);
        assert_ne!(first.certs, second.certs);
        assert!(second.names("10.1.2.3") && second.names("box.example"));
        assert!(!second.names("evil.example") && !second.names("10.1.2.4"));
        // The certificate written out is the one presented, and reads back the same.
        let again =
            from_files(&cert_path(&home), &key_path(&home)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(again.fingerprint, first.fingerprint);
        assert!(again.acceptor().is_ok());
        assert!(!format!("{again:?}").contains("PRIVATE"));
    }
}
