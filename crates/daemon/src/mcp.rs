//! The MCP verbs (`weft mcp …`): the servers configured in Weft, a session's own
//! choices, and the secrets servers name (`${secret:NAME}`), kept in the OS secret
//! store under `mcp:NAME` beside the accounts' entries.

use std::path::Path;
use std::sync::Arc;

use weft_accounts::{Secret, SecretServiceStore, SecretStore};
use weft_protocol::{verb, ClientRequest, ErrorCode, WireError};

use crate::conn::{Conn, Transport};
use crate::reply::{answer, Reply};

/// The secret store entry of an MCP secret.
fn entry(name: &str) -> String {
    format!("mcp:{name}")
}

fn good_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Keeps an MCP secret found by `importAgentSetup` in the OS secret store (a blocking
/// call: the import runs on a blocking thread).
pub(crate) fn keep_secret(name: &str, value: &str) -> Result<(), String> {
    if !good_name(name) {
        return Err(format!("`{name}` is not a secret name"));
    }
    SecretServiceStore
        .set(&entry(name), &Secret::new(value.to_string()))
        .map_err(|e| e.to_string())
}

/// What the MCP plugin reads `${secret:NAME}` from.
pub fn secret_lookup() -> Arc<weft_drivers::SecretLookup> {
    Arc::new(|name: &str| {
        SecretServiceStore
            .get(&entry(name))
            .map(|s| s.map(|s| s.expose().to_string()))
            .map_err(|e| e.to_string())
    })
}

fn bad(text: impl Into<String>) -> WireError {
    WireError::new(ErrorCode::BadRequest, text)
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, WireError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))?
        .map_err(|e| WireError::new(ErrorCode::Storage, e))
}

/// One MCP verb.
pub async fn handle(
    home: &Path,
    conn: &Arc<Conn>,
    request: ClientRequest,
) -> Result<Reply, WireError> {
    match request {
        ClientRequest::ListMcp {
            workdir,
            session_key,
        } => answer::<verb::ListMcp>(Ok(weft_kernel::mcp::list(
            home,
            workdir.as_deref().map(Path::new),
            session_key.as_deref(),
        ))),
        ClientRequest::SetMcpEnabled {
            session_key,
            servers,
        } => {
            weft_kernel::mcp::set_session_overrides(home, &session_key, &servers)?;
            answer::<verb::SetMcpEnabled>(Ok(weft_kernel::mcp::list(
                home,
                None,
                Some(&session_key),
            )))
        }
        ClientRequest::SetMcpSecret { name, value: v } => {
            if conn.transport != Transport::Socket {
                return Err(WireError::new(
                    ErrorCode::Forbidden,
                    "an MCP secret is accepted on the daemon's own socket only (the CLI, the desktop app)",
                ));
            }
            if !good_name(&name) {
                return Err(bad(format!(
                    "`{name}` is not a secret name (letters, digits, ., - and _)"
                )));
            }
            if v.0.trim().is_empty() {
                return Err(bad("the secret is empty"));
            }
            let secret = Secret::new(v.0);
            blocking(move || {
                SecretServiceStore
                    .set(&entry(&name), &secret)
                    .map_err(|e| e.to_string())
            })
            .await?;
            answer::<verb::SetMcpSecret>(Ok(()))
        }
        ClientRequest::RemoveMcpSecret { name } => {
            blocking(move || {
                SecretServiceStore
                    .delete(&entry(&name))
                    .map_err(|e| e.to_string())
            })
            .await?;
            answer::<verb::RemoveMcpSecret>(Ok(()))
        }
        other => Err(bad(format!("not an MCP verb: {other:?}"))),
    }
}
