//! Programs that change things: what they delete or write, and where. None of them is
//! ever `safe`; each judge says how far past `unknown` its arguments take it.

use crate::judge::{delete_target, locate, write_target, Jcx, Judge, Out};
use crate::paths::Place;
use crate::words::Word;
use crate::Verdict;

/// The judges, by program name.
const JUDGES: &[(&[&str], Judge)] = &[
    (&["rm", "unlink", "rmdir", "shred", "srm", "wipe"], remove),
    (&["dd"], dd),
    (
        &[
            "mkfs",
            "mke2fs",
            "mkswap",
            "wipefs",
            "fdisk",
            "sfdisk",
            "cfdisk",
            "parted",
            "gdisk",
            "sgdisk",
            "blkdiscard",
            "mkntfs",
            "mkdosfs",
            "hdparm",
            "cryptsetup",
            "pvcreate",
            "vgremove",
            "lvremove",
        ],
        format_disk,
    ),
    (
        &["shutdown", "reboot", "halt", "poweroff", "telinit", "kexec"],
        power,
    ),
    (&["init"], init),
    (&["systemctl"], systemctl),
    (&["kill"], kill),
    (&["killall5"], killall5),
    (&["pkill", "killall"], pkill),
    (&["crontab"], crontab),
    (
        &["chmod", "chown", "chgrp", "chattr", "setfacl"],
        permissions,
    ),
    (&["cp", "mv", "install", "ln", "rsync", "scp"], copy),
    (
        &[
            "tee", "touch", "mkdir", "truncate", "mktemp", "mkfifo", "mknod",
        ],
        create,
    ),
    (&["curl", "wget", "aria2c", "http"], download),
    (&["xxd"], xxd),
];

/// The judge of program `b`, if it is one of these.
pub fn judge_of(b: &str) -> Option<Judge> {
    if b.starts_with("mkfs.") {
        return Some(format_disk);
    }
    JUDGES
        .iter()
        .find(|(names, _)| names.contains(&b))
        .map(|(_, j)| *j)
}

/// Its arguments that are not options (or only known at run time).
fn operands(args: &[Word]) -> impl Iterator<Item = &Word> {
    args.iter()
        .filter(|a| !a.shown().starts_with('-') || a.value.is_none())
}

/// A short option letter in any bundle (`-rf` has `r`).
fn short(args: &[Word], c: char) -> bool {
    args.iter().any(|a| {
        let s = a.shown();
        s.starts_with('-') && !s.starts_with("--") && s[1..].contains(c)
    })
}

fn has(args: &[Word], f: &str) -> bool {
    args.iter().any(|a| a.is(f))
}

fn remove(b: &str, args: &[Word], cx: &Jcx<'_>, out: &mut Out) {
    let mut end = false;
    let mut targets = Vec::new();
    let mut recursive = false;
    for a in args {
        let s = a.shown();
        if !end && a.value.is_some() && s == "--" {
            end = true;
        } else if !end && a.value.is_some() && s.starts_with("--") {
            recursive |= "--recursive".starts_with(s) && s.len() > 4;
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
        delete_target(t, recursive, cx, verb, out);
    }
    out.mark(Verdict::Unknown, format!("{b} deletes files"));
}

/// dd's operands are `KEY=VALUE`; without `of=` (or with a sink) it only reads and
/// prints, like `cat`.
fn dd(_: &str, args: &[Word], cx: &Jcx<'_>, out: &mut Out) {
    const KEYS: &[&str] = &[
        "if", "of", "bs", "ibs", "obs", "cbs", "count", "skip", "iseek", "seek", "oseek", "status",
        "iflag", "oflag", "conv",
    ];
    for a in args {
        let Some((key, value)) = a.value.as_deref().and_then(|v| v.split_once('=')) else {
            out.mark(
                Verdict::Unknown,
                format!(
                    "dd {} is not an operand it is known to be read-only with",
                    a.brief()
                ),
            );
            continue;
        };
        if !KEYS.contains(&key) {
            out.mark(Verdict::Unknown, format!("dd has no operand {key}="));
        } else if key == "of" {
            let (v, r) = write_target(&Word::literal(value), cx, "dd writes to");
            out.mark(v, r);
        } else if key == "if" {
            crate::secrets::check_read("dd", &Word::literal(value), false, cx, out);
        }
    }
}

fn format_disk(b: &str, _: &[Word], _: &Jcx<'_>, out: &mut Out) {
    out.mark(
        Verdict::Dangerous,
        format!("{b} formats or repartitions a disk"),
    );
}

fn power(b: &str, _: &[Word], _: &Jcx<'_>, out: &mut Out) {
    out.mark(
        Verdict::Dangerous,
        format!("{b} stops or restarts the machine"),
    );
}

fn init(_: &str, args: &[Word], _: &Jcx<'_>, out: &mut Out) {
    if operands(args).any(|a| a.is("0") || a.is("6")) {
        out.mark(
            Verdict::Dangerous,
            "init 0/6 stops or restarts the machine".into(),
        );
    }
    out.mark(Verdict::Unknown, "init".into());
}

fn systemctl(_: &str, args: &[Word], _: &Jcx<'_>, out: &mut Out) {
    if operands(args).any(|a| {
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
    out.mark(
        Verdict::Unknown,
        "systemctl talks to the service manager".into(),
    );
}

fn kill(_: &str, args: &[Word], _: &Jcx<'_>, out: &mut Out) {
    let mut i = 0;
    if let Some(first) = args.first() {
        let f = first.shown();
        if f == "-s" || f == "-n" {
            i = 2;
        } else if f.starts_with('-') && f != "--" && f != "-1" || f == "-1" && args.len() > 1 {
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
                format!("kills processes named at run time ({})", a.brief()),
            );
        }
    }
    out.mark(Verdict::Unknown, "kill signals processes".into());
}

fn killall5(_: &str, _: &[Word], _: &Jcx<'_>, out: &mut Out) {
    out.mark(Verdict::Dangerous, "killall5 kills every process".into());
}

fn pkill(b: &str, args: &[Word], _: &Jcx<'_>, out: &mut Out) {
    if args.iter().any(|a| a.is(".") || a.is(".*") || a.is("-u")) {
        out.mark(
            Verdict::Dangerous,
            format!("{b} with a pattern matching everything kills all processes"),
        );
    }
    out.mark(Verdict::Unknown, format!("{b} kills processes"));
}

fn crontab(_: &str, args: &[Word], _: &Jcx<'_>, out: &mut Out) {
    if short(args, 'r') {
        out.mark(Verdict::Dangerous, "crontab -r wipes every cron job".into());
    }
    if !(args.len() == 1 && has(args, "-l")) {
        out.mark(Verdict::Unknown, "crontab changes scheduled jobs".into());
    }
}

fn permissions(b: &str, args: &[Word], cx: &Jcx<'_>, out: &mut Out) {
    let recursive = short(args, 'R') || has(args, "--recursive");
    let mut p: Vec<&Word> = operands(args).collect();
    if !p.is_empty() && !args.iter().any(|a| a.shown().starts_with("--reference")) {
        p.remove(0);
    }
    for t in p {
        match locate(t, cx) {
            Some((path, Place::Root | Place::System | Place::Home | Place::Device)) => out.mark(
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
                format!("{b} -R on a path known only at run time ({})", t.brief()),
            ),
            _ => {}
        }
    }
    out.mark(Verdict::Unknown, format!("{b} changes file permissions"));
}

fn copy(b: &str, args: &[Word], cx: &Jcx<'_>, out: &mut Out) {
    let p: Vec<&Word> = operands(args).collect();
    let dest = args
        .iter()
        .position(|a| a.is("-t") || a.is("--target-directory"))
        .and_then(|i| args.get(i + 1))
        .or(p.last().copied());
    if let Some(d) = dest {
        let (v, r) = write_target(d, cx, &format!("{b} writes to"));
        out.mark(v, r);
        if b == "rsync" && args.iter().any(|a| a.shown().starts_with("--delete")) {
            delete_target(d, true, cx, "rsync --delete deletes under", out);
        }
    }
    if b == "mv" {
        for s in p.iter().take(p.len().saturating_sub(1)) {
            if let Some((path, Place::Root | Place::System | Place::Home | Place::WorkspaceRoot)) =
                locate(s, cx)
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

fn create(b: &str, args: &[Word], cx: &Jcx<'_>, out: &mut Out) {
    // `tee` with no file only copies stdin to stdout; with an option it is not known
    // to take, what it does is not known.
    const TEE: &[&str] = &[
        "-a",
        "-i",
        "-p",
        "--append",
        "--ignore-interrupts",
        "--output-error",
        "--help",
        "--version",
        "--",
    ];
    if let Some(o) = args.iter().find(|a| {
        let s = a.shown();
        s.starts_with('-') && s.len() > 1 && !TEE.contains(&s) && !s.starts_with("--output-error=")
    }) {
        out.mark(
            Verdict::Unknown,
            format!("{b} {} is not an option known here", o.brief()),
        );
    }
    for t in operands(args) {
        let (v, r) = write_target(t, cx, &format!("{b} writes to"));
        out.mark(v, r);
    }
    if b != "tee" || operands(args).next().is_some() {
        out.mark(Verdict::Unknown, format!("{b} changes files"));
    }
}

fn download(b: &str, args: &[Word], cx: &Jcx<'_>, out: &mut Out) {
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

fn xxd(_: &str, args: &[Word], cx: &Jcx<'_>, out: &mut Out) {
    if let Some(second) = operands(args).nth(1) {
        let (v, r) = write_target(second, cx, "xxd writes to");
        out.mark(v, r);
    }
    out.mark(
        Verdict::Unknown,
        "xxd reads its options its own way (not getopt), so they are not known".into(),
    );
}
