//! Walking the syntax tree: every simple command found, with what feeds its stdin,
//! its redirections, and the programs it runs through wrappers and `-c` strings
//! (those in [`crate::exec`]).
//!
//! Besides commands, the walk judges what runs code without one: a bare assignment
//! (`PATH=./bin`), arithmetic on a variable (`(( x ))`, `$((x))`, `[[ $x -eq 1 ]]`,
//! `${a[x]}`: bash evaluates the variable's value as arithmetic, and `a[$(cmd)]` in it
//! runs `cmd`), and here-document bodies, whose `$(…)` run when the delimiter is
//! unquoted.
//!
//! The walk recurses once per syntax level; it stops at [`MAX_NEST`] levels (the rest
//! is `unknown`), so no line can exhaust the stack of the thread that classifies it.
//! tree-sitter's own parse does not recurse (a line of 20,000 nested `$(` parses on
//! a 64 KiB stack).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tree_sitter::{Node, ParseOptions, ParseState, Parser};

use crate::judge::{self, Jcx, Out};
use crate::paths::base;
use crate::words::{self, Word};
use crate::{CommandReport, Context, Report, Verdict};

/// How deep `bash -c`, `eval` and friends may nest before the rest is `unknown`.
pub(crate) const MAX_DEPTH: usize = 8;

/// How many syntax levels the walk follows (a real line has a few dozen at most).
/// Each level costs the walk a few stack frames; at this bound a debug build's walk
/// stays well inside the 2 MiB of a tokio worker or a test thread.
pub const MAX_NEST: usize = 200;

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
    pub(crate) piped: bool,
    pub(crate) download: bool,
    pub(crate) decoded: bool,
    /// Text known exactly (a here-doc, a here-string, `echo` of static words).
    pub(crate) text: Option<String>,
}

/// A here-document or here-string: what it feeds, and what follows its start on the
/// same line (tree-sitter puts `| sh`, `&& cmd` and `> file` after `<<EOF` inside it).
pub(crate) struct Here<'t> {
    pub(crate) feed: Feed,
    pub(crate) writes: Vec<(Verdict, String)>,
    pub(crate) trailing: Vec<Node<'t>>,
}

pub struct Walker<'a> {
    pub(crate) cx: &'a Context,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) out: Vec<Simple>,
    pub(crate) line_reasons: Vec<(Verdict, String)>,
    pub(crate) protected: RefCell<Vec<PathBuf>>,
    /// Why no allow rule may answer for the line.
    pub(crate) pins: Vec<String>,
    /// The syntax levels being walked now.
    nest: usize,
}

impl<'a> Walker<'a> {
    pub fn new(cx: &'a Context) -> Self {
        Self {
            cx,
            cwd: Some(cx.workdir.clone()),
            out: Vec::new(),
            line_reasons: Vec::new(),
            protected: Default::default(),
            pins: Vec::new(),
            nest: 0,
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
            pinned: self.pins,
        }
    }

    pub(crate) fn env(&self) -> words::Env<'_> {
        words::Env {
            home: self.cx.home.as_deref().and_then(Path::to_str),
        }
    }

    pub(crate) fn jcx(&self) -> Jcx<'_> {
        Jcx {
            cwd: self.cwd.as_deref(),
            workdir: &self.cx.workdir,
            home: self.cx.home.as_deref(),
            weft_home: self.cx.weft_home.as_deref(),
            protected: &self.protected,
        }
    }

    /// One more syntax level; false (and the line `unknown`) past [`MAX_NEST`].
    pub(crate) fn enter(&mut self) -> bool {
        if self.nest >= MAX_NEST {
            let why = format!(
                "the command line nests deeper than {MAX_NEST} levels, so what it runs is not followed to the end"
            );
            if !self.line_reasons.iter().any(|(_, r)| *r == why) {
                self.line_reasons.push((Verdict::Unknown, why));
            }
            return false;
        }
        self.nest += 1;
        true
    }

    pub(crate) fn leave(&mut self) {
        self.nest = self.nest.saturating_sub(1);
    }

    /// Marks the whole line with what `o` found (outside any one command).
    pub(crate) fn line_out(&mut self, o: Out) {
        for r in o.reasons {
            self.line_reasons.push((o.v, r));
        }
        for p in o.pins {
            if !self.pins.contains(&p) {
                self.pins.push(p);
            }
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

    pub(crate) fn node(&mut self, n: Node<'_>, src: &[u8], feed: &Feed, depth: usize) {
        if !self.enter() {
            return;
        }
        match n.kind() {
            "command" => self.command(n, src, feed, depth),
            "declaration_command" | "unset_command" => self.declaration(n, src, feed, depth),
            "redirected_statement" => self.redirected(n, src, feed, depth),
            "pipeline" => self.pipeline(n, src, feed, depth),
            "function_definition" => self.function(n, src, feed, depth),
            "variable_assignment" | "variable_assignments" => self.assignment(n, src, depth),
            "file_redirect" => {
                // A redirection alone (`$(< file)`, `> file`).
                let found = self.redirect(n, src, depth);
                self.line_reasons.extend(found);
            }
            "comment" | "heredoc_body" => {}
            kind => {
                self.arithmetic(n, src);
                if kind == "for_statement" {
                    self.loop_variable(n, src);
                }
                let mut c = n.walk();
                let kids: Vec<_> = n.named_children(&mut c).collect();
                for k in kids {
                    self.node(k, src, feed, depth);
                }
            }
        }
        self.leave();
    }

    /// Arithmetic outside a command's words: `(( x ))`, `for ((…))`, `[[ $x -eq 1 ]]`,
    /// `[ -v 'a[…]' ]`, and `$((x))` or `${a[x]}` where a statement reads them.
    fn arithmetic(&mut self, n: Node<'_>, src: &[u8]) {
        let text = n.utf8_text(src).unwrap_or("");
        let arith = match n.kind() {
            "compound_statement" if text.starts_with("((") => words::mentions_var(n, 0),
            "c_style_for_statement" | "arithmetic_expansion" => words::mentions_var(n, 0),
            "expansion" => words::expansion_arith(n, src),
            "test_command" => test_arith(n, src),
            _ => false,
        };
        if arith {
            let mut o = Out::default();
            o.pin(format!(
                "{} evaluates a variable's value as arithmetic, where a[$(…)] runs a command",
                first_line(text)
            ));
            self.line_out(o);
        }
    }

    /// `for PATH in ./bin; do ls; done` assigns PATH.
    fn loop_variable(&mut self, n: Node<'_>, src: &[u8]) {
        let name = n
            .child_by_field_name("variable")
            .and_then(|v| v.utf8_text(src).ok())
            .unwrap_or("");
        if crate::wrap::risky_env(name) {
            let mut o = Out::default();
            o.pin(format!(
                "the loop assigns {name}, which changes what later commands run"
            ));
            self.line_out(o);
        }
    }

    /// A bare assignment (`x=1`, `PATH=./bin`, `a[$(cmd)]=1`).
    fn assignment(&mut self, n: Node<'_>, src: &[u8], depth: usize) {
        self.substitutions(n, src, depth);
        let mut c = n.walk();
        let each: Vec<Node<'_>> = if n.kind() == "variable_assignments" {
            n.named_children(&mut c).collect()
        } else {
            vec![n]
        };
        let mut o = Out::default();
        for a in each {
            let name = a
                .child_by_field_name("name")
                .and_then(|x| x.utf8_text(src).ok())
                .unwrap_or("");
            if let Some(v) = a.child_by_field_name("value") {
                let w = words::resolve(v, src, &self.env());
                word_checks(&w, &mut o);
            }
            if name.contains('[') {
                o.pin(format!(
                    "assigning {name} evaluates its subscript, which can run commands"
                ));
            } else if crate::wrap::risky_env(name) {
                o.pin(format!(
                    "assigns {name}, which changes what later commands run"
                ));
            } else {
                o.mark(
                    Verdict::Unknown,
                    format!("assigns {name}, which later commands may read (a bare assignment)"),
                );
            }
        }
        self.line_out(o);
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
    pub(crate) fn feed_from(&self, start: usize) -> Feed {
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
        // `f() { …; } > file`: each call writes there.
        let mut c = n.walk();
        let redirects: Vec<_> = n
            .named_children(&mut c)
            .filter(|k| k.kind() == "file_redirect")
            .collect();
        for r in redirects {
            let found = self.redirect(r, src, depth);
            self.line_reasons.extend(found);
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
        let mut trailing = Vec::new();
        let mut c = n.walk();
        let kids: Vec<_> = n.named_children(&mut c).collect();
        let body = n.child_by_field_name("body");
        for k in &kids {
            match k.kind() {
                "file_redirect" => writes.extend(self.redirect(*k, src, depth)),
                "heredoc_redirect" | "herestring_redirect" => {
                    if let Some(h) = self.here(*k, src, depth) {
                        feed = h.feed;
                        writes.extend(h.writes);
                        trailing.extend(h.trailing);
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
            self.line_reasons.extend(writes);
        }
        self.trailing(trailing, src, start, &feed, depth);
    }

    /// Walks what followed a here-document's start: a pipeline gets what the
    /// command before it wrote (the document itself when that is a bare `cat`).
    pub(crate) fn trailing(
        &mut self,
        nodes: Vec<Node<'_>>,
        src: &[u8],
        start: usize,
        fed: &Feed,
        depth: usize,
    ) {
        for t in nodes {
            if t.kind() != "pipeline" {
                self.node(t, src, &Feed::default(), depth);
                continue;
            }
            let passes_through = self.out.len() == start + 1
                && self.out[start].keys.last().is_some_and(|k| {
                    k.first().is_some_and(|p| base(p) == "cat") && k[1..].iter().all(|a| a == "-")
                });
            let mut stage_feed = if passes_through {
                Feed {
                    piped: true,
                    ..fed.clone()
                }
            } else {
                self.feed_from(start)
            };
            let mut c = t.walk();
            let stages: Vec<_> = t.named_children(&mut c).collect();
            for s in stages {
                let at = self.out.len();
                self.node(s, src, &stage_feed, depth);
                stage_feed = self.feed_from(at);
            }
        }
    }

    /// A here-document or here-string: its body walked (unless the delimiter is
    /// quoted, bash expands `$(…)`, `$x` and `$((…))` in it, and the grammar parses
    /// them), what it feeds, and what follows its start.
    pub(crate) fn here<'t>(&mut self, k: Node<'t>, src: &[u8], depth: usize) -> Option<Here<'t>> {
        let mut hc = k.walk();
        let kids: Vec<Node<'t>> = k.named_children(&mut hc).collect();
        if k.kind() == "herestring_redirect" {
            let wn = kids.into_iter().next()?;
            self.substitutions(wn, src, depth);
            let w = words::resolve(wn, src, &self.env());
            let mut o = Out::default();
            word_checks(&w, &mut o);
            self.line_out(o);
            return Some(Here {
                feed: Feed {
                    piped: true,
                    decoded: w.value.is_none(),
                    text: w.value,
                    ..Feed::default()
                },
                writes: Vec::new(),
                trailing: Vec::new(),
            });
        }
        let mut text = String::new();
        let mut expands = false;
        let mut writes = Vec::new();
        let mut trailing = Vec::new();
        for x in kids {
            match x.kind() {
                "heredoc_start" | "heredoc_end" => {}
                "heredoc_body" => {
                    text.push_str(x.utf8_text(src).unwrap_or(""));
                    // The grammar parses expansions in the body only when the
                    // delimiter is unquoted (`<<'EOF'` has none); whatever it parsed,
                    // bash may run, so it is walked whatever the delimiter looks like
                    // (the fuzzer found `<<xEOF'` with a live `$(…)` below it).
                    expands |= self.here_body(x, src, depth);
                }
                "file_redirect" => writes.extend(self.redirect(x, src, depth)),
                _ => trailing.push(x),
            }
        }
        Some(Here {
            feed: Feed {
                piped: true,
                // Expanded at run time: what the document says is not known here.
                decoded: expands,
                text: (!expands).then_some(text),
                ..Feed::default()
            },
            writes,
            trailing,
        })
    }

    /// Walks an unquoted here-document body's expansions; whether it has any.
    fn here_body(&mut self, body: Node<'_>, src: &[u8], depth: usize) -> bool {
        let mut c = body.walk();
        let parts: Vec<_> = body
            .named_children(&mut c)
            .filter(|p| p.kind() != "heredoc_content")
            .collect();
        let mut o = Out::default();
        for p in &parts {
            self.substitutions(*p, src, depth);
            let w = words::resolve(*p, src, &self.env());
            word_checks(&w, &mut o);
        }
        self.line_out(o);
        !parts.is_empty()
    }

    /// A redirection's effect: a write (`>`, `>>`, `<>`) where it writes; a read (`<`)
    /// of the user's credentials.
    pub(crate) fn redirect(
        &mut self,
        k: Node<'_>,
        src: &[u8],
        depth: usize,
    ) -> Vec<(Verdict, String)> {
        let mut op = String::new();
        let mut c = k.walk();
        for ch in k.children(&mut c) {
            if !ch.is_named() {
                op.push_str(ch.utf8_text(src).unwrap_or(""));
            }
        }
        // tree-sitter puts the words after a redirection's target inside it
        // (`cat <f <(cmd)`, `ls > f $(cmd)`): bash runs their substitutions too.
        let mut c = k.walk();
        let words: Vec<_> = k.named_children(&mut c).collect();
        let mut o = Out::default();
        let mut past_target = false;
        for w in &words {
            self.substitutions(*w, src, depth);
            if w.kind() == "file_descriptor" {
                continue;
            }
            if past_target {
                // Bash reads them as the command's arguments, or as the command when
                // none came before; where the grammar put them, they are not judged
                // as either.
                let extra = words::resolve(*w, src, &self.env());
                word_checks(&extra, &mut o);
                o.mark(
                    Verdict::Unknown,
                    format!(
                        "{} follows a redirection's target, where what it is to bash is not known",
                        extra.brief()
                    ),
                );
            }
            past_target = true;
        }
        let Some(dest) = k.child_by_field_name("destination") else {
            return Vec::new();
        };
        if op.contains('&') && dest.kind() == "number" && o.reasons.is_empty() {
            return Vec::new();
        }
        let w = words::resolve(dest, src, &self.env());
        let jcx = self.jcx();
        if op.contains('>') {
            let (v, r) = judge::write_target(&w, &jcx, "writes to");
            o.mark(v, r);
        } else if op.contains('<') {
            crate::secrets::check_read("the redirection", &w, false, &jcx, &mut o);
        }
        word_checks(&w, &mut o);
        let found: Vec<(Verdict, String)> = o.reasons.iter().map(|r| (o.v, r.clone())).collect();
        for p in o.pins {
            if !self.pins.contains(&p) {
                self.pins.push(p);
            }
        }
        found
    }

    /// Walks command and process substitutions inside a word; returns whether any
    /// of them downloads.
    pub(crate) fn substitutions(&mut self, n: Node<'_>, src: &[u8], depth: usize) -> bool {
        if !self.enter() {
            return false;
        }
        let any = match n.kind() {
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
        };
        self.leave();
        any
    }
}

/// What a word does besides its value: arithmetic on a variable (pinned: it runs
/// code an allow rule does not name), a variable that may hold a credential.
pub(crate) fn word_checks(w: &Word, out: &mut Out) {
    if w.arith_var {
        out.pin(format!(
            "{} evaluates a variable's value as arithmetic, where a[$(…)] runs a command",
            w.brief()
        ));
    }
    for v in &w.vars {
        if v == "!" {
            out.mark(
                Verdict::Unknown,
                format!("{} expands a variable named at run time", w.brief()),
            );
        } else if crate::secrets::credential_name(v) {
            out.mark(
                Verdict::Unknown,
                format!("expands ${v}, which may hold a credential"),
            );
        }
    }
}

/// Whether a `[[ … ]]` or `[ … ]` test evaluates arithmetic or a subscript on a
/// variable: `-eq`-style operators in `[[`, `-v`/`-R` on a subscripted name.
fn test_arith(n: Node<'_>, src: &[u8]) -> bool {
    let double = n.utf8_text(src).is_ok_and(|t| t.starts_with("[["));
    let mut stack = vec![n];
    let mut seen = 0;
    while let Some(x) = stack.pop() {
        seen += 1;
        if seen > 10_000 {
            return true;
        }
        if x.kind() == "test_operator" {
            let op = x.utf8_text(src).unwrap_or("");
            let operands = x.parent().map_or(n, |p| p);
            let arith_op = matches!(op, "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge");
            if double && arith_op && words::mentions_var(operands, 0) {
                return true;
            }
            if matches!(op, "-v" | "-R")
                && x.next_named_sibling()
                    .and_then(|o| o.utf8_text(src).ok())
                    .is_some_and(|t| t.contains('['))
            {
                return true;
            }
        }
        let mut c = x.walk();
        stack.extend(x.children(&mut c));
    }
    false
}

/// The first line of `s`, shortened.
fn first_line(s: &str) -> String {
    let l = s.lines().next().unwrap_or("");
    if l.chars().count() > 60 {
        format!("{}…", l.chars().take(60).collect::<String>())
    } else {
        l.to_string()
    }
}
