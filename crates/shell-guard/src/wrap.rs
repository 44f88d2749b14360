//! Programs that run other programs: wrappers (`env`, `sudo`, `timeout`, `xargs`…),
//! shells and interpreters.

use crate::judge::{write_target, Jcx, Out};
use crate::opts::{self, named, Arg, Spec};
use crate::words::Word;
use crate::Verdict;

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
    /// It runs this program, with arguments from stdin (`xargs` alone runs `echo`).
    Implicit {
        program: &'static str,
        note: Option<(Verdict, String)>,
    },
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
        || name.starts_with("BASH_FUNC_")
        || name.ends_with("_CONFIG_PATH")
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
                | "GLOBIGNORE"
                | "CDPATH"
                | "HOME"
                | "LESSOPEN"
                | "LESSCLOSE"
                | "XDG_CONFIG_HOME"
        )
}

/// Variables a read-only program may be given without changing what it does (a
/// locale, a time zone, colors, widths). Any other variable set for a `safe` program
/// makes it `unknown`: what a variable does to a program is not known here.
pub fn harmless_env(name: &str) -> bool {
    name.starts_with("LC_")
        || matches!(
            name,
            "LANG"
                | "LANGUAGE"
                | "TZ"
                | "COLUMNS"
                | "LINES"
                | "NO_COLOR"
                | "CLICOLOR"
                | "CLICOLOR_FORCE"
                | "FORCE_COLOR"
                | "TERM"
                | "GREP_COLOR"
                | "GREP_COLORS"
                | "LS_COLORS"
                | "TIME_STYLE"
                | "BLOCK_SIZE"
                | "DU_BLOCK_SIZE"
                | "DF_BLOCK_SIZE"
                | "LS_BLOCK_SIZE"
                | "QUOTING_STYLE"
                | "TABSIZE"
                | "POSIXLY_CORRECT"
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

/// Whether wrapper `b` hands its command to `execve`, so a shell builtin named there
/// is not the builtin but whatever file of that name is on PATH. `builtin`, `command`
/// and `time` are the shell's own and run its builtins.
pub fn execs(b: &str) -> bool {
    !matches!(b, "builtin" | "command" | "time")
}

/// Bash builtins and keywords no Debian package ships a program for: run by a wrapper
/// that execs, each is a file found on PATH, not the builtin judged by its name.
pub fn shell_only(name: &str) -> bool {
    matches!(
        name,
        ":" | "."
            | "alias"
            | "bg"
            | "bind"
            | "break"
            | "caller"
            | "cd"
            | "compgen"
            | "complete"
            | "continue"
            | "declare"
            | "dirs"
            | "disown"
            | "enable"
            | "eval"
            | "exec"
            | "exit"
            | "export"
            | "fc"
            | "fg"
            | "getopts"
            | "hash"
            | "help"
            | "history"
            | "jobs"
            | "let"
            | "local"
            | "logout"
            | "mapfile"
            | "popd"
            | "pushd"
            | "read"
            | "readarray"
            | "readonly"
            | "return"
            | "set"
            | "shift"
            | "shopt"
            | "source"
            | "suspend"
            | "trap"
            | "typeset"
            | "ulimit"
            | "umask"
            | "unalias"
            | "unset"
            | "wait"
    )
}

const ENV: Spec = Spec {
    // GNU env: the whitespace letters let `#!/usr/bin/env -S…` lines bundle.
    short: "+a:C:iS:u:v0 \t",
    long: &[
        "argv0=",
        "ignore-environment",
        "env0-from=",
        "null",
        "unset=",
        "chdir=",
        "default-signal?",
        "ignore-signal?",
        "block-signal?",
        "list-signal-handling",
        "debug",
        "split-string=",
        "help",
        "version",
    ],
};
const TIME: Spec = Spec {
    short: "+af:o:pqvV",
    long: &[
        "append",
        "format=",
        "output=",
        "portability",
        "quiet",
        "verbose",
        "help",
        "version",
    ],
};
const TIMEOUT: Spec = Spec {
    short: "+fk:ps:v",
    long: &[
        "foreground",
        "kill-after=",
        "preserve-status",
        "signal=",
        "verbose",
        "help",
        "version",
    ],
};
const NICE: Spec = Spec {
    short: "+n:",
    long: &["adjustment=", "help", "version"],
};
const STDBUF: Spec = Spec {
    short: "+i:o:e:",
    long: &["input=", "output=", "error=", "help", "version"],
};
const XARGS: Spec = Spec {
    short: "+0a:d:E:e::I:i::L:l::n:oP:prs:tx",
    long: &[
        "null",
        "arg-file=",
        "delimiter=",
        "eof?",
        "replace?",
        "max-lines?",
        "max-args=",
        "open-tty",
        "max-procs=",
        "interactive",
        "process-slot-var=",
        "no-run-if-empty",
        "max-chars=",
        "show-limits",
        "verbose",
        "exit",
        "help",
        "version",
    ],
};

/// A wrapper's options read as getopt reads them: the index of its first operand
/// (the program it runs) and the options; `Err` is what it is judged when they
/// cannot be read.
fn wrapper_opts(b: &str, spec: &Spec, args: &[Word]) -> Result<(usize, Vec<Arg>), Unwrap> {
    let (parsed, at) = opts::parse_head(spec, args)
        .map_err(|why| Unwrap::Alone(Verdict::Unknown, format!("{b} {why}")))?;
    Ok((at, parsed))
}

fn opt<'a>(parsed: &'a [Arg], keys: &str) -> Option<&'a Option<Word>> {
    parsed.iter().find_map(|a| match a {
        Arg::Opt { name, value, .. } if named(keys, name) => Some(value),
        _ => None,
    })
}

/// `env`: options, then `NAME=value` words, then the program, or a whole command line
/// in `-S`/`--split-string` (in any spelling or bundle: `-iS'cmd'`, `--split=cmd`).
fn env(args: &[Word]) -> Unwrap {
    let (mut i, parsed) = match wrapper_opts("env", &ENV, args) {
        Ok(x) => x,
        Err(u) => return u,
    };
    if let Some(split) = opt(&parsed, "S|split-string") {
        let rest: Vec<&str> = args[i.min(args.len())..].iter().map(Word::shown).collect();
        return match split.as_ref().and_then(|w| w.value.clone()) {
            Some(t) => Unwrap::Script {
                text: format!("{t} {}", rest.join(" ")),
                note: None,
            },
            None => Unwrap::Alone(
                Verdict::Dangerous,
                "env -S runs a command line built at run time".into(),
            ),
        };
    }
    let mut note = None;
    if opt(&parsed, "C|chdir").is_some() {
        note = Some((
            Verdict::Unknown,
            "env -C runs it in another folder".to_string(),
        ));
    }
    if opt(&parsed, "env0-from").is_some() {
        note = Some((
            Verdict::Unknown,
            "env --env0-from sets variables from a file, unseen here".to_string(),
        ));
    }
    while let Some(a) = args.get(i) {
        let Some((name, _)) = a.shown().split_once('=') else {
            break;
        };
        if risky_env(name) {
            note = Some((
                Verdict::Unknown,
                format!("sets {name}, which changes what a program runs"),
            ));
        } else if !harmless_env(name) {
            note = note.or(Some((
                Verdict::Unknown,
                format!("sets {name} for it, which is not known to be harmless"),
            )));
        }
        i += 1;
    }
    if i >= args.len() {
        return Unwrap::Alone(
            Verdict::Unknown,
            "env without a program prints every environment variable, which may hold credentials"
                .into(),
        );
    }
    Unwrap::Inner {
        at: i,
        note,
        from_stdin: false,
    }
}

/// `xargs`: its options, then the program (`echo` when none), its arguments from stdin.
fn xargs(args: &[Word], cx: &Jcx<'_>) -> Unwrap {
    let (i, parsed) = match wrapper_opts("xargs", &XARGS, args) {
        Ok(x) => x,
        Err(u) => return u,
    };
    let mut note = None;
    if let Some(Some(file)) = opt(&parsed, "a|arg-file") {
        let mut o = Out::default();
        crate::secrets::check_read("xargs -a", file, false, cx, &mut o);
        note = o.reasons.first().map(|r| (o.v, r.clone()));
    }
    if opt(&parsed, "process-slot-var").is_some() {
        note = Some((
            Verdict::Unknown,
            "xargs --process-slot-var sets a variable for it".into(),
        ));
    }
    if i >= args.len() {
        return Unwrap::Implicit {
            program: "echo",
            note,
        };
    }
    Unwrap::Inner {
        at: i,
        note,
        from_stdin: true,
    }
}

/// The command a wrapper runs from `at` on (`Alone` when it names none).
fn inner_at(args: &[Word], at: usize, note: Option<(Verdict, String)>) -> Unwrap {
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
}

/// `nice [-n N] CMD`, and its obsolete `nice -10 CMD`.
fn nice(args: &[Word]) -> Unwrap {
    let obsolete = args.first().is_some_and(|a| {
        a.value.as_deref().is_some_and(|v| {
            v.len() > 1
                && v.starts_with('-')
                && v[1..]
                    .trim_start_matches('-')
                    .chars()
                    .all(|c| c.is_ascii_digit())
        })
    });
    let skip = usize::from(obsolete);
    match wrapper_opts("nice", &NICE, &args[skip..]) {
        Ok((at, _)) => inner_at(args, at + skip, None),
        Err(u) => u,
    }
}

/// `strace`/`ltrace OPTIONS CMD`: at best unknown, and a write where `-o` names.
fn trace(b: &str, args: &[Word], cx: &Jcx<'_>) -> Unwrap {
    let i = opt_skip(
        args,
        &[
            "-o", "-e", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-S", "-X", "-P", "-U",
            "-n", "-l", "-L",
        ],
        false,
    );
    let mut note = (Verdict::Unknown, format!("{b} traces the program it runs"));
    if let Some(at) = args.iter().position(|a| a.is("-o")) {
        if let Some(file) = args.get(at + 1) {
            let (v, r) = write_target(file, cx, &format!("{b} -o writes to"));
            if v == Verdict::Dangerous {
                note = (v, r);
            }
        }
    }
    if i >= args.len() {
        return Unwrap::Alone(note.0, note.1);
    }
    inner_at(args, i, Some(note))
}

/// Wrappers: programs that run the program named in their arguments.
pub fn unwrap(b: &str, args: &[Word], cx: &Jcx<'_>) -> Option<Unwrap> {
    let inner = |at: usize, note: Option<(Verdict, String)>| inner_at(args, at, note);
    let with = |spec: &Spec, skip: usize| match wrapper_opts(b, spec, args) {
        Ok((at, _)) => inner(at + skip, None),
        Err(u) => u,
    };
    Some(match b {
        "env" => env(args),
        "xargs" => xargs(args, cx),
        "time" => match wrapper_opts(b, &TIME, args) {
            Ok((at, parsed)) => {
                let note = match opt(&parsed, "o|output") {
                    Some(Some(file)) => {
                        let (v, r) = write_target(file, cx, "time -o writes to");
                        Some((v.max(Verdict::Unknown), r))
                    }
                    _ => None,
                };
                inner(at, note)
            }
            Err(u) => u,
        },
        "timeout" => with(&TIMEOUT, 1),
        "stdbuf" => with(&STDBUF, 0),
        "nice" => nice(args),
        "strace" | "ltrace" => trace(b, args, cx),
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
        "ionice" => inner(
            opt_skip(
                args,
                &["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"],
                false,
            ),
            None,
        ),
        "nohup" | "builtin" | "busybox" | "unbuffer" | "catchsegv" => inner(0, None),
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
                format!("{b} runs a download handed to it ({})", a.brief()),
            );
        } else if a.substitution && (b == "source" || b == ".") {
            out.mark(
                Verdict::Dangerous,
                format!("{b} runs a script produced at run time ({})", a.brief()),
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
