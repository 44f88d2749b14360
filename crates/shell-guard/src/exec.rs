//! One simple command: its words, prefix assignments and redirections gathered, then
//! judged through the wrappers (`sudo`, `env`, `xargs`…), shells (`bash -c`, `eval`)
//! and interpreters that run what follows them.

use std::path::Path;

use tree_sitter::Node;

use crate::judge::{self, Out};
use crate::paths::{self, base, system_name};
use crate::walk::{word_checks, Feed, Simple, Walker};
use crate::words::{self, Word};
use crate::wrap::Unwrap;
use crate::Verdict;

/// What judging one argv found.
#[derive(Default)]
struct Judged {
    out: Out,
    /// Each level's argv, as rules match it.
    keys: Vec<Vec<String>>,
    /// It only runs other commands, recorded after it.
    wrapper: bool,
}

/// A command's words gathered from the tree.
#[derive(Default)]
struct Gathered<'t> {
    argv: Vec<Word>,
    downloads: Vec<bool>,
    out: Out,
    here: Option<Feed>,
    trailing: Vec<Node<'t>>,
}

impl Walker<'_> {
    pub(crate) fn command(&mut self, n: Node<'_>, src: &[u8], feed: &Feed, depth: usize) {
        let mut g = Gathered::default();
        let mut c = n.walk();
        let kids: Vec<_> = n.named_children(&mut c).collect();
        for k in kids {
            match k.kind() {
                "variable_assignment" => self.prefix_assignment(k, src, depth, &mut g.out),
                "file_redirect" => {
                    for (v, r) in self.redirect(k, src, depth) {
                        g.out.mark(v, r);
                    }
                }
                "herestring_redirect" | "heredoc_redirect" => {
                    if let Some(h) = self.here(k, src, depth) {
                        g.here = Some(h.feed);
                        for (v, r) in h.writes {
                            g.out.mark(v, r);
                        }
                        g.trailing.extend(h.trailing);
                    }
                }
                "command_name" => {
                    let inner = k.named_child(0).unwrap_or(k);
                    self.word(inner, src, depth, &mut g);
                }
                "comment" => {}
                // A statement where a word is expected (`echo( $ 1(2))`, which bash
                // refuses but the grammar reads): what it holds is judged too.
                "subshell"
                | "compound_statement"
                | "command"
                | "pipeline"
                | "list"
                | "redirected_statement" => self.node(k, src, &Feed::default(), depth),
                _ => self.word(k, src, depth, &mut g),
            }
        }
        let start = self.out.len();
        let here = g.here.take();
        let trailing = std::mem::take(&mut g.trailing);
        self.simple(g, here.as_ref().unwrap_or(feed), depth);
        if let Some(h) = &here {
            self.trailing(trailing, src, start, h, depth);
        }
    }

    /// `export …`, `declare …`, `local …`, `unset …`: judged as commands of those
    /// names with their words (an assignment as one `NAME=value` word).
    pub(crate) fn declaration(&mut self, n: Node<'_>, src: &[u8], feed: &Feed, depth: usize) {
        let mut g = Gathered::default();
        let mut c = n.walk();
        let kids: Vec<_> = n.children(&mut c).collect();
        for k in kids {
            if !k.is_named() {
                if g.argv.is_empty() {
                    g.argv
                        .push(Word::literal(k.utf8_text(src).unwrap_or("declare")));
                    g.downloads.push(false);
                }
                continue;
            }
            if k.kind() != "variable_assignment" {
                self.word(k, src, depth, &mut g);
                continue;
            }
            self.substitutions(k, src, depth);
            let name = k
                .child_by_field_name("name")
                .and_then(|x| x.utf8_text(src).ok())
                .unwrap_or("");
            let value = k
                .child_by_field_name("value")
                .map(|v| words::resolve(v, src, &self.env()));
            let mut w = Word::literal(k.utf8_text(src).unwrap_or(""));
            w.value = match &value {
                Some(v) => v.value.as_ref().map(|v| format!("{name}={v}")),
                None => Some(format!("{name}=")),
            };
            if let Some(v) = &value {
                word_checks(v, &mut g.out);
            }
            g.argv.push(w);
            g.downloads.push(false);
        }
        self.simple(g, feed, depth);
    }

    /// One word of a command: its substitutions walked, its value resolved.
    fn word(&mut self, k: Node<'_>, src: &[u8], depth: usize, g: &mut Gathered<'_>) {
        g.downloads.push(self.substitutions(k, src, depth));
        let w = words::resolve(k, src, &self.env());
        word_checks(&w, &mut g.out);
        g.argv.push(w);
    }

    /// `NAME=value cmd`: the variable is set for `cmd` only. One that changes what a
    /// program runs pins the command; any other is harmless only from a short list.
    fn prefix_assignment(&mut self, k: Node<'_>, src: &[u8], depth: usize, out: &mut Out) {
        self.substitutions(k, src, depth);
        let name = k
            .child_by_field_name("name")
            .and_then(|x| x.utf8_text(src).ok())
            .unwrap_or("");
        if let Some(v) = k.child_by_field_name("value") {
            word_checks(&words::resolve(v, src, &self.env()), out);
        }
        if crate::wrap::risky_env(name) || name.contains('[') {
            out.pin(format!("sets {name}, which changes what a program runs"));
        } else if !crate::wrap::harmless_env(name) {
            out.mark(
                Verdict::Unknown,
                format!("sets {name} for it, which is not known to be harmless"),
            );
        }
    }

    /// Records and judges one gathered command.
    fn simple(&mut self, g: Gathered<'_>, feed: &Feed, depth: usize) {
        if g.argv.is_empty() {
            // Only assignments and redirections (`X=1 > file`).
            self.line_out(g.out);
            return;
        }
        let index = self.out.len();
        // A placeholder so the wrapper is listed before what it runs.
        self.out.push(Simple {
            argv: g.argv.iter().map(|w| w.shown().to_string()).collect(),
            verdict: Verdict::Safe,
            reasons: Vec::new(),
            keys: Vec::new(),
            wrapper: false,
        });
        let mut j = Judged {
            out: g.out,
            ..Judged::default()
        };
        self.judge(&g.argv, &g.downloads, feed, depth, &mut j);
        self.record(index, j);
    }

    fn record(&mut self, index: usize, j: Judged) {
        for p in &j.out.pins {
            if !self.pins.contains(p) {
                self.pins.push(p.clone());
            }
        }
        let s = &mut self.out[index];
        s.verdict = j.out.v;
        s.reasons = j.out.reasons;
        s.keys = j.keys;
        s.wrapper = j.wrapper;
    }

    /// Judges one argv, unwrapping wrappers; `j.keys` collects each level's argv.
    fn judge(
        &mut self,
        argv: &[Word],
        downloads: &[bool],
        feed: &Feed,
        depth: usize,
        j: &mut Judged,
    ) {
        if !self.enter() {
            return;
        }
        self.judge_program(argv, downloads, feed, depth, j);
        self.leave();
    }

    fn judge_program(
        &mut self,
        argv: &[Word],
        downloads: &[bool],
        feed: &Feed,
        depth: usize,
        j: &mut Judged,
    ) {
        let Some(prog_w) = argv.first() else {
            return;
        };
        let out = &mut j.out;
        let Some(prog) = prog_w.value.clone() else {
            out.mark(
                Verdict::Dangerous,
                format!(
                    "the program name is only known at run time ({}), which hides what runs",
                    words::brief(&prog_w.dynamic.join(" "))
                ),
            );
            return;
        };
        if prog_w.quoted && !words::needs_quoting(&prog) {
            out.mark(
                Verdict::Dangerous,
                format!(
                    "quotes or escapes disguise the program name ({} runs {prog})",
                    prog_w.brief()
                ),
            );
        }
        if prog_w.glob {
            out.mark(
                Verdict::Dangerous,
                format!("the program name {} is a glob", prog_w.brief()),
            );
        }
        j.keys.push(key(argv));
        let b = base(&prog).to_string();
        if system_name(&prog).is_none() {
            // Judged as `b` too, so `./rm -rf /` still reads as dangerous; but the file
            // it names may be anything, so it is never safe.
            out.mark(
                Verdict::Unknown,
                format!("{prog} runs the file at that path, which may be anything, not the system's {b}"),
            );
        }
        let args = &argv[1..];
        let arg_downloads = downloads.get(1..).unwrap_or(&[]);
        let jcx = self.jcx();
        if let Some(unwrapped) = crate::wrap::unwrap(&b, args, &jcx) {
            self.unwrapped(&b, args, arg_downloads, unwrapped, feed, depth, j);
            return;
        }
        if crate::wrap::is_shell(&b) || b == "eval" || b == "su" {
            self.shell(&b, args, arg_downloads, feed, depth, j);
            return;
        }
        if crate::wrap::is_interpreter(&b) || b == "source" || b == "." {
            crate::wrap::interpreter(
                &b,
                args,
                arg_downloads,
                feed.download,
                feed.decoded,
                &mut j.out,
            );
            return;
        }
        let mut judged = judge::program(&b, args, &jcx);
        if b == "cd" || b == "pushd" {
            self.cwd = match args.iter().find(|a| !a.shown().starts_with('-')) {
                None => self.cx.home.clone(),
                Some(a) => match (&a.value, &self.cwd) {
                    (Some(v), Some(cwd)) if v != "-" => Some(paths::normalize(Path::new(v), cwd)),
                    _ => None,
                },
            };
        }
        for inner in std::mem::take(&mut judged.exec) {
            let dl = vec![false; inner.len()];
            let start = self.out.len();
            self.out.push(Simple {
                argv: inner.iter().map(|w| w.shown().to_string()).collect(),
                verdict: Verdict::Safe,
                reasons: Vec::new(),
                keys: Vec::new(),
                wrapper: false,
            });
            let mut k = Judged::default();
            self.judge(&inner, &dl, &Feed::default(), depth, &mut k);
            self.record(start, k);
        }
        j.out.merge(judged);
    }

    /// Judges what a wrapper runs.
    #[allow(clippy::too_many_arguments)]
    fn unwrapped(
        &mut self,
        b: &str,
        args: &[Word],
        downloads: &[bool],
        unwrapped: Unwrap,
        feed: &Feed,
        depth: usize,
        j: &mut Judged,
    ) {
        match unwrapped {
            Unwrap::Inner {
                at,
                note,
                from_stdin,
            } => {
                if let Some((v, r)) = note {
                    note_of(b, v, r, &mut j.out);
                }
                let named = args.get(at).map(|w| w.shown()).unwrap_or("");
                if crate::wrap::execs(b) && crate::wrap::shell_only(named) {
                    j.out.mark(
                        Verdict::Unknown,
                        format!("{b} runs a file named {named} from PATH, not the shell's builtin"),
                    );
                }
                let mut inner: Vec<Word> = args[at..].to_vec();
                let mut inner_dl: Vec<bool> = downloads.get(at..).unwrap_or(&[]).to_vec();
                let inner_feed = if from_stdin {
                    inner.push(Word::unknown("<arguments from stdin>"));
                    inner_dl.push(false);
                    Feed::default()
                } else {
                    feed.clone()
                };
                self.judge(&inner, &inner_dl, &inner_feed, depth, j);
            }
            Unwrap::Implicit { program, note } => {
                if let Some((v, r)) = note {
                    note_of(b, v, r, &mut j.out);
                }
                let inner = [
                    Word::literal(program),
                    Word::unknown("<arguments from stdin>"),
                ];
                self.judge(&inner, &[false, false], &Feed::default(), depth, j);
            }
            Unwrap::Script { text, note } => {
                if let Some((v, r)) = note {
                    j.out.mark(v, r);
                }
                j.wrapper = true;
                self.line(&text, depth + 1);
            }
            Unwrap::Alone(v, r) => j.out.mark(v, r),
        }
    }

    fn shell(
        &mut self,
        b: &str,
        args: &[Word],
        downloads: &[bool],
        feed: &Feed,
        depth: usize,
        j: &mut Judged,
    ) {
        let out = &mut j.out;
        if b == "eval" {
            out.mark(Verdict::Unknown, "eval runs text as a command".to_string());
            if args.iter().all(|a| a.value.is_some()) {
                let text: Vec<&str> = args.iter().map(Word::shown).collect();
                j.wrapper = true;
                self.line(&text.join(" "), depth + 1);
            } else {
                out.mark(
                    Verdict::Dangerous,
                    "eval of text built at run time hides what runs".to_string(),
                );
            }
            return;
        }
        if b == "su" {
            out.mark(Verdict::Unknown, "runs as another user (su)".to_string());
        }
        let mut i = 0;
        let mut dash_c = false;
        let mut stdin = false;
        while i < args.len() {
            let a = args[i].shown();
            if a == "--" {
                i += 1;
                break;
            }
            if a == "-o"
                || a == "+o"
                || a == "-O"
                || a == "+O"
                || (b == "su" && matches!(a, "-s" | "--shell" | "-g" | "-G" | "-w"))
            {
                i += 2;
                continue;
            }
            if a == "--command" {
                dash_c = true;
                i += 1;
                break;
            }
            if (a.starts_with('-') || a.starts_with('+')) && a.len() > 1 {
                if !a.starts_with("--") && a.contains('c') {
                    dash_c = true;
                }
                if a == "-s" {
                    stdin = true;
                }
                i += 1;
                if dash_c {
                    break;
                }
                continue;
            }
            break;
        }
        if dash_c {
            match args.get(i) {
                Some(w) => match &w.value {
                    Some(script) => {
                        j.wrapper = true;
                        self.line(script, depth + 1);
                    }
                    None => {
                        let dl = downloads.get(i).copied().unwrap_or(false);
                        out.mark(
                            Verdict::Dangerous,
                            if dl {
                                format!("{b} -c runs a downloaded script ({})", w.brief())
                            } else {
                                format!("{b} -c runs a script built at run time ({})", w.brief())
                            },
                        );
                    }
                },
                None => out.mark(Verdict::Unknown, format!("{b} -c without a script")),
            }
            return;
        }
        if b == "su" && i >= args.len() {
            return;
        }
        if !stdin {
            if let Some(w) = args.get(i) {
                let dl = downloads.get(i).copied().unwrap_or(false);
                if dl {
                    out.mark(
                        Verdict::Dangerous,
                        format!("{b} runs a download handed to it ({})", w.brief()),
                    );
                } else if w.substitution {
                    out.mark(
                        Verdict::Dangerous,
                        format!("{b} runs a script produced at run time ({})", w.brief()),
                    );
                } else if !(w.is("-") || w.is("/dev/stdin")) {
                    out.mark(
                        Verdict::Unknown,
                        format!("{b} runs the script {}", w.shown()),
                    );
                    return;
                }
            }
        }
        // Reads its commands from stdin.
        if feed.download {
            out.mark(
                Verdict::Dangerous,
                format!("a download is piped into {b}, which runs it unseen"),
            );
        } else if feed.decoded {
            out.mark(
                Verdict::Dangerous,
                format!("decoded or generated text is piped into {b}, which hides what runs"),
            );
        } else if let Some(text) = &feed.text {
            out.mark(
                Verdict::Unknown,
                format!("{b} runs commands fed on its stdin"),
            );
            j.wrapper = true;
            let text = text.clone();
            self.line(&text, depth + 1);
        } else if feed.piped {
            out.mark(
                Verdict::Unknown,
                format!("text piped into {b} runs as commands"),
            );
        } else {
            out.mark(Verdict::Unknown, format!("starts a shell ({b})"));
        }
    }
}

/// A wrapper's note: a variable it sets that changes what runs pins the command.
fn note_of(b: &str, v: Verdict, r: String, out: &mut Out) {
    if b == "env" && r.ends_with("changes what a program runs") {
        out.pin(r);
    } else {
        out.mark(v, r);
    }
}

/// The argv as rules see it (git's global options dropped: a flagged one pins the
/// command instead, so no allow rule answers for it).
fn key(argv: &[Word]) -> Vec<String> {
    let words: Vec<String> = argv
        .iter()
        .map(|w| match &w.value {
            Some(v) => v.clone(),
            None => format!("\0{}", w.raw),
        })
        .collect();
    let Some(first) = words.first() else {
        return words;
    };
    // A rule for `npm test` is about the system's npm, not a file named npm: a program
    // named by any other path keeps its path (deny and ask rules match it by its name
    // too, in `Rules::decide`).
    let prog = system_name(first).unwrap_or(first).to_string();
    let rest = if base(first) == "git" {
        1 + crate::git::git_subcommand_at(&argv[1..])
    } else {
        1
    };
    let mut k = vec![prog];
    k.extend(words[rest..].iter().cloned());
    k
}
