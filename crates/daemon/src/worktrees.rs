//! Sessions in git worktrees: the daemon's side of `weft-worktree`.
//!
//! - A prompt with `worktree` (a new session only) makes the worktree first, runs the
//!   repository's `setup` there (its output in a log file, named by `listWorktrees`),
//!   and starts the session with the worktree as its folder.
//! - [`WorktreePorts`], a kernel plugin, puts the worktree's `WEFT_PORT` and
//!   `WEFT_PORT_RANGE` into every spawn whose folder is in a recorded worktree (both
//!   rails: the structured one and the agent's own terminal).
//! - Session lists carry each session's worktree; `listWorktrees` lists them with their
//!   git state; archiving a session removes its worktree (refused while it has changes
//!   or another live session); `mergeSession` lands its branch.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use weft_kernel::{Plugin, SpawnContribution, SpawnCx};
use weft_protocol::{
    ErrorCode, MergeConflict, MergeMode, MergeOutcome, Phase, PromptRequest, SessionInfo,
    SessionWorktree, WireError, WorktreeInfo,
};
use weft_worktree::merge::{Mode, Plan};
use weft_worktree::{Entry, Error, Worktrees};

use crate::service::Service;

fn wire(e: Error) -> WireError {
    let code = match &e {
        Error::Dirty { .. } | Error::Live { .. } => ErrorCode::Busy,
        Error::Git { .. } | Error::Io { .. } | Error::Spawn { .. } => ErrorCode::Internal,
        _ => ErrorCode::BadRequest,
    };
    WireError::new(code, e.to_string())
}

fn joined(e: tokio::task::JoinError) -> WireError {
    WireError::new(ErrorCode::Internal, e.to_string())
}

fn worktrees(home: &Path) -> Worktrees {
    Worktrees::from_env(home)
}

/// Sets each spawn's ports when its folder is in a worktree Weft made.
pub(crate) struct WorktreePorts(pub PathBuf);

impl Plugin for WorktreePorts {
    fn id(&self) -> &str {
        "worktree-ports"
    }

    fn contribute_spawn(
        &self,
        cx: &SpawnCx,
        _tools: &[weft_kernel::mcp::McpServer],
    ) -> Result<SpawnContribution, String> {
        let found = worktrees(&self.0)
            .find(&cx.input.workdir)
            .map_err(|e| e.to_string())?;
        let env = found
            .map(|entry| {
                vec![
                    ("WEFT_PORT".to_string(), entry.port.to_string()),
                    ("WEFT_PORT_RANGE".to_string(), entry.port_range()),
                ]
            })
            .unwrap_or_default();
        Ok(SpawnContribution {
            env,
            ..SpawnContribution::default()
        })
    }
}

/// Makes the worktree a new session asked for, runs its setup, and points the request
/// at it. Returns the worktree's record (to add the session to once it has a key).
///
/// While the setup runs (an install can take minutes), the session's agent starts
/// ahead in the new worktree through the warm pool, so the prompt that waits for the
/// setup then goes to a process that is ready. The pool refuses as it always does (an
/// untrusted folder, a full budget); that never fails the prompt.
pub(crate) async fn prepare(
    service: &Arc<Service>,
    caller: &weft_kernel::Caller,
    r: &mut PromptRequest,
) -> Result<Option<Entry>, WireError> {
    let Some(asked) = r.worktree.take() else {
        return Ok(None);
    };
    if r.session_key.is_some() {
        return Err(WireError::new(
            ErrorCode::BadRequest,
            "a worktree is made for a new session; this one already has its folder",
        ));
    }
    let Some(workdir) = r.workdir.clone() else {
        return Err(WireError::new(
            ErrorCode::BadRequest,
            "a worktree needs the workspace folder (workdir) whose repository it comes from",
        ));
    };
    let home = service.home.dir().to_path_buf();
    let made = {
        let home = home.clone();
        tokio::task::spawn_blocking(move || -> Result<_, Error> {
            let dir = PathBuf::from(&workdir);
            let trusted = weft_workspace::trust::is_trusted(&home, &dir);
            let name = if asked.name.trim().is_empty() {
                "auto"
            } else {
                asked.name.trim()
            };
            worktrees(&home).create(&dir, name, asked.from.as_deref(), trusted)
        })
        .await
        .map_err(joined)?
        .map_err(wire)?
    };
    let entry = made.entry;
    r.workdir = Some(entry.path.display().to_string());
    let Some(line) = made.config.setup.filter(|l| !l.trim().is_empty()) else {
        return Ok(Some(entry));
    };
    let ahead = weft_protocol::PrewarmRequest {
        session_key: None,
        agent: r.agent.clone(),
        workdir: r.workdir.clone(),
        model: r.model.clone(),
        effort: r.effort.clone(),
        account: r.account.clone(),
    };
    let warm = async {
        match service.loom.prewarm(caller, ahead).await {
            Ok(w) if w.pid.is_some() => tracing::info!(
                "an agent started ahead in worktree {} while its setup runs",
                entry.name
            ),
            Ok(w) => tracing::debug!(
                "no agent started ahead in worktree {}: {}",
                entry.name,
                w.reason.unwrap_or_default()
            ),
            Err(e) => tracing::debug!("no agent started ahead in worktree {}: {e}", entry.name),
        }
    };
    let sandbox = made.config.sandbox;
    let setup = {
        let entry = entry.clone();
        tokio::task::spawn_blocking(move || -> Result<Entry, Error> {
            let run = weft_worktree::hook::run(&home, &entry, "setup", &line, sandbox)?;
            if !run.ok() {
                tracing::warn!(
                    "the setup of worktree {} ended with {:?}; its output: {}",
                    entry.name,
                    run.code,
                    run.log.display()
                );
            }
            let log = run.log.clone();
            worktrees(&home).registry.update(|all| {
                let e = all
                    .iter_mut()
                    .find(|e| e.path == entry.path)
                    .ok_or_else(|| Error::NotOurs(entry.path.clone()))?;
                e.setup_log = Some(log);
                Ok(e.clone())
            })
        })
    };
    let ((), set_up) = tokio::join!(warm, setup);
    Ok(Some(set_up.map_err(joined)?.map_err(wire)?))
}

/// Opens (or finds) the terminal running the worktree `name`'s `run` command. It runs
/// bare, not in the sandbox: a dev server binds its ports on the host.
pub(crate) fn run_terminal(
    service: &Arc<Service>,
    caller: &weft_kernel::Caller,
    name: &str,
    repo: Option<String>,
    (cols, rows): (Option<u16>, Option<u16>),
) -> Result<(String, Arc<weft_kernel::pty::PtyBridge>), WireError> {
    let home = service.home.dir();
    let repo = repo.map(|r| std::fs::canonicalize(&r).unwrap_or_else(|_| PathBuf::from(r)));
    let found: Vec<Entry> = worktrees(home)
        .registry
        .list()
        .map_err(wire)?
        .into_iter()
        .filter(|e| e.name == name)
        .filter(|e| {
            repo.as_ref()
                .is_none_or(|r| r.starts_with(&e.repo) || r.starts_with(&e.path))
        })
        .collect();
    let entry = match found.as_slice() {
        [one] => one.clone(),
        [] => {
            return Err(WireError::new(
                ErrorCode::BadRequest,
                format!("no worktree named {name} (`weft worktrees` lists them)"),
            ))
        }
        _ => {
            return Err(WireError::new(
                ErrorCode::BadRequest,
                format!("several repositories have a worktree named {name}; name the repository"),
            ))
        }
    };
    if !weft_workspace::trust::is_trusted(home, &entry.repo) {
        return Err(WireError::new(
            ErrorCode::Forbidden,
            format!(
                "{} is not trusted, so its .weft/worktree.toml runs nothing; `weft trust` it first",
                entry.repo.display()
            ),
        ));
    }
    let config = weft_worktree::WorktreeConfig::load(&entry.repo, true).map_err(wire)?;
    let Some(line) = config.run.filter(|l| !l.trim().is_empty()) else {
        return Err(WireError::new(
            ErrorCode::BadRequest,
            format!(
                "{} has no `run` command in {}",
                entry.repo.display(),
                weft_worktree::config::FILE
            ),
        ));
    };
    let repo_name = entry
        .repo
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let key = format!("run:{repo_name}/{}", entry.name);
    let spec = weft_kernel::pty::PtySpec {
        program: PathBuf::from("sh"),
        args: vec!["-c".into(), line.clone()],
        base_env: Some(
            crate::agents::caller_env(service, caller)
                .into_iter()
                .collect(),
        ),
        env: weft_worktree::hook::env(&entry),
        cwd: entry.path.clone(),
        banner: Some(format!(
            "weft: running `{line}` in {} (ports {})",
            entry.path.display(),
            entry.port_range()
        )),
        after: None,
    };
    let bridge = service
        .loom
        .side_terminal_open(&key, &spec, cols, rows, || {})
        .map_err(WireError::from)?;
    Ok((key, bridge))
}

/// Records the new session as one of the worktree's.
pub(crate) async fn started(service: &Arc<Service>, entry: Entry, key: String) {
    let home = service.home.dir().to_path_buf();
    let _ = tokio::task::spawn_blocking(move || {
        if let Err(e) = worktrees(&home).registry.add_session(&entry.path, &key) {
            tracing::warn!("recording session {key} in worktree {}: {e}", entry.name);
        }
    })
    .await;
}

/// Fills each listed session's worktree.
pub(crate) fn decorate(home: &Path, sessions: &mut [SessionInfo]) {
    let Ok(all) = worktrees(home).registry.list() else {
        return;
    };
    for s in sessions.iter_mut() {
        s.worktree = worktree_of(&all, &s.workdir);
    }
}

/// Fills the worktree of each library session that runs in one (the sidebar's list).
pub(crate) fn decorate_library(home: &Path, sessions: &mut [weft_protocol::LibrarySession]) {
    let Ok(all) = worktrees(home).registry.list() else {
        return;
    };
    if all.is_empty() {
        return;
    }
    for s in sessions.iter_mut() {
        if let Some(dir) = &s.workdir {
            s.worktree = worktree_of(&all, dir);
        }
    }
}

fn worktree_of(all: &[Entry], workdir: &str) -> Option<SessionWorktree> {
    let e = all
        .iter()
        .find(|e| Path::new(workdir).starts_with(&e.path))?;
    Some(SessionWorktree {
        name: e.name.clone(),
        path: e.path.display().to_string(),
        branch: e.branch.clone(),
        base: e.base.clone(),
    })
}

/// The sessions (all of them, archived too) whose folder is in `entry`.
fn sessions_in<'a>(all: &'a [SessionInfo], entry: &Entry) -> Vec<&'a SessionInfo> {
    all.iter()
        .filter(|s| Path::new(&s.workdir).starts_with(&entry.path))
        .collect()
}

async fn all_sessions(service: &Service) -> Result<Vec<SessionInfo>, WireError> {
    service
        .loom
        .list_sessions_with(None, true)
        .await
        .map_err(WireError::from)
}

/// `listWorktrees`.
pub(crate) async fn list(
    service: &Arc<Service>,
    repo: Option<String>,
) -> Result<Vec<WorktreeInfo>, WireError> {
    let sessions = all_sessions(service).await?;
    let home = service.home.dir().to_path_buf();
    tokio::task::spawn_blocking(move || -> Result<Vec<WorktreeInfo>, Error> {
        let wts = worktrees(&home);
        let repo = repo.map(|r| std::fs::canonicalize(&r).unwrap_or_else(|_| PathBuf::from(r)));
        let mut out = Vec::new();
        for e in wts.registry.list()? {
            if repo
                .as_ref()
                .is_some_and(|r| !r.starts_with(&e.repo) && !r.starts_with(&e.path))
            {
                continue;
            }
            let status = wts.status(&e).ok();
            let mut keys: Vec<String> = e.sessions.clone();
            for s in sessions_in(&sessions, &e) {
                if !keys.contains(&s.session_key) {
                    keys.push(s.session_key.clone());
                }
            }
            out.push(WorktreeInfo {
                name: e.name.clone(),
                repo: e.repo.display().to_string(),
                path: e.path.display().to_string(),
                branch: status.as_ref().and_then(|s| s.branch.clone()),
                base: e.base.clone(),
                ahead: status.as_ref().map_or(0, |s| s.ahead),
                behind: status.as_ref().map_or(0, |s| s.behind),
                dirty: status.as_ref().is_some_and(|s| !s.dirty.is_empty()),
                ports: e.port_range(),
                sessions: keys,
                setup_log: e.setup_log.as_ref().map(|p| p.display().to_string()),
            });
        }
        Ok(out)
    })
    .await
    .map_err(joined)?
    .map_err(wire)
}

/// Before a session is archived: when it is the last session working in its worktree,
/// removes the worktree (teardown first; the branch stays), or refuses the archive
/// saying why. While another session works there the worktree stays for it and the
/// archive goes ahead; while a turn runs there the archive is refused (removing a
/// folder under a running agent is how peers lost users' work). A session outside any
/// worktree Weft made is not touched.
pub(crate) async fn before_archive(service: &Service, key: &str) -> Result<(), WireError> {
    let sessions = all_sessions(service).await?;
    let Some(me) = sessions.iter().find(|s| s.session_key == key).cloned() else {
        return Ok(());
    };
    let home = service.home.dir().to_path_buf();
    let key = key.to_string();
    tokio::task::spawn_blocking(move || -> Result<(), Error> {
        let wts = worktrees(&home);
        let Some(entry) = wts.find(Path::new(&me.workdir))? else {
            return Ok(());
        };
        let running = |s: &SessionInfo| matches!(s.phase, Phase::Queued | Phase::Streaming);
        let here = sessions_in(&sessions, &entry);
        let live: Vec<String> = here
            .iter()
            .filter(|s| running(s))
            .map(|s| format!("{} (a turn is running)", s.session_key))
            .collect();
        if !live.is_empty() {
            return Err(Error::Live {
                path: entry.path,
                sessions: live,
            });
        }
        if here.iter().any(|s| s.session_key != key && !s.archived) {
            return Ok(());
        }
        let dirty = wts.status(&entry)?.dirty;
        if !dirty.is_empty() {
            return Err(Error::Dirty {
                path: entry.path,
                files: dirty,
            });
        }
        let config = weft_worktree::WorktreeConfig::load(
            &entry.repo,
            weft_workspace::trust::is_trusted(&home, &entry.repo),
        )?;
        if let Some(line) = config.teardown.as_deref().filter(|l| !l.trim().is_empty()) {
            let run = weft_worktree::hook::run(&home, &entry, "teardown", line, config.sandbox)?;
            if !run.ok() {
                tracing::warn!("the teardown of {} ended with {:?}", entry.name, run.code);
            }
        }
        wts.remove(&entry.path, &[])?;
        Ok(())
    })
    .await
    .map_err(joined)?
    .map_err(wire)
}

/// `mergeSession`.
pub(crate) async fn merge(
    service: &Arc<Service>,
    key: String,
    mode: MergeMode,
    message: Option<String>,
    push: bool,
    pr: bool,
) -> Result<MergeOutcome, WireError> {
    let sessions = all_sessions(service).await?;
    let Some(me) = sessions.iter().find(|s| s.session_key == key).cloned() else {
        return Err(WireError::new(
            ErrorCode::UnknownSession,
            format!("no session {key}"),
        ));
    };
    if matches!(me.phase, Phase::Queued | Phase::Streaming) {
        return Err(WireError::new(
            ErrorCode::Busy,
            format!("{key} has a turn running; merge once it ended (or stop it)"),
        ));
    }
    let message = match message.filter(|m| !m.trim().is_empty()) {
        Some(m) => m,
        None => proposed_message(service, &key).await,
    };
    let home = service.home.dir().to_path_buf();
    let outcome = tokio::task::spawn_blocking(move || {
        let wts = worktrees(&home);
        let entry = wts.find(Path::new(&me.workdir))?.ok_or_else(|| {
            Error::Refused(format!(
                "{key} does not run in a worktree Weft made (`weft run --worktree NAME` starts one that does)"
            ))
        })?;
        let mode = match mode {
            MergeMode::Merge => Mode::Merge,
            MergeMode::Squash => Mode::Squash,
            MergeMode::Rebase => Mode::Rebase,
        };
        weft_worktree::merge::land(
            &entry,
            &Plan {
                mode,
                message,
                push,
                pr,
            },
        )
    })
    .await
    .map_err(joined)?
    .map_err(wire)?;
    Ok(MergeOutcome {
        base: outcome.base,
        branch: outcome.branch,
        commit: outcome.commit,
        conflicts: outcome
            .conflicts
            .into_iter()
            .map(|c| MergeConflict {
                path: c.path,
                hunks: c.hunks,
            })
            .collect(),
        pr: outcome.pr,
        checks: outcome
            .checks
            .into_iter()
            .map(|c| weft_protocol::PrCheck {
                name: c.name,
                state: c.state,
                bucket: c.bucket,
                link: c.link,
            })
            .collect(),
        checks_note: outcome.checks_note,
    })
}

/// A commit message from the session's prompts: the first one's first line as the
/// subject, every prompt as a line of the body.
async fn proposed_message(service: &Arc<Service>, key: &str) -> String {
    let prompts: Vec<String> = service
        .loom
        .get_history(key)
        .await
        .map(|turns| turns.into_iter().map(|t| t.prompt).collect())
        .unwrap_or_default();
    compose_message(key, &prompts)
}

fn compose_message(key: &str, prompts: &[String]) -> String {
    let firsts: Vec<&str> = prompts
        .iter()
        .filter_map(|p| p.lines().map(str::trim).find(|l| !l.is_empty()))
        .collect();
    let Some(subject) = firsts.first() else {
        return format!("Changes of session {key}");
    };
    let mut subject: String = subject.chars().take(72).collect();
    if subject.len() < firsts[0].len() {
        subject.push('…');
    }
    if firsts.len() == 1 {
        return subject;
    }
    let body: Vec<String> = firsts.iter().map(|p| format!("- {p}")).collect();
    format!(
        "{subject}\n\nPrompts of session {key}:\n{}",
        body.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::compose_message;

    #[test]
    fn a_message_is_the_first_prompt_with_every_prompt_below() {
        assert_eq!(compose_message("echo:1", &[]), "Changes of session echo:1");
        assert_eq!(
            compose_message("k", &["fix the bug\nmore".into()]),
            "fix the bug"
        );
        let m = compose_message("k", &["one".into(), "two".into()]);
        assert_eq!(m, "one\n\nPrompts of session k:\n- one\n- two");
    }
}
