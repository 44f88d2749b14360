//! `find`: the starting points, then an expression of GNU findutils' primaries. It is
//! read-only only with the primaries listed here; `-delete`, `-exec…`, `-ok…` and the
//! `-fprint…`/`-fls` family change things, and a primary not listed is `unknown`.

use crate::judge::{delete_target, locate, write_target, Jcx, Out};
use crate::paths::Place;
use crate::words::Word;
use crate::Verdict;

/// Primaries that only read, with how many words each takes.
const READ_ONLY: &[(&str, usize)] = &[
    // Options.
    ("-d", 0),
    ("-depth", 0),
    ("-follow", 0),
    ("-help", 0),
    ("--help", 0),
    ("-ignore_readdir_race", 0),
    ("-noignore_readdir_race", 0),
    ("-maxdepth", 1),
    ("-mindepth", 1),
    ("-mount", 0),
    ("-xdev", 0),
    ("-noleaf", 0),
    ("-regextype", 1),
    ("-version", 0),
    ("--version", 0),
    ("-warn", 0),
    ("-nowarn", 0),
    ("-daystart", 0),
    ("-files0-from", 1),
    // Tests.
    ("-amin", 1),
    ("-anewer", 1),
    ("-atime", 1),
    ("-cmin", 1),
    ("-cnewer", 1),
    ("-context", 1),
    ("-ctime", 1),
    ("-empty", 0),
    ("-executable", 0),
    ("-false", 0),
    ("-fstype", 1),
    ("-gid", 1),
    ("-group", 1),
    ("-ilname", 1),
    ("-iname", 1),
    ("-inum", 1),
    ("-ipath", 1),
    ("-iregex", 1),
    ("-iwholename", 1),
    ("-links", 1),
    ("-lname", 1),
    ("-mmin", 1),
    ("-mtime", 1),
    ("-name", 1),
    ("-newer", 1),
    ("-nogroup", 0),
    ("-nouser", 0),
    ("-path", 1),
    ("-perm", 1),
    ("-readable", 0),
    ("-regex", 1),
    ("-samefile", 1),
    ("-size", 1),
    ("-true", 0),
    ("-type", 1),
    ("-uid", 1),
    ("-used", 1),
    ("-user", 1),
    ("-wholename", 1),
    ("-writable", 0),
    ("-xtype", 1),
    // Actions that only print.
    ("-ls", 0),
    ("-print", 0),
    ("-print0", 0),
    ("-printf", 1),
    ("-prune", 0),
    ("-quit", 0),
    // Operators.
    ("(", 0),
    (")", 0),
    ("!", 0),
    (",", 0),
    ("-not", 0),
    ("-a", 0),
    ("-and", 0),
    ("-o", 0),
    ("-or", 0),
];

/// Judges `find ARGS`.
pub fn judge(_: &str, args: &[Word], cx: &Jcx<'_>, out: &mut Out) {
    // `-H`, `-L`, `-P`, `-D opts`, `-O<level>` come before the starting points.
    let mut i = 0;
    while let Some(a) = args.get(i).and_then(|a| a.value.as_deref()) {
        match a {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            _ if a.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    let start = i.min(args.len());
    let is_root =
        |a: &&Word| a.value.is_none() || !a.shown().starts_with('-') && !a.is("(") && !a.is("!");
    let given = args[start..].iter().take_while(is_root).count();
    let roots: Vec<Word> = if given == 0 {
        vec![Word::literal(".")]
    } else {
        args[start..start + given].to_vec()
    };
    let mut i = start + given;
    let mut mutates = false;
    while i < args.len() {
        let w = &args[i];
        let Some(s) = w.value.as_deref() else {
            out.mark(
                Verdict::Unknown,
                format!(
                    "find gets a word only known at run time ({}), which may be a primary that writes or runs a program",
                    w.brief()
                ),
            );
            i += 1;
            continue;
        };
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
                    _ => delete_target(r, false, cx, "find -delete deletes under", out),
                }
            }
        } else if matches!(s, "-exec" | "-execdir" | "-ok" | "-okdir") {
            mutates = true;
            let mut cmd = Vec::new();
            i += 1;
            while i < args.len() && !args[i].is(";") && !args[i].is("+") {
                if args[i].is("{}") {
                    for r in &roots {
                        let mut w =
                            Word::literal(&format!("{}/{{}}", r.shown().trim_end_matches('/')));
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
        } else if matches!(s, "-fprint" | "-fprint0" | "-fls" | "-fprintf") {
            mutates = true;
            if let Some(w) = args.get(i + 1) {
                let (v, r) = write_target(w, cx, "find writes to");
                out.mark(v.max(Verdict::Unknown), r);
            }
            i += if s == "-fprintf" { 2 } else { 1 };
        } else if let Some((_, n)) = READ_ONLY.iter().find(|(p, _)| *p == s) {
            i += n;
        } else if s.starts_with("-newer") && s.len() == 8 {
            // -newerXY REFERENCE
            i += 1;
        } else if !s.starts_with('-') {
            out.mark(
                Verdict::Unknown,
                format!("find: {s} is not where a primary is expected"),
            );
        } else {
            out.mark(
                Verdict::Unknown,
                format!("find has no primary {s} it is known to be read-only with"),
            );
        }
        i += 1;
    }
    if mutates {
        out.mark(Verdict::Unknown, "find runs commands or deletes".into());
    }
}
