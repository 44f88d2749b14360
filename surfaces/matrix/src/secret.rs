//! The surface's two secrets — the bot's access token and the passphrase of the SDK's
//! store — kept only in the OS secret store (the Secret Service over D-Bus), under
//! service `weft` like every Weft secret, as `matrix:<mxid>:token` and
//! `matrix:<mxid>:passphrase`. There is no clear-text fallback: without a Secret
//! Service, login fails and says so.

use zeroize::Zeroizing;

/// The keyring service every Weft secret is filed under.
const SERVICE: &str = "weft";

/// Which secret of a bot account.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// The access token of its device.
    Token,
    /// What encrypts its SQLite store (end-to-end keys included).
    Passphrase,
}

fn id(user: &str, kind: Kind) -> String {
    let what = match kind {
        Kind::Token => "token",
        Kind::Passphrase => "passphrase",
    };
    format!("matrix:{user}:{what}")
}

/// Why a secret could not be read or kept.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    /// No Secret Service answers, or it is locked.
    #[error(
        "the OS secret store is not available ({0}); the Matrix surface keeps its access \
         token and its encryption passphrase only there: start and unlock a Secret Service \
         (GNOME Keyring, KeePassXC) and try again"
    )]
    Unavailable(String),
    /// Anything else it said.
    #[error("the OS secret store failed: {0}")]
    Failed(String),
}

fn map_err(e: keyring::Error) -> SecretError {
    match e {
        keyring::Error::PlatformFailure(inner) | keyring::Error::NoStorageAccess(inner) => {
            SecretError::Unavailable(inner.to_string())
        }
        other => SecretError::Failed(other.to_string()),
    }
}

fn entry(user: &str, kind: Kind) -> Result<keyring::Entry, SecretError> {
    keyring::Entry::new(SERVICE, &id(user, kind)).map_err(map_err)
}

/// The secret, if one is kept.
pub fn get(user: &str, kind: Kind) -> Result<Option<Zeroizing<String>>, SecretError> {
    match entry(user, kind)?.get_password() {
        Ok(v) => Ok(Some(Zeroizing::new(v))),
        Err(keyring::Error::NoEntry) => Ok(None),
        Err(e) => Err(map_err(e)),
    }
}

/// Keeps it (replacing any).
pub fn set(user: &str, kind: Kind, value: &str) -> Result<(), SecretError> {
    entry(user, kind)?.set_password(value).map_err(map_err)
}

/// Forgets it (nothing kept is not an error).
pub fn delete(user: &str, kind: Kind) -> Result<(), SecretError> {
    match entry(user, kind)?.delete_credential() {
        Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
        Err(e) => Err(map_err(e)),
    }
}

/// Fails at once when no Secret Service answers, before anything is sent to a
/// homeserver (a login whose token could not be kept would leave a stray device).
pub fn check_available(user: &str) -> Result<(), SecretError> {
    get(user, Kind::Token).map(drop)
}
