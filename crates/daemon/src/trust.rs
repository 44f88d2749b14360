//! The workspace trust verbs: what a folder grants, and the user's decision on it
//! (kept by `weft_workspace::trust` in `$WEFT_HOME/trust.json`). Every one reads the
//! folder's files, so each runs off the async workers.

use std::path::{Path, PathBuf};

use weft_protocol::{ClientRequest, ErrorCode, WireError};
use weft_workspace::trust::{self, TrustError};

use crate::reply::Reply;

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
    let answer = tokio::task::spawn_blocking(move || match request {
        ClientRequest::GetWorkspaceTrust { workdir } => {
            Ok(trust::status(&home, &folder(&workdir)?))
        }
        ClientRequest::TrustWorkspace { workdir, hash } => {
            trust::trust(&home, &folder(&workdir)?, &hash).map_err(wire)
        }
        ClientRequest::DeclineWorkspaceTrust { workdir, hash } => {
            trust::decline(&home, &folder(&workdir)?, &hash).map_err(wire)
        }
        ClientRequest::RevokeWorkspaceTrust { workdir } => {
            trust::revoke(&home, &folder(&workdir)?).map_err(wire)
        }
        _ => Err(WireError::new(ErrorCode::Internal, "not a trust verb")),
    })
    .await
    .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))??;
    serde_json::to_value(answer)
        .map(Reply::Value)
        .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))
}
