//! Quotes, backslashes and `$'…'` escapes inserted into a dangerous program's name
//! never make the command safe; and nothing makes the classifier panic.

use std::path::Path;

use proptest::prelude::*;
use weft_shell_guard::{classify, Context, Verdict};

const PROGRAMS: &[(&str, &str)] = &[
    ("rm", "-rf /"),
    ("rm", "-rf ~"),
    ("dd", "if=/dev/zero of=/dev/sda"),
    ("mkfs.ext4", "/dev/sda1"),
    ("shutdown", "-h now"),
    ("reboot", ""),
    ("crontab", "-r"),
    ("chmod", "-R 777 /"),
    ("kill", "-9 -1"),
    ("git", "push --force"),
    ("find", "/ -delete"),
    ("bash", "-c 'rm -rf /'"),
];

/// One way to write a character: as itself, escaped, quoted, or as a `$'…'` escape.
fn disguise(c: char, how: u8) -> String {
    match how % 8 {
        0 => c.to_string(),
        1 => format!("\\{c}"),
        2 => format!("'{c}'"),
        3 => format!("\"{c}\""),
        4 => format!("$'\\x{:02x}'", c as u32),
        5 => format!("$'\\{:03o}'", c as u32),
        6 => format!("{c}''"),
        _ => format!("{c}\"\""),
    }
}

fn cx() -> Context {
    Context::with_home(Path::new("/work/project"), Path::new("/home/user"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn disguised_program_is_never_safe(
        which in 0..PROGRAMS.len(),
        hows in proptest::collection::vec(0u8..8, 12),
        prefix in prop::sample::select(vec!["", "sudo ", "env ", "timeout 5 ", "nohup ", "ls && ", "echo x | ", "bash -c \"", "command "]),
    ) {
        let (prog, args) = PROGRAMS[which];
        let name: String = prog.chars().zip(hows.iter().cycle()).map(|(c, h)| disguise(c, *h)).collect();
        prop_assume!(name != prog);
        let close = if prefix.ends_with('"') { "\"" } else { "" };
        let line = format!("{prefix}{name} {args}{close}");
        let r = classify(&line, &cx());
        prop_assert_ne!(r.verdict, Verdict::Safe, "{} judged safe: {:?}", line, r);
    }

    #[test]
    fn any_text_classifies_without_panicking(line in ".{0,200}") {
        let _ = classify(&line, &cx());
    }

    #[test]
    fn any_shellish_text_classifies_without_panicking(line in "[a-z $'\"\\\\|&;(){}<>`=*~/.-]{0,120}") {
        let r = classify(&line, &cx());
        if r.verdict != Verdict::Safe {
            prop_assert!(!r.reasons.is_empty());
        }
    }
}

/// tree-sitter-bash's scanner segfaulted on this (found by the test above).
#[test]
fn non_ascii_after_brace_does_not_crash_the_parser() {
    let r = classify("{\u{8588d}", &cx());
    assert_ne!(r.verdict, Verdict::Safe);
    let r = classify("echo héllo wörld ∑", &cx());
    assert_eq!(r.verdict, Verdict::Safe, "{r:?}");
    assert_eq!(r.commands[0].argv[1], "héllo");
}
