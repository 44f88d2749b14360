//! Fault injection across real processes.
//!
//! A seeded run sends turns through a real `weft daemon` (its own `WEFT_HOME`), and
//! injects one fault into each at a random point: an agent process SIGKILLed or hung
//! past the stall timeout, malformed agent output (a cut line, a 16 MiB line, invalid
//! UTF-8, interleaved garbage, a JSON-RPC reply with a wrong id), the daemon SIGKILLed
//! and restarted, a client dropped or a `weft run` killed mid-stream, the scripted
//! Anthropic server answering 500/529/429, closing mid-stream or stalling under the
//! real `claude`, the real `codex` SIGKILLed, or its scripted Responses server answering
//! 500 or closing mid-stream, and a full or read-only disk under the store (a small
//! tmpfs).
//!
//! Nothing of Weft is mocked: volume comes from the built-in echo agent and from
//! stand-in agents ([`standin`]) that replay recorded stream shapes through the real
//! drivers; fidelity from the real `claude` and `codex` against the scripted servers.
//!
//! After each fault the harness checks, against what it recorded itself (the stand-in's
//! log of what reached the daemon's pipe, or what its own client saw):
//! - nothing lost: each of those text deltas is in the store (read from SQLite directly),
//!   in order;
//! - an honest end: done, incomplete with a reason, or an error — never a turn still
//!   running, nor a failure shown as a success;
//! - the next prompt to the same session works;
//! - no process of the turn remains outside the live daemon (/proc, by the marker the
//!   turn's environment carries);
//! - a client that (re)subscribes ends with exactly the daemon's snapshot, and that is
//!   the store's.

pub mod follow;
pub mod inject;
pub mod kinds;
pub mod load;
pub mod procs;
pub mod report;
pub mod standin;
pub mod store;
pub mod ws;

pub use kinds::Kind;
pub use report::{Outcome, Report};

use std::path::{Path, PathBuf};
use std::time::Duration;

use weft_testkit::anthropic::{when, Matcher};
use weft_testkit::{AnthropicServer, Script, Turn};

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Faults to inject.
    pub faults: usize,
    /// The seed: the same seed gives the same sequence of kinds and points.
    pub seed: u64,
    /// The stand-in agent executable (`weft-faults-agent`).
    pub agent: PathBuf,
    /// The `weft` executable.
    pub weft: PathBuf,
    /// Only these kinds (all when empty).
    pub only: Vec<Kind>,
}

/// The fault a prompt asks for. After a failed turn claude sends the failed prompt and
/// the next one in one user message, so only the last `kind=` counts.
fn asked(text: &str) -> Option<&str> {
    text.rsplit("kind=")
        .next()
        .filter(|_| text.contains("kind="))
        .and_then(|rest| rest.split_whitespace().next())
}

/// The latest prompt to claude asks for `kind`.
fn asks(kind: &'static str) -> Matcher {
    when::custom(move |r| asked(&r.last_user_text()) == Some(kind))
}

/// The scripted Anthropic server's replies, chosen by the prompt's `kind=`.
fn script() -> Script {
    let slow = |n: usize| {
        let chunks: Vec<String> = (0..n).map(|i| format!("c{i} ")).collect();
        let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
        Turn::new()
            .delta_delay(Duration::from_millis(40))
            .text_chunks(&refs)
    };
    Script::new()
        .rule(asks("http_500"), Turn::status(500))
        .rule(asks("http_529"), Turn::status(529))
        .rule(asks("http_429"), Turn::status(429))
        .rule(
            asks("server_drop"),
            Turn::new()
                .text_chunks(&["partial one ", "partial two "])
                .then_drop(),
        )
        .rule(
            asks("server_stall"),
            Turn::new()
                .text_chunks(&["partial one ", "partial two "])
                .then_hang(),
        )
        .rule(asks("claude_kill"), slow(60))
        .default_reply(Turn::text_reply("a fine reply"))
}

/// The latest prompt to codex asks for `kind`.
fn codex_asks(kind: &'static str) -> weft_testkit::openai::Matcher {
    weft_testkit::openai::when::custom(move |r| asked(&r.last_user_text()) == Some(kind))
}

/// The scripted Responses server's replies to the real codex, by the prompt's `kind=`.
fn codex_script() -> weft_testkit::openai::Script {
    use weft_testkit::openai::{Script, Turn};
    let chunks: Vec<String> = (0..60).map(|i| format!("c{i} ")).collect();
    let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
    Script::new()
        .rule(codex_asks("codex_http_500"), Turn::status(500))
        .rule(
            codex_asks("codex_server_drop"),
            Turn::new()
                .text_chunks(&["partial one ", "partial two "])
                .then_drop(),
        )
        .rule(
            codex_asks("codex_kill"),
            Turn::new()
                .delta_delay(Duration::from_millis(40))
                .text_chunks(&refs),
        )
        .default_reply(Turn::text_reply("a fine reply"))
}

/// Where a run keeps its files.
pub struct Dirs {
    /// Holds everything; removed at the end.
    pub root: tempfile::TempDir,
    /// The daemon's `WEFT_HOME`.
    pub home: PathBuf,
    /// The workspace the agents work in.
    pub work: PathBuf,
    /// `claude` and `codex` stand-ins.
    pub bin: PathBuf,
    /// HOME for the real claude.
    pub claude_home: PathBuf,
    /// CODEX_HOME for the real codex.
    pub codex_home: PathBuf,
    /// The stand-ins' log of the deltas they wrote.
    pub log: PathBuf,
}

fn dirs(agent: &Path) -> Result<Dirs, String> {
    let io = |e: std::io::Error| e.to_string();
    let root = tempfile::Builder::new()
        .prefix("weft-faults-")
        .tempdir()
        .map_err(io)?;
    let p = root.path().to_path_buf();
    let d = Dirs {
        home: p.join("home"),
        work: p.join("work"),
        bin: p.join("bin"),
        claude_home: p.join("claude-home"),
        codex_home: p.join("codex-home"),
        log: p.join("agent.log"),
        root,
    };
    for dir in [&d.home, &d.work, &d.bin, &d.claude_home, &d.codex_home] {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    std::fs::write(d.work.join("README.md"), "hello").map_err(io)?;
    std::fs::write(
        d.claude_home.join(".claude.json"),
        r#"{"hasCompletedOnboarding":true}"#,
    )
    .map_err(io)?;
    for name in ["claude", "codex"] {
        std::os::unix::fs::symlink(agent, d.bin.join(name)).map_err(io)?;
    }
    Ok(d)
}

/// The real claude, if installed (`WEFT_CLAUDE_BIN`, the project's install, PATH).
fn real_claude() -> Option<PathBuf> {
    weft_agent_process::find_agent("claude", &["WEFT_CLAUDE_BIN"], &|n| std::env::var(n).ok()).ok()
}

/// The real codex, if installed (`WEFT_CODEX_BIN`, the project's install, PATH).
fn real_codex() -> Option<PathBuf> {
    weft_agent_process::find_agent("codex", &["WEFT_CODEX_BIN"], &|n| std::env::var(n).ok()).ok()
}

/// Runs `config.faults` faults and reports them.
pub async fn run(config: &Config) -> Result<Report, String> {
    let dirs = dirs(&config.agent)?;
    let server = AnthropicServer::start(script())
        .await
        .map_err(|e| format!("scripted server: {e}"))?;
    let openai = weft_testkit::ResponsesServer::start(codex_script())
        .await
        .map_err(|e| format!("scripted Responses server: {e}"))?;
    let daemon = procs::Daemon::start(
        &config.weft,
        &dirs.home,
        &dirs.root.path().join("daemon.log"),
    )?;
    let run_id = format!("{:x}", fastrand::u64(..));
    let mut ctx = inject::Ctx {
        dirs,
        daemon,
        disk: None,
        server,
        openai,
        claude: real_claude(),
        codex: real_codex(),
        run_id,
        weft: config.weft.clone(),
    };
    let mut rng = fastrand::Rng::with_seed(config.seed);
    let mut report = Report::new(config.faults, config.seed);
    for i in 0..config.faults {
        let kind = if config.only.is_empty() {
            Kind::pick(&mut rng)
        } else {
            config.only[rng.usize(..config.only.len())]
        };
        let point = rng.u64(..);
        let outcome =
            match tokio::time::timeout(Duration::from_secs(120), ctx.fault(kind, i, point)).await {
                Ok(o) => o,
                Err(_) => Outcome::harness_timeout(kind),
            };
        if std::env::var_os("WEFT_FAULTS_VERBOSE").is_some() {
            eprintln!(
                "fault {i} {}: {:?} {:?} lost {} orphans {} next {} snap {} {:?}",
                kind.name(),
                outcome.ending,
                outcome.reason,
                outcome.lost,
                outcome.orphans,
                outcome.next_ok,
                outcome.snapshot_equal,
                outcome.problems
            );
        }
        if !outcome.violations().is_empty() {
            eprintln!("fault {i} {kind:?}: {}", outcome.violations().join("; "));
        }
        report.add(outcome);
        if (i + 1) % 100 == 0 && i + 1 < config.faults {
            eprintln!("after {} faults:\n{}", i + 1, report.table());
        }
    }
    report.left_behind = ctx.finish();
    if std::env::var_os("WEFT_FAULTS_KEEP").is_some() {
        eprintln!("kept {}", ctx.dirs.root.keep().display());
    }
    Ok(report)
}
