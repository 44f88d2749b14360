//! What `weft hosts status` says of each host. A host's own `weft` computes its part
//! (`weft hosts status --here --json`, run there over ssh), so the numbers are that
//! machine's, read from its daemon and its `/proc`.

use serde::{Deserialize, Serialize};

/// One host's state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostStatus {
    /// The host's name (`local` for this machine).
    pub name: String,
    /// Its ssh destination (empty for `local`).
    pub destination: String,
    /// Whether ssh reached it and its `weft` answered.
    pub reachable: bool,
    /// Its daemon's version; none when no daemon runs there.
    pub version: Option<String>,
    /// Sessions its daemon manages.
    pub sessions: u32,
    /// Sessions with a turn running or queued.
    pub running: u32,
    /// Questions and permissions waiting for an answer.
    pub questions: u32,
    /// The agent processes its daemon runs.
    pub agents: Vec<AgentProcess>,
    /// Seconds its daemon stays up once nothing needs it.
    pub idle_exit_secs: Option<u64>,
    /// About versions, or why it is unreachable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One process a daemon started for an agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentProcess {
    /// Its pid, on that host.
    pub pid: u32,
    /// Its program's name (`/proc/PID/comm`).
    pub agent: String,
    /// Its resident memory, in bytes.
    pub rss_bytes: u64,
}

/// What to tell the user about a host daemon of `theirs` and this client of `ours`.
pub fn version_note(theirs: &str, ours: &str, restarting: bool) -> Option<String> {
    let parse = |v: &str| -> Option<Vec<u64>> {
        v.split(['.', '-', '+'])
            .take(3)
            .map(|p| p.parse().ok())
            .collect()
    };
    let (Some(t), Some(o)) = (parse(theirs), parse(ours)) else {
        return None;
    };
    if t > o {
        Some(format!(
            "its daemon ({theirs}) is newer than this weft ({ours}); it serves this client as it is"
        ))
    } else if t < o && restarting {
        Some(format!(
            "its daemon ({theirs}) is older than this weft ({ours}) and busy: it goes on as it \
             is, and is replaced by {ours} (installed beside it) once nothing runs there"
        ))
    } else if t < o {
        Some(format!(
            "its daemon ({theirs}) is older than this weft ({ours}): it is replaced by {ours} \
             at the next connection while nothing runs there"
        ))
    } else {
        None
    }
}

/// The processes under `root` (its descendants), each with its name and RSS, read
/// from `/proc` (Linux; elsewhere none).
pub fn processes_under(root: u32) -> Vec<AgentProcess> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut parent = std::collections::HashMap::new();
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // `pid (comm) state ppid …`: comm may hold spaces and parentheses.
        let ppid = stat
            .rfind(')')
            .and_then(|at| stat[at + 1..].split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(ppid) = ppid {
            parent.insert(pid, ppid);
        }
    }
    let under = |mut pid: u32| {
        for _ in 0..64 {
            match parent.get(&pid) {
                Some(&p) if p == root => return true,
                Some(&p) if p > 1 => pid = p,
                _ => return false,
            }
        }
        false
    };
    let mut found: Vec<AgentProcess> = parent
        .keys()
        .copied()
        .filter(|&pid| under(pid))
        .map(|pid| AgentProcess {
            pid,
            agent: std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .unwrap_or_default()
                .trim()
                .to_string(),
            rss_bytes: rss(pid),
        })
        .collect();
    found.sort_by_key(|p| p.pid);
    found
}

fn rss(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| {
            v.split_whitespace()
                .next()
                .and_then(|k| k.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_told_apart_and_said() {
        assert_eq!(version_note("0.1.0", "0.1.0", false), None);
        let newer = version_note("0.2.0", "0.1.0", false).unwrap_or_default();
        assert!(newer.contains("newer than this weft"), "{newer}");
        let busy = version_note("0.1.0", "0.2.0", true).unwrap_or_default();
        assert!(busy.contains("older") && busy.contains("busy"), "{busy}");
        assert_eq!(version_note("x", "0.1.0", false), None);
    }

    #[test]
    fn a_child_is_found_under_its_parent_with_its_memory() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        let found = processes_under(std::process::id());
        let _ = child.kill();
        let _ = child.wait();
        let sleep = found.iter().find(|p| p.pid == child.id());
        assert!(
            sleep.is_some_and(|p| p.agent == "sleep" && p.rss_bytes > 0),
            "{found:?}"
        );
    }
}
