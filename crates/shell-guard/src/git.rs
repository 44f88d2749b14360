//! git: the subcommand past the global options (`-C`, `-c`, `--git-dir`…), read-only
//! ones safe, history-destroying ones dangerous, `-c` keys that run programs unknown.

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

/// Judges `git ARGS`.
pub fn judge(args: &[Word], cx: &Jcx<'_>, out: &mut Out) {
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
