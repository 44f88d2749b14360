//! The SQLite store as the kernel's SessionStore port.

use weft_protocol::{DriverEvent, SearchHit, SessionInfo, UniversalSnapshot};
use weft_store::SqliteStore;

use crate::ports::{SessionRecord, SessionStore, StoreError};

impl SessionStore for SqliteStore {
    fn upsert_session(&self, record: &SessionRecord) -> Result<(), StoreError> {
        SqliteStore::upsert_session(self, record)
    }

    fn get_session(&self, session_key: &str) -> Result<Option<SessionRecord>, StoreError> {
        SqliteStore::get_session(self, session_key)
    }

    fn list_sessions(&self, workdir: Option<&str>) -> Result<Vec<SessionInfo>, StoreError> {
        SqliteStore::list_sessions(self, workdir)
    }

    fn begin_turn(
        &self,
        session_key: &str,
        task_id: &str,
        snapshot: &UniversalSnapshot,
    ) -> Result<(), StoreError> {
        SqliteStore::begin_turn(self, session_key, task_id, snapshot)
    }

    fn append_event(&self, task_id: &str, event: &DriverEvent) -> Result<(), StoreError> {
        SqliteStore::append_event(self, task_id, event)
    }

    fn finish_turn(&self, task_id: &str, snapshot: &UniversalSnapshot) -> Result<(), StoreError> {
        SqliteStore::finish_turn(self, task_id, snapshot)
    }

    fn history(&self, session_key: &str) -> Result<Vec<UniversalSnapshot>, StoreError> {
        SqliteStore::history(self, session_key)
    }

    fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, StoreError> {
        SqliteStore::search(self, query, limit)
    }
}
