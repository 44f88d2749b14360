//! Programs that run a script of their own: `sed`, `awk`, `jq`. Each is read-only only
//! when its options are known ones and its script is seen here and only prints: sed's
//! `e`, `w` and `r` commands, awk's `system()`, pipes and redirections, and a script
//! read from a file (which is not seen) are not.

use crate::judge::{Jcx, Judge, Out};
use crate::opts::{self, named, Arg, Spec};
use crate::secrets;
use crate::words::Word;
use crate::Verdict;

const JUDGES: &[(&[&str], Judge)] = &[
    (&["sed"], sed),
    (&["awk", "gawk", "mawk", "nawk"], awk),
    (&["jq"], jq),
];

/// The judge of program `b`, if it is one of these.
pub fn judge_of(b: &str) -> Option<Judge> {
    JUDGES
        .iter()
        .find(|(names, _)| names.contains(&b))
        .map(|(_, j)| *j)
}

/// GNU sed 4.9's options.
const SED: Spec = Spec {
    short: "bsnrzuEe:f:l:i::",
    long: &[
        "binary",
        "debug",
        "expression=",
        "file=",
        "follow-symlinks",
        "help",
        "in-place?",
        "line-length=",
        "null-data",
        "zero-terminated",
        "posix",
        "quiet",
        "regexp-extended",
        "sandbox",
        "separate",
        "silent",
        "unbuffered",
        "version",
    ],
};

fn sed(b: &str, args: &[Word], cx: &Jcx<'_>, out: &mut Out) {
    let parsed = match opts::parse(&SED, args) {
        Ok(p) => p,
        Err(why) => {
            out.mark(Verdict::Unknown, format!("{b} {why}"));
            return;
        }
    };
    let mut scripts: Vec<&Word> = Vec::new();
    let mut sandbox = false;
    let mut from_file = false;
    for a in &parsed {
        match a {
            Arg::Opt { name, value, .. } => {
                if named("i|in-place", name) {
                    out.mark(Verdict::Unknown, "sed -i edits files in place".into());
                } else if named("f|file", name) {
                    from_file = true;
                    out.mark(
                        Verdict::Unknown,
                        "sed -f runs a script from a file, which may write files or run commands"
                            .into(),
                    );
                } else if named("e|expression", name) {
                    scripts.extend(value.iter());
                }
                sandbox |= name == "sandbox";
            }
            Arg::Unseen(w) => out.mark(
                Verdict::Unknown,
                format!(
                    "sed gets an argument only known at run time ({}), which may be -i or a script",
                    w.brief()
                ),
            ),
            Arg::Operand(_) => {}
        }
    }
    let mut operands = parsed.iter().filter_map(|a| match a {
        Arg::Operand(w) | Arg::Unseen(w) => Some(w),
        Arg::Opt { .. } => None,
    });
    if scripts.is_empty() && !from_file {
        scripts.extend(operands.next());
    }
    for s in scripts {
        // --sandbox makes sed refuse the `e`, `r` and `w` commands itself.
        if !sandbox && !s.value.as_deref().is_some_and(sed_read_only) {
            out.mark(
                Verdict::Unknown,
                "the sed script may write files or run commands".into(),
            );
        }
    }
    for f in operands {
        secrets::check_read(b, f, false, cx, out);
    }
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

/// awk (mawk on Debian, gawk elsewhere, each with options of its own): only `-F SEP`
/// and `-v NAME=VALUE` are taken; the program must be on the line and only print.
fn awk(b: &str, args: &[Word], cx: &Jcx<'_>, out: &mut Out) {
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let Some(v) = a.value.as_deref() else {
            out.mark(
                Verdict::Unknown,
                format!(
                    "{b} gets an argument only known at run time ({}), which may be -f",
                    a.brief()
                ),
            );
            return;
        };
        if v == "--" {
            i += 1;
            break;
        }
        if !v.starts_with('-') || v == "-" {
            break;
        }
        match v {
            "-F" | "-v" => i += 2,
            _ if v.starts_with("-F") || v.starts_with("-v") => i += 1,
            _ => {
                out.mark(
                    Verdict::Unknown,
                    format!(
                        "{b} {v}: only -F and -v are known to keep awk read-only (-f runs a program from a file, -W/--exec/--load/--pretty-print run or write)"
                    ),
                );
                return;
            }
        }
    }
    let Some(prog) = args.get(i) else {
        out.mark(Verdict::Unknown, format!("{b} without a program"));
        return;
    };
    if !prog.value.as_deref().is_some_and(awk_read_only) {
        out.mark(
            Verdict::Unknown,
            "the awk program may write files, run commands or read the environment".into(),
        );
    }
    for f in &args[i + 1..] {
        // `NAME=value` operands are assignments, the rest files.
        let assignment = f.value.as_deref().is_some_and(|v| {
            v.split_once('=').is_some_and(|(n, _)| {
                !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            })
        });
        if !assignment {
            secrets::check_read(b, f, false, cx, out);
        }
    }
}

fn awk_read_only(p: &str) -> bool {
    !["system", "|", ">", "getline", "ENVIRON", "@", "PROCINFO"]
        .iter()
        .any(|x| p.contains(x))
}

/// jq 1.7's options: which take one word, which two.
const JQ_ONE: &[&str] = &["-f", "--from-file", "-L", "--indent"];
const JQ_TWO: &[&str] = &[
    "--arg",
    "--argjson",
    "--slurpfile",
    "--rawfile",
    "--argfile",
];
const JQ_FLAGS: &[&str] = &[
    "--seq",
    "--stream",
    "--stream-errors",
    "--slurp",
    "--raw-input",
    "--null-input",
    "--compact-output",
    "--tab",
    "--color-output",
    "--monochrome-output",
    "--ascii-output",
    "--unbuffered",
    "--sort-keys",
    "--raw-output",
    "--raw-output0",
    "--join-output",
    "--exit-status",
    "--args",
    "--jsonargs",
    "--help",
    "--version",
    "--build-configuration",
];

/// jq cannot write a file or run a program; it can print the environment (`env`,
/// `$ENV`) and read the files it is named.
fn jq(b: &str, args: &[Word], cx: &Jcx<'_>, out: &mut Out) {
    let mut program: Option<&Word> = None;
    let mut from_file = false;
    let mut rest_are_args = false;
    let mut files: Vec<&Word> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        let Some(v) = a.value.as_deref() else {
            if program.is_none() && !from_file {
                program = Some(a);
            } else if !rest_are_args {
                files.push(a);
            }
            continue;
        };
        if v.starts_with("--") && v.len() > 2 {
            if JQ_ONE.contains(&v) {
                from_file |= v == "--from-file";
                files.extend(args.get(i).filter(|_| v == "--from-file"));
                i += 1;
            } else if JQ_TWO.contains(&v) {
                if v != "--arg" && v != "--argjson" {
                    files.extend(args.get(i + 1));
                }
                i += 2;
            } else if JQ_FLAGS.contains(&v) {
                rest_are_args |= v == "--args" || v == "--jsonargs";
            } else {
                out.mark(Verdict::Unknown, format!("jq has no option {v} known here"));
            }
        } else if v.starts_with('-') && v.len() > 1 {
            for c in v[1..].chars() {
                match c {
                    'c' | 'n' | 'e' | 's' | 'r' | 'a' | 'j' | 'C' | 'M' | 'S' | 'R' | 'h' | 'V'
                    | '0' => {}
                    'f' => {
                        from_file = true;
                        files.extend(args.get(i));
                        i += 1;
                    }
                    'L' => i += 1,
                    _ => out.mark(
                        Verdict::Unknown,
                        format!("jq has no option -{c} known here"),
                    ),
                }
            }
        } else if program.is_none() && !from_file {
            program = Some(a);
        } else if !rest_are_args {
            files.push(a);
        }
    }
    if from_file {
        out.mark(
            Verdict::Unknown,
            "jq -f runs a program from a file, which may print the environment".into(),
        );
    }
    if let Some(p) = program {
        let text = p.value.as_deref().unwrap_or("");
        if p.value.is_none()
            || text.contains("env")
            || text.contains("$ENV")
            || text.contains("$__")
        {
            out.mark(
                Verdict::Unknown,
                "the jq program may print the environment, which may hold credentials".into(),
            );
        }
    }
    for f in files {
        secrets::check_read(b, f, false, cx, out);
    }
}
