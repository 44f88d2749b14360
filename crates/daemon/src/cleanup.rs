//! What a session leaves under `WEFT_HOME` beside its record goes when the session is
//! deleted, or [`ARCHIVED_FOR`] after it was archived: the captured stderr of its MCP
//! servers (`run/mcp/stderr/<session>/`), its skills folder (`run/skills/<session>/`),
//! the native agent's sandbox scratch folder (`sandbox-tmp/<agent session>/`), the
//! image copies fitted for its turns (`run/attachments/<task>/`), the files pasted into
//! its prompts (`attachments/<id>/`). Its transcript and its record stay: those are
//! what deleting and archiving decide on.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use weft_protocol::{SessionRecord, UniversalSnapshot};

use crate::service::Service;

/// How long an archived session keeps what it left.
pub const ARCHIVED_FOR: Duration = Duration::from_secs(30 * 24 * 3600);

/// How often archived sessions are looked at.
const SWEEP_EVERY: Duration = Duration::from_secs(6 * 3600);

/// A session key as a folder name, as the MCP and skills plugins make it.
fn folder_name(session_key: &str) -> String {
    session_key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The folders session `record` with turns `turns` left under `home`.
pub fn leftovers(home: &Path, record: &SessionRecord, turns: &[UniversalSnapshot]) -> Vec<PathBuf> {
    let run = home.join("run");
    let mut out = vec![
        run.join("mcp")
            .join("stderr")
            .join(folder_name(&record.session_key)),
        run.join("skills").join(folder_name(&record.session_key)),
    ];
    if record.agent == "native" {
        if let Some(id) = record.session_id.as_deref().filter(|id| safe_name(id)) {
            out.push(home.join("sandbox-tmp").join(id));
        }
    }
    let pasted = home.join("attachments");
    for turn in turns {
        if let Some(task) = &turn.task_id {
            out.push(weft_attachments::turn_dir(home, task));
        }
        // Only a folder `saveAttachment` made: `attachments/<id>/<name>`.
        for path in turn.attachments.iter().map(Path::new) {
            if let Some(dir) = path
                .parent()
                .filter(|d| d.parent() == Some(pasted.as_path()))
            {
                out.push(dir.to_path_buf());
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// A single plain path component.
fn safe_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains('/')
}

/// Removes what session `session_key` left under `home` (see the module's doc); a part
/// that cannot be removed is logged and the rest still goes.
pub fn forget(home: &Path, store: &weft_store::SqliteStore, session_key: &str) {
    let record = match store.get_session(session_key) {
        Ok(Some(r)) => r,
        Ok(None) => SessionRecord {
            session_key: session_key.to_string(),
            ..Default::default()
        },
        Err(e) => {
            tracing::warn!(session = %session_key, "cleaning up: reading the session: {e}");
            return;
        }
    };
    let turns = store.history(session_key).unwrap_or_default();
    for dir in leftovers(home, &record, &turns) {
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => tracing::debug!(path = %dir.display(), "removed a session's leftover"),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!(path = %dir.display(), "cleaning up a session: {e}"),
        }
    }
    if let Err(e) = weft_kernel::mcp::forget_session(home, session_key) {
        tracing::warn!(session = %session_key, "cleaning up its MCP choices: {e}");
    }
}

/// Removes, now and then every [`SWEEP_EVERY`], what sessions archived more than
/// [`ARCHIVED_FOR`] ago left; ends with the service.
pub async fn sweep_archived(service: Arc<Service>) {
    loop {
        let cutoff =
            weft_kernel::now_ms() - i64::try_from(ARCHIVED_FOR.as_millis()).unwrap_or(i64::MAX);
        let library = service.library.get().cloned();
        if let (Some(library), Some(store)) = (library, service.store.get().cloned()) {
            let home = service.home.dir().to_path_buf();
            let swept = tokio::task::spawn_blocking(move || {
                let keys = library.archived_before(cutoff)?;
                for key in &keys {
                    forget(&home, &store, key);
                }
                Ok::<usize, weft_library::LibraryError>(keys.len())
            })
            .await;
            match swept {
                Ok(Ok(n)) if n > 0 => {
                    tracing::info!(sessions = n, "removed what archived sessions left")
                }
                Ok(Err(e)) => tracing::warn!("cleaning up archived sessions: {e}"),
                _ => {}
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(SWEEP_EVERY) => {}
            _ = service.stopped() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(key: &str, agent: &str, id: Option<&str>) -> SessionRecord {
        SessionRecord {
            session_key: key.into(),
            agent: agent.into(),
            session_id: id.map(str::to_string),
            ..Default::default()
        }
    }

    #[test]
    fn a_sessions_leftovers_are_its_own_folders_only() {
        let home = Path::new("/h");
        let turn = UniversalSnapshot {
            task_id: Some("t1".into()),
            attachments: vec![
                "/h/attachments/u1/shot.png".into(),
                // Not one saveAttachment made: the user's own file stays.
                "/home/me/pics/cat.png".into(),
                "/h/attachments/shot.png".into(),
            ],
            ..Default::default()
        };
        let found = leftovers(home, &record("native:s1", "native", Some("s1")), &[turn]);
        let expect: Vec<PathBuf> = [
            "/h/attachments/u1",
            "/h/run/attachments/t1",
            "/h/run/mcp/stderr/native_s1",
            "/h/run/skills/native_s1",
            "/h/sandbox-tmp/s1",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(found, expect);
        // Another agent's session has no sandbox folder of the native agent's; a
        // session id that is not a plain name names none.
        let other = leftovers(home, &record("claude:s1", "claude", Some("s1")), &[]);
        assert!(!other.iter().any(|p| p.starts_with("/h/sandbox-tmp")));
        let odd = leftovers(home, &record("native:x", "native", Some("..")), &[]);
        assert!(!odd.iter().any(|p| p.starts_with("/h/sandbox-tmp")));
    }

    #[test]
    fn forgetting_a_session_removes_its_leftovers_and_no_one_elses() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = dir.path();
        let store =
            weft_store::SqliteStore::open(&home.join("weft.db")).unwrap_or_else(|e| panic!("{e}"));
        let pasted = home.join("attachments/u1/shot.png");
        for (key, id, task) in [("native:s1", "s1", "t1"), ("native:s2", "s2", "t2")] {
            store
                .upsert_session(&record(key, "native", Some(id)))
                .unwrap_or_else(|e| panic!("{e}"));
            let snap = UniversalSnapshot {
                task_id: Some(task.into()),
                attachments: if id == "s1" {
                    vec![pasted.display().to_string()]
                } else {
                    Vec::new()
                },
                ..Default::default()
            };
            store
                .begin_turn(key, task, &snap)
                .unwrap_or_else(|e| panic!("{e}"));
            store
                .finish_turn(task, &snap)
                .unwrap_or_else(|e| panic!("{e}"));
        }
        store.flush().unwrap_or_else(|e| panic!("{e}"));
        let mine = [
            pasted.clone(),
            home.join("run/attachments/t1/fitted.png"),
            home.join("run/mcp/stderr/native_s1/server.log"),
            home.join("run/skills/native_s1/SKILL.md"),
            home.join("sandbox-tmp/s1/scratch"),
        ];
        let theirs = [
            home.join("run/attachments/t2/fitted.png"),
            home.join("run/mcp/stderr/native_s2/server.log"),
            home.join("sandbox-tmp/s2/scratch"),
        ];
        for f in mine.iter().chain(&theirs) {
            std::fs::create_dir_all(f.parent().unwrap_or(home)).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(f, "x").unwrap_or_else(|e| panic!("{e}"));
        }
        for key in ["native:s1", "native:s2"] {
            let on = [("srv".to_string(), true)].into();
            weft_kernel::mcp::set_session_overrides(home, key, &on)
                .unwrap_or_else(|e| panic!("{e}"));
        }
        forget(home, &store, "native:s1");
        assert!(weft_kernel::mcp::session_overrides(home, "native:s1").is_empty());
        assert_eq!(
            weft_kernel::mcp::session_overrides(home, "native:s2").len(),
            1
        );
        for f in &mine {
            assert!(!f.exists(), "{} is left", f.display());
            assert!(
                !f.parent().is_some_and(Path::exists),
                "{} is left",
                f.display()
            );
        }
        for f in &theirs {
            assert!(f.exists(), "{} was removed", f.display());
        }
    }
}
