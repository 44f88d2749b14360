mod corpus;
mod depth;
mod disguise;
mod families;
mod parse_limits;
mod rules;
mod table;
mod trust;

use std::path::Path;

use weft_shell_guard::{Context, Verdict};

/// The corpus of lines and the verdicts they must get (tests/fixtures/corpus.txt).
pub const CORPUS: &str = include_str!("../fixtures/corpus.txt");

/// The corpus's entries: the verdict letter and the line.
pub fn corpus() -> Vec<(char, String)> {
    let mut out: Vec<(char, String)> = Vec::new();
    for l in CORPUS.lines() {
        if let Some(more) = l.strip_prefix("  ") {
            if let Some(last) = out.last_mut() {
                last.1.push('\n');
                last.1.push_str(more);
            }
            continue;
        }
        let l = l.trim_end();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let mut chars = l.chars();
        let want = chars.next().unwrap_or('?');
        out.push((want, chars.as_str().trim_start().to_string()));
    }
    out
}

/// Whether `got` is what the letter wants (S, U, D, or N: not safe).
pub fn expected_ok(want: char, got: Verdict) -> bool {
    match want {
        'S' => got == Verdict::Safe,
        'U' => got == Verdict::Unknown,
        'D' => got == Verdict::Dangerous,
        _ => got != Verdict::Safe,
    }
}

/// The context the tables are judged in.
pub fn cx() -> Context {
    Context::with_home(Path::new("/work/project"), Path::new("/home/user"))
}
