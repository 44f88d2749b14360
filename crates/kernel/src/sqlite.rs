//! The SQLite store as the kernel's SessionStore port.

use weft_protocol::{DriverEvent, SearchHit, SessionInfo, UniversalSnapshot};
use weft_store::SqliteStore;

use crate::ports::{AskedInteraction, SessionRecord, SessionStore, StoreError};

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

    fn history_page(
        &self,
        session_key: &str,
        limit: Option<u32>,
        before: Option<&str>,
    ) -> Result<Vec<UniversalSnapshot>, StoreError> {
        SqliteStore::history_page(self, session_key, limit, before)
    }

    fn ask_interaction(&self, asked: &AskedInteraction) -> Result<(), StoreError> {
        SqliteStore::ask_interaction(self, asked)
    }

    fn resolve_interaction(
        &self,
        prompt_id: &str,
        outcome: &str,
        detail: Option<&str>,
        by: Option<&str>,
    ) -> Result<(), StoreError> {
        SqliteStore::resolve_interaction(self, prompt_id, outcome, detail, by)
    }
}
