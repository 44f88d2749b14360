//! Read-only programs and the options they are read-only with.
//!
//! A program here is `safe` only when every option it is given is in its table and is
//! not one of its `deny` options, read as getopt_long reads them ([`crate::opts`]):
//! `sort --out=F` is `sort --output=F`, `sed --in` is `sed --in-place`. The tables
//! list each program's whole option table (GNU coreutils, grep, diffutils, util-linux,
//! procps, ripgrep as of 2026), so an abbreviation is resolved as the program resolves
//! it; an option a table does not have is `unknown`. What the program reads is judged
//! too: a file operand in the user's credentials is `dangerous` ([`crate::secrets`]),
//! and one named only at run time is `unknown`.

use crate::judge::{write_target, Jcx, Out};
use crate::opts::{self, named, Arg, Spec};
use crate::secrets;
use crate::words::Word;
use crate::Verdict;

use Operands::{Files, Names, PatternThenFiles, Text};

/// What a program's operands are.
#[derive(Clone, Copy)]
pub enum Operands {
    /// Files whose content it prints.
    Files,
    /// A pattern, then files, unless one of these options gave the pattern.
    PatternThenFiles(&'static str),
    /// Paths whose names, sizes or types it prints, not their content.
    Names,
    /// Text that is not a path (`echo`-like, user names, numbers).
    Text,
}

/// Extra checks a table cannot say (`date 0101…` sets the clock).
type Extra = fn(b: &str, parsed: &[Arg], cx: &Jcx<'_>, out: &mut Out);

/// One read-only program.
pub struct ReadOnly {
    pub names: &'static [&'static str],
    pub opts: Spec,
    /// Options that make it other than read-only, by letter or long name
    /// (`"o|output"`), with why.
    pub deny: &'static [(&'static str, &'static str)],
    /// Options whose value is a file it writes, judged as a write there.
    pub writes: &'static str,
    /// Options that make it read folders recursively (`"r|recursive"`; `*`: always;
    /// `d=recurse`: that option with that value).
    pub recursive: &'static str,
    pub operands: Operands,
    pub extra: Option<Extra>,
}

const fn ro(
    names: &'static [&'static str],
    short: &'static str,
    long: &'static [&'static str],
    operands: Operands,
) -> ReadOnly {
    ReadOnly {
        names,
        opts: Spec { short, long },
        deny: &[],
        writes: "",
        recursive: "",
        operands,
        extra: None,
    }
}

const HELP: &[&str] = &["help", "version"];
const HASH_LONG: &[&str] = &[
    "binary",
    "check",
    "tag",
    "text",
    "zero",
    "ignore-missing",
    "quiet",
    "status",
    "strict",
    "warn",
    "help",
    "version",
];
const BASE64_LONG: &[&str] = &["decode", "wrap=", "ignore-garbage", "help", "version"];

// One program a line: rustfmt would put each option on a line of its own.
#[rustfmt::skip]
const TABLE: &[ReadOnly] = &[
    ro(&["cat"], "benstuvAET", &["number-nonblank", "number", "squeeze-blank", "show-nonprinting", "show-ends", "show-tabs", "show-all", "help", "version"], Files),
    ro(&["head"], "c:n:qvz0123456789", &["bytes=", "lines=", "-presume-input-pipe", "quiet", "silent", "verbose", "zero-terminated", "help", "version"], Files),
    ro(&["tail"], "c:n:fFqs:vz0123456789", &["bytes=", "debug", "follow?", "lines=", "max-unchanged-stats=", "-disable-inotify", "pid=", "-presume-input-pipe", "quiet", "retry", "silent", "sleep-interval=", "verbose", "zero-terminated", "help", "version"], Files),
    ro(&["ls", "dir", "vdir"], "abcdfghiklmnopqrstuvw:xABCDFGHI:LNQRST:UXZ1", &["all", "escape", "directory", "dired", "full-time", "group-directories-first", "human-readable", "inode", "kibibytes", "numeric-uid-gid", "no-group", "hide-control-chars", "reverse", "size", "width=", "almost-all", "ignore-backups", "classify?", "file-type", "si", "dereference-command-line", "dereference-command-line-symlink-to-dir", "hide=", "ignore=", "indicator-style=", "dereference", "literal", "quote-name", "quoting-style=", "recursive", "format=", "show-control-chars", "sort=", "tabsize=", "time=", "time-style=", "zero", "color?", "hyperlink?", "block-size=", "context", "author", "help", "version"], Names),
    ro(&["wc"], "clLmw", &["bytes", "chars", "lines", "words", "debug", "files0-from=", "max-line-length", "total=", "help", "version"], Names),
    ro(&["cut"], "b:c:d:f:F:nO:szw", &["bytes=", "characters=", "fields=", "delimiter=", "no-partial", "whitespace-delimited?", "only-delimited", "output-delimiter=", "complement", "zero-terminated", "help", "version"], Files),
    ro(&["tr"], "+AcCdst", &["complement", "delete", "squeeze-repeats", "truncate-set1", "help", "version"], Text),
    ro(&["nl"], "h:b:f:v:i:pl:s:w:n:d:", &["header-numbering=", "body-numbering=", "footer-numbering=", "starting-line-number=", "line-increment=", "no-renumber", "join-blank-lines=", "number-separator=", "number-width=", "number-format=", "section-delimiter=", "help", "version"], Files),
    ro(&["stat"], "c:fLt", &["dereference", "file-system", "format=", "printf=", "terse", "cached=", "help", "version"], Names),
    ro(&["whoami", "groups", "arch", "sleep"], "", HELP, Text),
    ro(&["id"], "agnruzGZ", &["context", "group", "groups", "name", "real", "user", "zero", "help", "version"], Text),
    ro(&["uname"], "asnrvmpioA", &["all", "all-labeled", "kernel-name", "sysname", "nodename", "kernel-release", "release", "kernel-version", "machine", "processor", "hardware-platform", "operating-system", "help", "version"], Text),
    ro(&["basename"], "+as:z", &["multiple", "suffix=", "zero", "help", "version"], Text),
    ro(&["dirname"], "z", &["zero", "help", "version"], Text),
    ro(&["realpath"], "EeLmPqsz", &["canonicalize", "canonicalize-existing", "canonicalize-missing", "relative-to=", "relative-base=", "quiet", "strip", "no-symlinks", "zero", "logical", "physical", "help", "version"], Names),
    ro(&["readlink"], "efmnqsvz", &["canonicalize", "canonicalize-existing", "canonicalize-missing", "no-newline", "quiet", "silent", "verbose", "zero", "help", "version"], Names),
    ro(&["comm"], "123z", &["check-order", "nocheck-order", "output-delimiter=", "total", "zero-terminated", "help", "version"], Files),
    ro(&["du"], "0aAbd:chHklmst:xB:DLPSX:", &["all", "apparent-size", "block-size=", "bytes", "count-links", "-debug", "dereference", "dereference-args", "exclude=", "exclude-from=", "files0-from=", "human-readable", "inodes", "si", "max-depth=", "null", "no-dereference", "one-file-system", "separate-dirs", "summarize", "total", "threshold=", "time?", "time-style=", "help", "version"], Names),
    ro(&["df"], "aB:iF:hHklmPTt:vx:", &["all", "block-size=", "inodes", "human-readable", "si", "local", "output?", "portability", "print-type", "sync", "no-sync", "total", "type=", "exclude-type=", "help", "version"], Names),
    ro(&["seq"], "+f:s:w", &["equal-width", "format=", "separator=", "help", "version"], Text),
    ro(&["md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum"], "bctwz", HASH_LONG, Names),
    ro(&["b2sum"], "l:bctwz", &["length=", "binary", "check", "tag", "text", "zero", "ignore-missing", "quiet", "status", "strict", "warn", "help", "version"], Names),
    ro(&["cksum"], "a:l:bctwz", &["algorithm=", "base64", "binary", "check", "debug", "ignore-missing", "length=", "quiet", "raw", "status", "strict", "sysv", "tag", "text", "untagged", "warn", "zero", "help", "version"], Names),
    ro(&["fold"], "bcsw:0::1::2::3::4::5::6::7::8::9::", &["bytes", "characters", "spaces", "width=", "help", "version"], Files),
    ro(&["fmt"], "0123456789cstuw:p:g:", &["crown-margin", "prefix=", "split-only", "tagged-paragraph", "uniform-spacing", "width=", "goal=", "help", "version"], Files),
    ro(&["paste"], "d:sz", &["serial", "delimiters=", "zero-terminated", "help", "version"], Files),
    ro(&["join"], "-a:e:i1:2:j:o:t:v:z", &["ignore-case", "check-order", "nocheck-order", "zero-terminated", "header", "help", "version"], Files),
    ro(&["expand"], "it:0::1::2::3::4::5::6::7::8::9::", &["tabs=", "initial", "help", "version"], Files),
    ro(&["unexpand"], ",0123456789at:", &["tabs=", "all", "first-only", "help", "version"], Files),
    ro(&["tac"], "brs:", &["before", "regex", "separator=", "help", "version"], Files),
    ro(&["od"], "A:aBbcDdeFfHhIij:LlN:OoS:st:vw::Xx", &["skip-bytes=", "address-radix=", "read-bytes=", "format=", "output-duplicates", "strings?", "traditional", "width?", "endian=", "help", "version"], Files),
    ro(&["nproc"], "", &["all", "ignore=", "help", "version"], Text),
    ro(&["tty"], "s", &["silent", "quiet", "help", "version"], Text),
    ro(&["base64", "base32"], "diw:", BASE64_LONG, Files),
    ro(&["basenc"], "diw:", &["decode", "wrap=", "ignore-garbage", "base64", "base64url", "base58", "base32", "base32hex", "base16", "base2msbf", "base2lsbf", "z85", "help", "version"], Files),
    ReadOnly {
        deny: &[
            ("compress-program", "runs the program it names to compress temporary files"),
            ("T|temporary-directory", "writes temporary files into the folder it names"),
            ("files0-from", "reads the files named in another file, unseen here"),
        ],
        writes: "o|output",
        ..ro(&["sort"], "-bcCdfghik:mMno:rRsS:t:T:uVy:z", &["ignore-leading-blanks", "check?", "compress-program=", "debug", "dictionary-order", "ignore-case", "files0-from=", "general-numeric-sort", "ignore-nonprinting", "key=", "merge", "month-sort", "numeric-sort", "human-numeric-sort", "version-sort", "random-sort", "random-source=", "sort=", "output=", "reverse", "stable", "batch-size=", "buffer-size=", "field-separator=", "temporary-directory=", "unique", "zero-terminated", "parallel=", "help", "version"], Files)
    },
    ReadOnly {
        extra: Some(uniq_output),
        ..ro(&["uniq"], "-0123456789Dcdf:is:uw:z", &["count", "repeated", "all-repeated?", "group?", "ignore-case", "unique", "skip-fields=", "skip-chars=", "check-chars=", "zero-terminated", "help", "version"], Files)
    },
    ReadOnly {
        deny: &[("s|set", "sets the system clock")],
        extra: Some(date_operand),
        ..ro(&["date"], "d:f:I::r:Rs:u", &["date=", "debug", "file=", "iso-8601?", "reference=", "resolution", "rfc-email", "rfc-822", "rfc-2822", "rfc-3339=", "set=", "uct", "utc", "universal", "help", "version"], Text)
    },
    ro(&["yes"], "+", HELP, Text),
    ReadOnly {
        recursive: "r|R|recursive|dereference-recursive|d=recurse|directories=recurse",
        ..ro(&["grep"], "0123456789A:B:C:D:EFGHIPTUVX:abcd:e:f:hiLlm:noqRrsuvwxyZz", &["after-context=", "basic-regexp", "before-context=", "binary-files=", "byte-offset", "context=", "color?", "colour?", "count", "devices=", "directories=", "dereference-recursive", "exclude=", "exclude-from=", "exclude-dir=", "extended-regexp", "file=", "files-with-matches", "files-without-match", "fixed-regexp", "fixed-strings", "group-separator=", "help", "include=", "ignore-case", "no-ignore-case", "initial-tab", "label=", "line-buffered", "line-number", "line-regexp", "max-count=", "no-filename", "no-group-separator", "no-messages", "null", "null-data", "only-matching", "perl-regexp", "quiet", "recursive", "regexp=", "invert-match", "silent", "text", "binary", "unix-byte-offsets", "version", "with-filename", "word-regexp"], PatternThenFiles("e|f|regexp|file"))
    },
    ReadOnly {
        deny: &[
            ("pre", "runs the program it names on every file"),
            ("hostname-bin", "runs the program it names"),
            ("z|search-zip", "runs decompression programs on compressed files"),
            ("x-crud|x-force|x-path", "writes a search index"),
        ],
        recursive: "*",
        ..ro(&["rg"], "A:B:bsC:cE:f:lFLg:h.iXvnNxM:m:d:U0oPpqe:r:zSaj:t:T:uVHIw", RG_LONG, PatternThenFiles("e|f|regexp|file"))
    },
    ReadOnly {
        deny: &[("l|paginate", "passes its output through pr, another program")],
        recursive: "r|recursive",
        ..ro(&["diff"], "0123456789abBcC:dD:eEfF:hHiI:lL:nNpPqrsS:tTuU:vwW:x:X:yZ", DIFF_LONG, Files)
    },
    ro(&["cmp"], "bi:ln:sv", &["print-bytes", "print-chars", "ignore-initial=", "verbose", "bytes=", "quiet", "silent", "help", "version"], Files),
    ReadOnly {
        deny: &[
            ("C|compile", "writes a compiled magic file"),
            ("z|uncompress|Z|uncompress-noreport", "may run decompression programs"),
            ("S|no-sandbox", "turns off its own sandbox"),
            ("p|preserve-date", "sets the files' access times back"),
        ],
        ..ro(&["file"], "bcCde:Ef:F:hiklLm:nNpP:rsSvzZ0", &["help", "version", "magic-file=", "uncompress", "uncompress-noreport", "brief", "checking-printout", "exclude=", "exclude-quiet=", "files-from=", "separator=", "mime", "mime-encoding", "mime-type", "apple", "extension", "keep-going", "list", "dereference", "no-dereference", "no-buffer", "no-pad", "print0", "preserve-date", "parameter=", "raw", "special-files", "no-sandbox", "compile", "debug"], Names)
    },
    ro(&["which"], "as", &[], Text),
    ro(&["column"], "c:dE:eiJl:LN:n:O:o:p:rR:s:S:tT:W:xH:hV", &["columns=", "table", "table-name=", "table-order=", "table-columns=", "table-columns-limit=", "table-noextreme=", "table-noheadings", "table-header-as-columns", "table-header-repeat", "table-hide=", "table-right=", "table-truncate=", "table-wrap=", "keep-empty-lines", "json", "tree=", "tree-id=", "tree-parent=", "output-width=", "output-separator=", "separator=", "fillrows", "use-spaces=", "help", "version"], Files),
    ro(&["hexdump"], "bcCdoxe:f:L::n:s:vhVX", &["one-byte-octal", "one-byte-hex", "one-byte-char", "canonical", "two-bytes-decimal", "two-bytes-octal", "two-bytes-hex", "color?", "format=", "format-file=", "length=", "skip=", "no-squeezing", "help", "version"], Files),
    ro(&["rev"], "0hV", &["zero", "help", "version"], Files),
    ro(&["pgrep"], "d:lavwcfg:G:inoO:P:s:t:u:U:xF:Lr:AhV", &["delimiter=", "list-name", "list-full", "inverse", "lightweight", "count", "full", "pgroup=", "group=", "ignore-case", "newest", "oldest", "older=", "parent=", "session=", "terminal=", "euid=", "uid=", "exact", "pidfile=", "logpidfile", "runstates=", "ignore-ancestors", "cgroup=", "ns=", "nslist=", "env=", "help", "version"], Text),
    ro(&["free"], "bkmghltvs:c:wV", &["bytes", "kilo", "mega", "giga", "tera", "peta", "kibi", "mebi", "gibi", "tebi", "pebi", "human", "si", "lohi", "line", "total", "committed", "seconds=", "count=", "wide", "help", "version"], Text),
    ro(&["uptime"], "phsV", &["pretty", "help", "since", "container", "raw", "version"], Text),
];

#[rustfmt::skip]
const RG_LONG: &[&str] = &[
    "after-context=", "auto-hybrid-regex", "no-auto-hybrid-regex", "before-context=", "binary", "no-binary", "block-buffered", "no-block-buffered", "byte-offset", "no-byte-offset", "case-sensitive", "color=", "colors=", "column", "no-column", "context=", "context-separator=", "no-context-separator", "count", "count-matches", "crlf", "no-crlf", "debug", "dfa-size-limit=", "encoding=", "no-encoding", "engine=", "field-context-separator=", "field-match-separator=", "file=", "files", "files-with-matches", "files-without-match", "fixed-strings", "no-fixed-strings", "follow", "no-follow", "generate=", "glob=", "glob-case-insensitive", "no-glob-case-insensitive", "heading", "no-heading", "help", "hidden", "no-hidden", "hostname-bin=", "hyperlink-format=", "iglob=", "ignore-case", "ignore-file=", "ignore-file-case-insensitive", "no-ignore-file-case-insensitive", "include-zero", "no-include-zero", "index", "x-crud", "x-force", "x-path=", "invert-match", "no-invert-match", "json", "no-json", "line-buffered", "no-line-buffered", "line-number", "no-line-number", "line-regexp", "max-columns=", "max-columns-preview", "no-max-columns-preview", "max-count=", "max-depth=", "maxdepth=", "max-filesize=", "mmap", "no-mmap", "multiline", "no-multiline", "multiline-dotall", "no-multiline-dotall", "no-config", "no-ignore", "ignore", "no-ignore-dot", "ignore-dot", "no-ignore-exclude", "ignore-exclude", "no-ignore-files", "ignore-files", "no-ignore-global", "ignore-global", "no-ignore-messages", "ignore-messages", "no-ignore-parent", "ignore-parent", "no-ignore-vcs", "ignore-vcs", "no-messages", "messages", "no-pcre2-unicode", "pcre2-unicode", "no-require-git", "require-git", "no-unicode", "unicode", "null", "null-data", "one-file-system", "no-one-file-system", "only-matching", "path-separator=", "passthru", "passthrough", "pcre2", "no-pcre2", "pcre2-version", "pre=", "no-pre", "pre-glob=", "pretty", "quiet", "regex-size-limit=", "regexp=", "replace=", "search-zip", "no-search-zip", "smart-case", "sort-files", "no-sort-files", "sort=", "sortr=", "stats", "no-stats", "stop-on-nonmatch", "text", "no-text", "threads=", "trace", "trim", "no-trim", "type=", "type-add=", "type-clear=", "type-not=", "type-list", "unrestricted", "version", "vimgrep", "with-filename", "no-filename", "word-regexp",
];

#[rustfmt::skip]
const DIFF_LONG: &[&str] = &[
    "normal", "brief", "report-identical-files", "context?", "unified?", "ed", "forward-ed", "rcs", "side-by-side", "width=", "left-column", "suppress-common-lines", "show-c-function", "show-function-line=", "label=", "expand-tabs", "initial-tab", "tabsize=", "suppress-blank-empty", "paginate", "recursive", "no-dereference", "new-file", "unidirectional-new-file", "ignore-file-name-case", "no-ignore-file-name-case", "exclude=", "exclude-from=", "starting-file=", "from-file=", "to-file=", "ignore-case", "ignore-tab-expansion", "ignore-trailing-space", "ignore-space-change", "ignore-all-space", "ignore-blank-lines", "ignore-matching-lines=", "text", "strip-trailing-cr", "ifdef=", "old-group-format=", "new-group-format=", "unchanged-group-format=", "changed-group-format=", "old-line-format=", "new-line-format=", "unchanged-line-format=", "line-format=", "minimal", "horizon-lines=", "speed-large-files", "color?", "palette=", "binary", "inhibit-hunk-merge", "help", "version",
];

/// The read-only program `b`, if it is one.
pub fn spec_of(b: &str) -> Option<&'static ReadOnly> {
    TABLE.iter().find(|p| p.names.contains(&b))
}

/// Whether option `name` with `value` is one of `keys` (`"r|d=recurse"`).
fn matches(keys: &str, name: &str, value: Option<&Word>) -> bool {
    keys.split('|').any(|k| match k.split_once('=') {
        Some((n, v)) => n == name && value.is_some_and(|w| w.is(v)),
        None => k == name || k == "*",
    })
}

/// Judges read-only program `p` (called `b`) with `args`.
pub fn judge(p: &ReadOnly, b: &str, args: &[Word], cx: &Jcx<'_>, out: &mut Out) {
    let parsed = match opts::parse(&p.opts, args) {
        Ok(a) => a,
        Err(why) => {
            out.mark(Verdict::Unknown, format!("{b} {why}"));
            return;
        }
    };
    let hazardous = !p.deny.is_empty() || !p.writes.is_empty();
    let mut recursive = p.recursive == "*";
    let mut pattern_given = false;
    for a in &parsed {
        match a {
            Arg::Opt { name, long, value } => {
                let shown = Arg::shown(name, *long);
                if let Some((_, why)) = p.deny.iter().find(|(k, _)| named(k, name)) {
                    out.mark(Verdict::Unknown, format!("{b} {shown} {why}"));
                }
                if let Some(v) = value.as_ref().filter(|_| named(p.writes, name)) {
                    let (verdict, why) = write_target(v, cx, &format!("{b} {shown} writes to"));
                    out.mark(verdict.max(Verdict::Unknown), why);
                }
                recursive |= !p.recursive.is_empty() && matches(p.recursive, name, value.as_ref());
                if let Operands::PatternThenFiles(keys) = p.operands {
                    pattern_given |= named(keys, name);
                }
                // An option's value may name a file it reads (`grep -f`, `date -f`).
                if let Some(v) = value {
                    if v.value.is_some() {
                        secrets::check_read(b, v, false, cx, out);
                    }
                }
            }
            Arg::Unseen(w) if hazardous => out.mark(
                Verdict::Unknown,
                format!(
                    "{b} gets an argument only known at run time ({}), which may be one of its options that write or run programs",
                    w.brief()
                ),
            ),
            _ => {}
        }
    }
    let operands = parsed.iter().filter_map(|a| match a {
        Arg::Operand(w) | Arg::Unseen(w) => Some(w),
        Arg::Opt { .. } => None,
    });
    let skip = match p.operands {
        Operands::PatternThenFiles(_) if !pattern_given => 1,
        Operands::Files | Operands::PatternThenFiles(_) => 0,
        Operands::Names | Operands::Text => usize::MAX,
    };
    for w in operands.skip(skip) {
        secrets::check_read(b, w, recursive, cx, out);
    }
    if let Some(extra) = p.extra {
        extra(b, &parsed, cx, out);
    }
}

/// `uniq IN OUT` writes OUT.
fn uniq_output(b: &str, parsed: &[Arg], cx: &Jcx<'_>, out: &mut Out) {
    let second = parsed
        .iter()
        .filter_map(|a| match a {
            Arg::Operand(w) | Arg::Unseen(w) => Some(w),
            Arg::Opt { .. } => None,
        })
        .nth(1);
    if let Some(w) = second {
        let (v, why) = write_target(w, cx, &format!("{b} writes its second file,"));
        out.mark(v.max(Verdict::Unknown), why);
    }
}

/// `date MMDDhhmm…` sets the clock; `date +FORMAT` only prints.
fn date_operand(b: &str, parsed: &[Arg], _: &Jcx<'_>, out: &mut Out) {
    for a in parsed {
        if let Arg::Operand(w) | Arg::Unseen(w) = a {
            if !w.value.as_deref().is_some_and(|v| v.starts_with('+')) {
                out.mark(
                    Verdict::Unknown,
                    format!("{b} {} sets the system clock", w.shown()),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::TABLE;

    /// The long options an installed program's `--help` lists.
    fn listed(program: &str) -> Option<Vec<String>> {
        let out = std::process::Command::new(program)
            .arg("--help")
            .env("LC_ALL", "C")
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        let mut found = Vec::new();
        for line in text.lines() {
            let line = line.trim_start();
            if !line.starts_with('-') {
                continue;
            }
            // The option column ends at the first run of two spaces.
            let column = line.split("  ").next().unwrap_or("");
            for word in column.split([' ', ',', '[', '=']) {
                if let Some(name) = word.strip_prefix("--") {
                    let name: String = name
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                        .collect();
                    // Upper case is a placeholder (diff's `--GTYPE-group-format`).
                    if !name.is_empty() && !name.chars().any(|c| c.is_ascii_uppercase()) {
                        found.push(name);
                    }
                }
            }
        }
        Some(found)
    }

    /// Every long option an installed program lists is in its table: a prefix is
    /// resolved against the whole table as getopt_long resolves it, so an option
    /// missing there could be what an abbreviation means to the program. (A program
    /// that is not installed here is not checked.)
    #[test]
    fn the_tables_know_every_option_the_installed_programs_list() {
        let mut missing = Vec::new();
        for p in TABLE {
            let Some(names) = listed(p.names[0]) else {
                continue;
            };
            for n in names {
                let known = p
                    .opts
                    .long
                    .iter()
                    .any(|l| l.trim_end_matches(['=', '?']) == n);
                if !known {
                    missing.push(format!("{} --{n}", p.names[0]));
                }
            }
        }
        assert!(missing.is_empty(), "not in the tables: {missing:?}");
    }
}
