//! The shell's own commands (and `printenv`, `ps`): which of their uses only read.
//!
//! Three things make a harmless-looking builtin run code or leak:
//! - an assignment (`export PATH=./bin`, `declare -n r=PATH`, `printf -v PATH …`)
//!   changes what later commands run; bash evaluates an array subscript in a name as
//!   arithmetic (`declare 'a[$(cmd)]=1'`, `test -v 'a[$(cmd)]'`), which runs `cmd`;
//! - `hash -p FILE NAME` makes NAME run FILE;
//! - printing every variable (`set`, `export`, `declare -p`, `printenv`) prints the
//!   credentials in the environment.

use crate::judge::{Jcx, Judge, Out};
use crate::secrets::credential_name;
use crate::words::Word;
use crate::Verdict;

const JUDGES: &[(&[&str], Judge)] = &[
    (
        &[
            "echo", "true", "false", ":", "pwd", "cd", "pushd", "popd", "dirs", "type", "help",
            "shift", "exit", "return", "break", "continue",
        ],
        harmless,
    ),
    (&["printf"], printf),
    (&["test", "["], test),
    (&["jobs"], jobs),
    (&["wait"], wait),
    (&["set"], set),
    (
        &["export", "declare", "typeset", "local", "readonly"],
        declare,
    ),
    (&["unset"], unset),
    (&["hash"], hash),
    (&["printenv"], printenv),
    (&["ps"], ps),
];

/// The judge of builtin `b`, if it is one of these.
pub fn judge_of(b: &str) -> Option<Judge> {
    JUDGES
        .iter()
        .find(|(names, _)| names.contains(&b))
        .map(|(_, j)| *j)
}

fn harmless(_: &str, _: &[Word], _: &Jcx<'_>, _: &mut Out) {}

/// A name with an array subscript, which bash evaluates as arithmetic.
fn subscripted(w: &Word) -> bool {
    w.value
        .as_deref()
        .is_none_or(|v| v.split('=').next().is_some_and(|name| name.contains('[')))
}

fn printf(_: &str, args: &[Word], _: &Jcx<'_>, out: &mut Out) {
    // bash's printf takes one option, `-v NAME` (or `-vNAME`), before the format.
    match args.first() {
        Some(a) if a.value.is_none() => out.mark(
            Verdict::Unknown,
            format!(
                "printf gets an argument only known at run time ({}), which may be -v",
                a.brief()
            ),
        ),
        Some(a) if a.shown().starts_with("-v") => out.pin(
            "printf -v assigns a variable (PATH, or an array subscript that runs commands)".into(),
        ),
        _ => {}
    }
}

fn test(b: &str, args: &[Word], _: &Jcx<'_>, out: &mut Out) {
    for (i, a) in args.iter().enumerate() {
        if (a.is("-v") || a.is("-R")) && args.get(i + 1).is_some_and(subscripted) {
            out.pin(format!(
                "{b} {} evaluates an array subscript, which can run commands",
                a.shown()
            ));
        }
    }
}

fn jobs(_: &str, args: &[Word], _: &Jcx<'_>, out: &mut Out) {
    if args
        .iter()
        .any(|a| a.value.is_none() || a.shown().starts_with("-x"))
    {
        out.mark(
            Verdict::Unknown,
            "jobs -x runs the command it is given".into(),
        );
    }
}

fn wait(_: &str, args: &[Word], _: &Jcx<'_>, out: &mut Out) {
    if args
        .iter()
        .any(|a| a.value.is_none() || a.shown().starts_with('-') && a.shown().contains('p'))
    {
        out.mark(Verdict::Unknown, "wait -p assigns a variable".into());
    }
}

fn set(_: &str, args: &[Word], _: &Jcx<'_>, out: &mut Out) {
    if args.is_empty() {
        out.mark(
            Verdict::Unknown,
            "set prints every variable, which may hold credentials".into(),
        );
        return;
    }
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let Some(v) = a.value.as_deref() else {
            out.mark(
                Verdict::Unknown,
                format!("set gets an option only known at run time ({})", a.brief()),
            );
            return;
        };
        if v == "--" || v == "-" || !v.starts_with(['-', '+']) {
            // The positional parameters: plain text.
            return;
        }
        if v[1..].contains('k') {
            // Every `NAME=value` word then goes into the command's environment:
            // `ls LD_PRELOAD=./x.so` would load x.so.
            out.pin("set -k puts assignments anywhere on a line into the environment".into());
        }
        if v[1..].contains('o') {
            // `-o NAME` (`-euo pipefail`): the next word names the option.
            i += 1;
            if args
                .get(i)
                .is_some_and(|n| n.value.is_none() || n.is("keyword"))
            {
                out.pin(
                    "set -o keyword puts assignments anywhere on a line into the environment"
                        .into(),
                );
            }
        }
        i += 1;
    }
}

fn declare(b: &str, args: &[Word], _: &Jcx<'_>, out: &mut Out) {
    let names: Vec<&Word> = args
        .iter()
        .filter(|a| a.value.is_none() || !a.shown().starts_with(['-', '+']))
        .collect();
    let flags: String = args
        .iter()
        .filter_map(|a| a.value.as_deref())
        .filter(|v| v.starts_with(['-', '+']) && *v != "--")
        .flat_map(|v| v.chars().skip(1))
        .collect();
    if let Some(bad) = flags.chars().find(|c| !"aAfFgiIlnprtux".contains(*c)) {
        out.mark(
            Verdict::Unknown,
            format!("{b} has no option -{bad} known here"),
        );
    }
    if names.is_empty() && !flags.contains('f') && !flags.contains('F') {
        out.mark(
            Verdict::Unknown,
            format!("{b} prints every variable, which may hold credentials"),
        );
    } else if flags.contains('p') {
        out.mark(
            Verdict::Unknown,
            format!("{b} -p prints variables, which may hold credentials"),
        );
    }
    if flags.contains('n') {
        out.pin(format!(
            "{b} -n makes a name refer to another variable (a nameref), so assigning it changes that one"
        ));
    }
    if flags.contains('i') {
        out.pin(format!(
            "{b} -i evaluates what is assigned as arithmetic, which can run commands"
        ));
    }
    for n in names {
        if subscripted(n) {
            out.pin(format!(
                "{b} {} evaluates an array subscript, which can run commands",
                n.brief()
            ));
        } else if let Some((name, _)) = n.shown().split_once('=') {
            let why = if crate::wrap::risky_env(name) {
                format!("{b} sets {name}, which changes what a program runs")
            } else {
                format!("{b} assigns {name}, which later commands may read")
            };
            out.pin(why);
        }
    }
}

fn unset(_: &str, args: &[Word], _: &Jcx<'_>, out: &mut Out) {
    if args.iter().any(subscripted) {
        out.pin("unset of an array element evaluates its subscript, which can run commands".into());
    }
}

fn hash(_: &str, _: &[Word], _: &Jcx<'_>, out: &mut Out) {
    out.pin("hash changes which file a command name runs (hash -p FILE NAME)".into());
}

fn printenv(_: &str, args: &[Word], _: &Jcx<'_>, out: &mut Out) {
    let names: Vec<&Word> = args
        .iter()
        .filter(|a| a.value.is_none() || !a.shown().starts_with('-'))
        .collect();
    if names.is_empty() {
        out.mark(
            Verdict::Unknown,
            "printenv prints every environment variable, which may hold credentials".into(),
        );
    }
    for n in names {
        if n.value.as_deref().is_none_or(credential_name) {
            out.mark(
                Verdict::Unknown,
                format!("printenv {}, which may hold a credential", n.brief()),
            );
        }
    }
    if args
        .iter()
        .any(|a| a.shown().starts_with('-') && !matches!(a.shown(), "-0" | "--null" | "--"))
    {
        out.mark(
            Verdict::Unknown,
            "printenv has no such option known to be read-only".into(),
        );
    }
}

/// procps `ps` reads `/proc` and prints; none of its options (BSD, UNIX or GNU style,
/// read by its own parser, not getopt) writes a file or runs a program.
fn ps(_: &str, args: &[Word], _: &Jcx<'_>, out: &mut Out) {
    if let Some(a) = args.iter().find(|a| a.value.is_none()) {
        out.mark(
            Verdict::Unknown,
            format!("ps gets an argument only known at run time ({})", a.brief()),
        );
    }
}
