//! git: the subcommand past the global options (`-C`, `-c`, `--git-dir`…), read-only
//! ones safe, history-destroying ones dangerous.
//!
//! Three ways make a read-only git run a program:
//! - a global option: `-c core.fsmonitor=CMD`, `--config-env=core.pager=VAR`,
//!   `--exec-path`, `-p` (a pager); these are judged before any allow rule (a rule
//!   for `git status` does not allow `git -c core.fsmonitor=CMD status`), and every
//!   global option that is not known to be harmless counts as one;
//! - the repository's own configuration: git reads it from the repository it finds
//!   from its folder, so a read-only git is `safe` only in the workspace itself (a
//!   folder inside it may hold a planted bare repository whose `config` names a
//!   `core.fsmonitor`);
//! - an option of the subcommand: `--output=FILE`, `--ext-diff`, `grep -O CMD`.
//!   git's option parser takes any unique prefix of a long option, so a word that is
//!   a prefix of one of those counts as it.

use crate::judge::{Jcx, Out};
use crate::words::Word;
use crate::Verdict;

/// Index (into the args after `git`) of the subcommand, past global options; at most
/// `args.len()` (an option missing its value, `git -c`, ends the args).
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
                | "--attr-source"
                | "--list-cmds"
        ) {
            i += 2;
        } else if a.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    i.min(args.len())
}

/// Global options that change nothing git runs.
const HARMLESS_GLOBAL: &[&str] = &[
    "--no-pager",
    "-P",
    "--no-optional-locks",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--no-replace-objects",
    "--no-lazy-fetch",
    "--no-advice",
    "--version",
    "-v",
    "--help",
    "-h",
];

/// `-c` keys that make git run nothing.
fn harmless_key(k: &str) -> bool {
    k.starts_with("color.")
        || k.starts_with("log.")
        || k.starts_with("advice.")
        || k.starts_with("user.")
        || matches!(
            k,
            "core.quotepath"
                | "core.abbrev"
                | "safe.directory"
                | "init.defaultbranch"
                | "diff.noprefix"
        )
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
];

/// Long options of the read-only subcommands that write a file or run a program.
const RUNS_OR_WRITES: &[&str] = &[
    "output",
    "ext-diff",
    "open-files-in-pager",
    "textconv",
    "filters",
    "upload-pack",
    "exec",
];

/// Judges git's global options; each one not known to be harmless pins the command
/// (no allow rule answers for it).
fn global_options(args: &[Word], at: usize, out: &mut Out) {
    let mut i = 0;
    while i < at {
        let a = args[i].shown();
        let value = args.get(i + 1).map(Word::shown).unwrap_or("");
        match a {
            "-c" => {
                let k = value.split('=').next().unwrap_or("").to_ascii_lowercase();
                if !harmless_key(&k) || args[i + 1..].first().is_some_and(|w| w.value.is_none()) {
                    out.pin(format!("git -c {k} can make git run another program"));
                }
                i += 2;
                continue;
            }
            "-C" => {
                out.pin(format!(
                    "git -C {value} runs git on the repository found there, whose configuration (core.fsmonitor…) may run programs"
                ));
                i += 2;
                continue;
            }
            _ if HARMLESS_GLOBAL.contains(&a) => {}
            _ if a.starts_with("--config-env") => {
                out.pin(format!("git {a} sets configuration from the environment, which can make git run a program"));
            }
            _ if a.starts_with("--exec-path") => {
                out.pin(format!("git {a} changes which programs git runs"));
            }
            "-p" | "--paginate" => out.pin("git -p runs a pager".into()),
            _ => out.pin(format!(
                "git {a} is not a global option known to be harmless (it may choose another repository or configuration)"
            )),
        }
        i += if matches!(
            a,
            "--git-dir"
                | "--work-tree"
                | "--namespace"
                | "--exec-path"
                | "--config-env"
                | "--super-prefix"
                | "--attr-source"
                | "--list-cmds"
        ) {
            2
        } else {
            1
        };
    }
}

/// Judges `git ARGS`.
pub fn judge(args: &[Word], cx: &Jcx<'_>, out: &mut Out) {
    let at = git_subcommand_at(args);
    global_options(args, at, out);
    let Some(sub) = args.get(at) else {
        return;
    };
    let rest = &args[at + 1..];
    let Some(sub) = sub.value.as_deref() else {
        out.mark(
            Verdict::Dangerous,
            format!(
                "the git subcommand is only known at run time ({})",
                sub.brief()
            ),
        );
        return;
    };
    match changes(sub, rest, out) {
        Some(true) => return,
        Some(false) => {}
        None if GIT_READ_ONLY.contains(&sub) || sub == "help" => {}
        None => {
            out.mark(
                Verdict::Unknown,
                format!("git {sub} changes the repository"),
            );
            return;
        }
    }
    if cx.cwd != Some(cx.workdir) {
        out.mark(
            Verdict::Unknown,
            format!(
                "git {sub} runs outside the workspace's own folder, where the repository it finds may have a configuration that runs programs (core.fsmonitor)"
            ),
        );
    }
    read_only_options(sub, rest, out);
}

/// The options of a read-only subcommand: none that writes or runs a program.
fn read_only_options(sub: &str, rest: &[Word], out: &mut Out) {
    for a in rest {
        let Some(v) = a.value.as_deref() else {
            out.mark(
                Verdict::Unknown,
                format!(
                    "git {sub} gets an argument only known at run time ({}), which may be an option that writes or runs a program",
                    a.brief()
                ),
            );
            continue;
        };
        if v == "--" {
            break;
        }
        if let Some(long) = v.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or("");
            if let Some(hit) = RUNS_OR_WRITES.iter().find(|o| o.starts_with(name)) {
                out.mark(
                    Verdict::Unknown,
                    format!("git {sub} {v} (--{hit}) writes a file or runs a program"),
                );
            }
        } else if sub == "grep" && v.starts_with('-') && v[1..].contains('O') {
            out.mark(
                Verdict::Unknown,
                format!("git grep {v} opens the files in a program it names (-O)"),
            );
        }
    }
    if sub == "help"
        && !rest.iter().all(|a| {
            matches!(
                a.shown(),
                "-a" | "--all" | "-g" | "--guides" | "-c" | "--config"
            )
        })
    {
        out.mark(
            Verdict::Unknown,
            "git help opens a manual page through man or a browser".into(),
        );
    }
}

/// The subcommands that can change things: `Some(true)` when this use does (marked in
/// `out`), `Some(false)` when it only lists (`git branch -a`, `git stash list`), `None`
/// for any other subcommand.
fn changes(sub: &str, rest: &[Word], out: &mut Out) -> Option<bool> {
    let has = |f: &str| rest.iter().any(|a| a.is(f));
    let starts = |f: &str| rest.iter().any(|a| a.shown().starts_with(f));
    let short = |c: char| {
        rest.iter().any(|a| {
            let s = a.shown();
            s.starts_with('-') && !s.starts_with("--") && s[1..].contains(c)
        })
    };
    let danger = |out: &mut Out, r: &str| out.mark(Verdict::Dangerous, r.to_string());
    let changed = |out: &mut Out, r: String| {
        out.mark(Verdict::Unknown, r);
        Some(true)
    };
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
            changed(out, "git push publishes commits".into())
        }
        "reset" => {
            if has("--hard") || has("--merge") || has("--keep") {
                danger(out, "git reset --hard throws away uncommitted work");
            }
            changed(out, "git reset moves the branch".into())
        }
        "clean" => {
            if short('f') || has("--force") {
                danger(out, "git clean -f deletes untracked files for good");
            }
            changed(out, "git clean deletes untracked files".into())
        }
        "filter-branch" | "filter-repo" => {
            danger(out, "git filter-branch rewrites the whole history");
            Some(true)
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
            changed(out, format!("git {sub} changes the working tree"))
        }
        "gc" | "prune" => {
            if starts("--prune=now") || starts("--prune=all") || sub == "prune" {
                danger(out, "git prune drops unreachable commits for good");
            }
            changed(out, "git gc".into())
        }
        "update-ref" => {
            if has("-d") {
                danger(out, "git update-ref -d deletes a ref");
            }
            changed(out, "git update-ref moves a ref".into())
        }
        "ls-remote" | "fetch" | "pull" | "clone" | "archive" => changed(
            out,
            format!("git {sub} runs a program to reach a repository (--upload-pack, ssh)"),
        ),
        _ => lists_or_changes(sub, rest, out),
    }
}

/// The subcommands that list when given no action (`git branch -a`, `git stash
/// list`, `git config --get`): `Some(false)` for a listing, `Some(true)` (marked)
/// for a change.
fn lists_or_changes(sub: &str, rest: &[Word], out: &mut Out) -> Option<bool> {
    let has = |f: &str| rest.iter().any(|a| a.is(f));
    let short = |c: char| {
        rest.iter().any(|a| {
            let s = a.shown();
            s.starts_with('-') && !s.starts_with("--") && s[1..].contains(c)
        })
    };
    let first = |names: &[&str]| rest.first().is_some_and(|a| names.iter().any(|n| a.is(n)));
    let danger = |out: &mut Out, r: &str| out.mark(Verdict::Dangerous, r.to_string());
    let changed = |out: &mut Out, r: String| {
        out.mark(Verdict::Unknown, r);
        Some(true)
    };
    match sub {
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
            if lists {
                Some(false)
            } else {
                changed(out, "git branch changes branches".into())
            }
        }
        "tag" => {
            if rest.is_empty() || has("-l") || has("--list") {
                Some(false)
            } else {
                changed(out, "git tag changes tags".into())
            }
        }
        "stash" => {
            if first(&["clear", "drop"]) {
                danger(out, "git stash clear/drop deletes stashed work");
            }
            if first(&["list", "show"]) {
                Some(false)
            } else {
                changed(out, "git stash changes the working tree".into())
            }
        }
        "reflog" => {
            if first(&["expire", "delete"]) {
                danger(
                    out,
                    "git reflog expire drops the safety net of lost commits",
                );
                Some(true)
            } else {
                Some(false)
            }
        }
        "remote" => {
            // `git remote show NAME` asks the remote (a program runs to reach it).
            if rest.is_empty()
                || rest.iter().all(|a| a.is("-v") || a.is("--verbose"))
                || first(&["get-url"])
            {
                Some(false)
            } else {
                changed(out, "git remote changes remotes or reaches one".into())
            }
        }
        "config" => {
            let reads = has("--get")
                || has("--list")
                || has("-l")
                || has("--get-all")
                || has("--get-regexp")
                || first(&["get", "list"]);
            if reads && !has("-e") && !has("--edit") {
                Some(false)
            } else {
                changed(out, "git config changes settings".into())
            }
        }
        _ => None,
    }
}
