//! Skills, placed once for every agent: a skill is a folder with a `SKILL.md` (front
//! matter `name`, `description`, then the body) in `$WEFT_HOME/skills/` (global) or
//! `<workspace>/.weft/skills/` (the workspace's wins on a name). `$WEFT_HOME/skills.json`
//! keeps the names turned off (`{"disabled": [...]}`).
//!
//! Each agent is given them in its own skills location by [`link_into`]: a symbolic
//! link per skill, and only where the name is free. An entry of the same name that is
//! not Weft's (a user's own skill) is never touched and is reported as a conflict; a
//! link is Weft's when it points into a Weft skills folder, and Weft's links of skills
//! removed or turned off are taken away.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use weft_agent_spec::spec::SkillsDir;
use weft_protocol::SkillInfo;

use crate::error::FilesError;

/// Where a skill was placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `$WEFT_HOME/skills`.
    Global,
    /// `<workspace>/.weft/skills`.
    Workspace,
}

impl Source {
    /// `global` or `workspace`.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Global => "global",
            Source::Workspace => "workspace",
        }
    }
}

/// One skill placed in Weft.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its name (the front matter's).
    pub name: String,
    /// When to use it.
    pub description: String,
    /// Its folder.
    pub dir: PathBuf,
    /// Global or the workspace's.
    pub source: Source,
    /// False when turned off.
    pub enabled: bool,
}

/// `name` and `description` from a SKILL.md's front matter.
pub fn front_matter(text: &str) -> Option<(String, String)> {
    let rest = text.strip_prefix("---")?;
    let end = rest.find("\n---")?;
    let mut name = None;
    let mut description = None;
    for line in rest[..end].lines() {
        if let Some((k, v)) = line.split_once(':') {
            let v = v.trim().trim_matches('"').trim_matches('\'').to_string();
            match k.trim() {
                "name" => name = Some(v),
                "description" => description = Some(v),
                _ => {}
            }
        }
    }
    Some((name?, description.unwrap_or_default()))
}

/// A skill name every agent takes: lowercase letters, digits and `-`.
pub fn good_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// The folders skills are placed in, global first.
pub fn roots(state_dir: &Path, workdir: Option<&Path>) -> Vec<(Source, PathBuf)> {
    let mut out = vec![(Source::Global, state_dir.join("skills"))];
    if let Some(w) = workdir {
        out.push((Source::Workspace, w.join(".weft").join("skills")));
    }
    out
}

#[derive(Default, Serialize, Deserialize)]
#[serde(default)]
struct State {
    disabled: BTreeSet<String>,
}

fn state_file(state_dir: &Path) -> PathBuf {
    state_dir.join("skills.json")
}

fn read_state(state_dir: &Path) -> State {
    std::fs::read_to_string(state_file(state_dir))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// The names turned off.
pub fn disabled(state_dir: &Path) -> BTreeSet<String> {
    read_state(state_dir).disabled
}

/// Turns a skill on or off for every agent, from their next spawn.
pub fn set_enabled(state_dir: &Path, name: &str, enabled: bool) -> Result<(), FilesError> {
    let mut st = read_state(state_dir);
    if enabled {
        st.disabled.remove(name);
    } else {
        st.disabled.insert(name.to_string());
    }
    let path = state_file(state_dir);
    let text =
        serde_json::to_string_pretty(&st).map_err(|e| FilesError::io("write", &path)(e.into()))?;
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(FilesError::io("write", &path))
}

/// Every skill placed in Weft for `workdir` (the workspace's winning on a name), by
/// name; a folder without a readable SKILL.md and front matter is skipped.
pub fn find(state_dir: &Path, workdir: Option<&Path>) -> Vec<Skill> {
    let off = disabled(state_dir);
    let mut out: Vec<Skill> = Vec::new();
    for (source, root) in roots(state_dir, workdir).into_iter().rev() {
        let Ok(entries) = std::fs::read_dir(&root) else {
            continue;
        };
        for e in entries.flatten() {
            let dir = e.path();
            let Some((name, description)) = std::fs::read_to_string(dir.join("SKILL.md"))
                .ok()
                .and_then(|t| front_matter(&t))
            else {
                continue;
            };
            if !good_name(&name) || out.iter().any(|s| s.name == name) {
                continue;
            }
            out.push(Skill {
                enabled: !off.contains(&name),
                name,
                description,
                dir,
                source,
            });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// True when `entry` is a link Weft made: it points into one of `weft_roots`.
pub fn is_weft_link(entry: &Path, weft_roots: &[PathBuf]) -> bool {
    let Ok(target) = std::fs::read_link(entry) else {
        return false;
    };
    weft_roots.iter().any(|r| target.starts_with(r))
}

/// What [`link_into`] did in one agent folder.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Linked {
    /// The skills now linked there.
    pub linked: Vec<String>,
    /// Entries of a skill's name that are the user's own: left alone, the skill not
    /// linked there.
    pub conflicts: Vec<PathBuf>,
}

/// The entries of `folder` named like one of `skills` that are not Weft's: a user's
/// own skill there keeps the name.
pub fn conflicts(folder: &Path, name: &str, weft_roots: &[PathBuf]) -> Option<PathBuf> {
    let entry = folder.join(name);
    let exists = std::fs::symlink_metadata(&entry).is_ok();
    (exists && !is_weft_link(&entry, weft_roots)).then_some(entry)
}

/// Links each of `skills` into the agent folder `folder` where its name is free, and
/// removes Weft's links there of skills no longer given. `also_taken`: other folders
/// of the same agent where a user's skill of the name wins (reported as conflicts).
pub fn link_into(
    folder: &Path,
    skills: &[&Skill],
    weft_roots: &[PathBuf],
    also_taken: &[PathBuf],
) -> Result<Linked, FilesError> {
    let mut out = Linked::default();
    let wanted: BTreeSet<&str> = skills.iter().map(|s| s.name.as_str()).collect();
    if let Ok(entries) = std::fs::read_dir(folder) {
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            if is_weft_link(&p, weft_roots) && !wanted.contains(name.as_str()) {
                let _ = std::fs::remove_file(&p);
            }
        }
    }
    for s in skills {
        let taken = std::iter::once(folder)
            .chain(also_taken.iter().map(PathBuf::as_path))
            .find_map(|f| conflicts(f, &s.name, weft_roots));
        if let Some(c) = taken {
            out.conflicts.push(c);
            continue;
        }
        let entry = folder.join(&s.name);
        if std::fs::read_link(&entry).is_ok_and(|t| t == s.dir) {
            out.linked.push(s.name.clone());
            continue;
        }
        let _ = std::fs::remove_file(&entry); // a Weft link to an older place
        std::fs::create_dir_all(folder).map_err(FilesError::io("create", folder))?;
        std::os::unix::fs::symlink(&s.dir, &entry).map_err(FilesError::io("link", &entry))?;
        out.linked.push(s.name.clone());
    }
    Ok(out)
}

/// The user's own skills folders of every agent, for conflicts: each agent's
/// [`SkillsDir`]s (from its spec) in the workspace and the home (`home`: the agents'
/// HOME), each folder once.
pub fn agent_folders(
    dirs: &[SkillsDir],
    home: Option<&Path>,
    workdir: Option<&Path>,
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for (base, is_home) in [(workdir, false), (home, true)] {
        let Some(base) = base else { continue };
        for dir in dirs {
            let rel = match dir {
                SkillsDir::Both(rel) => rel,
                SkillsDir::Home(rel) if is_home => rel,
                SkillsDir::Home(_) => continue,
            };
            let folder = base.join(rel);
            if !out.contains(&folder) {
                out.push(folder);
            }
        }
    }
    out
}

/// The skills as `list_skills` and `weft skills list` show them: each with its source,
/// whether it is on, and the user's own skills of its name (conflicts).
pub fn list(
    state_dir: &Path,
    workdir: Option<&Path>,
    home: Option<&Path>,
    dirs: &[SkillsDir],
) -> Vec<SkillInfo> {
    let roots: Vec<PathBuf> = roots(state_dir, workdir).into_iter().map(|r| r.1).collect();
    let folders = agent_folders(dirs, home, workdir);
    find(state_dir, workdir)
        .into_iter()
        .map(|s| SkillInfo {
            conflicts: folders
                .iter()
                .filter_map(|f| conflicts(f, &s.name, &roots))
                .map(|p| p.display().to_string())
                .collect(),
            name: s.name,
            description: s.description,
            path: Some(s.dir.display().to_string()),
            source: Some(s.source.as_str().to_string()),
            enabled: s.enabled,
        })
        .collect()
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let kind = e.file_type()?;
        let target = to.join(e.file_name());
        if kind.is_dir() {
            copy_dir(&e.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(e.path(), &target)?;
        }
        // A link inside a skill is not followed: it could point anywhere.
    }
    Ok(())
}

/// `weft skills add PATH`: copies the skill folder at `path` (or the folder of a
/// SKILL.md) into `$WEFT_HOME/skills/<name>`; refused when one of the name is there.
pub fn add(state_dir: &Path, path: &Path) -> Result<Skill, FilesError> {
    let dir = if path.file_name().is_some_and(|n| n == "SKILL.md") {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        path.to_path_buf()
    };
    let md = dir.join("SKILL.md");
    // The folder given is the user's: one that cannot be read is their request's fault.
    let text = std::fs::read_to_string(&md).map_err(|e| {
        FilesError::Invalid(format!(
            "{}: cannot read it ({e}); a skill is a folder with a SKILL.md",
            md.display()
        ))
    })?;
    let (name, description) = front_matter(&text).ok_or_else(|| {
        FilesError::Invalid(format!(
            "{}: no front matter with a `name` (---\\nname: …\\ndescription: …\\n---)",
            md.display()
        ))
    })?;
    if !good_name(&name) {
        return Err(FilesError::Invalid(format!(
            "{}: `{name}` is not a skill name (lowercase letters, digits and -, at most 64)",
            md.display()
        )));
    }
    let target = state_dir.join("skills").join(&name);
    if std::fs::symlink_metadata(&target).is_ok() {
        return Err(FilesError::Invalid(format!(
            "a skill named `{name}` is already placed ({}); remove it first",
            target.display()
        )));
    }
    copy_dir(&dir, &target).map_err(FilesError::io("copy into", &target))?;
    Ok(Skill {
        enabled: !disabled(state_dir).contains(&name),
        name,
        description,
        dir: target,
        source: Source::Global,
    })
}

/// `weft skills remove NAME`: deletes a global skill (a workspace's is the
/// workspace's file to delete).
pub fn remove(state_dir: &Path, name: &str) -> Result<(), FilesError> {
    if !good_name(name) {
        return Err(FilesError::Invalid(format!("`{name}` is not a skill name")));
    }
    let target = state_dir.join("skills").join(name);
    if !target.join("SKILL.md").exists() {
        return Err(FilesError::Invalid(format!(
            "no global skill named `{name}` (a workspace's skill is its .weft/skills/{name} folder)"
        )));
    }
    std::fs::remove_dir_all(&target).map_err(FilesError::io("remove", &target))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(root: &Path, name: &str, description: &str) -> std::io::Result<PathBuf> {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n---\nDo it.\n"),
        )?;
        Ok(dir)
    }

    #[test]
    fn the_workspace_wins_and_a_bad_folder_is_skipped() -> Result<(), Box<dyn std::error::Error>> {
        let home = tempfile::tempdir()?;
        let ws = tempfile::tempdir()?;
        skill(&home.path().join("skills"), "tidy", "global tidy")?;
        skill(&home.path().join("skills"), "only-global", "g")?;
        skill(&ws.path().join(".weft/skills"), "tidy", "workspace tidy")?;
        std::fs::create_dir_all(home.path().join("skills/no-md"))?;
        skill(&home.path().join("skills"), "Bad_Name", "x")?;
        let found = find(home.path(), Some(ws.path()));
        let names: Vec<(&str, &str, Source)> = found
            .iter()
            .map(|s| (s.name.as_str(), s.description.as_str(), s.source))
            .collect();
        assert_eq!(
            names,
            [
                ("only-global", "g", Source::Global),
                ("tidy", "workspace tidy", Source::Workspace)
            ]
        );
        set_enabled(home.path(), "tidy", false)?;
        assert!(!find(home.path(), Some(ws.path()))[1].enabled);
        Ok(())
    }

    #[test]
    fn a_users_own_skill_of_the_name_is_never_overwritten_and_is_a_conflict(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let home = tempfile::tempdir()?;
        let agent = tempfile::tempdir()?;
        let root = home.path().join("skills");
        skill(&root, "mine", "the user's")?;
        skill(&root, "free", "free")?;
        skill(&root, "old", "old")?;
        let found = find(home.path(), None);
        let folder = agent.path().join(".claude/skills");
        // The user's own `mine` (a folder) and, elsewhere, a file named like a skill.
        let users = skill(&folder, "mine", "the user's own")?;
        let other = agent.path().join("other");
        std::fs::create_dir_all(&other)?;
        std::fs::write(other.join("free"), "a file, not a skill")?;
        let all: Vec<&Skill> = found.iter().collect();
        let r = link_into(&folder, &all, std::slice::from_ref(&root), &[])?;
        assert_eq!(r.linked, ["free", "old"]);
        assert_eq!(r.conflicts, [folder.join("mine")]);
        assert_eq!(
            std::fs::read_to_string(users.join("SKILL.md"))?,
            "---\nname: mine\ndescription: the user's own\n---\nDo it.\n",
            "the user's skill is untouched"
        );
        assert_eq!(std::fs::read_link(folder.join("free"))?, root.join("free"));
        // Again, `old` no longer given: Weft's link goes, a name taken elsewhere is a conflict.
        let some: Vec<&Skill> = found.iter().filter(|s| s.name == "free").collect();
        let r = link_into(
            &folder,
            &some,
            std::slice::from_ref(&root),
            std::slice::from_ref(&other),
        )?;
        assert!(r.linked.is_empty());
        assert_eq!(r.conflicts, [other.join("free")]);
        assert!(std::fs::symlink_metadata(folder.join("old")).is_err());
        assert!(folder.join("mine/SKILL.md").exists());
        let dirs = [SkillsDir::Both(".claude/skills".into())];
        let listed = list(home.path(), None, Some(agent.path()), &dirs);
        let mine = listed
            .iter()
            .find(|s| s.name == "mine")
            .map(|s| s.conflicts.clone());
        assert_eq!(mine, Some(vec![folder.join("mine").display().to_string()]));
        Ok(())
    }

    #[test]
    fn add_copies_a_skill_once_and_remove_deletes_it() -> Result<(), Box<dyn std::error::Error>> {
        let home = tempfile::tempdir()?;
        let src = tempfile::tempdir()?;
        let dir = skill(src.path(), "review-pr", "how we review")?;
        std::fs::write(dir.join("notes.txt"), "extra")?;
        let s = add(home.path(), &dir)?;
        assert_eq!(s.name, "review-pr");
        assert!(home.path().join("skills/review-pr/notes.txt").exists());
        let again = add(home.path(), &dir.join("SKILL.md"))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(again.contains("already placed"), "{again}");
        std::fs::write(src.path().join("SKILL.md"), "no front matter")?;
        let bad = add(home.path(), src.path())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(bad.contains("no front matter"), "{bad}");
        remove(home.path(), "review-pr")?;
        assert!(!home.path().join("skills/review-pr").exists());
        assert!(remove(home.path(), "review-pr").is_err());
        Ok(())
    }
}
