//! Classification time per command over the table test's cases (p50 / p99 / max),
//! each classified 200 times. `cargo run --release -p weft-shell-guard --example bench_classify`

#[allow(dead_code, unused_imports)]
#[path = "../tests/suite/table.rs"]
mod table;

use std::path::Path;
use std::time::Instant;

fn main() {
    let cx =
        weft_shell_guard::Context::with_home(Path::new("/work/project"), Path::new("/home/user"));
    let mut times = Vec::new();
    for _ in 0..200 {
        for (cmd, _) in table::CASES {
            let t = Instant::now();
            let r = weft_shell_guard::classify(cmd, &cx);
            times.push(t.elapsed().as_secs_f64() * 1e6);
            std::hint::black_box(r);
        }
    }
    times.sort_by(f64::total_cmp);
    let q = |p: f64| times[((times.len() as f64 - 1.0) * p) as usize];
    println!(
        "{} cases x 200: p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
        table::CASES.len(),
        q(0.5),
        q(0.99),
        q(1.0)
    );
}
