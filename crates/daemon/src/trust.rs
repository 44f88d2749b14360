//! The workspace trust verbs: what a folder grants, and the user's decision on it
//! (kept by `weft_workspace::trust` in `$WEFT_HOME/trust.json`). Every one reads the
//! folder's files, so each runs off the async workers.

use std::path::{Path, PathBuf};

use weft_protocol::{verb, ClientRequest, ErrorCode, WireError};
use weft_workspace::trust::{self, TrustError};

use crate::reply::{answer, Reply};

/// The folder a request names: absolute and an existing folder.
fn folder(workdir: &str) -> Result<PathBuf, WireError> {
    let path = Path::new(workdir);
    if !path.is_absolute() {
        return Err(WireError::new(
            ErrorCode::BadRequest,
            format!("`{workdir}` is not an absolute path"),
        ));
    }
    if !path.is_dir() {
        return Err(WireError::new(
            ErrorCode::BadRequest,
            format!("{workdir} is not a folder"),
        ));
    }
    Ok(path.to_path_buf())
}

fn wire(e: TrustError) -> WireError {
    let code = match e {
        TrustError::Changed { .. } => ErrorCode::NeedsConfirmation,
        TrustError::NotAFolder(_) => ErrorCode::BadRequest,
        TrustError::Store { .. } => ErrorCode::Storage,
    };
    WireError::new(code, e.to_string())
}

/// One trust verb.
pub async fn handle(home: &Path, request: ClientRequest) -> Result<Reply, WireError> {
    let home = home.to_path_buf();
    tokio::task::spawn_blocking(move || match request {
        ClientRequest::GetWorkspaceTrust { workdir } => {
            answer::<verb::GetWorkspaceTrust>(folder(&workdir).map(|f| trust::status(&home, &f)))
        }
        ClientRequest::TrustWorkspace { workdir, hash } => answer::<verb::TrustWorkspace>(
            folder(&workdir).and_then(|f| trust::trust(&home, &f, &hash).map_err(wire)),
        ),
        ClientRequest::DeclineWorkspaceTrust { workdir, hash } => {
            answer::<verb::DeclineWorkspaceTrust>(
                folder(&workdir).and_then(|f| trust::decline(&home, &f, &hash).map_err(wire)),
            )
        }
        ClientRequest::RevokeWorkspaceTrust { workdir } => answer::<verb::RevokeWorkspaceTrust>(
            folder(&workdir).and_then(|f| trust::revoke(&home, &f).map_err(wire)),
        ),
        _ => Err(WireError::new(ErrorCode::Internal, "not a trust verb")),
    })
    .await
    .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))?
}
