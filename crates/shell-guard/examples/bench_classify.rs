//! Classification time per command line (p50 / p99 / max), each classified 200 times:
//! the table test's cases, then the corpus of lines that look read-only
//! (tests/fixtures/corpus.txt). `cargo run --release -p weft-shell-guard --example bench_classify`

#[allow(dead_code, unused_imports)]
#[path = "../tests/suite/table.rs"]
mod table;

use std::path::Path;
use std::time::Instant;

use weft_shell_guard::Context;

/// The corpus's lines (a letter, a space, the line; two spaces continue one).
fn corpus() -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in include_str!("../tests/fixtures/corpus.txt").lines() {
        if let Some(more) = l.strip_prefix("  ") {
            if let Some(last) = out.last_mut() {
                last.push('\n');
                last.push_str(more);
            }
        } else if !l.trim().is_empty() && !l.starts_with('#') {
            out.push(l.get(2..).unwrap_or("").to_string());
        }
    }
    out
}

fn measure(name: &str, lines: &[&str], cx: &Context) {
    let mut times = Vec::new();
    for _ in 0..200 {
        for line in lines {
            let t = Instant::now();
            let r = weft_shell_guard::classify(line, cx);
            times.push(t.elapsed().as_secs_f64() * 1e6);
            std::hint::black_box(r);
        }
    }
    times.sort_by(f64::total_cmp);
    let q = |p: f64| times[((times.len() as f64 - 1.0) * p) as usize];
    println!(
        "{name}: {} lines x 200: p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
        lines.len(),
        q(0.5),
        q(0.99),
        q(1.0)
    );
}

fn main() {
    let cx = Context::with_home(Path::new("/work/project"), Path::new("/home/user"));
    let cases: Vec<&str> = table::CASES.iter().map(|(c, _)| *c).collect();
    measure("table", &cases, &cx);
    let corpus = corpus();
    let lines: Vec<&str> = corpus.iter().map(String::as_str).collect();
    measure("corpus", &lines, &cx);
}
