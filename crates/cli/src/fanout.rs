//! `weft run --fanout AGENT[:MODEL][@ACCOUNT],… PROMPT`: one prompt to several agents,
//! models or accounts at once, each in a worktree of its own made from the same commit,
//! then a side-by-side summary (what each replied, what each changed) to keep one with
//! `weft merge` and archive the others.

use std::process::ExitCode;

use serde_json::json;
use weft_protocol::{
    verb, InteractRequest, Phase, PromptRequest, UniversalSnapshot, WorktreeRequest,
};

use crate::client;
use crate::follow::Lost;
use crate::list::print_json;

/// One of the fan-out's runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    pub agent: String,
    pub model: Option<String>,
    pub account: Option<String>,
}

/// `AGENT[:MODEL][@ACCOUNT],…`.
pub(crate) fn parse_targets(list: &str) -> Result<Vec<Target>, String> {
    let targets: Vec<Target> = list
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| {
            let (rest, account) = match t.split_once('@') {
                Some((r, a)) => (r, Some(a.to_string())),
                None => (t, None),
            };
            let (agent, model) = match rest.split_once(':') {
                Some((a, m)) => (a, Some(m.to_string())),
                None => (rest, None),
            };
            if agent.is_empty() || model.as_deref() == Some("") || account.as_deref() == Some("") {
                return Err(format!(
                    "`{t}` is not AGENT[:MODEL][@ACCOUNT] (e.g. claude, codex:o4-mini, claude@work)"
                ));
            }
            Ok(Target {
                agent: agent.to_string(),
                model,
                account,
            })
        })
        .collect::<Result<_, _>>()?;
    if targets.len() < 2 {
        return Err("a fan-out needs two targets or more, separated by commas".into());
    }
    Ok(targets)
}

/// What the fan-out takes from `weft run`'s own arguments.
pub(crate) struct Fanout {
    pub targets: Vec<Target>,
    pub prompt: String,
    pub workdir: String,
    pub from: Option<String>,
    pub effort: Option<String>,
    pub attachments: Vec<String>,
    pub json: bool,
    pub detach: bool,
    /// Allow permissions (as `weft run --yes` does with no terminal); without it they
    /// wait for an answer in `weft inbox` and the app.
    pub yes: bool,
}

struct Started {
    target: Target,
    key: String,
    task_id: String,
    worktree: String,
}

pub(crate) async fn run(f: Fanout) -> ExitCode {
    let from = match &f.from {
        Some(r) => Some(r.clone()),
        None => head_commit(&f.workdir),
    };
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    // One group name for the worktrees: `fan-<id>-<n>-<agent>` sorts them together.
    let group = group_id();
    let mut started = Vec::new();
    for (i, target) in f.targets.iter().enumerate() {
        let name = format!("fan-{group}-{}-{}", i + 1, slug(&target.agent));
        let request = PromptRequest {
            prompt: f.prompt.clone(),
            agent: Some(target.agent.clone()),
            workdir: Some(f.workdir.clone()),
            model: target.model.clone(),
            effort: f.effort.clone(),
            attachments: f.attachments.clone(),
            account: target.account.clone(),
            worktree: Some(Box::new(WorktreeRequest {
                name: name.clone(),
                from: from.clone(),
            })),
            ..Default::default()
        };
        match daemon.send(request).await {
            Ok(a) => started.push(Started {
                target: target.clone(),
                key: a.session_key,
                task_id: a.task_id,
                worktree: name,
            }),
            Err(code) => {
                // The ones already started go on; say which, so none is lost track of.
                for s in &started {
                    eprintln!(
                        "weft: {} started as {} before this one failed",
                        label(&s.target),
                        s.key
                    );
                }
                return code;
            }
        }
    }
    if f.detach {
        let list: Vec<_> = started.iter().map(|s| entry(s, None)).collect();
        return print_json(&list);
    }
    eprintln!(
        "weft: {} runs started, each in its own worktree{}{}",
        started.len(),
        from.as_deref()
            .map(|c| format!(" from {}", &c[..c.len().min(10)]))
            .unwrap_or_default(),
        if f.yes {
            ""
        } else {
            "; questions and permissions wait in `weft inbox` and the app"
        }
    );
    // They run at once in the daemon; following them one after another loses nothing
    // (one that ended meanwhile is read from its history).
    let mut ends = Vec::new();
    for s in &started {
        ends.push(ended(&s.key, f.yes).await);
    }
    let mut ok = true;
    let mut out = Vec::new();
    for (s, end) in started.iter().zip(ends) {
        match end {
            Ok(snap) => {
                ok &= snap.error.is_none() && !snap.incomplete;
                out.push((s, Some(snap)));
            }
            Err(why) => {
                ok = false;
                eprintln!("weft: {}: {why}", s.key);
                out.push((s, None));
            }
        }
    }
    if f.json {
        let list: Vec<_> = out
            .iter()
            .map(|(s, snap)| entry(s, snap.as_ref()))
            .collect();
        let code = print_json(&list);
        return if ok { code } else { ExitCode::FAILURE };
    }
    for (s, snap) in &out {
        summary(s, snap.as_ref());
    }
    out!("keep one: `weft merge KEY` (or the app's Review); archive the others: `weft sessions archive KEY`");
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Six hex digits telling this fan-out's worktrees from another's (the clock and the
/// process id: two fan-outs in one nanosecond from one process do not happen).
fn group_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!(
        "{:06x}",
        (nanos ^ (u128::from(std::process::id()) << 24)) & 0xff_ffff
    )
}

fn label(t: &Target) -> String {
    let mut s = t.agent.clone();
    if let Some(m) = &t.model {
        s.push(':');
        s.push_str(m);
    }
    if let Some(a) = &t.account {
        s.push('@');
        s.push_str(a);
    }
    s
}

/// A worktree name's part for an agent id: letters, digits and dashes.
fn slug(agent: &str) -> String {
    agent
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// The folder's HEAD commit, so every worktree starts from the same one even if HEAD
/// moves while they are made; none when it is no repository (the daemon then says so)
/// or lives on another host.
fn head_commit(workdir: &str) -> Option<String> {
    if client::host().is_some() {
        return None;
    }
    let out = std::process::Command::new("git")
        .args(["-C", workdir, "rev-parse", "--verify", "-q", "HEAD"])
        .env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", "core.fsmonitor")
        .env("GIT_CONFIG_VALUE_0", "false")
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let sha = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !sha.is_empty()).then_some(sha)
}

/// Follows `key` until its turns are over; its last snapshot. Each question or
/// permission is said once; with `yes` a permission is answered as `weft run --yes`
/// answers it with no terminal.
async fn ended(key: &str, yes: bool) -> Result<UniversalSnapshot, String> {
    let mut said = std::collections::HashSet::new();
    let mut daemon = client::connect()
        .await
        .map_err(|_| "could not reach the daemon".to_string())?;
    let mut followed = daemon
        .follow(key)
        .await
        .map_err(|_| "could not follow the session".to_string())?;
    loop {
        let snap = &followed.snap;
        for i in &snap.interactions {
            if !said.insert(i.prompt_id.clone()) {
                continue;
            }
            if yes {
                let request = InteractRequest {
                    session_key: key.to_string(),
                    prompt_id: i.prompt_id.clone(),
                    response: crate::run::headless_answer(i, true),
                };
                let _ = daemon.client.send(request).await;
            } else {
                eprintln!(
                    "weft: {key} asks \"{}\": `weft answer {}` or the app",
                    i.title, i.prompt_id
                );
            }
        }
        if snap.phase != Phase::Streaming && snap.queued.is_empty() && snap.task_id.is_some() {
            if let Ok(mut history) = daemon
                .client
                .send(verb::GetHistory {
                    session_key: key.to_string(),
                    limit: Some(1),
                    before: None,
                })
                .await
            {
                if let Some(last) = history.pop() {
                    return Ok(last);
                }
            }
            return Ok(followed.snap);
        }
        match followed.next(&daemon.client, &mut daemon.events).await {
            Ok(_) => {}
            Err(Lost::Failed(_)) => return Err("the session could not be read".into()),
            Err(Lost::Closing(why)) => return Err(why),
            Err(Lost::Disconnected(why)) => {
                return Err(why.unwrap_or_else(|| "lost the daemon".into()))
            }
        }
    }
}

fn entry(s: &Started, snap: Option<&UniversalSnapshot>) -> serde_json::Value {
    json!({
        "sessionKey": s.key,
        "taskId": s.task_id,
        "agent": s.target.agent,
        "model": s.target.model,
        "account": s.target.account,
        "worktree": s.worktree,
        "branch": format!("weft/{}", s.worktree),
        "snapshot": snap,
    })
}

fn summary(s: &Started, snap: Option<&UniversalSnapshot>) {
    out!(
        "== {} — {} (branch weft/{})",
        label(&s.target),
        s.key,
        s.worktree
    );
    let Some(snap) = snap else {
        out!("   (its end was not seen)");
        return;
    };
    if let Some(error) = &snap.error {
        out!("   failed: {error}");
    }
    if let Some(diff) = &snap.turn_diff {
        let (added, removed) = diff
            .files
            .iter()
            .fold((0, 0), |(a, r), f| (a + f.added, r + f.removed));
        out!(
            "   {} file(s) changed, +{added} -{removed}",
            diff.files.len()
        );
        for file in diff.files.iter().take(10) {
            out!("     {} (+{} -{})", file.path, file.added, file.removed);
        }
    }
    let reply: String = snap
        .text
        .trim()
        .lines()
        .take(6)
        .collect::<Vec<_>>()
        .join("\n   ");
    if !reply.is_empty() {
        out!("   {reply}");
    }
}
