//! The shell classifier fed arbitrary command lines.

use std::path::PathBuf;

use weft_shell_guard::{classify, Context, Verdict};

/// Wrappers that run the rest of the line as it was: none may make a command that is
/// not provably safe read as safe.
const WRAPPERS: [&str; 3] = ["sudo ", "nohup ", "nice "];

/// Any line classifies without panicking; a line that does not parse as shell is never
/// `safe`; a line that is not `safe` stays so run under `sudo` (or `nohup`, `nice`),
/// or as `bash -c '<line>'`.
///
/// Each classification is a tree-sitter parse, and on the fuzzer's mostly broken lines
/// tree-sitter's error recovery is most of the cost, so an input pays for as few as
/// make the checks: the independent parse only for a `safe` line (the one case its
/// answer can fail), and one wrapper per input, chosen by the input's length, so the
/// fuzzer still tries all three across lines: at most three parses an input, not six.
pub fn shell(data: &[u8]) {
    let line = String::from_utf8_lossy(data);
    let cx = Context {
        workdir: PathBuf::from("/home/dev/work"),
        home: Some(PathBuf::from("/home/dev")),
    };
    let report = classify(&line, &cx);
    if report.verdict == Verdict::Safe {
        assert!(
            parses(&line),
            "a line that does not parse is safe: {line:?}"
        );
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

/// Whether tree-sitter-bash parses the line without an error node, asked here apart
/// from the classifier. Non-ASCII bytes are read as `x`, as the classifier does and
/// for its reason: tree-sitter-bash 0.25.1's scanner reads out of bounds on some
/// non-ASCII input (bash reads any such byte as a word character, like `x`).
fn parses(line: &str) -> bool {
    let mut parser = tree_sitter::Parser::new();
    if parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .is_err()
    {
        return false;
    }
    let masked: Vec<u8> = line
        .bytes()
        .map(|b| if b.is_ascii() { b } else { b'x' })
        .collect();
    parser
        .parse(&masked, None)
        .is_some_and(|t| !t.root_node().has_error())
}
