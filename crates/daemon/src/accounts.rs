//! The account verbs. Each may wait on the OS secret store (D-Bus) or run an
//! account's secret command, so it runs on a blocking thread, never on the runtime's.

use std::sync::Arc;

use weft_accounts::{AccountError, Accounts};
use weft_protocol::{verb, AutoSwitch, ClientRequest, ErrorCode, SecretInput, WireError};

use crate::conn::{Conn, Transport};
use crate::reply::{answer, Reply};

fn wire(e: AccountError) -> WireError {
    let code = match e {
        AccountError::Unknown(_) | AccountError::Bad(_) => ErrorCode::BadRequest,
        AccountError::Storage(_) => ErrorCode::Storage,
    };
    WireError::new(code, e.to_string())
}

async fn blocking<T: Send + 'static>(
    accounts: &Arc<Accounts>,
    f: impl FnOnce(&Accounts) -> Result<T, AccountError> + Send + 'static,
) -> Result<T, WireError> {
    let accounts = accounts.clone();
    tokio::task::spawn_blocking(move || f(&accounts))
        .await
        .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))?
        .map_err(wire)
}

/// One account verb.
pub async fn handle(
    accounts: &Arc<Accounts>,
    conn: &Arc<Conn>,
    request: ClientRequest,
) -> Result<Reply, WireError> {
    match request {
        ClientRequest::ListAccounts {} => {
            answer::<verb::ListAccounts>(blocking(accounts, |a| a.list()).await)
        }
        ClientRequest::AddAccount(r) => {
            // A secret value is taken from the owner's socket only: a browser holding a
            // token could otherwise plant keys.
            if matches!(r.secret, Some(SecretInput::Value { .. }))
                && conn.transport != Transport::Socket
            {
                return Err(WireError::new(
                    ErrorCode::Forbidden,
                    "an account's secret is accepted on the daemon's own socket only (the CLI, the desktop app)",
                ));
            }
            answer::<weft_protocol::AddAccountRequest>(blocking(accounts, move |a| a.add(r)).await)
        }
        ClientRequest::RenameAccount { account, label } => answer::<verb::RenameAccount>(
            blocking(accounts, move |a| a.rename(&account, &label)).await,
        ),
        ClientRequest::RemoveAccount {
            account,
            delete_home,
        } => answer::<verb::RemoveAccount>(
            blocking(accounts, move |a| a.remove(&account, delete_home)).await,
        ),
        ClientRequest::TestAccount { account } => {
            answer::<verb::TestAccount>(accounts.test(&account).await.map_err(wire))
        }
        ClientRequest::AccountUsage { account } => answer::<verb::AccountUsage>(
            blocking(accounts, move |a| a.usage(account.as_deref())).await,
        ),
        ClientRequest::SetAutoSwitch {
            session_key,
            enabled,
        } => {
            let key = session_key.clone();
            blocking(accounts, move |a| a.set_auto_switch(&key, enabled)).await?;
            answer::<verb::SetAutoSwitch>(Ok(AutoSwitch {
                session_key,
                enabled,
            }))
        }
        ClientRequest::GetAutoSwitch { session_key } => {
            let key = session_key.clone();
            let enabled = blocking(accounts, move |a| a.auto_switch(&key)).await?;
            answer::<verb::GetAutoSwitch>(Ok(AutoSwitch {
                session_key,
                enabled,
            }))
        }
        _ => Err(WireError::new(ErrorCode::Internal, "not an account verb")),
    }
}
