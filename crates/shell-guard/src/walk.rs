//! Walking the syntax tree: every simple command found, with what feeds its stdin,
//! its redirections, and the programs it runs through wrappers and `-c` strings.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tree_sitter::{Node, ParseOptions, ParseState, Parser};

use crate::judge::{self, Jcx, Out};
use crate::paths::{self, base, system_name};
use crate::words::{self, Word};
use crate::{CommandReport, Context, Report, Verdict};

/// How deep `bash -c`, `eval` and friends may nest before the rest is `unknown`.
const MAX_DEPTH: usize = 8;

/// The longest one command line may take to parse before it is judged unknown. A line
/// parses in microseconds to a few milliseconds; tree-sitter's error recovery can take
/// far longer on some broken input (the merge budget in third_party/tree-sitter bounds
/// the one case found, where a parse ran for hours), and a guard that hangs holds up
/// the agent's turn and a core.
const PARSE_BUDGET: Duration = Duration::from_secs(2);

/// A simple command as rules see it.
#[derive(Debug, Clone)]
pub struct Simple {
    /// Its words (a dynamic word as written).
    pub argv: Vec<String>,
    /// Its verdict.
    pub verdict: Verdict,
    /// Why.
    pub reasons: Vec<String>,
    /// The argv forms rules match on: the command as written first, then what each
    /// wrapper runs (`sudo rm x` → `sudo rm x`, `rm x`); git without its global
    /// options. A word known only at run time starts with NUL so no literal matches
    /// it. Empty when the program itself is not static.
    pub keys: Vec<Vec<String>>,
    /// It only runs other commands (a `bash -c` script, `eval`), which are listed
    /// after it; an allow rule is needed for those, not for it.
    pub wrapper: bool,
}

/// What a command's stdin carries.
#[derive(Debug, Clone, Default)]
pub struct Feed {
    piped: bool,
    download: bool,
    decoded: bool,
    /// Text known exactly (a here-doc, a here-string, `echo` of static words).
    text: Option<String>,
}

pub struct Walker<'a> {
    cx: &'a Context,
    cwd: Option<PathBuf>,
    out: Vec<Simple>,
    line_reasons: Vec<(Verdict, String)>,
    protected: std::cell::RefCell<Vec<PathBuf>>,
}

impl<'a> Walker<'a> {
    pub fn new(cx: &'a Context) -> Self {
        Self {
            cx,
            cwd: Some(cx.workdir.clone()),
            out: Vec::new(),
            line_reasons: Vec::new(),
            protected: Default::default(),
        }
    }

    pub fn finish(self) -> Report {
        let mut verdict = self
            .out
            .iter()
            .map(|s| s.verdict)
            .max()
            .unwrap_or(Verdict::Safe);
        for (v, _) in &self.line_reasons {
            verdict = verdict.max(*v);
        }
        let mut reasons: Vec<String> = Vec::new();
        for (v, r) in &self.line_reasons {
            if *v == verdict && !reasons.contains(r) {
                reasons.push(r.clone());
            }
        }
        for s in &self.out {
            if s.verdict == verdict {
                for r in &s.reasons {
                    if !reasons.contains(r) {
                        reasons.push(r.clone());
                    }
                }
            }
        }
        let commands = self
            .out
            .iter()
            .map(|s| CommandReport {
                argv: s.argv.clone(),
                verdict: s.verdict,
                reasons: s.reasons.clone(),
            })
            .collect();
        Report {
            verdict,
            reasons,
            commands,
            simple: self.out,
            protected_writes: self.protected.into_inner(),
        }
    }

    fn env(&self) -> words::Env<'_> {
        words::Env {
            home: self.cx.home.as_deref().and_then(Path::to_str),
        }
    }

    /// Parses and walks one command line (the top, or a `-c` string at `depth`).
    pub fn line(&mut self, src: &str, depth: usize) {
        if depth > MAX_DEPTH {
            self.line_reasons.push((
                Verdict::Unknown,
                "commands nested too deep to follow".into(),
            ));
            return;
        }
        let mut parser = Parser::new();
        if parser
            .set_language(&tree_sitter_bash::LANGUAGE.into())
            .is_err()
        {
            self.line_reasons
                .push((Verdict::Unknown, "the shell grammar did not load".into()));
            return;
        }
        // tree-sitter-bash 0.25.1's external scanner reads past its tables on some
        // non-ASCII input (`{` then U+8588D segfaults the process). Bash treats every
        // non-ASCII character as a word character, as it does `x`, so the parser sees
        // each such byte as `x`; offsets are unchanged and words are read from `src`.
        let masked: Vec<u8> = src
            .bytes()
            .map(|b| if b.is_ascii() { b } else { b'x' })
            .collect();
        let started = Instant::now();
        let mut too_long = |_: &ParseState| started.elapsed() > PARSE_BUDGET;
        let tree = parser.parse_with_options(
            &mut |i, _| masked.get(i..).unwrap_or_default(),
            None,
            Some(ParseOptions::new().progress_callback(&mut too_long)),
        );
        let Some(tree) = tree else {
            self.line_reasons.push((
                Verdict::Unknown,
                format!(
                    "the command line did not parse within {} s",
                    PARSE_BUDGET.as_secs()
                ),
            ));
            return;
        };
        let root = tree.root_node();
        if root.has_error() {
            self.line_reasons.push((
                Verdict::Unknown,
                "the command line does not parse as shell, so what runs is not known".into(),
            ));
        }
        self.node(root, src.as_bytes(), &Feed::default(), depth);
    }

    fn node(&mut self, n: Node<'_>, src: &[u8], feed: &Feed, depth: usize) {
        match n.kind() {
            "command" => self.command(n, src, feed, depth),
            "redirected_statement" => self.redirected(n, src, feed, depth),
            "pipeline" => self.pipeline(n, src, feed, depth),
            "function_definition" => self.function(n, src, feed, depth),
            "comment" | "heredoc_body" => {}
            _ => {
                let mut c = n.walk();
                let kids: Vec<_> = n.named_children(&mut c).collect();
                for k in kids {
                    self.node(k, src, feed, depth);
                }
            }
        }
    }

    fn pipeline(&mut self, n: Node<'_>, src: &[u8], feed: &Feed, depth: usize) {
        let mut c = n.walk();
        let stages: Vec<_> = n.named_children(&mut c).collect();
        let mut stage_feed = feed.clone();
        for s in stages {
            let start = self.out.len();
            self.node(s, src, &stage_feed, depth);
            stage_feed = self.feed_from(start);
        }
    }

    /// What the commands recorded since `start` write into a pipe.
    fn feed_from(&self, start: usize) -> Feed {
        let mut f = Feed {
            piped: true,
            ..Feed::default()
        };
        let produced = &self.out[start..];
        for s in produced {
            let Some(argv) = s.keys.last() else { continue };
            let prog = argv.first().map(|p| base(p)).unwrap_or_default();
            let has = |flag: &str| argv.iter().skip(1).any(|a| a == flag);
            match prog {
                "curl" | "wget" | "fetch" | "aria2c" | "http" | "https" | "nc" | "ncat"
                | "socat" | "ftp" | "tftp" | "lynx" => f.download = true,
                "base64" | "base32" | "basenc" if has("-d") || has("--decode") || has("-D") => {
                    f.decoded = true;
                }
                "xxd" | "uudecode" | "openssl" | "gunzip" | "zcat" | "bzcat" | "xzcat"
                | "zstdcat" | "unxz" | "rev" | "tr" | "gzip" | "perl" | "python" | "python3" => {
                    f.decoded = true
                }
                "printf" => f.decoded = true,
                "echo" => {
                    if argv
                        .iter()
                        .skip(1)
                        .any(|a| a.starts_with('\0') || a == "-e")
                    {
                        f.decoded = true;
                    } else if produced.len() == 1 {
                        let words: Vec<&str> = argv
                            .iter()
                            .skip(1)
                            .filter(|a| !matches!(a.as_str(), "-n" | "-E"))
                            .map(String::as_str)
                            .collect();
                        f.text = Some(words.join(" "));
                    }
                }
                _ => {}
            }
        }
        f
    }

    fn function(&mut self, n: Node<'_>, src: &[u8], feed: &Feed, depth: usize) {
        let name = n
            .child_by_field_name("name")
            .and_then(|x| x.utf8_text(src).ok())
            .unwrap_or("")
            .to_string();
        let start = self.out.len();
        if let Some(body) = n.child_by_field_name("body") {
            self.node(body, src, feed, depth);
        }
        let recursive = self.out[start..]
            .iter()
            .any(|s| s.argv.first().is_some_and(|p| *p == name));
        if recursive {
            self.line_reasons.push((
                Verdict::Dangerous,
                format!("the function {name} calls itself (a fork bomb shape)"),
            ));
        }
    }

    fn redirected(&mut self, n: Node<'_>, src: &[u8], feed: &Feed, depth: usize) {
        let mut feed = feed.clone();
        let mut writes: Vec<(Verdict, String)> = Vec::new();
        let mut c = n.walk();
        let kids: Vec<_> = n.named_children(&mut c).collect();
        let body = n.child_by_field_name("body");
        for k in &kids {
            match k.kind() {
                "file_redirect" => {
                    if let Some(w) = self.redirect(*k, src, depth) {
                        writes.push(w);
                    }
                }
                "heredoc_redirect" | "herestring_redirect" => {
                    if let Some(f) = self.here_feed(*k, src, depth) {
                        feed = f;
                    }
                }
                _ => {}
            }
        }
        let start = self.out.len();
        if let Some(b) = body {
            self.node(b, src, &feed, depth);
        }
        for s in &mut self.out[start..] {
            for (v, r) in &writes {
                s.verdict = s.verdict.max(*v);
                s.reasons.push(r.clone());
            }
        }
        if self.out.len() == start {
            for w in writes {
                self.line_reasons.push(w);
            }
        }
    }

    /// What a here-doc or here-string feeds.
    fn here_feed(&mut self, k: Node<'_>, src: &[u8], depth: usize) -> Option<Feed> {
        let mut hc = k.walk();
        let kids: Vec<_> = k.named_children(&mut hc).collect();
        if k.kind() == "heredoc_redirect" {
            let body: String = kids
                .iter()
                .filter(|x| x.kind() == "heredoc_body")
                .filter_map(|x| x.utf8_text(src).ok())
                .collect();
            return Some(Feed {
                piped: true,
                text: Some(body),
                ..Feed::default()
            });
        }
        let wn = kids.into_iter().next()?;
        self.substitutions(wn, src, depth);
        let w = words::resolve(wn, src, &self.env());
        Some(Feed {
            piped: true,
            decoded: w.value.is_none(),
            text: w.value,
            ..Feed::default()
        })
    }

    /// A `>`-style redirection's effect, if it writes.
    fn redirect(&mut self, k: Node<'_>, src: &[u8], depth: usize) -> Option<(Verdict, String)> {
        let mut op = String::new();
        let mut c = k.walk();
        for ch in k.children(&mut c) {
            if !ch.is_named() {
                op.push_str(ch.utf8_text(src).unwrap_or(""));
            }
        }
        let dest = k.child_by_field_name("destination")?;
        self.substitutions(dest, src, depth);
        let writes = op.contains('>');
        if !writes || op.contains('&') && dest.kind() == "number" {
            return None;
        }
        let w = words::resolve(dest, src, &self.env());
        let jcx = self.jcx();
        Some(judge::write_target(&w, &jcx, "writes to"))
    }

    fn jcx(&self) -> Jcx<'_> {
        Jcx {
            cwd: self.cwd.as_deref(),
            workdir: &self.cx.workdir,
            home: self.cx.home.as_deref(),
            protected: &self.protected,
        }
    }

    /// Walks command and process substitutions inside a word; returns whether any
    /// of them downloads.
    fn substitutions(&mut self, n: Node<'_>, src: &[u8], depth: usize) -> bool {
        match n.kind() {
            "command_substitution" | "process_substitution" => {
                let start = self.out.len();
                let saved = self.cwd.clone();
                let mut c = n.walk();
                let kids: Vec<_> = n.named_children(&mut c).collect();
                for k in kids {
                    self.node(k, src, &Feed::default(), depth);
                }
                self.cwd = saved;
                self.feed_from(start).download
            }
            _ => {
                let mut c = n.walk();
                let kids: Vec<_> = n.named_children(&mut c).collect();
                let mut any = false;
                for k in kids {
                    any |= self.substitutions(k, src, depth);
                }
                any
            }
        }
    }

    fn command(&mut self, n: Node<'_>, src: &[u8], feed: &Feed, depth: usize) {
        let mut here: Option<Feed> = None;
        let mut argv: Vec<Word> = Vec::new();
        let mut downloads: Vec<bool> = Vec::new();
        let mut assigns: Vec<(String, Word)> = Vec::new();
        let mut writes: Vec<(Verdict, String)> = Vec::new();
        let mut c = n.walk();
        let kids: Vec<_> = n.named_children(&mut c).collect();
        for k in kids {
            match k.kind() {
                "variable_assignment" => {
                    self.substitutions(k, src, depth);
                    let name = k
                        .child_by_field_name("name")
                        .and_then(|x| x.utf8_text(src).ok())
                        .unwrap_or("")
                        .to_string();
                    let value = k
                        .child_by_field_name("value")
                        .map(|v| words::resolve(v, src, &self.env()))
                        .unwrap_or_else(|| Word::literal(""));
                    assigns.push((name, value));
                }
                "file_redirect" => {
                    if let Some(w) = self.redirect(k, src, depth) {
                        writes.push(w);
                    }
                }
                "herestring_redirect" | "heredoc_redirect" => {
                    here = self.here_feed(k, src, depth);
                }
                "command_name" => {
                    let inner = k.named_child(0).unwrap_or(k);
                    downloads.push(self.substitutions(inner, src, depth));
                    argv.push(words::resolve(inner, src, &self.env()));
                }
                "comment" => {}
                _ => {
                    downloads.push(self.substitutions(k, src, depth));
                    argv.push(words::resolve(k, src, &self.env()));
                }
            }
        }
        if argv.is_empty() {
            return;
        }
        let feed = here.as_ref().unwrap_or(feed);
        let mut out = Out::default();
        for (v, r) in writes {
            out.mark(v, r);
        }
        for (name, _) in &assigns {
            if crate::wrap::risky_env(name) {
                out.mark(
                    Verdict::Unknown,
                    format!("sets {name}, which changes what a program runs"),
                );
            }
        }
        let shown: Vec<String> = argv.iter().map(|w| w.shown().to_string()).collect();
        let mut keys = Vec::new();
        let mut wrapper = false;
        let index = self.out.len();
        // A placeholder so the wrapper is listed before what it runs.
        self.out.push(Simple {
            argv: shown.clone(),
            verdict: Verdict::Safe,
            reasons: Vec::new(),
            keys: Vec::new(),
            wrapper: false,
        });
        self.judge(
            &argv,
            &downloads,
            feed,
            depth,
            &mut out,
            &mut keys,
            &mut wrapper,
        );
        let s = &mut self.out[index];
        s.verdict = out.v;
        s.reasons = out.reasons;
        s.keys = keys;
        s.wrapper = wrapper;
    }

    /// Judges one argv, unwrapping wrappers; `keys` collects each level's argv.
    #[allow(clippy::too_many_arguments)]
    fn judge(
        &mut self,
        argv: &[Word],
        downloads: &[bool],
        feed: &Feed,
        depth: usize,
        out: &mut Out,
        keys: &mut Vec<Vec<String>>,
        wrapper: &mut bool,
    ) {
        let Some(prog_w) = argv.first() else {
            return;
        };
        let Some(prog) = prog_w.value.clone() else {
            out.mark(
                Verdict::Dangerous,
                format!(
                    "the program name is only known at run time ({}), which hides what runs",
                    prog_w.dynamic.join(" ")
                ),
            );
            return;
        };
        if prog_w.quoted && !words::needs_quoting(&prog) {
            out.mark(
                Verdict::Dangerous,
                format!(
                    "quotes or escapes disguise the program name ({} runs {prog})",
                    prog_w.raw
                ),
            );
        }
        if prog_w.glob {
            out.mark(
                Verdict::Dangerous,
                format!("the program name {} is a glob", prog_w.raw),
            );
        }
        keys.push(key(argv));
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

        if let Some(unwrapped) = crate::wrap::unwrap(&b, args) {
            match unwrapped {
                crate::wrap::Unwrap::Inner {
                    at,
                    note,
                    from_stdin,
                } => {
                    if let Some((v, r)) = note {
                        out.mark(v, r);
                    }
                    let named = args.get(at).map(|w| w.shown()).unwrap_or("");
                    if crate::wrap::execs(&b) && crate::wrap::shell_only(named) {
                        out.mark(
                            Verdict::Unknown,
                            format!(
                                "{b} runs a file named {named} from PATH, not the shell's builtin"
                            ),
                        );
                    }
                    let mut inner: Vec<Word> = args[at..].to_vec();
                    let mut inner_dl: Vec<bool> = arg_downloads.get(at..).unwrap_or(&[]).to_vec();
                    let inner_feed = if from_stdin {
                        inner.push(Word::unknown("<arguments from stdin>"));
                        inner_dl.push(false);
                        Feed::default()
                    } else {
                        feed.clone()
                    };
                    self.judge(&inner, &inner_dl, &inner_feed, depth, out, keys, wrapper);
                    return;
                }
                crate::wrap::Unwrap::Script { text, note } => {
                    if let Some((v, r)) = note {
                        out.mark(v, r);
                    }
                    *wrapper = true;
                    self.line(&text, depth + 1);
                    return;
                }
                crate::wrap::Unwrap::Alone(v, r) => {
                    out.mark(v, r);
                    return;
                }
            }
        }

        if crate::wrap::is_shell(&b) || b == "eval" || b == "su" {
            self.shell(&b, args, arg_downloads, feed, depth, out, wrapper);
            return;
        }
        if crate::wrap::is_interpreter(&b) || b == "source" || b == "." {
            crate::wrap::interpreter(&b, args, arg_downloads, feed.download, feed.decoded, out);
            return;
        }
        let jcx = self.jcx();
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
            let mut o = Out::default();
            let mut k = Vec::new();
            let mut wr = false;
            self.judge(
                &inner,
                &dl,
                &Feed::default(),
                depth,
                &mut o,
                &mut k,
                &mut wr,
            );
            let s = &mut self.out[start];
            s.verdict = o.v;
            s.reasons = o.reasons;
            s.keys = k;
            s.wrapper = wr;
        }
        out.merge(judged);
    }

    #[allow(clippy::too_many_arguments)]
    fn shell(
        &mut self,
        b: &str,
        args: &[Word],
        downloads: &[bool],
        feed: &Feed,
        depth: usize,
        out: &mut Out,
        wrapper: &mut bool,
    ) {
        if b == "eval" {
            out.mark(Verdict::Unknown, "eval runs text as a command".to_string());
            if args.iter().all(|a| a.value.is_some()) {
                let text: Vec<&str> = args.iter().map(Word::shown).collect();
                *wrapper = true;
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
                        *wrapper = true;
                        self.line(script, depth + 1);
                    }
                    None => {
                        let dl = downloads.get(i).copied().unwrap_or(false);
                        out.mark(
                            Verdict::Dangerous,
                            if dl {
                                format!("{b} -c runs a downloaded script ({})", w.raw)
                            } else {
                                format!("{b} -c runs a script built at run time ({})", w.raw)
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
                        format!("{b} runs a download handed to it ({})", w.raw),
                    );
                } else if w.substitution {
                    out.mark(
                        Verdict::Dangerous,
                        format!("{b} runs a script produced at run time ({})", w.raw),
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
            *wrapper = true;
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

/// The argv as rules see it (git's global options dropped).
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
