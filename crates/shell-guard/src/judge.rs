//! What a program does with its arguments: which are read-only, which delete or
//! write where, which run other programs.

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
    /// Paths inside the workspace's `.git` or `.weft` the line writes or deletes.
    pub protected: &'a std::cell::RefCell<Vec<std::path::PathBuf>>,
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
}

impl Out {
    pub fn mark(&mut self, v: Verdict, reason: String) {
        self.v = self.v.max(v);
        if v > Verdict::Safe && !self.reasons.contains(&reason) {
            self.reasons.push(reason);
        }
    }
    pub fn merge(&mut self, o: Out) {
        self.v = self.v.max(o.v);
        for r in o.reasons {
            if !self.reasons.contains(&r) {
                self.reasons.push(r);
            }
        }
        self.exec.extend(o.exec);
    }
}

/// Where a path word points (`None`: only known at run time, or relative to a
/// folder that is not known).
fn locate(w: &Word, cx: &Jcx<'_>) -> Option<(PathBuf, Place)> {
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
            format!("{verb} a file named at run time ({})", w.raw),
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
fn delete_target(w: &Word, recursive: bool, cx: &Jcx<'_>, verb: &str, out: &mut Out) {
    let found = locate(w, cx);
    if let Some((p, _)) = &found {
        cx.note(p);
    }
    match found {
        None => {
            if recursive {
                out.mark(
                    Verdict::Dangerous,
                    format!(
                        "{verb} recursively a path only known at run time ({})",
                        w.raw
                    ),
                );
            } else {
                out.mark(
                    Verdict::Unknown,
                    format!("{verb} a path only known at run time ({})", w.raw),
                );
            }
        }
        Some((p, place)) => match place {
            Place::Root => out.mark(
                Verdict::Dangerous,
                format!("{verb} the root of the file system"),
            ),
            Place::Device => out.mark(
                Verdict::Dangerous,
                format!("{verb} the device {}", p.display()),
            ),
            Place::System => out.mark(
                Verdict::Dangerous,
                format!("{verb} the system path {}", p.display()),
            ),
            Place::Home => out.mark(
                Verdict::Dangerous,
                format!("{verb} the home folder {}", p.display()),
            ),
            Place::WorkspaceRoot if recursive => out.mark(
                Verdict::Dangerous,
                format!("{verb} the whole workspace {}", p.display()),
            ),
            Place::Elsewhere if recursive => out.mark(
                Verdict::Dangerous,
                format!("{verb} recursively {}, outside the workspace", p.display()),
            ),
            Place::Sink => {}
            _ => out.mark(Verdict::Unknown, format!("{verb} {}", p.display())),
        },
    }
}

const READ_ONLY: &[&str] = &[
    "cat",
    "head",
    "tail",
    "ls",
    "dir",
    "vdir",
    "pwd",
    "echo",
    "printf",
    "wc",
    "grep",
    "egrep",
    "fgrep",
    "ag",
    "cut",
    "tr",
    "nl",
    "stat",
    "file",
    "which",
    "whereis",
    "type",
    "whoami",
    "id",
    "groups",
    "uname",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "diff",
    "cmp",
    "comm",
    "du",
    "df",
    "tree",
    "seq",
    "true",
    "false",
    "test",
    "[",
    "sleep",
    "jq",
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "column",
    "fold",
    "fmt",
    "paste",
    "join",
    "expand",
    "unexpand",
    "rev",
    "tac",
    "od",
    "hexdump",
    "strings",
    "printenv",
    "cal",
    "ps",
    "pgrep",
    "free",
    "uptime",
    "lsblk",
    "lscpu",
    "nproc",
    "locale",
    "tty",
    "arch",
    "getconf",
    "cd",
    "pushd",
    "popd",
    "dirs",
    "base64",
    "base32",
    "basenc",
    "zcat",
    "zgrep",
    "bzcat",
    "xzcat",
    "lsof",
    "env",
    "numfmt",
    "look",
    ":",
    "yes",
    "echo",
    "less",
    "more",
    "man",
    "help",
    "export",
    "local",
    "declare",
    "typeset",
    "readonly",
    "unset",
    "shift",
    "set",
    "wait",
    "jobs",
    "hash",
    "cargo-metadata",
    "tput",
    "getent",
    "lslocks",
    "ldd",
    "nm",
    "objdump",
    "readelf",
    "size",
    "git-log",
];

/// Judges a program that is not a wrapper, shell or interpreter.
pub fn program(b: &str, args: &[Word], cx: &Jcx<'_>) -> Out {
    let mut out = Out::default();
    let pos = || {
        args.iter()
            .filter(|a| !a.shown().starts_with('-') || a.value.is_none())
    };
    let has = |f: &str| args.iter().any(|a| a.is(f));
    let short = |c: char| {
        args.iter().any(|a| {
            let s = a.shown();
            s.starts_with('-') && !s.starts_with("--") && s[1..].contains(c)
        })
    };
    match b {
        "rm" | "unlink" | "rmdir" | "shred" | "srm" | "wipe" => {
            let mut end = false;
            let mut targets = Vec::new();
            let mut recursive = false;
            for a in args {
                let s = a.shown();
                if !end && a.value.is_some() && s == "--" {
                    end = true;
                } else if !end && a.value.is_some() && s.starts_with("--") {
                    recursive |= s == "--recursive";
                    if s == "--no-preserve-root" {
                        out.mark(
                            Verdict::Dangerous,
                            "rm --no-preserve-root lifts the guard on deleting /".into(),
                        );
                    }
                } else if !end && a.value.is_some() && s.starts_with('-') && s.len() > 1 {
                    recursive |= s.contains('r') || s.contains('R');
                } else {
                    targets.push(a);
                }
            }
            let verb = if b == "rm" { "deletes" } else { "destroys" };
            for t in targets {
                delete_target(t, recursive, cx, verb, &mut out);
            }
            out.mark(Verdict::Unknown, format!("{b} deletes files"));
        }
        "find" => {
            let roots: Vec<&Word> = args
                .iter()
                .take_while(|a| !a.shown().starts_with('-') && !a.is("(") && !a.is("!"))
                .collect();
            let roots: Vec<Word> = if roots.is_empty() {
                vec![Word::literal(".")]
            } else {
                roots.into_iter().cloned().collect()
            };
            let mut i = 0;
            let mut mutates = false;
            while i < args.len() {
                let s = args[i].shown();
                if s == "-delete" {
                    mutates = true;
                    for r in &roots {
                        match locate(r, cx) {
                            Some((p, Place::Elsewhere)) => out.mark(
                                Verdict::Dangerous,
                                format!(
                                    "find -delete deletes under {}, outside the workspace",
                                    p.display()
                                ),
                            ),
                            _ => {
                                delete_target(r, false, cx, "find -delete deletes under", &mut out)
                            }
                        }
                    }
                } else if matches!(s, "-exec" | "-execdir" | "-ok" | "-okdir") {
                    mutates = true;
                    let mut cmd = Vec::new();
                    i += 1;
                    while i < args.len() && !args[i].is(";") && !args[i].is("+") {
                        if args[i].is("{}") {
                            for r in &roots {
                                let mut w = Word::literal(&format!(
                                    "{}/{{}}",
                                    r.shown().trim_end_matches('/')
                                ));
                                w.value = r
                                    .value
                                    .as_ref()
                                    .map(|v| format!("{}/{{}}", v.trim_end_matches('/')));
                                cmd.push(w);
                            }
                        } else {
                            cmd.push(args[i].clone());
                        }
                        i += 1;
                    }
                    if !cmd.is_empty() {
                        out.exec.push(cmd);
                    }
                } else if s.starts_with("-fprint") || s == "-fls" {
                    mutates = true;
                    if let Some(w) = args.get(i + 1) {
                        let (v, r) = write_target(w, cx, "find writes to");
                        out.mark(v.max(Verdict::Unknown), r);
                    }
                }
                i += 1;
            }
            if mutates {
                out.mark(Verdict::Unknown, "find runs commands or deletes".into());
            }
        }
        "dd" => {
            for a in args {
                if let Some(t) = a.shown().strip_prefix("of=") {
                    let w = Word {
                        value: a
                            .value
                            .as_ref()
                            .map(|v| v.trim_start_matches("of=").to_string()),
                        raw: t.to_string(),
                        ..a.clone()
                    };
                    let (v, r) = write_target(&w, cx, "dd writes to");
                    out.mark(v, r);
                }
            }
        }
        "mkfs" | "mke2fs" | "mkswap" | "wipefs" | "fdisk" | "sfdisk" | "cfdisk" | "parted"
        | "gdisk" | "sgdisk" | "blkdiscard" | "mkntfs" | "mkdosfs" | "hdparm" | "cryptsetup"
        | "pvcreate" | "vgremove" | "lvremove" => {
            out.mark(
                Verdict::Dangerous,
                format!("{b} formats or repartitions a disk"),
            );
        }
        _ if b.starts_with("mkfs.") => out.mark(Verdict::Dangerous, format!("{b} formats a disk")),
        "shutdown" | "reboot" | "halt" | "poweroff" | "telinit" | "kexec" => {
            out.mark(
                Verdict::Dangerous,
                format!("{b} stops or restarts the machine"),
            );
        }
        "init" => {
            if pos().any(|a| a.is("0") || a.is("6")) {
                out.mark(
                    Verdict::Dangerous,
                    "init 0/6 stops or restarts the machine".into(),
                );
            }
            out.mark(Verdict::Unknown, "init".into());
        }
        "systemctl" => {
            if pos().any(|a| {
                matches!(
                    a.shown(),
                    "poweroff"
                        | "reboot"
                        | "halt"
                        | "kexec"
                        | "suspend"
                        | "hibernate"
                        | "rescue"
                        | "emergency"
                )
            }) {
                out.mark(
                    Verdict::Dangerous,
                    "systemctl stops or restarts the machine".into(),
                );
            }
            if !pos().next().is_some_and(|a| {
                matches!(
                    a.shown(),
                    "status" | "list-units" | "is-active" | "show" | "cat"
                )
            }) {
                out.mark(Verdict::Unknown, "systemctl changes services".into());
            }
        }
        "kill" => {
            let mut i = 0;
            if let Some(first) = args.first() {
                let f = first.shown();
                if f == "-s" || f == "-n" {
                    i = 2;
                } else if f.starts_with('-') && f != "--" && f != "-1"
                    || f == "-1" && args.len() > 1
                {
                    i = 1;
                }
            }
            for a in &args[i.min(args.len())..] {
                if a.is("-1") {
                    out.mark(
                        Verdict::Dangerous,
                        "kill -1 signals every process the user may".into(),
                    );
                }
                if a.value.is_none() {
                    out.mark(
                        Verdict::Unknown,
                        format!("kills processes named at run time ({})", a.raw),
                    );
                }
            }
            out.mark(Verdict::Unknown, "kill signals processes".into());
        }
        "killall5" => out.mark(Verdict::Dangerous, "killall5 kills every process".into()),
        "pkill" | "killall" => {
            if args.iter().any(|a| a.is(".") || a.is(".*") || a.is("-u")) {
                out.mark(
                    Verdict::Dangerous,
                    format!("{b} with a pattern matching everything kills all processes"),
                );
            }
            out.mark(Verdict::Unknown, format!("{b} kills processes"));
        }
        "crontab" => {
            if short('r') {
                out.mark(Verdict::Dangerous, "crontab -r wipes every cron job".into());
            } else if !has("-l") {
                out.mark(Verdict::Unknown, "crontab changes scheduled jobs".into());
            }
        }
        "chmod" | "chown" | "chgrp" | "chattr" | "setfacl" => {
            let recursive = short('R') || has("--recursive");
            let mut p: Vec<&Word> = pos().collect();
            if !p.is_empty() && !args.iter().any(|a| a.shown().starts_with("--reference")) {
                p.remove(0);
            }
            for t in p {
                match locate(t, cx) {
                    Some((path, Place::Root | Place::System | Place::Home | Place::Device)) => out
                        .mark(
                            Verdict::Dangerous,
                            format!("{b} changes the system path {}", path.display()),
                        ),
                    Some((path, Place::Elsewhere)) if recursive => out.mark(
                        Verdict::Dangerous,
                        format!(
                            "{b} -R changes {} recursively, outside the workspace",
                            path.display()
                        ),
                    ),
                    None if recursive => out.mark(
                        Verdict::Dangerous,
                        format!("{b} -R on a path known only at run time ({})", t.raw),
                    ),
                    _ => {}
                }
            }
            out.mark(Verdict::Unknown, format!("{b} changes file permissions"));
        }
        "cp" | "mv" | "install" | "ln" | "rsync" | "scp" => {
            let p: Vec<&Word> = pos().collect();
            let dest = args
                .iter()
                .position(|a| a.is("-t") || a.is("--target-directory"))
                .and_then(|i| args.get(i + 1))
                .or(p.last().copied());
            if let Some(d) = dest {
                let (v, r) = write_target(d, cx, &format!("{b} writes to"));
                out.mark(v, r);
                if b == "rsync" && args.iter().any(|a| a.shown().starts_with("--delete")) {
                    delete_target(d, true, cx, "rsync --delete deletes under", &mut out);
                }
            }
            if b == "mv" {
                for s in p.iter().take(p.len().saturating_sub(1)) {
                    if let Some((
                        path,
                        Place::Root | Place::System | Place::Home | Place::WorkspaceRoot,
                    )) = locate(s, cx)
                    {
                        out.mark(
                            Verdict::Dangerous,
                            format!("mv moves away {}", path.display()),
                        );
                    }
                }
            }
            out.mark(Verdict::Unknown, format!("{b} changes files"));
        }
        "tee" | "touch" | "mkdir" | "truncate" | "mktemp" | "mkfifo" | "mknod" => {
            for t in pos() {
                let (v, r) = write_target(t, cx, &format!("{b} writes to"));
                out.mark(v, r);
            }
            if b != "tee" || pos().next().is_some() {
                out.mark(Verdict::Unknown, format!("{b} changes files"));
            }
        }
        "curl" | "wget" | "aria2c" | "http" => {
            for (i, a) in args.iter().enumerate() {
                if matches!(a.shown(), "-o" | "-O" | "--output" | "--output-document") {
                    if let Some(w) = args.get(i + 1) {
                        let (v, r) = write_target(w, cx, &format!("{b} writes to"));
                        out.mark(v, r);
                    }
                }
            }
            out.mark(Verdict::Unknown, format!("{b} reaches the network"));
        }
        "git" => crate::git::judge(args, cx, &mut out),
        "sed" => {
            if args.iter().any(|a| {
                let s = a.shown();
                s.starts_with("--in-place")
                    || (s.starts_with('-') && !s.starts_with("--") && s.contains('i'))
            }) {
                out.mark(Verdict::Unknown, "sed -i edits files in place".into());
            }
            let scripts: Vec<&Word> =
                match args.iter().position(|a| a.is("-e") || a.is("--expression")) {
                    Some(_) => args
                        .windows(2)
                        .filter(|w| w[0].is("-e") || w[0].is("--expression"))
                        .map(|w| &w[1])
                        .collect(),
                    None => pos().take(1).collect(),
                };
            for s in scripts {
                if !s.value.as_deref().is_some_and(sed_read_only) {
                    out.mark(
                        Verdict::Unknown,
                        "the sed script may write files or run commands".into(),
                    );
                }
            }
        }
        "awk" | "gawk" | "mawk" | "nawk" => {
            let prog = pos().next();
            if args
                .iter()
                .any(|a| a.is("-f") || a.shown().starts_with("-i"))
                || !prog.and_then(|p| p.value.as_deref()).is_some_and(|p| {
                    !p.contains("system")
                        && !p.contains('|')
                        && !p.contains('>')
                        && !p.contains("getline")
                })
            {
                out.mark(
                    Verdict::Unknown,
                    "the awk program may write files or run commands".into(),
                );
            }
        }
        "sort" => {
            if short('o') || args.iter().any(|a| a.shown().starts_with("--output")) {
                out.mark(Verdict::Unknown, "sort -o writes a file".into());
            }
        }
        "uniq" | "xxd" => {
            if pos().count() >= 2 || short('r') && b == "xxd" && pos().count() >= 2 {
                out.mark(Verdict::Unknown, format!("{b} writes its second file"));
            }
        }
        "date" => {
            if short('s') || args.iter().any(|a| a.shown().starts_with("--set")) {
                out.mark(Verdict::Unknown, "date -s sets the clock".into());
            }
        }
        "hostname" => {
            if pos().next().is_some() {
                out.mark(Verdict::Unknown, "hostname sets the host name".into());
            }
        }
        "rg" => {
            if args
                .iter()
                .any(|a| a.shown().starts_with("--pre") || a.shown().starts_with("--hostname-bin"))
            {
                out.mark(
                    Verdict::Unknown,
                    "rg --pre runs a program on each file".into(),
                );
            }
        }
        "history" => {
            if args.iter().any(|a| a.shown().starts_with('-')) {
                out.mark(Verdict::Unknown, "history changes the history".into());
            }
        }
        "less" | "more" | "man" => {
            if args.iter().any(|a| a.value.is_none()) {
                out.mark(Verdict::Unknown, format!("{b} of a file named at run time"));
            }
        }
        "export" | "local" | "declare" | "typeset" | "readonly" | "set" => {
            for a in args {
                if let Some((name, _)) = a.shown().split_once('=') {
                    if crate::wrap::risky_env(name) {
                        out.mark(
                            Verdict::Unknown,
                            format!("sets {name}, which changes what a program runs"),
                        );
                    }
                }
            }
        }
        _ if READ_ONLY.contains(&b) => {}
        _ => out.mark(
            Verdict::Unknown,
            format!("{b} is not known to be read-only"),
        ),
    }
    // A read-only program handed an argument only known at run time stays read-only;
    // but a program word inside its args (e.g. `env`) is handled by unwrap.
    out
}

/// `sed -n 5p`, `s/a/b/g`: scripts that only print.
fn sed_read_only(s: &str) -> bool {
    let s = s.trim();
    if s.chars()
        .all(|c| c.is_ascii_digit() || matches!(c, ',' | '$' | 'p' | 'd' | ' ' | 'q'))
    {
        return true;
    }
    let mut chars = s.chars();
    if chars.next() != Some('s') {
        return false;
    }
    let Some(delim) = chars.next() else {
        return false;
    };
    if delim.is_alphanumeric() || delim == '\\' || delim == '\n' {
        return false;
    }
    let mut parts = 0;
    let mut esc = false;
    let mut flags = String::new();
    for c in chars {
        if parts == 2 {
            flags.push(c);
            continue;
        }
        if esc {
            esc = false;
        } else if c == '\\' {
            esc = true;
        } else if c == delim {
            parts += 1;
        }
    }
    parts == 2
        && flags
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, 'g' | 'i' | 'I' | 'p'))
}
