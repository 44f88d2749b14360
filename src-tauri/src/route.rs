//! Which host a window's request is for, and how a host's answers are named in the
//! windows.
//!
//! The windows see every host's sessions in one list, so a remote host's things carry
//! its name, the way the CLI writes them (docs/hosts.md): a session key
//! `HOST/agent:id`, a folder `HOST:/abs/path`. A request naming such a key (its
//! `sessionKey`) or such a folder (its `workdir`, `workspace` or `path`) goes to that
//! host with the names made the host's own again; everything a host answers or pushes
//! has its `sessionKey` and `workdir` fields named back. This machine's keys and
//! folders stay as they are (`local/…` is not written), so nothing changes for a user
//! without hosts, and a local absolute path (`/…`) can never be read as a host's.
//!
//! Only names of hosts in the list are read as such: a key `foo/echo:1` with no host
//! `foo` goes to this machine's daemon, which refuses it as any unknown key.

use serde_json::{Map, Value};

/// This machine, as the windows name it where a host is chosen.
pub const LOCAL: &str = "local";

/// The request fields that name a folder.
const FOLDER_FIELDS: [&str; 3] = ["workdir", "workspace", "path"];

/// The host named by a session key `HOST/agent:id`, and the key on that host.
pub fn split_key<'a>(key: &'a str, hosts: &[String]) -> Option<(&'a str, &'a str)> {
    let (host, rest) = key.split_once('/')?;
    (hosts.iter().any(|h| h == host) && rest.contains(':')).then_some((host, rest))
}

/// The host named by a folder `HOST:/abs/path`, and the path on that host.
pub fn split_folder<'a>(folder: &'a str, hosts: &[String]) -> Option<(&'a str, &'a str)> {
    let (host, rest) = folder.split_once(':')?;
    (hosts.iter().any(|h| h == host) && rest.starts_with('/')).then_some((host, rest))
}

/// Which host `request` (a wire request as JSON) is for, with its names made that
/// host's; `None`: this machine's (nothing changed). A request naming two different
/// hosts is refused (`Err` says why).
pub fn target(request: &mut Value, hosts: &[String]) -> Result<Option<String>, String> {
    let Some(fields) = request.as_object_mut() else {
        return Ok(None);
    };
    let mut host: Option<String> = None;
    let mut choose = |name: &str| -> Result<(), String> {
        match &host {
            Some(h) if h != name => Err(format!(
                "one request names two hosts ({h} and {name}): a session runs on one host"
            )),
            _ => {
                host = Some(name.to_string());
                Ok(())
            }
        }
    };
    if let Some(Value::String(key)) = fields.get_mut("sessionKey") {
        if let Some((h, own)) = split_key(key, hosts) {
            let own = own.to_string();
            choose(h)?;
            *key = own;
        }
    }
    for field in FOLDER_FIELDS {
        if let Some(Value::String(folder)) = fields.get_mut(field) {
            if let Some((h, own)) = split_folder(folder, hosts) {
                let own = own.to_string();
                choose(h)?;
                *folder = own;
            }
        }
    }
    Ok(host)
}

/// Names what `host` answered or pushed as the windows know it: every `sessionKey`
/// becomes `HOST/key`, every `workdir` `HOST:/path`, at any depth.
pub fn tag(value: &mut Value, host: &str) {
    match value {
        Value::Object(fields) => tag_fields(fields, host),
        Value::Array(items) => items.iter_mut().for_each(|v| tag(v, host)),
        _ => {}
    }
}

fn tag_fields(fields: &mut Map<String, Value>, host: &str) {
    for (name, value) in fields.iter_mut() {
        match (name.as_str(), &mut *value) {
            ("sessionKey", Value::String(key)) => *key = format!("{host}/{key}"),
            ("workdir", Value::String(dir)) => tag_folder(dir, host),
            // A session's worktree (SessionWorktree): its folder is the host's.
            ("worktree", Value::Object(worktree)) => {
                if let Some(Value::String(path)) = worktree.get_mut("path") {
                    tag_folder(path, host);
                }
            }
            _ => tag(value, host),
        }
    }
}

fn tag_folder(dir: &mut String, host: &str) {
    if dir.starts_with('/') {
        *dir = format!("{host}:{dir}");
    }
}

/// Names a host's reply to a request of kind `kind` as the windows know it: as [`tag`]
/// does, and for `listWorktrees` each worktree's repository, folder and sessions too
/// (so its sessions group under it in the sidebar, as this machine's do).
pub fn tag_reply(kind: Option<&str>, reply: &mut Value, host: &str) {
    tag(reply, host);
    if kind != Some("listWorktrees") {
        return;
    }
    let Value::Array(worktrees) = reply else {
        return;
    };
    for worktree in worktrees.iter_mut().filter_map(Value::as_object_mut) {
        for field in ["repo", "path"] {
            if let Some(Value::String(dir)) = worktree.get_mut(field) {
                tag_folder(dir, host);
            }
        }
        if let Some(Value::Array(keys)) = worktree.get_mut("sessions") {
            for key in keys.iter_mut() {
                if let Value::String(key) = key {
                    *key = format!("{host}/{key}");
                }
            }
        }
    }
}

/// Whether a request with no host of its own is answered by every host together (the
/// lists the sidebar and the inbox show, and the worktrees the sidebar groups sessions
/// under), each host's rows named by [`tag_reply`].
pub fn every_host(request: &Value) -> bool {
    let kind = request.get("type").and_then(Value::as_str);
    match kind {
        Some("inbox") => true,
        Some("listSessions" | "listWorktrees") => request.get("workdir").is_none_or(Value::is_null),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hosts() -> Vec<String> {
        vec!["gpu".into(), "box".into()]
    }

    #[test]
    fn a_hosts_key_or_folder_goes_there_as_its_own() {
        let mut r = json!({"type": "stop", "sessionKey": "gpu/echo:1f2e"});
        assert_eq!(target(&mut r, &hosts()), Ok(Some("gpu".into())));
        assert_eq!(r["sessionKey"], "echo:1f2e");

        let mut r = json!({"type": "prompt", "workdir": "box:/home/me/proj", "text": "hi"});
        assert_eq!(target(&mut r, &hosts()), Ok(Some("box".into())));
        assert_eq!(r["workdir"], "/home/me/proj");

        let mut r = json!({"type": "listDir", "path": "gpu:/srv"});
        assert_eq!(target(&mut r, &hosts()), Ok(Some("gpu".into())));
        assert_eq!(r["path"], "/srv");
    }

    #[test]
    fn this_machines_names_and_unknown_hosts_stay_local_and_unchanged() {
        for r in [
            json!({"type": "stop", "sessionKey": "echo:1f2e"}),
            json!({"type": "stop", "sessionKey": "other/echo:1"}),
            json!({"type": "prompt", "workdir": "/home/me/gpu:/x"}),
            json!({"type": "listDir", "path": "other:/srv"}),
            json!({"type": "listDir", "path": "gpu:relative"}),
        ] {
            let mut changed = r.clone();
            assert_eq!(target(&mut changed, &hosts()), Ok(None), "{r}");
            assert_eq!(changed, r);
        }
    }

    #[test]
    fn a_request_naming_two_hosts_is_refused() {
        let mut r = json!({"type": "prompt", "sessionKey": "gpu/echo:1", "workdir": "box:/x"});
        assert!(target(&mut r, &hosts()).is_err());
    }

    #[test]
    fn a_hosts_answers_name_it_at_any_depth() {
        let mut v = json!({
            "type": "patch", "sessionKey": "echo:1", "seq": 3,
            "patch": {"workdir": "/w", "text": "sessionKey"},
            "rows": [{"sessionKey": "claude:2", "workdir": "/x", "title": "echo:1"}]
        });
        tag(&mut v, "gpu");
        assert_eq!(v["sessionKey"], "gpu/echo:1");
        assert_eq!(v["patch"]["workdir"], "gpu:/w");
        assert_eq!(v["patch"]["text"], "sessionKey");
        assert_eq!(v["rows"][0]["sessionKey"], "gpu/claude:2");
        assert_eq!(v["rows"][0]["workdir"], "gpu:/x");
        assert_eq!(v["rows"][0]["title"], "echo:1");
        // Named back, it is the host's own again.
        let mut back = json!({"type": "stop", "sessionKey": v["rows"][0]["sessionKey"]});
        assert_eq!(target(&mut back, &hosts()), Ok(Some("gpu".into())));
        assert_eq!(back["sessionKey"], "claude:2");
    }

    #[test]
    fn a_hosts_worktrees_and_its_sessions_in_them_are_named_with_the_host() {
        let mut rows = json!([{
            "sessionKey": "echo:1", "workdir": "/srv/repo/.weft/worktrees/a",
            "worktree": {"name": "a", "path": "/srv/repo/.weft/worktrees/a", "branch": "weft/a", "base": "main"}
        }]);
        tag_reply(Some("listSessions"), &mut rows, "gpu");
        assert_eq!(
            rows[0]["worktree"]["path"],
            "gpu:/srv/repo/.weft/worktrees/a"
        );
        assert_eq!(rows[0]["worktree"]["branch"], "weft/a");
        let mut worktrees = json!([{
            "name": "a", "repo": "/srv/repo", "path": "/srv/repo/.weft/worktrees/a",
            "branch": "weft/a", "base": "main", "ahead": 2, "behind": 0, "dirty": true,
            "ports": "40000-40009", "sessions": ["echo:1"]
        }]);
        tag_reply(Some("listWorktrees"), &mut worktrees, "gpu");
        assert_eq!(worktrees[0]["repo"], "gpu:/srv/repo");
        assert_eq!(worktrees[0]["path"], "gpu:/srv/repo/.weft/worktrees/a");
        assert_eq!(worktrees[0]["sessions"], json!(["gpu/echo:1"]));
        assert_eq!(worktrees[0]["ahead"], 2);
        // Another verb's `path` (a folder listing's) is left as the host wrote it.
        let mut listing = json!({"path": "/srv", "entries": []});
        tag_reply(Some("listDir"), &mut listing, "gpu");
        assert_eq!(listing["path"], "/srv");
    }

    #[test]
    fn the_sidebars_and_the_inboxs_lists_come_from_every_host() {
        assert!(every_host(&json!({"type": "inbox"})));
        assert!(every_host(
            &json!({"type": "listSessions", "workdir": null, "archived": true})
        ));
        assert!(!every_host(
            &json!({"type": "listSessions", "workdir": "/w"})
        ));
        assert!(!every_host(&json!({"type": "listAgentInfo"})));
        assert!(every_host(&json!({"type": "listWorktrees"})));
        assert!(!every_host(
            &json!({"type": "listWorktrees", "workdir": "/w"})
        ));
    }
}
