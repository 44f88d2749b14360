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

/// What a wrapper runs.
pub enum Unwrap {
    /// The program from `at` on, with a note about the wrapper itself.
    Inner {
        at: usize,
        note: Option<(Verdict, String)>,
        /// More arguments come from stdin (`xargs`).
        from_stdin: bool,
    },
    /// A command line in one string (`env -S`, `watch`).
    Script {
        text: String,
        note: Option<(Verdict, String)>,
    },
    /// Nothing else runs.
    Alone(Verdict, String),
}

/// Environment variables that change which program runs or what it loads.
pub fn risky_env(name: &str) -> bool {
    name.starts_with("LD_")
        || name.starts_with("GIT_")
        || name.contains("PAGER")
        || name.contains("EDITOR")
        || name.starts_with("PYTHON")
        || name.starts_with("PERL")
        || name.starts_with("RUBY")
        || matches!(
            name,
            "PATH"
                | "BASH_ENV"
                | "ENV"
                | "IFS"
                | "PS4"
                | "PROMPT_COMMAND"
                | "SHELLOPTS"
                | "NODE_OPTIONS"
                | "BROWSER"
                | "DYLD_INSERT_LIBRARIES"
        )
}

pub fn is_shell(b: &str) -> bool {
    matches!(
        b,
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "fish" | "csh" | "tcsh" | "rbash"
    )
}

pub fn is_interpreter(b: &str) -> bool {
    matches!(
        b,
        "python"
            | "python2"
            | "python3"
            | "perl"
            | "ruby"
            | "node"
            | "nodejs"
            | "php"
            | "lua"
            | "deno"
            | "bun"
            | "tclsh"
            | "Rscript"
            | "pwsh"
            | "osascript"
    ) || b.starts_with("python3.")
}

fn opt_skip(args: &[Word], with_value: &[&str], flags_only_dash: bool) -> usize {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].shown();
        if a == "--" {
            return i + 1;
        }
        if !a.starts_with('-') || a == "-" || (flags_only_dash && a.len() == 1) {
            return i;
        }
        if with_value.contains(&a) {
            i += 2;
        } else {
            i += 1;
        }
    }
    i
}

/// Wrappers: programs that run the program named in their arguments.
pub fn unwrap(b: &str, args: &[Word]) -> Option<Unwrap> {
    let inner = |at: usize, note: Option<(Verdict, String)>| {
        if at >= args.len() {
            Unwrap::Alone(
                note.as_ref().map_or(Verdict::Safe, |n| n.0),
                note.map_or_else(String::new, |n| n.1),
            )
        } else {
            Unwrap::Inner {
                at,
                note,
                from_stdin: false,
            }
        }
    };
    Some(match b {
        "env" => {
            let mut i = 0;
            let mut note = None;
            while i < args.len() {
                let a = args[i].shown();
                if a == "--" {
                    i += 1;
                    break;
                }
                if a == "-S" || a == "--split-string" || (a.starts_with("-S") && a.len() > 2) {
                    let text = if a.len() > 2 && a.starts_with("-S") {
                        Some(a[2..].to_string())
                    } else {
                        args.get(i + 1).and_then(|w| w.value.clone())
                    };
                    let skip = if a.len() > 2 && a.starts_with("-S") {
                        1
                    } else {
                        2
                    };
                    return Some(match text {
                        Some(t) => {
                            let rest: Vec<&str> = args[(i + skip).min(args.len())..]
                                .iter()
                                .map(Word::shown)
                                .collect();
                            Unwrap::Script {
                                text: format!("{t} {}", rest.join(" ")),
                                note: None,
                            }
                        }
                        None => Unwrap::Alone(
                            Verdict::Dangerous,
                            "env -S runs a command line built at run time".into(),
                        ),
                    });
                }
                if matches!(a, "-u" | "--unset" | "-C" | "--chdir") {
                    i += 2;
                    continue;
                }
                if a.starts_with('-') {
                    i += 1;
                    continue;
                }
                if let Some((name, _)) = a.split_once('=') {
                    if risky_env(name) {
                        note = Some((
                            Verdict::Unknown,
                            format!("sets {name}, which changes what a program runs"),
                        ));
                    }
                    i += 1;
                    continue;
                }
                break;
            }
            inner(i, note)
        }
        "sudo" | "doas" | "run0" | "pkexec" => {
            let i = opt_skip(
                args,
                &[
                    "-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "--user",
                    "--group", "--host", "--prompt", "--chdir", "--role", "--type",
                ],
                false,
            );
            let note = Some((Verdict::Unknown, format!("runs as root ({b})")));
            if i >= args.len() {
                return Some(Unwrap::Alone(
                    Verdict::Unknown,
                    format!("{b} without a command starts a root shell"),
                ));
            }
            inner(i, note)
        }
        "timeout" => {
            let i = opt_skip(args, &["-s", "-k", "--signal", "--kill-after"], false);
            inner(i + 1, None)
        }
        "nice" => {
            let mut i = opt_skip(args, &["-n", "--adjustment"], false);
            if i == 0 && args.first().is_some_and(|a| a.shown().starts_with('-')) {
                i = 1;
            }
            inner(i, None)
        }
        "ionice" => inner(
            opt_skip(
                args,
                &["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"],
                false,
            ),
            None,
        ),
        "nohup" | "builtin" | "busybox" | "unbuffer" | "catchsegv" => inner(0, None),
        "time" => inner(
            opt_skip(args, &["-f", "-o", "--format", "--output"], false),
            None,
        ),
        "stdbuf" => inner(opt_skip(args, &["-i", "-o", "-e"], false), None),
        "setsid" => inner(opt_skip(args, &[], false), None),
        "chrt" | "taskset" => {
            let i = opt_skip(args, &[], false);
            inner(i + 1, None)
        }
        "command" => {
            if args.iter().any(|a| a.is("-v") || a.is("-V")) {
                return Some(Unwrap::Alone(Verdict::Safe, String::new()));
            }
            inner(opt_skip(args, &[], false), None)
        }
        "exec" => inner(opt_skip(args, &["-a"], false), None),
        "xargs" => {
            let i = opt_skip(
                args,
                &[
                    "-d",
                    "-E",
                    "-I",
                    "-L",
                    "-n",
                    "-P",
                    "-s",
                    "-a",
                    "--delimiter",
                    "--eof",
                    "--max-lines",
                    "--max-args",
                    "--max-procs",
                    "--max-chars",
                    "--arg-file",
                    "--replace",
                ],
                false,
            );
            if i >= args.len() {
                return Some(Unwrap::Alone(Verdict::Safe, String::new()));
            }
            Unwrap::Inner {
                at: i,
                note: None,
                from_stdin: true,
            }
        }
        "watch" => {
            let i = opt_skip(args, &["-n", "--interval", "-d"], false);
            let parts: Vec<&str> = args[i.min(args.len())..].iter().map(Word::shown).collect();
            if args[i.min(args.len())..].iter().any(|w| w.value.is_none()) {
                return Some(Unwrap::Alone(
                    Verdict::Dangerous,
                    "watch runs a command built at run time".into(),
                ));
            }
            Unwrap::Script {
                text: parts.join(" "),
                note: Some((Verdict::Unknown, "watch runs it repeatedly".into())),
            }
        }
        "alias" | "trap" => {
            let mut texts = Vec::new();
            for a in args {
                match &a.value {
                    Some(v) if b == "alias" => {
                        if let Some((_, body)) = v.split_once('=') {
                            texts.push(body.to_string());
                        }
                    }
                    Some(v) => {
                        texts.push(v.clone());
                        break;
                    }
                    None => {
                        return Some(Unwrap::Alone(
                            Verdict::Dangerous,
                            format!("{b} of a command built at run time"),
                        ));
                    }
                }
            }
            if texts.is_empty() {
                return Some(Unwrap::Alone(Verdict::Safe, String::new()));
            }
            Unwrap::Script {
                text: texts.join("\n"),
                note: Some((Verdict::Unknown, format!("{b} defines a command run later"))),
            }
        }
        _ => return None,
    })
}

/// `python`, `perl`, `source`…: code from a file, a string, or stdin.
pub fn interpreter(
    b: &str,
    args: &[Word],
    downloads: &[bool],
    fed_download: bool,
    fed_decoded: bool,
    out: &mut Out,
) {
    let code_flag = match b {
        "perl" | "ruby" | "node" | "nodejs" | "lua" => "-e",
        "php" => "-r",
        _ => "-c",
    };
    let mut script_given = false;
    for (i, a) in args.iter().enumerate() {
        let dl = downloads.get(i).copied().unwrap_or(false);
        if dl {
            out.mark(
                Verdict::Dangerous,
                format!("{b} runs a download handed to it ({})", a.raw),
            );
        } else if a.substitution && (b == "source" || b == ".") {
            out.mark(
                Verdict::Dangerous,
                format!("{b} runs a script produced at run time ({})", a.raw),
            );
        }
        if a.is(code_flag) || a.is("-m") || !a.shown().starts_with('-') {
            script_given = true;
            break;
        }
    }
    if (!script_given || args.iter().any(|a| a.is("-"))) && (fed_download || fed_decoded) {
        out.mark(
            Verdict::Dangerous,
            if fed_download {
                format!("a download is piped into {b}, which runs it unseen")
            } else {
                format!("decoded text is piped into {b}, which hides what runs")
            },
        );
    }
    out.mark(
        Verdict::Unknown,
        format!("{b} runs code, which can do anything"),
    );
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
    match locate(w, cx) {
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
    match locate(w, cx) {
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

/// Index (into the args after `git`) of the subcommand, past global options.
pub fn git_subcommand_at(args: &[Word]) -> usize {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].shown();
        if matches!(
            a,
            "-C" | "-c"
                | "--git-dir"
                | "--work-tree"
                | "--namespace"
                | "--exec-path"
                | "--config-env"
                | "--super-prefix"
        ) {
            i += 2;
        } else if a.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    i
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
        "git" => git(args, cx, &mut out),
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
                    if risky_env(name) {
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

const GIT_READ_ONLY: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "rev-parse",
    "ls-files",
    "ls-tree",
    "cat-file",
    "blame",
    "describe",
    "shortlog",
    "grep",
    "rev-list",
    "merge-base",
    "name-rev",
    "whatchanged",
    "help",
    "version",
    "show-ref",
    "for-each-ref",
    "count-objects",
    "check-ignore",
    "var",
    "diff-tree",
    "diff-files",
    "diff-index",
    "annotate",
    "cherry",
    "show-branch",
    "ls-remote",
];

fn git(args: &[Word], cx: &Jcx<'_>, out: &mut Out) {
    let at = git_subcommand_at(args);
    let mut i = 0;
    while i < at {
        let a = args[i].shown();
        if a == "-c" {
            let kv = args.get(i + 1).map(Word::shown).unwrap_or("");
            let k = kv.split('=').next().unwrap_or("").to_ascii_lowercase();
            let harmless = k.starts_with("color.")
                || k.starts_with("log.")
                || k.starts_with("advice.")
                || k.starts_with("user.")
                || matches!(
                    k.as_str(),
                    "core.quotepath"
                        | "core.abbrev"
                        | "safe.directory"
                        | "init.defaultbranch"
                        | "diff.noprefix"
                );
            if !harmless {
                out.mark(
                    Verdict::Unknown,
                    format!("git -c {k} can make git run another program"),
                );
            }
            i += 2;
            continue;
        }
        if a == "--exec-path" || a.starts_with("--exec-path=") || a == "--config-env" {
            out.mark(Verdict::Unknown, format!("git {a} changes what git runs"));
        }
        if a == "-C" {
            if let Some(w) = args.get(i + 1) {
                if w.value.is_none() {
                    out.mark(
                        Verdict::Unknown,
                        format!("git -C to a folder known only at run time ({})", w.raw),
                    );
                }
            }
            i += 2;
            continue;
        }
        i += if matches!(a, "--git-dir" | "--work-tree" | "--namespace") {
            2
        } else {
            1
        };
    }
    let Some(sub) = args.get(at) else {
        return;
    };
    let rest = &args[at + 1..];
    let has = |f: &str| rest.iter().any(|a| a.is(f));
    let starts = |f: &str| rest.iter().any(|a| a.shown().starts_with(f));
    let short = |c: char| {
        rest.iter().any(|a| {
            let s = a.shown();
            s.starts_with('-') && !s.starts_with("--") && s[1..].contains(c)
        })
    };
    let Some(sub) = sub.value.as_deref() else {
        out.mark(
            Verdict::Dangerous,
            format!("the git subcommand is only known at run time ({})", sub.raw),
        );
        return;
    };
    let _ = cx;
    let danger = |out: &mut Out, r: &str| out.mark(Verdict::Dangerous, r.to_string());
    match sub {
        "push" => {
            if has("--force")
                || has("-f")
                || short('f')
                || starts("--force")
                || has("--mirror")
                || has("--delete")
                || short('d')
                || rest.iter().any(|a| {
                    a.shown().starts_with('+')
                        || (a.shown().starts_with(':') && a.shown().len() > 1)
                })
            {
                danger(out, "git push rewrites or deletes history on the remote");
            }
            out.mark(Verdict::Unknown, "git push publishes commits".into());
        }
        "reset" => {
            if has("--hard") || has("--merge") || has("--keep") {
                danger(out, "git reset --hard throws away uncommitted work");
            }
            out.mark(Verdict::Unknown, "git reset moves the branch".into());
        }
        "clean" => {
            if short('f') || has("--force") {
                danger(out, "git clean -f deletes untracked files for good");
            }
            out.mark(Verdict::Unknown, "git clean deletes untracked files".into());
        }
        "filter-branch" | "filter-repo" => {
            danger(out, "git filter-branch rewrites the whole history")
        }
        "checkout" | "restore" | "switch" => {
            if has("-f")
                || has("--force")
                || has(".")
                || (sub != "switch" && has("--") && rest.iter().any(|a| a.is(".")))
                || has("--discard-changes")
            {
                danger(out, "discards uncommitted changes");
            }
            out.mark(
                Verdict::Unknown,
                format!("git {sub} changes the working tree"),
            );
        }
        "branch" => {
            if has("-D") || (short('d') && short('f')) || (has("--delete") && has("--force")) {
                danger(out, "git branch -D deletes a branch with unmerged work");
            }
            let lists = rest.iter().all(|a| {
                a.shown().starts_with('-')
                    && !matches!(
                        a.shown(),
                        "-d" | "-D"
                            | "-m"
                            | "-M"
                            | "-c"
                            | "-C"
                            | "--delete"
                            | "--move"
                            | "--copy"
                            | "-f"
                            | "--force"
                            | "-u"
                            | "--set-upstream-to"
                            | "--unset-upstream"
                            | "--edit-description"
                    )
            });
            if !lists {
                out.mark(Verdict::Unknown, "git branch changes branches".into());
            }
        }
        "tag" => {
            if !(rest.is_empty() || has("-l") || has("--list")) {
                out.mark(Verdict::Unknown, "git tag changes tags".into());
            }
        }
        "stash" => {
            if rest.first().is_some_and(|a| a.is("clear") || a.is("drop")) {
                danger(out, "git stash clear/drop deletes stashed work");
            }
            if !rest.first().is_some_and(|a| a.is("list") || a.is("show")) {
                out.mark(
                    Verdict::Unknown,
                    "git stash changes the working tree".into(),
                );
            }
        }
        "reflog" => {
            if rest
                .first()
                .is_some_and(|a| a.is("expire") || a.is("delete"))
            {
                danger(
                    out,
                    "git reflog expire drops the safety net of lost commits",
                );
            }
        }
        "gc" | "prune" => {
            if starts("--prune=now") || starts("--prune=all") || sub == "prune" {
                danger(out, "git prune drops unreachable commits for good");
            }
            out.mark(Verdict::Unknown, "git gc".into());
        }
        "update-ref" => {
            if has("-d") {
                danger(out, "git update-ref -d deletes a ref");
            }
            out.mark(Verdict::Unknown, "git update-ref moves a ref".into());
        }
        "remote" => {
            if !(rest.is_empty()
                || rest.iter().all(|a| a.is("-v") || a.is("--verbose"))
                || rest
                    .first()
                    .is_some_and(|a| a.is("show") || a.is("get-url")))
            {
                out.mark(Verdict::Unknown, "git remote changes remotes".into());
            }
        }
        "config" => {
            if !(has("--get")
                || has("--list")
                || has("-l")
                || has("--get-all")
                || has("--get-regexp")
                || rest.first().is_some_and(|a| a.is("get") || a.is("list")))
            {
                out.mark(Verdict::Unknown, "git config changes settings".into());
            }
        }
        _ if GIT_READ_ONLY.contains(&sub) => {
            if starts("--output")
                || starts("--ext-diff")
                || (sub == "grep" && (has("-O") || starts("--open-files-in-pager")))
            {
                out.mark(
                    Verdict::Unknown,
                    format!("git {sub} with an option that writes or runs a program"),
                );
            }
        }
        _ => out.mark(
            Verdict::Unknown,
            format!("git {sub} changes the repository"),
        ),
    }
}
