//! Programs that run other programs: wrappers (`env`, `sudo`, `timeout`, `xargs`…),
//! shells and interpreters.

use crate::judge::Out;
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
