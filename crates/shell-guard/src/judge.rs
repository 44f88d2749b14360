//! What a program does with its arguments. This file holds what every judge shares
//! (where a path points, what a write or a delete there means) and the dispatch: each
//! program is judged by the one table that knows it —
//! - [`crate::programs`]: programs that change things (`rm`, `find`, `dd`, `cp`…);
//! - [`crate::builtins`]: the shell's own commands (`echo`, `set`, `declare`…);
//! - [`crate::text`]: programs that run a script of their own (`sed`, `awk`, `jq`);
//! - [`crate::find`]: `find` and its primaries;
//! - [`crate::git`]: git and its subcommands;
//! - [`crate::readonly`]: read-only programs, each with the options it is read-only
//!   with;
//!
//! and anything else is `unknown`.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use crate::paths::{self, Place};
use crate::words::Word;
use crate::Verdict;

/// Where paths resolve.
pub struct Jcx<'a> {
    /// The shell's current folder when known (`cd` to a dynamic place loses it).
    pub cwd: Option<&'a Path>,
    pub workdir: &'a Path,
    pub home: Option<&'a Path>,
    /// Weft's own home (its tokens, database and conversations).
    pub weft_home: Option<&'a Path>,
    /// Paths inside the workspace's `.git` or `.weft` the line writes or deletes.
    pub protected: &'a RefCell<Vec<PathBuf>>,
}

impl Jcx<'_> {
    /// Notes `p` when it is inside the workspace's `.git` or `.weft` (only bubblewrap
    /// keeps those read-only; under Landlock the permission step asks instead).
    fn note(&self, p: &Path) {
        if [".git", ".weft"]
            .iter()
            .any(|d| p.starts_with(self.workdir.join(d)))
        {
            let mut v = self.protected.borrow_mut();
            if !v.iter().any(|q| q == p) {
                v.push(p.to_path_buf());
            }
        }
    }
}

/// A judgement being built.
#[derive(Debug, Default)]
pub struct Out {
    pub v: Verdict,
    pub reasons: Vec<String>,
    /// Commands the program runs itself (`find -exec`).
    pub exec: Vec<Vec<Word>>,
    /// Why no allow rule may answer for this command (an option or variable that
    /// runs code, hidden from the argv rules match: `git -c core.fsmonitor=…`).
    pub pins: Vec<String>,
}

impl Out {
    pub fn mark(&mut self, v: Verdict, reason: String) {
        self.v = self.v.max(v);
        if v > Verdict::Safe && !self.reasons.contains(&reason) {
            self.reasons.push(reason);
        }
    }

    /// Marks it unknown for `reason`, which no allow rule lifts.
    pub fn pin(&mut self, reason: String) {
        if !self.pins.contains(&reason) {
            self.pins.push(reason.clone());
        }
        self.mark(Verdict::Unknown, reason);
    }

    pub fn merge(&mut self, o: Out) {
        self.v = self.v.max(o.v);
        for r in o.reasons {
            if !self.reasons.contains(&r) {
                self.reasons.push(r);
            }
        }
        for p in o.pins {
            if !self.pins.contains(&p) {
                self.pins.push(p);
            }
        }
        self.exec.extend(o.exec);
    }
}

/// Where a path word points (`None`: only known at run time, or relative to a
/// folder that is not known).
pub fn locate(w: &Word, cx: &Jcx<'_>) -> Option<(PathBuf, Place)> {
    let v = w.value.as_deref()?;
    let v = if w.glob {
        // What a glob can reach: the folder before its first pattern.
        let mut keep = String::new();
        for part in v.split('/') {
            if part.contains(['*', '?', '[']) {
                break;
            }
            keep.push_str(part);
            keep.push('/');
        }
        if keep.is_empty() {
            ".".to_string()
        } else {
            keep
        }
    } else {
        v.to_string()
    };
    let p = Path::new(&v);
    let base = if p.is_absolute() {
        Path::new("/")
    } else {
        cx.cwd?
    };
    let n = paths::normalize(p, base);
    let place = paths::place(&n, cx.workdir, cx.home);
    Some((n, place))
}

/// A write to `w`: dangerous at system places and devices.
pub fn write_target(w: &Word, cx: &Jcx<'_>, verb: &str) -> (Verdict, String) {
    let found = locate(w, cx);
    if let Some((p, _)) = &found {
        cx.note(p);
    }
    match found {
        None => (
            Verdict::Unknown,
            format!("{verb} a file named at run time ({})", w.brief()),
        ),
        Some((p, Place::Device)) => (
            Verdict::Dangerous,
            format!("{verb} the block device {}", p.display()),
        ),
        Some((_, Place::Sink)) => (Verdict::Safe, String::new()),
        Some((p, Place::Root | Place::System | Place::Home)) => (
            Verdict::Dangerous,
            format!("{verb} the system path {}", p.display()),
        ),
        Some((p, Place::Elsewhere)) if is_dotfile_of_home(&p, cx.home) => (
            Verdict::Dangerous,
            format!("{verb} {}, a startup file in the home folder", p.display()),
        ),
        Some((p, _)) => (Verdict::Unknown, format!("{verb} {}", p.display())),
    }
}

fn is_dotfile_of_home(p: &Path, home: Option<&Path>) -> bool {
    let Some(h) = home else { return false };
    p.parent() == Some(h)
        && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
            n.starts_with(".bash")
                || n.starts_with(".zsh")
                || n == ".profile"
                || n.starts_with(".ssh")
        })
        || p.starts_with(h.join(".ssh"))
}

/// A delete (or recursive change) of `w`.
pub fn delete_target(w: &Word, recursive: bool, cx: &Jcx<'_>, verb: &str, out: &mut Out) {
    let found = locate(w, cx);
    if let Some((p, _)) = &found {
        cx.note(p);
    }
    let Some((p, place)) = found else {
        if recursive {
            out.mark(
                Verdict::Dangerous,
                format!(
                    "{verb} recursively a path only known at run time ({})",
                    w.brief()
                ),
            );
        } else {
            out.mark(
                Verdict::Unknown,
                format!("{verb} a path only known at run time ({})", w.brief()),
            );
        }
        return;
    };
    let (v, why) = match place {
        Place::Root => (
            Verdict::Dangerous,
            format!("{verb} the root of the file system"),
        ),
        Place::Device => (
            Verdict::Dangerous,
            format!("{verb} the device {}", p.display()),
        ),
        Place::System => (
            Verdict::Dangerous,
            format!("{verb} the system path {}", p.display()),
        ),
        Place::Home => (
            Verdict::Dangerous,
            format!("{verb} the home folder {}", p.display()),
        ),
        Place::WorkspaceRoot if recursive => (
            Verdict::Dangerous,
            format!("{verb} the whole workspace {}", p.display()),
        ),
        Place::Elsewhere if recursive => (
            Verdict::Dangerous,
            format!("{verb} recursively {}, outside the workspace", p.display()),
        ),
        Place::Sink => return,
        _ => (Verdict::Unknown, format!("{verb} {}", p.display())),
    };
    out.mark(v, why);
}

/// A program's judge: it marks `out` for `args`.
pub type Judge = fn(b: &str, args: &[Word], cx: &Jcx<'_>, out: &mut Out);

/// Judges a program that is not a wrapper, shell or interpreter.
pub fn program(b: &str, args: &[Word], cx: &Jcx<'_>) -> Out {
    let mut out = Out::default();
    if let Some(judge) = crate::builtins::judge_of(b) {
        judge(b, args, cx, &mut out);
    } else if let Some(spec) = crate::readonly::spec_of(b) {
        crate::readonly::judge(spec, b, args, cx, &mut out);
    } else if let Some(judge) = crate::text::judge_of(b) {
        judge(b, args, cx, &mut out);
    } else if b == "find" {
        // Lists names; what it runs on them is judged as its own command.
        crate::find::judge(b, args, cx, &mut out);
    } else {
        // Whatever else it does, a program handed a credential's path reads it, or
        // copies or sends it somewhere (`cp ~/.ssh/id_rsa .`, `curl -F k=@…`).
        crate::secrets::check_mentions(b, args, cx, &mut out);
        if b == "git" {
            crate::git::judge(args, cx, &mut out);
        } else if let Some(judge) = crate::programs::judge_of(b) {
            judge(b, args, cx, &mut out);
        } else {
            out.mark(
                Verdict::Unknown,
                format!("{b} is not known to be read-only"),
            );
        }
    }
    out
}
