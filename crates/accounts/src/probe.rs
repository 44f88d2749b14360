//! `weft accounts test`: is the account usable now?
//!
//! A login kind is checked in the CLI's own files (logged in, expired); a key kind
//! gets its secret from wherever it is kept and makes one cheap authenticated call
//! (list models) to its endpoint, which tells a wrong key (401/403) from an
//! unreachable endpoint. Cloud kinds (Bedrock, Vertex) use the cloud's own
//! credentials and are only checked for their secret.

use std::sync::OnceLock;
use std::time::Duration;

use weft_protocol::{AccountInfo, AccountTest};

use crate::Accounts;

fn client() -> Option<&'static reqwest::Client> {
    static CLIENT: OnceLock<Option<reqwest::Client>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            let _ = rustls::crypto::ring::default_provider().install_default();
            reqwest::Client::builder()
                .timeout(Duration::from_secs(15))
                .build()
                .ok()
        })
        .as_ref()
}

fn result(account: &AccountInfo, status: &str, detail: impl Into<String>) -> AccountTest {
    AccountTest {
        id: account.id.clone(),
        ok: status == "ok",
        status: status.into(),
        detail: detail.into(),
    }
}

pub(crate) async fn test(accounts: &Accounts, account: &AccountInfo) -> AccountTest {
    if account.kind == "login" {
        return match accounts.login_state(account) {
            Ok(()) => result(account, "ok", "logged in"),
            Err(e) if e.contains("expired") => result(account, "expired", e),
            Err(e) => result(account, "loggedOut", e),
        };
    }
    let secret = match accounts.secret_of(account) {
        Ok(s) => s,
        Err(e) => return result(account, "noSecret", e),
    };
    let key = secret.as_ref().map(|s| s.expose()).unwrap_or_default();
    let base = account.base_url.as_deref();
    let probe = accounts
        .spec(&account.agent)
        .and_then(|s| s.kind(&account.kind))
        .and_then(|k| k.probe.as_ref());
    let request = match probe {
        Some(p) => {
            let url = format!("{}{}", base.unwrap_or(&p.default_base), p.path);
            let Some(c) = client() else {
                return result(account, "error", "no HTTP client");
            };
            let mut r = c.get(url);
            for (name, value) in &p.headers {
                r = r.header(name.as_str(), value.as_str());
            }
            match &p.key_header {
                Some(name) => r.header(name.as_str(), key),
                None => r.bearer_auth(key),
            }
        }
        None => {
            return result(
                account,
                "ok",
                "its secret is there; the cloud's own credentials are not checked",
            )
        }
    };
    match request.send().await {
        Ok(r) if r.status().is_success() => result(account, "ok", "the endpoint took its key"),
        Ok(r) if matches!(r.status().as_u16(), 401 | 403) => result(
            account,
            "wrongKey",
            format!("the endpoint refused its key ({})", r.status()),
        ),
        Ok(r) => result(
            account,
            "error",
            format!("the endpoint answered {}", r.status()),
        ),
        Err(e) => result(
            account,
            "unreachable",
            format!("cannot reach its endpoint: {}", without_url(&e)),
        ),
    }
}

/// The error without its URL (a URL never holds a secret here, but keeps the line short).
fn without_url(e: &reqwest::Error) -> String {
    let mut s = e.to_string();
    if let Some(url) = e.url() {
        s = s.replace(url.as_str(), "");
    }
    s.trim().to_string()
}
