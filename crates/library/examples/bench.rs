//! The session library's benchmark: a seeded corpus in the three real formats, then the
//! figures BENCHMARKS.md records (cold index, warm sweep, list, search, append to
//! searchable, index size, peak RSS, the largest session's first page) and a check of
//! the usage totals against the generator's own count.
//!
//! `cargo run --release -p weft-library --example bench -- [--files N] [--mb M] [--huge MB] [--dir D]
//! [--index-only] [--reuse | --reindex]`
//!
//! File sizes follow a real store's spread (ccusage's profile of 3,142 files: p50
//! 105 KB, p75 234 KB, p90 654 KB, p95 1.5 MB, p99 5.4 MB) scaled to `--mb`, plus one
//! file of `--huge` MB. 60% Claude (per-block assistant lines repeating one usage,
//! tool results, file-history snapshots, compact boundaries, sidechains, subagent files,
//! forks copying history), 30% Codex (cumulative token_count, long command output), 10%
//! Gemini (messages re-emitted under one id, `$set` patches). Text mixes English, code
//! identifiers and CJK.

// The allocator the `weft` binary runs the library's indexer with (crates/cli/src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::fmt::Write as _;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use weft_library::{Agent, Home, Library};
use weft_protocol::{LibraryQuery, LibrarySearch, UsageBy};

/// splitmix64: a seeded, dependency-free generator (the corpus must be the same on
/// every run).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn pick<'a>(&mut self, xs: &'a [&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
}

const WORDS: &[&str] = &[
    "the",
    "parser",
    "config",
    "function",
    "returns",
    "error",
    "because",
    "module",
    "test",
    "build",
    "cache",
    "index",
    "session",
    "window",
    "thread",
    "queue",
    "token",
    "branch",
    "commit",
    "deploy",
    "render",
    "schema",
    "migration",
    "handler",
    "request",
    "response",
    "timeout",
    "retry",
    "buffer",
    "stream",
    "async",
    "await",
    "closure",
    "lifetime",
    "parse_config",
    "load_settings",
    "HttpClient",
    "useEffect",
    "tokio::spawn",
    "Vec<u8>",
    "日本語",
    "テキスト",
    "中文测试",
    "数据库",
    "버그",
    "수정",
    "é",
    "naïve",
];

fn words(rng: &mut Rng, n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(rng.pick(WORDS));
    }
    s
}

fn json(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// A file size from the real profile's quantiles (log-linear between them), in bytes.
fn size_from_profile(rng: &mut Rng) -> f64 {
    const Q: &[(f64, f64)] = &[
        (0.0, 4e3),
        (0.5, 105e3),
        (0.75, 234e3),
        (0.9, 654e3),
        (0.95, 1.5e6),
        (0.99, 5.4e6),
        (1.0, 20e6),
    ];
    let u = rng.unit();
    for w in Q.windows(2) {
        let ((u0, s0), (u1, s1)) = (w[0], w[1]);
        if u <= u1 {
            let t = (u - u0) / (u1 - u0);
            return (s0.ln() + t * (s1.ln() - s0.ln())).exp();
        }
    }
    20e6
}

#[derive(Default)]
struct Expected {
    claude_output: u64,
    codex_output: u64,
    gemini_output: u64,
    bytes: u64,
    files: u64,
}

fn ts(i: u64) -> String {
    // 2026-01-01 plus i seconds.
    let base = 1_767_225_600u64 + i;
    let days = base / 86_400;
    let secs = base % 86_400;
    let (y, m, d) = civil(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.000Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

fn civil(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn claude_file(
    rng: &mut Rng,
    path: &Path,
    sid: &str,
    cwd: &str,
    target: u64,
    exp: &mut Expected,
    t0: u64,
) -> std::io::Result<u64> {
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    let mut written = 0u64;
    let mut t = t0;
    let mut n = 0u64;
    let mut line = String::new();
    let title = words(rng, 5);
    line.clear();
    write!(
        line,
        "{{\"type\":\"ai-title\",\"aiTitle\":{},\"sessionId\":\"{sid}\"}}",
        json(&title)
    )
    .ok();
    put(&mut w, &line, &mut written)?;
    while written < target {
        n += 1;
        t += 7;
        let prompt = format!("{} #{n}", {
            let k = 12 + rng.below(30) as usize;
            words(rng, k)
        });
        line.clear();
        write!(line, "{{\"parentUuid\":null,\"isSidechain\":false,\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":{}}},\"uuid\":\"u{n}\",\"timestamp\":\"{}\",\"cwd\":\"{cwd}\",\"sessionId\":\"{sid}\",\"version\":\"2.1.197\",\"gitBranch\":\"main\"}}", json(&prompt), ts(t)).ok();
        put(&mut w, &line, &mut written)?;
        // One message in two lines (text, tool_use), usage repeated on both.
        let out = 20 + rng.below(400);
        exp.claude_output += out;
        let usage = format!("{{\"input_tokens\":{},\"cache_creation_input_tokens\":{},\"cache_read_input_tokens\":{},\"output_tokens\":{out}}}", 5 + rng.below(50), rng.below(2000), rng.below(20000));
        let reply = {
            let k = 20 + rng.below(80) as usize;
            words(rng, k)
        };
        for (k, block) in [
            format!("{{\"type\":\"text\",\"text\":{}}}", json(&reply)),
            format!("{{\"type\":\"tool_use\",\"id\":\"toolu_{n}\",\"name\":\"Bash\",\"input\":{{\"command\":\"cargo test -p {}\"}}}}", rng.pick(WORDS).replace(['"', '\\'], "")),
        ]
        .iter()
        .enumerate()
        {
            line.clear();
            write!(line, "{{\"parentUuid\":\"u{n}\",\"isSidechain\":false,\"type\":\"assistant\",\"message\":{{\"id\":\"msg_{sid}_{n}\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"{}\",\"content\":[{block}],\"usage\":{usage}}},\"requestId\":\"req_{sid}_{n}\",\"uuid\":\"a{n}_{k}\",\"timestamp\":\"{}\",\"cwd\":\"{cwd}\",\"sessionId\":\"{sid}\"}}", if n.is_multiple_of(3) { "claude-sonnet-4-5" } else { "claude-opus-4-1" }, ts(t + 1)).ok();
            put(&mut w, &line, &mut written)?;
        }
        // The tool's long output: most of a real transcript's bytes.
        let out_len = (200 + rng.below(6000)) as usize;
        let mut body = String::with_capacity(out_len + 16);
        while body.len() < out_len {
            body.push_str(rng.pick(WORDS));
            body.push(if rng.below(8) == 0 { '\n' } else { ' ' });
        }
        line.clear();
        write!(line, "{{\"parentUuid\":\"a{n}_1\",\"isSidechain\":false,\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":[{{\"tool_use_id\":\"toolu_{n}\",\"type\":\"tool_result\",\"content\":{},\"is_error\":false}}]}},\"uuid\":\"r{n}\",\"timestamp\":\"{}\",\"toolUseResult\":{{\"stdout\":{},\"stderr\":\"\"}},\"cwd\":\"{cwd}\",\"sessionId\":\"{sid}\"}}", json(&body), ts(t + 2), json(&body)).ok();
        put(&mut w, &line, &mut written)?;
        match rng.below(40) {
            0 => {
                line.clear();
                write!(line, "{{\"type\":\"file-history-snapshot\",\"messageId\":\"m{n}\",\"snapshot\":{{\"trackedFileBackups\":{{\"src/lib.rs\":{{\"backupFileName\":\"x\",\"version\":{n}}}}}}},\"blob\":{}}}", json(&"b".repeat(4000))).ok();
                put(&mut w, &line, &mut written)?;
            }
            1 => {
                line.clear();
                write!(line, "{{\"type\":\"system\",\"subtype\":\"compact_boundary\",\"content\":\"Conversation compacted\",\"timestamp\":\"{}\",\"sessionId\":\"{sid}\"}}", ts(t + 3)).ok();
                put(&mut w, &line, &mut written)?;
            }
            2 => {
                // A sidechain line in the main file (older CLIs): usage counted, not a turn.
                let out = 10 + rng.below(50);
                exp.claude_output += out;
                line.clear();
                write!(line, "{{\"parentUuid\":null,\"isSidechain\":true,\"type\":\"assistant\",\"message\":{{\"id\":\"side_{sid}_{n}\",\"role\":\"assistant\",\"model\":\"claude-haiku-4-5\",\"content\":[{{\"type\":\"text\",\"text\":\"side\"}}],\"usage\":{{\"input_tokens\":3,\"output_tokens\":{out}}}}},\"requestId\":\"sreq_{n}\",\"timestamp\":\"{}\",\"sessionId\":\"{sid}\"}}", ts(t + 3)).ok();
                put(&mut w, &line, &mut written)?;
            }
            _ => {}
        }
    }
    w.flush()?;
    Ok(written)
}

fn put(w: &mut BufWriter<std::fs::File>, line: &str, written: &mut u64) -> std::io::Result<()> {
    w.write_all(line.as_bytes())?;
    w.write_all(b"\n")?;
    *written += line.len() as u64 + 1;
    Ok(())
}

fn codex_file(
    rng: &mut Rng,
    path: &Path,
    id: &str,
    cwd: &str,
    target: u64,
    exp: &mut Expected,
    t0: u64,
) -> std::io::Result<u64> {
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    let mut written = 0u64;
    let mut t = t0;
    put(&mut w, &format!("{{\"timestamp\":\"{}\",\"type\":\"session_meta\",\"payload\":{{\"id\":\"{id}\",\"cwd\":\"{cwd}\",\"originator\":\"codex_cli_rs\",\"cli_version\":\"0.171.0\",\"base_instructions\":{{\"text\":{}}},\"git\":{{\"branch\":\"main\"}}}}}}", ts(t), json(&"You are Codex. ".repeat(200))), &mut written)?;
    let (mut total_in, mut total_out) = (0u64, 0u64);
    let mut n = 0u64;
    while written < target {
        n += 1;
        t += 9;
        put(&mut w, &format!("{{\"timestamp\":\"{}\",\"type\":\"turn_context\",\"payload\":{{\"cwd\":\"{cwd}\",\"model\":\"gpt-5-codex\"}}}}", ts(t)), &mut written)?;
        put(&mut w, &format!("{{\"timestamp\":\"{}\",\"type\":\"response_item\",\"payload\":{{\"type\":\"message\",\"role\":\"user\",\"content\":[{{\"type\":\"input_text\",\"text\":{}}}]}}}}", ts(t), json(&format!("{} #{n}", words(rng, 15)))), &mut written)?;
        put(&mut w, &format!("{{\"timestamp\":\"{}\",\"type\":\"response_item\",\"payload\":{{\"type\":\"function_call\",\"name\":\"exec_command\",\"arguments\":{},\"call_id\":\"call_{n}\"}}}}", ts(t + 1), json("{\"cmd\":\"rg parse_config src\"}")), &mut written)?;
        let out_len = (300 + rng.below(8000)) as usize;
        let mut body = String::new();
        while body.len() < out_len {
            body.push_str(rng.pick(WORDS));
            body.push(' ');
        }
        put(&mut w, &format!("{{\"timestamp\":\"{}\",\"type\":\"response_item\",\"payload\":{{\"type\":\"function_call_output\",\"call_id\":\"call_{n}\",\"output\":{}}}}}", ts(t + 2), json(&body)), &mut written)?;
        put(&mut w, &format!("{{\"timestamp\":\"{}\",\"type\":\"response_item\",\"payload\":{{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{{\"type\":\"output_text\",\"text\":{}}}]}}}}", ts(t + 3), json(&words(rng, 40))), &mut written)?;
        let (i, o) = (100 + rng.below(3000), 10 + rng.below(500));
        total_in += i;
        total_out += o;
        exp.codex_output += o;
        put(&mut w, &format!("{{\"timestamp\":\"{}\",\"type\":\"event_msg\",\"payload\":{{\"type\":\"token_count\",\"info\":{{\"total_token_usage\":{{\"input_tokens\":{total_in},\"cached_input_tokens\":0,\"output_tokens\":{total_out},\"reasoning_output_tokens\":0,\"total_tokens\":{}}},\"last_token_usage\":{{\"input_tokens\":{i},\"cached_input_tokens\":0,\"output_tokens\":{o},\"reasoning_output_tokens\":0,\"total_tokens\":{}}}}},\"rate_limits\":{{\"primary\":{{\"used_percent\":12.0,\"window_minutes\":300}}}}}}}}", ts(t + 3), total_in + total_out, i + o), &mut written)?;
    }
    w.flush()?;
    Ok(written)
}

fn gemini_file(
    rng: &mut Rng,
    path: &Path,
    id: &str,
    target: u64,
    exp: &mut Expected,
    t0: u64,
) -> std::io::Result<u64> {
    let mut w = BufWriter::new(std::fs::File::create(path)?);
    let mut written = 0u64;
    let t = t0;
    put(&mut w, &format!("{{\"sessionId\":\"{id}\",\"projectHash\":\"abc\",\"startTime\":\"{}\",\"lastUpdated\":\"{}\",\"kind\":\"main\"}}", ts(t), ts(t)), &mut written)?;
    let mut n = 0u64;
    while written < target {
        n += 1;
        put(&mut w, &format!("{{\"id\":\"u{n}\",\"timestamp\":\"{}\",\"type\":\"user\",\"content\":[{{\"text\":{}}}]}}", ts(t + n * 5), json(&format!("{} #{n}", words(rng, 12)))), &mut written)?;
        let out = 5 + rng.below(300);
        exp.gemini_output += out;
        let text = json(&words(rng, 60));
        // Written twice under one id (again once its tool call has a result).
        for _ in 0..2 {
            put(&mut w, &format!("{{\"id\":\"g{n}\",\"timestamp\":\"{}\",\"type\":\"gemini\",\"content\":{text},\"tokens\":{{\"input\":{},\"output\":{out},\"cached\":0,\"thoughts\":0,\"tool\":0,\"total\":0}},\"model\":\"gemini-2.5-pro\"}}", ts(t + n * 5 + 1), 50 + n), &mut written)?;
        }
        put(
            &mut w,
            &format!("{{\"$set\":{{\"lastUpdated\":\"{}\"}}}}", ts(t + n * 5 + 2)),
            &mut written,
        )?;
    }
    w.flush()?;
    Ok(written)
}

fn generate(
    dir: &Path,
    files: u64,
    total_mb: u64,
    huge_mb: u64,
) -> std::io::Result<(Expected, PathBuf)> {
    let mut rng = Rng(0x5eed_0001);
    let mut exp = Expected::default();
    let claude = dir.join(".claude/projects");
    let codex = dir.join(".codex/sessions/2026/01/01");
    let gemini = dir.join(".gemini/tmp");
    // Raw sizes from the profile, scaled so they sum to the target.
    let raw: Vec<f64> = (0..files).map(|_| size_from_profile(&mut rng)).collect();
    let budget = (total_mb.saturating_sub(huge_mb) << 20) as f64;
    let scale = budget / raw.iter().sum::<f64>();
    let mut largest = PathBuf::new();
    for (i, r) in raw.iter().enumerate() {
        let i = i as u64;
        let mut target = (r * scale) as u64;
        let project = format!("/work/project{}", i % 40);
        let t0 = i * 3600;
        let kind = i % 10;
        let path;
        if i == 0 {
            target = huge_mb << 20;
        }
        if kind < 6 {
            let pdir = claude.join(format!("-work-project{}", i % 40));
            std::fs::create_dir_all(&pdir)?;
            let sid = format!("{:08x}-0000-4000-8000-{:012x}", i, i);
            path = pdir.join(format!("{sid}.jsonl"));
            exp.bytes += claude_file(&mut rng, &path, &sid, &project, target, &mut exp, t0)?;
        } else if kind < 9 {
            std::fs::create_dir_all(&codex)?;
            let id = format!("{:08x}-1111-7000-8000-{:012x}", i, i);
            path = codex.join(format!("rollout-2026-01-01T00-00-00-{id}.jsonl"));
            exp.bytes += codex_file(&mut rng, &path, &id, &project, target, &mut exp, t0)?;
        } else {
            let pdir = gemini.join(format!("project{}", i % 40));
            std::fs::create_dir_all(pdir.join("chats"))?;
            std::fs::write(pdir.join(".project_root"), &project)?;
            let id = format!("{:08x}-2222-4000-8000-{:012x}", i, i);
            path = pdir
                .join("chats")
                .join(format!("session-2026-01-01T00-00-{:08x}.jsonl", i));
            // Gemini chats are read whole: kept to the small end, as real ones are.
            exp.bytes += gemini_file(&mut rng, &path, &id, target.min(2 << 20), &mut exp, t0)?;
        }
        if i == 0 {
            largest = path;
        }
        exp.files += 1;
    }
    Ok((exp, largest))
}

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|k| k.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn pct(samples: &mut [Duration], p: f64) -> f64 {
    samples.sort();
    let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[i].as_secs_f64() * 1000.0
}

fn time_n(n: usize, mut f: impl FnMut()) -> (f64, f64) {
    let mut s: Vec<Duration> = (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    (pct(&mut s, 0.5), pct(&mut s, 0.99))
}

fn dir_size(path: &Path) -> u64 {
    ["", "-wal", "-shm"]
        .iter()
        .filter_map(|s| std::fs::metadata(format!("{}{s}", path.display())).ok())
        .map(|m| m.len())
        .sum()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str, default: u64| -> u64 {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let files = arg("--files", 1000);
    let mb = arg("--mb", 400);
    let huge = arg("--huge", 100);
    let dir = args
        .iter()
        .position(|a| a == "--dir")
        .and_then(|i| args.get(i + 1))
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("weft-library-bench"));
    // --reuse: the corpus and index of an earlier run (searches and opens only).
    let reuse = args.iter().any(|a| a == "--reuse");
    // --reindex: the corpus of an earlier run, indexed again from nothing (profiling
    // the cold index without the generator).
    let reindex = args.iter().any(|a| a == "--reindex");
    if reindex {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", dir.join("weft.db").display()));
        }
    }
    let (exp, largest) = if reuse || reindex {
        let largest =
            dir.join(".claude/projects/-work-project0/00000000-0000-4000-8000-000000000000.jsonl");
        (Expected::default(), largest)
    } else {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        let t = Instant::now();
        let (exp, largest) = generate(&dir, files, mb, huge)?;
        println!(
            "corpus: {} files, {:.1} MB ({:.1} s to generate), largest {:.1} MB",
            exp.files,
            exp.bytes as f64 / 1048576.0,
            t.elapsed().as_secs_f64(),
            std::fs::metadata(&largest)?.len() as f64 / 1048576.0
        );
        (exp, largest)
    };
    let db = dir.join("weft.db");
    let store = Arc::new(weft_store::SqliteStore::open(&db)?);
    let agents = vec![
        Agent::new(weft_claude::native_sessions::ClaudeSessions),
        Agent::new(weft_codex::native_sessions::CodexSessions),
        Agent::new(weft_gemini::native_sessions::GeminiSessions),
    ];
    let homes = agents
        .iter()
        .zip([".claude", ".codex", ".gemini"])
        .map(|(agent, folder)| Home {
            agent: agent.clone(),
            root: dir.join(folder),
            account: None,
        })
        .collect();
    let lib = Library::open(&db, agents, homes, Some(store))?;
    let rss_before = peak_rss_mb();
    let t = Instant::now();
    let stats = if reuse {
        Default::default()
    } else {
        lib.index_now()?
    };
    let cold = t.elapsed().as_secs_f64();
    let rss = peak_rss_mb();
    println!(
        "cold index: {} files, {:.1} MB in {:.2} s = {:.1} MB/s; peak RSS {:.0} MB (before: {:.0} MB)",
        stats.read,
        stats.bytes as f64 / 1048576.0,
        cold,
        stats.bytes as f64 / 1048576.0 / cold,
        rss,
        rss_before
    );
    if args.iter().any(|a| a == "--index-only") {
        return Ok(());
    }
    let t = Instant::now();
    let warm = lib.index_now()?;
    println!(
        "warm sweep (nothing changed): {} files stat'ed, {} read, {:.1} ms",
        warm.files,
        warm.read,
        t.elapsed().as_secs_f64() * 1000.0
    );
    let index = dir_size(&db);
    let conn = rusqlite::Connection::open(&db)?;
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    drop(conn);
    let checkpointed = dir_size(&db);
    // Re-indexed, the corpus was not generated here: what the index read. Reused, its
    // size is not known.
    let corpus = if exp.bytes > 0 {
        exp.bytes
    } else {
        stats.bytes
    };
    let share = |n: u64| match corpus {
        0 => String::new(),
        c => format!(" = {:.1}% of the corpus", n as f64 * 100.0 / c as f64),
    };
    println!(
        "index size: {:.1} MB with its WAL{}; {:.1} MB{} after a checkpoint",
        index as f64 / 1048576.0,
        share(index),
        checkpointed as f64 / 1048576.0,
        share(checkpointed)
    );

    let (p50, p99) = time_n(200, || {
        lib.list(&LibraryQuery {
            limit: Some(200),
            ..Default::default()
        })
        .map(|_| ())
        .unwrap_or(());
    });
    println!("list everything (first 200): p50 {p50:.2} ms, p99 {p99:.2} ms");
    let (p50, p99) = time_n(200, || {
        lib.list(&LibraryQuery {
            workdir: Some("/work/project7".into()),
            limit: Some(200),
            ..Default::default()
        })
        .map(|_| ())
        .unwrap_or(());
    });
    println!("list one workspace: p50 {p50:.2} ms, p99 {p99:.2} ms");
    for (what, q, agent) in [
        ("word", "migration", None),
        ("rare word", "#4242", None),
        ("phrase", "\"parser config\"", None),
        ("substring", "arse_conf", None),
        ("identifier", "tokio::spawn", None),
        ("CJK", "中文测试", None),
        ("CJK, 2 chars", "本語", None),
        ("two words", "schema handler", None),
        ("short (<3 chars)", "é", None),
        ("filtered (agent)", "timeout", Some("gemini")),
    ] {
        let mut hits = 0;
        let (p50, p99) = time_n(50, || {
            hits = lib
                .search(&LibrarySearch {
                    query: q.into(),
                    agent: agent.map(str::to_string),
                    limit: Some(20),
                    ..Default::default()
                })
                .map(|h| h.len())
                .unwrap_or(0);
        });
        println!("search {what} `{q}`: {hits} hits, p50 {p50:.2} ms, p99 {p99:.2} ms");
    }

    // A dashboard's reads: usage per day and Claude's billing blocks, over every event.
    for (what, by) in [
        ("per day", UsageBy::Day),
        ("billing blocks", UsageBy::Block),
    ] {
        let mut rows = 0;
        let (p50, p99) = time_n(10, || {
            rows = lib.usage(by, None).map(|r| r.len()).unwrap_or(0);
        });
        println!("usage {what}: {rows} rows, p50 {p50:.1} ms, p99 {p99:.1} ms");
    }

    // The largest session's first screen (its last 50 turns).
    let key = {
        let stem = largest
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        format!("claude:{stem}")
    };
    let (p50, p99) = time_n(20, || {
        lib.open_transcript(&key, None, Some(50))
            .map(|_| ())
            .unwrap_or(());
    });
    let page = lib.open_transcript(&key, None, Some(50))?;
    println!(
        "open the largest session ({} turns): last 50 turns p50 {p50:.1} ms, p99 {p99:.1} ms",
        page.total
    );

    // One appended line, searchable: with the watcher running, time from the write.
    lib.start()?;
    std::thread::sleep(Duration::from_millis(500));
    let stem = largest
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut lat = Vec::new();
    for k in 0..20 {
        let word = format!("zqxjv{k}append");
        let line = format!("{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"{word}\"}},\"timestamp\":\"2026-06-01T00:00:00.000Z\",\"sessionId\":\"{stem}\"}}\n");
        let t = Instant::now();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&largest)?
            .write_all(line.as_bytes())?;
        loop {
            let found = lib
                .search(&LibrarySearch {
                    query: word.clone(),
                    limit: Some(1),
                    ..Default::default()
                })
                .map(|h| !h.is_empty())
                .unwrap_or(false);
            if found {
                break;
            }
            if t.elapsed() > Duration::from_secs(10) {
                println!("append {k}: not found in 10 s");
                break;
            }
            std::thread::sleep(Duration::from_micros(500));
        }
        lat.push(t.elapsed());
    }
    lib.stop();
    println!(
        "append one line to the {:.0} MB file -> searchable (watcher, from the write): p50 {:.1} ms, p99 {:.1} ms",
        std::fs::metadata(&largest)?.len() as f64 / 1048576.0,
        pct(&mut lat, 0.5),
        pct(&mut lat, 0.99)
    );

    // Usage against the generator's own count.
    if reuse || reindex {
        return Ok(());
    }
    let usage = lib.usage(UsageBy::Agent, None)?;
    for (agent, want) in [
        ("claude", exp.claude_output),
        ("codex", exp.codex_output),
        ("gemini", exp.gemini_output),
    ] {
        let got = usage
            .iter()
            .find(|r| r.key == agent)
            .map_or(0, |r| r.output_tokens);
        println!(
            "usage {agent}: output tokens {got} (generator counted {want}) {}",
            if got == want { "OK" } else { "MISMATCH" }
        );
    }
    Ok(())
}
