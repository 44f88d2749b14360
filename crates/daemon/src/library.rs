//! The session library's verbs, and its start beside the store. Every call may read
//! files or wait on SQLite, so it runs on a blocking thread, never on the runtime's.

use std::sync::Arc;

use weft_kernel::{IndexError, SessionIndex};
use weft_library::{Agent, Library, LibraryError};
use weft_protocol::{
    verb, ClientRequest, ErrorCode, SearchHit, SessionAction, SessionInfo, WireError,
};
use weft_store::SqliteStore;

use crate::reply::{answer, Reply};
use crate::service::Service;

fn wire(e: LibraryError) -> WireError {
    let code = match e {
        LibraryError::Unknown(_) => ErrorCode::UnknownSession,
        LibraryError::Invalid(_) => ErrorCode::BadRequest,
        _ => ErrorCode::Storage,
    };
    WireError::new(code, e.to_string())
}

async fn blocking<T: Send + 'static>(
    library: &Arc<Library>,
    f: impl FnOnce(&Library) -> Result<T, LibraryError> + Send + 'static,
) -> Result<T, WireError> {
    let library = library.clone();
    tokio::task::spawn_blocking(move || f(&library))
        .await
        .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))?
        .map_err(wire)
}

/// Opens the library over the store's database, the daemon's own agent homes and the
/// accounts' homes (`home`'s `homes/`), unless `WEFT_LIBRARY=off`. A failure is logged:
/// Weft runs without a library (its lists then read the store as it is) rather than
/// not at all.
pub(crate) fn open(home: &std::path::Path, store: &Arc<SqliteStore>) -> Option<Arc<Library>> {
    if std::env::var("WEFT_LIBRARY").is_ok_and(|v| v == "off") {
        return None;
    }
    // Each agent's reader of its own session files, from its driver.
    let agents: Vec<Agent> = weft_drivers::native_sessions()
        .into_iter()
        .map(Agent::from)
        .collect();
    let homes = weft_library::ambient_homes(&agents, &|n| std::env::var(n).ok());
    let library = match Library::open(store.path(), agents, homes, Some(store.clone())) {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!("session library unavailable: {e}");
            return None;
        }
    };
    library.index_accounts(&home.join("homes"));
    Some(library)
}

/// Starts indexing and the sweep of what archived sessions left.
pub(crate) fn start(service: &Arc<Service>, library: Arc<Library>) {
    if let Err(e) = library.start() {
        tracing::warn!("session library: the indexer did not start: {e}");
    }
    let _ = service.library.set(library);
    tokio::spawn(crate::cleanup::sweep_archived(service.clone()));
}

/// The library as the kernel's session index: lists and searches show the user's marks,
/// and adoption and marks are written through the kernel's verbs.
pub(crate) struct LibraryIndex(pub(crate) Arc<Library>);

fn index_error(e: LibraryError) -> IndexError {
    match e {
        LibraryError::Unknown(key) => IndexError::Unknown(key),
        LibraryError::Invalid(why) => IndexError::Invalid(why),
        e => IndexError::Storage(e.to_string()),
    }
}

impl SessionIndex for LibraryIndex {
    fn list_sessions(
        &self,
        workdir: Option<&str>,
        archived: bool,
    ) -> Result<Vec<SessionInfo>, IndexError> {
        self.0
            .managed_sessions(workdir, archived)
            .map_err(index_error)
    }

    fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, IndexError> {
        self.0.search_turns(query, limit).map_err(index_error)
    }

    fn adopt(&self, session_key: &str) -> Result<bool, IndexError> {
        self.0.adopt(session_key).map_err(index_error)
    }

    fn manage(&self, session_key: &str, action: &SessionAction) -> Result<(), IndexError> {
        self.0.manage(session_key, action).map_err(index_error)
    }
}

fn library(service: &Service) -> Result<&Arc<Library>, WireError> {
    service.library.get().ok_or_else(|| {
        WireError::new(
            ErrorCode::Storage,
            "the session library is not available (see the daemon's log)",
        )
    })
}

/// One library verb.
pub(crate) async fn handle(service: &Service, request: ClientRequest) -> Result<Reply, WireError> {
    let lib = library(service)?;
    match request {
        ClientRequest::ListLibrary(q) => {
            let mut list = blocking(lib, move |l| l.list(&q)).await?;
            crate::worktrees::decorate_library(service.home.dir(), &mut list);
            answer::<weft_protocol::LibraryQuery>(Ok(list))
        }
        ClientRequest::SearchLibrary(s) => {
            answer::<weft_protocol::LibrarySearch>(blocking(lib, move |l| l.search(&s)).await)
        }
        ClientRequest::OpenTranscript {
            session_key,
            start,
            limit,
        } => answer::<verb::OpenTranscript>(
            blocking(lib, move |l| l.open_transcript(&session_key, start, limit)).await,
        ),
        ClientRequest::EarlierTurns {
            session_key,
            start,
            limit,
        } => answer::<verb::EarlierTurns>(
            blocking(lib, move |l| l.earlier_turns(&session_key, start, limit)).await,
        ),
        ClientRequest::LibraryProgress {} => answer::<verb::LibraryProgress>(Ok(lib.progress())),
        ClientRequest::Usage { by, since } => {
            answer::<verb::Usage>(blocking(lib, move |l| l.usage(by, since)).await)
        }
        ClientRequest::ManageSession {
            session_key,
            action,
        } => {
            let deleted = matches!(action, SessionAction::Delete { .. });
            if matches!(action, SessionAction::Archive) {
                // Its worktree goes with it (the branch stays), or the archive is refused.
                crate::worktrees::before_archive(service, &session_key).await?;
            }
            service
                .loom
                .manage_session(&session_key, action)
                .await
                .map_err(WireError::from)?;
            let key = session_key;
            if let (true, Some(store)) = (deleted, service.store.get().cloned()) {
                // What the session left beside its record goes with it.
                let home = service.home.dir().to_path_buf();
                let _ = tokio::task::spawn_blocking(move || {
                    crate::cleanup::forget(&home, &store, &key);
                })
                .await;
            }
            answer::<verb::ManageSession>(Ok(()))
        }
        ClientRequest::ExportSession {
            session_key,
            format,
        } => answer::<verb::ExportSession>(
            blocking(lib, move |l| l.export(&session_key, format)).await,
        ),
        ClientRequest::ExportSessionToFile {
            session_key,
            format,
            path,
        } => {
            let written = path.clone();
            let bytes = blocking(lib, move |l| {
                l.export_file(&session_key, format, std::path::Path::new(&path))
            })
            .await?;
            answer::<verb::ExportSessionToFile>(Ok(weft_protocol::ExportWritten {
                path: written,
                bytes,
            }))
        }
        ClientRequest::ForkSession { session_key, at } => {
            answer::<verb::ForkSession>(blocking(lib, move |l| l.fork(&session_key, at)).await)
        }
        _ => Err(WireError::new(ErrorCode::BadRequest, "not a library verb")),
    }
}
