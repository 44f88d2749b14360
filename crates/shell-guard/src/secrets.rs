//! The user's credentials on disk. A line that reads them is `dangerous` whatever reads
//! them: what a command prints goes to the model, into the transcript and into Weft's
//! database, so `cat ~/.ssh/id_rsa` leaks the key as surely as a `curl` would.
//!
//! The locations are the well-known credential files and folders under any home
//! folder (the user's, `/root`, `/home/<name>` for `~name`), Weft's own home, and a
//! few system files. A recursive read (`grep -r`, `rg`) of a folder that holds one of
//! them reads it too; a glob is matched against them as bash would expand it (a `*`
//! does not match a leading dot).

use std::path::{Path, PathBuf};

use crate::judge::{Jcx, Out};
use crate::paths;
use crate::words::Word;
use crate::Verdict;

/// Credential files and folders, relative to a home folder.
const IN_HOME: &[&str] = &[
    ".ssh",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh/hosts.yml",
    ".config/git/credentials",
    ".local/share/keyrings",
    ".gnupg",
    ".password-store",
    ".netrc",
    ".git-credentials",
    ".docker/config.json",
    ".kube/config",
    ".pypirc",
    ".npmrc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".gemini/oauth_creds.json",
    ".weft",
];

/// System files that hold credentials (`/proc/<pid>/environ` is matched apart).
const SYSTEM: &[&str] = &["/etc/shadow", "/etc/gshadow", "/etc/ssh"];

/// Every concrete credential location for `cx` (the user's home, `/root`, Weft's home).
fn locations(cx: &Jcx<'_>) -> Vec<PathBuf> {
    let mut homes: Vec<&Path> = vec![Path::new("/root")];
    if let Some(h) = cx.home {
        homes.push(h);
    }
    let mut v: Vec<PathBuf> = homes
        .iter()
        .flat_map(|h| IN_HOME.iter().map(move |r| h.join(r)))
        .collect();
    if let Some(w) = cx.weft_home {
        v.push(w.to_path_buf());
    }
    v.extend(SYSTEM.iter().map(PathBuf::from));
    v
}

/// The homes whose credentials are known: the user's and `/root`.
fn homes<'a>(cx: &Jcx<'a>) -> impl Iterator<Item = &'a Path> {
    [Some(Path::new("/root")), cx.home].into_iter().flatten()
}

/// The credential location `p` (absolute, normalized) is in.
fn inside(p: &Path, cx: &Jcx<'_>) -> Option<PathBuf> {
    // Compared without building every location: a read is judged for each file
    // operand of each command.
    for h in homes(cx) {
        if let Ok(rel) = p.strip_prefix(h) {
            if let Some(r) = IN_HOME.iter().find(|r| rel.starts_with(r)) {
                return Some(h.join(r));
            }
        }
    }
    if let Some(w) = cx.weft_home.filter(|w| p.starts_with(w)) {
        return Some(w.to_path_buf());
    }
    if let Some(s) = SYSTEM.iter().find(|s| p.starts_with(s)) {
        return Some(PathBuf::from(s));
    }
    let mut parts = p.iter().filter_map(|c| c.to_str());
    let (_root, top, second, third) = (parts.next(), parts.next(), parts.next(), parts.next());
    // /home/<anyone>/<credentials>: another user's home, reached as `~name`.
    if let (Some("home"), Some(user)) = (top, second) {
        let h = Path::new("/home").join(user);
        if let Ok(rel) = p.strip_prefix(&h) {
            if let Some(r) = IN_HOME.iter().find(|r| rel.starts_with(r)) {
                return Some(h.join(r));
            }
        }
    }
    if let (Some("proc"), Some(_), Some("environ")) = (top, second, third) {
        return Some(p.to_path_buf());
    }
    None
}

/// A credential location under the folder `p` (what a recursive read of it reaches).
fn under(p: &Path, cx: &Jcx<'_>) -> Option<PathBuf> {
    if let Some(s) = locations(cx).into_iter().find(|s| s.starts_with(p)) {
        return Some(s);
    }
    if Path::new("/home").starts_with(p) {
        return Some(PathBuf::from("/home/*/.ssh"));
    }
    let parts: Vec<&str> = p.iter().filter_map(|c| c.to_str()).collect();
    if let ["/", "home", _] = parts.as_slice() {
        return Some(p.join(".ssh"));
    }
    if Path::new("/proc/self/environ").starts_with(p) {
        return Some(PathBuf::from("/proc/self/environ"));
    }
    None
}

/// Whether one glob component matches one name as bash's pathname expansion does:
/// `*`, `?` and `[…]`, and a leading `.` only matched by a literal one.
fn component_matches(pat: &[char], name: &[char]) -> bool {
    if name.first() == Some(&'.') && pat.first() != Some(&'.') {
        return false;
    }
    fn go(p: &[char], n: &[char]) -> bool {
        match p.first() {
            None => n.is_empty(),
            Some('*') => (0..=n.len()).any(|k| go(&p[1..], &n[k..])),
            Some('?') => !n.is_empty() && go(&p[1..], &n[1..]),
            Some('[') => match (p.iter().position(|c| *c == ']'), n.first()) {
                (Some(close), Some(c)) if close > 1 => {
                    let class = &p[1..close];
                    let (negate, class) = match class.first() {
                        Some('!' | '^') => (true, &class[1..]),
                        _ => (false, class),
                    };
                    let mut hit = false;
                    let mut i = 0;
                    while i < class.len() {
                        if i + 2 < class.len() && class[i + 1] == '-' {
                            hit |= class[i] <= *c && *c <= class[i + 2];
                            i += 3;
                        } else {
                            hit |= class[i] == *c;
                            i += 1;
                        }
                    }
                    hit != negate && go(&p[close + 1..], &n[1..])
                }
                _ => n.first() == Some(&'[') && go(&p[1..], &n[1..]),
            },
            Some(c) => n.first() == Some(c) && go(&p[1..], &n[1..]),
        }
    }
    go(pat, name)
}

/// A credential location a glob (absolute) may expand into, or, when `recursive`, may
/// expand to a folder above.
fn glob_reaches(pattern: &str, recursive: bool, cx: &Jcx<'_>) -> Option<PathBuf> {
    let pat: Vec<Vec<char>> = pattern
        .split('/')
        .filter(|c| !c.is_empty())
        .map(|c| c.chars().collect())
        .collect();
    let mut candidates = locations(cx);
    candidates.push(PathBuf::from("/proc/self/environ"));
    candidates.into_iter().find(|s| {
        let names: Vec<Vec<char>> = s
            .iter()
            .skip(1)
            .filter_map(|c| c.to_str())
            .map(|c| c.chars().collect())
            .collect();
        let common = pat.len().min(names.len());
        let matches = (0..common).all(|k| component_matches(&pat[k], &names[k]));
        matches && (pat.len() >= names.len() || recursive)
    })
}

/// Judges a read of the file or folder `w` by program `b` (`recursive`: it reads what
/// is below a folder too).
pub fn check_read(b: &str, w: &Word, recursive: bool, cx: &Jcx<'_>, out: &mut Out) {
    if crate::opts::process_substitution(w) {
        // A pipe from a command judged on its own.
        return;
    }
    let Some(v) = w.value.as_deref() else {
        out.mark(
            Verdict::Unknown,
            format!(
                "{b} reads a file named only at run time ({}), which may hold the user's credentials",
                w.brief()
            ),
        );
        return;
    };
    if v == "-" || v == "/dev/stdin" || v.is_empty() {
        return;
    }
    let base = if v.starts_with('/') {
        Path::new("/")
    } else if let Some(cwd) = cx.cwd {
        cwd
    } else {
        out.mark(
            Verdict::Unknown,
            format!("{b} reads {v} in a folder only known at run time"),
        );
        return;
    };
    if w.glob {
        let pattern = base.join(v);
        if let Some(s) = glob_reaches(&pattern.to_string_lossy(), recursive, cx) {
            out.mark(
                Verdict::Dangerous,
                format!(
                    "{b} reads {v}, which can expand to {}, where the user's credentials are",
                    s.display()
                ),
            );
        }
        return;
    }
    let p = paths::normalize(Path::new(v), base);
    if let Some(s) = inside(&p, cx) {
        out.mark(
            Verdict::Dangerous,
            format!(
                "{b} reads {}, which holds the user's credentials ({})",
                p.display(),
                s.display()
            ),
        );
    } else if recursive {
        if let Some(s) = under(&p, cx) {
            out.mark(
                Verdict::Dangerous,
                format!(
                    "{b} reads {} recursively, which holds the user's credentials ({})",
                    p.display(),
                    s.display()
                ),
            );
        }
    }
}

/// Judges a program that is not known to be read-only for the credential paths its
/// arguments name, whole or after an `=`, `@` or option letters (`--key=~/.aws/x`,
/// `-F f=@/home/u/.ssh/id_rsa`, `-i/root/.ssh/k`): whatever it does with them, a
/// program handed a credential reads it, copies it or sends it somewhere.
pub fn check_mentions(b: &str, args: &[Word], cx: &Jcx<'_>, out: &mut Out) {
    for w in args {
        let Some(v) = w.value.as_deref() else {
            continue;
        };
        let mut candidates: Vec<&str> = vec![v];
        for sep in ['=', '@'] {
            if let Some((_, after)) = v.split_once(sep) {
                candidates.push(after);
            }
        }
        if v.starts_with('-') {
            if let Some(at) = v.find('/') {
                candidates.push(&v[at..]);
            }
        }
        for (i, c) in candidates.into_iter().enumerate() {
            let base = if c.starts_with('/') {
                Path::new("/")
            } else if i == 0 && !c.starts_with('-') {
                match cx.cwd {
                    Some(cwd) => cwd,
                    None => continue,
                }
            } else {
                continue;
            };
            let found = if w.glob {
                glob_reaches(&base.join(c).to_string_lossy(), false, cx)
            } else {
                inside(&paths::normalize(Path::new(c), base), cx)
            };
            if let Some(s) = found {
                out.mark(
                    Verdict::Dangerous,
                    format!(
                        "{b} is handed {c}, where the user's credentials are ({})",
                        s.display()
                    ),
                );
                break;
            }
        }
    }
}

/// Whether a variable's name says it holds a credential (`OPENAI_API_KEY`,
/// `GITHUB_TOKEN`, `DB_PASSWORD`…): printing it leaks it as reading a key file does.
pub fn credential_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    [
        "KEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "AUTH",
        "COOKIE",
        "PRIVATE",
    ]
    .iter()
    .any(|k| n.contains(k))
}

#[cfg(test)]
mod tests {
    use super::component_matches;

    fn m(p: &str, n: &str) -> bool {
        let p: Vec<char> = p.chars().collect();
        let n: Vec<char> = n.chars().collect();
        component_matches(&p, &n)
    }

    #[test]
    fn globs_match_as_bash_expands_them() {
        assert!(m(".ss*", ".ssh"));
        assert!(m(".[s]sh", ".ssh"));
        assert!(m("id_*", "id_rsa"));
        assert!(!m("*", ".ssh"), "a leading dot needs a literal dot");
        assert!(!m("?ssh", ".ssh"));
        assert!(m("[!x]d", "id"));
        assert!(!m("a*b", "ac"));
    }
}
