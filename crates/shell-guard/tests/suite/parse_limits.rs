//! Lines that make tree-sitter's parser work far beyond their size are still judged,
//! and never as safe.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use weft_shell_guard::{classify, Context, Report, Verdict};

/// A 1,374-byte line the fuzzer found (a long pipeline of glob words after an unclosed
/// backtick): merging two parse stacks recursed exponentially, and one parse ran for
/// hours before the merge budget in third_party/tree-sitter.
const MERGE_BLOWUP: &[u8] = include_bytes!("../fixtures/merge-blowup.bin");

fn cx() -> Context {
    Context::with_home(Path::new("/work/project"), Path::new("/home/dev"))
}

/// Classifies `line` on a thread of its own, so a parse that never ends fails the test
/// instead of holding up the suite (the wait is ten thousand times what it takes).
fn classify_or_hang(line: String) -> Report {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(classify(&line, &cx()));
    });
    rx.recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("classifying the line did not end"))
}

#[test]
fn a_line_whose_parse_stacks_merge_without_end_is_judged() {
    let line = String::from_utf8_lossy(MERGE_BLOWUP).into_owned();
    let report = classify_or_hang(line);
    assert_ne!(report.verdict, Verdict::Safe, "{:?}", report.reasons);
}

#[test]
fn a_line_that_takes_longer_than_the_parse_budget_is_unknown() {
    // 5.5 MB of it: a quarter of that (1.4 MB) already ran into the 2 s budget in a
    // release build on a fast machine.
    let line = String::from_utf8_lossy(&MERGE_BLOWUP.repeat(4000)).into_owned();
    let report = classify_or_hang(line);
    assert_eq!(report.verdict, Verdict::Unknown, "{:?}", report.reasons);
    assert!(
        report
            .reasons
            .iter()
            .any(|r| r.contains("did not parse within")),
        "{:?}",
        report.reasons
    );
}
