//! TLS to a daemon's WebSocket off loopback, pinned by its key's fingerprint.
//!
//! A daemon's certificate is usually self-signed (made per `WEFT_HOME`), so no CA can
//! vouch for it. Weft's own clients instead pin the **fingerprint**: the SHA-256 of the
//! certificate's SubjectPublicKeyInfo, in standard base64 (the same number as an HPKP
//! `pin-sha256`). Pinning the key rather than the whole certificate lets the daemon
//! re-issue its certificate for another listen address without every paired client
//! having to learn a new number.
//!
//! The verifier ignores the chain and the names, but the handshake's signature is still
//! checked against the pinned key ([`rustls::crypto::verify_tls13_signature`]), so a
//! server that merely replays the certificate without its private key is refused.

use std::sync::Arc;

use base64::Engine;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use sha2::{Digest, Sha256};

/// Why a fingerprint could not be read from a certificate.
#[derive(Debug, thiserror::Error)]
#[error("not an X.509 certificate: {0}")]
pub struct BadCertificate(String);

/// The fingerprint of a certificate (DER): base64 of the SHA-256 of its
/// SubjectPublicKeyInfo.
pub fn fingerprint(cert: &CertificateDer<'_>) -> Result<String, BadCertificate> {
    let parsed =
        webpki::EndEntityCert::try_from(cert).map_err(|e| BadCertificate(format!("{e:?}")))?;
    let spki = parsed.subject_public_key_info();
    Ok(fingerprint_of_spki(spki.as_ref()))
}

/// The fingerprint of a SubjectPublicKeyInfo (DER).
pub fn fingerprint_of_spki(spki: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(Sha256::digest(spki))
}

/// True when the two fingerprints are the same, compared in constant time.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// A [`ServerCertVerifier`] that accepts exactly the certificate whose key has the
/// pinned fingerprint.
#[derive(Debug)]
pub struct PinnedKey {
    fingerprint: String,
    algorithms: WebPkiSupportedAlgorithms,
}

impl PinnedKey {
    /// A verifier pinned to `fingerprint` (as [`fingerprint`] writes it).
    pub fn new(fingerprint: &str) -> PinnedKey {
        PinnedKey {
            fingerprint: fingerprint.trim().to_string(),
            algorithms: provider().signature_verification_algorithms,
        }
    }
}

impl ServerCertVerifier for PinnedKey {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let got = fingerprint(end_entity)
            .map_err(|e| rustls::Error::General(format!("the server's certificate: {e}")))?;
        if same(&got, &self.fingerprint) {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::General(format!(
                "the server's key has fingerprint {got}, not the pinned {}",
                self.fingerprint
            )))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// The crypto provider Weft's TLS uses (ring; chosen explicitly, so no process-wide
/// default need be installed).
// rustls 0.23.48 (the Matrix surface's lockfile) deprecates ring's provider for its lack
// of post-quantum key exchange; ring keeps Weft's TLS free of a C build, and these
// links pin a key the user's own daemon made. Allowed until Weft moves its TLS off ring.
#[allow(deprecated)]
pub fn provider() -> CryptoProvider {
    rustls::crypto::ring::default_provider()
}

/// A client configuration that trusts only the key with `fingerprint`.
pub fn pinned_config(fingerprint: &str) -> Result<ClientConfig, rustls::Error> {
    Ok(ClientConfig::builder_with_provider(Arc::new(provider()))
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(PinnedKey::new(fingerprint)))
        .with_no_client_auth())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_compare_whole() {
        assert!(same("abc=", "abc="));
        assert!(!same("abc=", "abd="));
        assert!(!same("abc", "abc="));
        assert!(fingerprint(&CertificateDer::from(vec![1u8, 2, 3])).is_err());
        // The SHA-256 of nothing, in base64.
        assert_eq!(
            fingerprint_of_spki(b""),
            "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
        );
    }
}
