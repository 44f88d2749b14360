//! The shell classifier fed arbitrary command lines.

use std::path::Path;

use tree_sitter::Node;
use weft_shell_guard::{classify, Context, Verdict};

/// Wrappers that run the rest of the line as it was: none may make a command that is
/// not provably safe read as safe.
const WRAPPERS: [&str; 3] = ["sudo ", "nohup ", "nice "];

/// Any line classifies without panicking; a line that does not parse as shell is never
/// `safe`; a `safe` line passes an independent check of its syntax ([`oracle`]: no
/// assignment, no arithmetic on a variable, no write redirection, every program a
/// known read-only one); a line that is not `safe` stays so run under `sudo` (or
/// `nohup`, `nice`), or as `bash -c '<line>'`.
///
/// Each classification is a tree-sitter parse, and on the fuzzer's mostly broken lines
/// tree-sitter's error recovery is most of the cost, so an input pays for as few as
/// make the checks: the independent parse only for a `safe` line (the one case its
/// answer can fail), and one wrapper per input, chosen by the input's length, so the
/// fuzzer still tries all three across lines: at most three parses an input, not six.
/// (What a safe line actually does is checked by running the shell guard's corpus
/// under strace in its own tests; that is too slow for a fuzzer.)
pub fn shell(data: &[u8]) {
    let line = String::from_utf8_lossy(data);
    let cx = Context::with_home(Path::new("/home/dev/work"), Path::new("/home/dev"));
    let report = classify(&line, &cx);
    if report.verdict == Verdict::Safe {
        if let Err(why) = oracle(&line) {
            panic!("{line:?} is safe but {why}");
        }
        return;
    }
    // Only where the line starts with its program: `sudo -u x …` reads `-u` as sudo's.
    if line.starts_with(|c: char| c.is_ascii_alphabetic() || c == '/') {
        let w = WRAPPERS[data.len() % WRAPPERS.len()];
        let wrapped = classify(&format!("{w}{line}"), &cx);
        assert_ne!(
            wrapped.verdict,
            Verdict::Safe,
            "{:?} is {:?} but `{w}` before it is safe",
            line,
            report.verdict
        );
    }
    if !line.contains('\'') && !line.contains('\0') {
        let wrapped = classify(&format!("bash -c '{line}'"), &cx);
        assert_ne!(
            wrapped.verdict,
            Verdict::Safe,
            "{line:?} is {:?} but as `bash -c` it is safe",
            report.verdict
        );
    }
}

/// Programs a safe line may name: read-only ones, the shell's harmless builtins, the
/// wrappers that run one of them, and git and find (whose read-only uses the
/// classifier tells apart). Kept here apart from the classifier's tables on purpose.
#[rustfmt::skip]
const READ_ONLY: &[&str] = &[
    "cat", "head", "tail", "ls", "dir", "vdir", "pwd", "echo", "printf", "wc", "grep", "rg",
    "cut", "tr", "nl", "stat", "file", "which", "type", "whoami", "id", "groups", "uname",
    "arch", "basename", "dirname", "realpath", "readlink", "diff", "cmp", "comm", "du", "df",
    "seq", "true", "false", "test", "[", "sleep", "jq", "md5sum", "sha1sum", "sha224sum",
    "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "column", "fold", "fmt", "paste",
    "join", "expand", "unexpand", "rev", "tac", "od", "hexdump", "ps", "pgrep", "free",
    "uptime", "nproc", "tty", "base64", "base32", "basenc", "sort", "uniq", "date", "yes",
    "sed", "awk", "gawk", "mawk", "nawk", "find", "git", "cd", "pushd", "popd", "dirs", ":",
    "help", "shift", "exit", "return", "break", "continue", "set", "export", "declare",
    "typeset", "local", "readonly", "unset", "jobs", "wait", "printenv", "command", "builtin",
    "nohup", "time", "timeout", "nice", "stdbuf", "xargs", "env", "bash", "sh", "dash", "zsh",
    "crontab", "dd", "alias", "trap", "exec", "setsid", "ionice", "chrt", "taskset", "unbuffer",
    "catchsegv", "busybox", "tee", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "rbash",
];

/// An independent look at a line the classifier calls safe: `Err` names the syntax
/// that a safe line cannot have.
fn oracle(line: &str) -> Result<(), String> {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .map_err(|e| format!("the grammar did not load: {e}"))?;
    // Non-ASCII bytes read as `x`, as the classifier does and for its reason:
    // tree-sitter-bash 0.25.1's scanner reads out of bounds on some non-ASCII input.
    let masked: Vec<u8> = line
        .bytes()
        .map(|b| if b.is_ascii() { b } else { b'x' })
        .collect();
    let tree = parser
        .parse(&masked, None)
        .ok_or_else(|| "it does not parse".to_string())?;
    if tree.root_node().has_error() {
        return Err("it does not parse".into());
    }
    // Depth-first over the whole tree, without recursion.
    let mut stack = vec![tree.root_node()];
    let mut seen = 0usize;
    while let Some(n) = stack.pop() {
        seen += 1;
        if seen > 200_000 {
            return Ok(());
        }
        check(n, &masked)?;
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    Ok(())
}

fn check(n: Node<'_>, src: &[u8]) -> Result<(), String> {
    let text = n.utf8_text(src).unwrap_or("");
    match n.kind() {
        "variable_assignment" | "variable_assignments"
            if n.parent().is_none_or(|p| p.kind() != "command") =>
        {
            Err(format!("it assigns a variable ({text})"))
        }
        "compound_statement" if text.starts_with("((") && reads_var(n) => {
            Err(format!("it does arithmetic on a variable ({text})"))
        }
        "arithmetic_expansion" | "c_style_for_statement" if reads_var(n) => {
            Err(format!("it does arithmetic on a variable ({text})"))
        }
        "file_redirect" => {
            let dest = n
                .child_by_field_name("destination")
                .and_then(|d| d.utf8_text(src).ok())
                .unwrap_or("");
            let mut c = n.walk();
            let op: String = n
                .children(&mut c)
                .filter(|k| !k.is_named())
                .filter_map(|k| k.utf8_text(src).ok())
                .collect();
            let to_fd = n
                .child_by_field_name("destination")
                .is_some_and(|d| d.kind() == "number");
            let writes = op.contains('>') && !(op.contains('&') && to_fd);
            let sink = dest
                .split('/')
                .filter(|p| !p.is_empty())
                .eq(["dev", "null"]);
            if writes && !(dest.starts_with('/') && sink) {
                Err(format!("it redirects output to a file ({text})"))
            } else {
                Ok(())
            }
        }
        "command_name" => {
            // A backslash before a character that needs one (`\[`) is no disguise.
            let unescaped = text.replace('\\', "");
            let name = unescaped.rsplit('/').next().unwrap_or(&unescaped);
            let plain = name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '[' | ':'));
            if plain && READ_ONLY.contains(&name) {
                Ok(())
            } else {
                Err(format!("it runs {text}, which is not a read-only program"))
            }
        }
        "declaration_command" if text.contains('=') => {
            Err(format!("it assigns a variable ({text})"))
        }
        _ => Ok(()),
    }
}

/// Whether an arithmetic node reads a variable (a name or an expansion).
fn reads_var(n: Node<'_>) -> bool {
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        if matches!(
            x.kind(),
            "variable_name" | "simple_expansion" | "expansion" | "word" | "command_substitution"
        ) {
            return true;
        }
        let mut c = x.walk();
        stack.extend(x.named_children(&mut c));
    }
    false
}
