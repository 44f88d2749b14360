//! No line can take the classifier's thread down: a line nested thousands of levels
//! deep (a ~4.5 KB line of `$(` overflowed a tokio worker's 2 MiB stack and aborted
//! the daemon) is `unknown`, classified on a stack no larger than a worker's.

use weft_shell_guard::{classify, Report, Verdict};

use super::cx;

/// Classifies `line` on a thread with a tokio worker's stack (2 MiB): an overflow
/// aborts the test process, which fails the test run.
fn on_a_worker_stack(line: String) -> Report {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || classify(&line, &cx()))
        .unwrap_or_else(|e| panic!("{e}"))
        .join()
        .unwrap_or_else(|_| panic!("classifying panicked"))
}

fn nested(open: &str, inner: &str, close: &str, n: usize) -> String {
    format!("{}{inner}{}", open.repeat(n), close.repeat(n))
}

#[test]
fn thousands_of_nested_substitutions_are_judged_not_a_crash() {
    for n in [1_500, 5_000, 20_000] {
        // `$($(…))`: each inner command's program is itself a substitution, which
        // hides what runs.
        let line = format!("echo {}", nested("$(", "ls", ")", n));
        let r = on_a_worker_stack(line);
        assert_eq!(r.verdict, Verdict::Dangerous, "{n}");
    }
}

#[test]
fn past_the_bound_a_harmless_line_is_unknown() {
    let line = format!("echo {}", nested("\"$(echo ", "hi", ")\"", 5_000));
    let r = on_a_worker_stack(line);
    assert_eq!(r.verdict, Verdict::Unknown, "{:?}", r.reasons);
    assert!(
        r.reasons.iter().all(|x| x.chars().count() < 400),
        "reasons stay short"
    );
}

#[test]
fn other_deep_shapes_are_bounded_too() {
    let n = 5_000;
    for line in [
        nested("(", "ls", ")", n),
        nested("{ ", "ls", "; }", n),
        format!("echo {}", nested("\"$(", "ls", ")\"", n)),
        format!("echo {}", nested("<(", "ls", ")", n)),
        nested("if true; then ", "ls", "; fi", n),
        format!("echo {}", nested("${x:-", "y", "}", n)),
        format!("echo $(({}))", nested("(", "1", ")", n)),
        format!("{}ls", "nohup ".repeat(n)),
        format!("{}ls", "env ".repeat(n)),
        format!("find . {}", "-exec find . ".repeat(n)),
        format!("[[ {} ]]", nested("( ", "-f x", " )", n)),
    ] {
        let r = on_a_worker_stack(line.clone());
        assert_ne!(
            r.verdict,
            Verdict::Safe,
            "{}…: {:?}",
            &line[..40.min(line.len())],
            r.reasons
        );
    }
}

#[test]
fn a_dangerous_command_just_inside_the_bound_is_still_seen() {
    let line = format!("echo {}", nested("$(", "rm -rf /", ")", 20));
    assert_eq!(classify(&line, &cx()).verdict, Verdict::Dangerous);
}
