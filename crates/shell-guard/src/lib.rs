//! Judging a shell command line by what it does, not by how it reads.
//!
//! The line is parsed with tree-sitter-bash into its simple commands, through
//! pipelines, lists, subshells, command and process substitution, `bash -c` strings
//! (recursively) and the wrappers that run another program (`env`, `sudo`, `timeout`,
//! `nice`, `nohup`, `xargs`, `command`, `exec`…). Each word is resolved after quote
//! removal; a program word that is not static, or that needed quotes or escapes to
//! read, hides what runs. Each command is then judged by its program and the meaning
//! of its arguments (what `rm` deletes and where, what `dd` writes, which git
//! subcommand runs after the global options). Nothing is judged by matching the text.
//!
//! `safe` means the line cannot run a program other than those it names, write a
//! file, or read the user's credentials: a read-only program is `safe` only with the
//! options it is known to be read-only with ([`readonly`]), read as getopt_long reads
//! them ([`opts`]); assignments, arithmetic on variables and here-document bodies are
//! judged as what they run. `tests/suite/corpus.rs` runs every line of a corpus that
//! the classifier calls `safe` under strace in the sandbox to hold it to that.
//!
//! [`classify`] gives a [`Report`]; [`rules`] holds the permission rules matched on
//! the same parsed commands.

mod builtins;
mod exec;
mod find;
mod git;
mod judge;
mod opts;
mod paths;
pub mod policy;
mod programs;
mod readonly;
pub mod rules;
mod secrets;
mod text;
mod walk;
mod words;
mod wrap;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use walk::Simple;

/// How risky a command is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Provably read-only: a known read-only program with arguments that keep it so.
    #[default]
    Safe,
    /// Anything else the classifier cannot prove either way.
    Unknown,
    /// Destroys, escapes the workspace, or hides what it runs.
    Dangerous,
}

impl Verdict {
    /// Its lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Safe => "safe",
            Self::Unknown => "unknown",
            Self::Dangerous => "dangerous",
        }
    }
}

/// One simple command of the line.
#[derive(Debug, Clone, Serialize)]
pub struct CommandReport {
    /// Its words after quote removal (a word known only at run time as written).
    pub argv: Vec<String>,
    /// Its verdict.
    pub verdict: Verdict,
    /// Why it is not safe.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
}

/// The judgement of a whole command line.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The worst verdict of its commands (at best `unknown` when it does not parse).
    pub verdict: Verdict,
    /// Why, for the worst commands and the line as a whole.
    pub reasons: Vec<String>,
    /// Each simple command, in the order they appear.
    pub commands: Vec<CommandReport>,
    /// The same commands with what rules match on (not printed).
    #[serde(skip)]
    pub simple: Vec<Simple>,
    /// Paths inside the workspace's `.git` or `.weft` the line names as a write or
    /// delete target (a sandbox that cannot keep those read-only asks first).
    #[serde(skip)]
    pub protected_writes: Vec<PathBuf>,
    /// Why no allow rule may answer for the line: something in it runs code that the
    /// argv rules match on does not show (`git -c core.fsmonitor=…`, `LD_PRELOAD=…`,
    /// `PATH=./bin`, arithmetic on a variable).
    #[serde(skip)]
    pub pinned: Vec<String>,
}

/// Where the command runs.
#[derive(Debug, Clone)]
pub struct Context {
    /// The workspace (the command's working directory).
    pub workdir: PathBuf,
    /// The user's home directory.
    pub home: Option<PathBuf>,
    /// Weft's own home (`$WEFT_HOME`, else `~/.weft`): reading it is reading the
    /// user's credentials.
    pub weft_home: Option<PathBuf>,
}

impl Context {
    /// A context for `workdir`, home from `$HOME`, Weft's from `$WEFT_HOME`.
    pub fn new(workdir: &Path) -> Self {
        let home: Option<PathBuf> = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let weft_home = std::env::var_os("WEFT_HOME")
            .filter(|h| !h.is_empty())
            .map(|h| paths::normalize(Path::new(&h), Path::new("/")))
            .or_else(|| home.as_ref().map(|h| h.join(".weft")));
        Self {
            workdir: paths::normalize(workdir, Path::new("/")),
            home,
            weft_home,
        }
    }

    /// A context for `workdir` with `home` (Weft's home under it), the environment
    /// not read: for tests and tools.
    pub fn with_home(workdir: &Path, home: &Path) -> Self {
        Self {
            workdir: paths::normalize(workdir, Path::new("/")),
            home: Some(home.to_path_buf()),
            weft_home: Some(home.join(".weft")),
        }
    }
}

/// Classifies `line` as a shell would run it in `cx.workdir`.
pub fn classify(line: &str, cx: &Context) -> Report {
    let mut w = walk::Walker::new(cx);
    w.line(line, 0);
    w.finish()
}
