//! `weft sessions`, `weft search`, `weft history`, `weft usage`: the session library,
//! managed and native sessions alike.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use weft_kernel::now_ms;
use weft_protocol::verb;
use weft_protocol::{
    LibraryQuery, LibrarySearch, Origin, SessionAction, TranscriptPage, UniversalSnapshot, UsageBy,
    UsageRow,
};

use crate::client;
use crate::list::print_json;

/// `weft sessions`.
#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct SessionsArgs {
    #[command(subcommand)]
    command: Option<SessionsCommand>,
    /// Sessions of every folder (default: the current folder's).
    #[arg(long, conflicts_with = "workdir")]
    all: bool,
    /// Only sessions run in this folder.
    #[arg(long)]
    workdir: Option<PathBuf>,
    /// Sessions of this machine and of every host (`weft hosts list`), each key written
    /// `HOST/agent:id`; implies --all.
    #[arg(long, conflicts_with = "workdir")]
    every_host: bool,
    /// Only this agent's sessions.
    #[arg(long)]
    agent: Option<String>,
    /// Only sessions found in the agents' own stores.
    #[arg(long, conflicts_with = "managed")]
    native: bool,
    /// Only sessions Weft runs.
    #[arg(long)]
    managed: bool,
    /// Archived sessions too.
    #[arg(long)]
    archived: bool,
    /// At most this many.
    #[arg(long, default_value_t = 200)]
    limit: u32,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
enum SessionsCommand {
    /// Give a session a title of your own.
    Rename {
        /// The session key.
        key: String,
        /// The title.
        #[arg(required = true)]
        title: Vec<String>,
    },
    /// Hide a session from the list (`--undo` shows it again).
    Archive {
        /// The session key.
        key: String,
        /// Unarchive.
        #[arg(long)]
        undo: bool,
    },
    /// List a session first (`--undo` unpins).
    Pin {
        /// The session key.
        key: String,
        /// Unpin.
        #[arg(long)]
        undo: bool,
    },
    /// Write a session's transcript as Markdown or JSON (to stdout, or `--output`).
    Export {
        /// The session key.
        key: String,
        /// The document's format.
        #[arg(long, value_enum, default_value = "markdown")]
        format: crate::export::Format,
        /// Write it to this file instead of stdout.
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Forget Weft's record of a session; `--file` also deletes the agent's own file.
    Delete {
        /// The session key.
        key: String,
        /// Also delete the agent's session file (asks for `--yes`).
        #[arg(long)]
        file: bool,
        /// Confirm deleting the agent's file.
        #[arg(long)]
        yes: bool,
    },
}

pub(crate) fn age(ms: i64) -> String {
    let secs = (now_ms() - ms).max(0) / 1000;
    match secs {
        0..=59 => format!("{secs}s ago"),
        60..=3599 => format!("{}m ago", secs / 60),
        3600..=86_399 => format!("{}h ago", secs / 3600),
        _ => format!("{}d ago", secs / 86_400),
    }
}

pub(crate) async fn sessions(args: SessionsArgs) -> ExitCode {
    if let Some(command) = args.command {
        return manage(command).await;
    }
    let workdir = if args.all || args.every_host {
        None
    } else {
        match crate::absolute_workdir(args.workdir) {
            Ok(w) => Some(w),
            Err(code) => return code,
        }
    };
    let origin = match (args.native, args.managed) {
        (true, _) => Some(Origin::Native),
        (_, true) => Some(Origin::Managed),
        _ => None,
    };
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let request = LibraryQuery {
        workdir,
        agent: args.agent,
        origin,
        archived: args.archived,
        limit: Some(args.limit),
        offset: None,
    };
    if args.every_host {
        return crate::hosts::sessions_everywhere(request, args.json).await;
    }
    let list = match daemon.send(request).await {
        Ok(l) => l,
        Err(code) => return code,
    };
    if args.json {
        return print_json(&list);
    }
    if list.is_empty() {
        eprintln!("no sessions here yet (`weft sessions --all` lists every folder's)");
    }
    for s in &list {
        let origin = match s.origin {
            Origin::Native => "native",
            Origin::Managed => "managed",
        };
        let gone = if s.source_gone { " [file gone]" } else { "" };
        out!(
            "{:<9} {:<50} {:<7} {:<7} {}{gone}  ({})",
            age(s.updated_at),
            s.session_key,
            s.agent,
            origin,
            s.title,
            s.workdir.as_deref().unwrap_or("?")
        );
    }
    ExitCode::SUCCESS
}

async fn manage(command: SessionsCommand) -> ExitCode {
    let (key, action) = match command {
        SessionsCommand::Rename { key, title } => (
            key,
            SessionAction::Rename {
                title: title.join(" "),
            },
        ),
        SessionsCommand::Archive { key, undo } => (
            key,
            if undo {
                SessionAction::Unarchive
            } else {
                SessionAction::Archive
            },
        ),
        SessionsCommand::Pin { key, undo } => (
            key,
            if undo {
                SessionAction::Unpin
            } else {
                SessionAction::Pin
            },
        ),
        SessionsCommand::Export {
            key,
            format,
            output,
        } => return crate::export::export(key, format, output).await,
        SessionsCommand::Delete { key, file, yes } => {
            if file && !yes {
                eprintln!("weft: --file deletes the agent's own transcript of {key}; add --yes to confirm");
                return ExitCode::from(crate::EXIT_USAGE);
            }
            (key, SessionAction::Delete { file })
        }
    };
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let done = daemon
        .send(verb::ManageSession {
            session_key: key,
            action,
        })
        .await;
    match done {
        Ok(_) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}

/// `weft search`.
#[derive(Args)]
pub(crate) struct SearchArgs {
    /// The words (each found as a substring; `"quoted words"` as a phrase).
    #[arg(required = true)]
    words: Vec<String>,
    /// Only this agent's sessions.
    #[arg(long)]
    agent: Option<String>,
    /// Only sessions run in this folder.
    #[arg(long)]
    workdir: Option<PathBuf>,
    /// Only text from this day on (YYYY-MM-DD, UTC).
    #[arg(long)]
    since: Option<String>,
    /// At most this many sessions.
    #[arg(long, default_value_t = 20)]
    limit: usize,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Milliseconds at the start of a `YYYY-MM-DD` day (UTC).
fn day_ms(day: &str) -> Option<i64> {
    let mut parts = day.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, d) = (parts.next()??, parts.next()??, parts.next()??);
    if parts.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    Some(days * 86_400_000)
}

fn since_ms(since: Option<String>) -> Result<Option<i64>, ExitCode> {
    match since {
        None => Ok(None),
        Some(s) => day_ms(&s).map(Some).ok_or_else(|| {
            eprintln!("weft: --since takes a day as YYYY-MM-DD, not `{s}`");
            ExitCode::from(crate::EXIT_USAGE)
        }),
    }
}

pub(crate) async fn search(args: SearchArgs) -> ExitCode {
    let since = match since_ms(args.since) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let workdir = match args
        .workdir
        .map(|d| crate::absolute_workdir(Some(d)))
        .transpose()
    {
        Ok(w) => w,
        Err(code) => return code,
    };
    let query = args.words.join(" ");
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let request = LibrarySearch {
        query: query.clone(),
        agent: args.agent,
        workdir,
        since,
        until: None,
        limit: Some(u32::try_from(args.limit).unwrap_or(u32::MAX)),
    };
    let hits = match daemon.send(request).await {
        Ok(h) => h,
        Err(code) => return code,
    };
    if args.json {
        return print_json(&hits);
    }
    if hits.is_empty() {
        eprintln!("no session matches `{query}`");
    }
    for hit in &hits {
        let turn = hit.turn.map(|t| format!(" turn {t}")).unwrap_or_default();
        out!("{}{turn}  {}", hit.session_key, hit.snippet);
    }
    ExitCode::SUCCESS
}

/// Every turn of the session's agent file from before its first turn in Weft (all of
/// a native session's), a page at a time.
async fn earlier_turns(
    daemon: &client::Daemon,
    key: &str,
) -> Result<Vec<UniversalSnapshot>, weft_protocol::WireError> {
    let mut turns = Vec::new();
    let mut start = 0u32;
    loop {
        let page: TranscriptPage = daemon
            .client
            .send(verb::EarlierTurns {
                session_key: key.to_string(),
                start: Some(start),
                limit: Some(500),
            })
            .await?;
        let n = page.turns.len() as u32;
        turns.extend(page.turns);
        start += n.max(1);
        if n == 0 || start >= page.total {
            return Ok(turns);
        }
    }
}

pub(crate) async fn history(key: &str, json: bool) -> ExitCode {
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let managed: Result<Vec<UniversalSnapshot>, _> = daemon
        .client
        .send(verb::GetHistory {
            session_key: key.to_string(),
            limit: None,
            before: None,
        })
        .await;
    // A session Weft adopted (Continue) or forked has its earlier turns only in the
    // agent's file: those first, then Weft's own.
    let earlier = earlier_turns(&daemon, key).await;
    let turns = match (managed, earlier) {
        (Ok(m), Ok(mut all)) => {
            all.extend(m);
            all
        }
        (Ok(m), Err(_)) => m,
        (Err(_), Ok(n)) => n,
        (Err(e), Err(_)) => return client::fail(&e),
    };
    if json {
        return print_json(&turns);
    }
    for (i, turn) in turns.iter().enumerate() {
        let mark = match (&turn.error, turn.incomplete) {
            (Some(e), _) => format!("  [failed: {e}]"),
            (None, true) => "  [incomplete]".to_string(),
            _ => String::new(),
        };
        out!(
            "── turn {} ({}){mark}",
            i + 1,
            turn.started_at.map(age).unwrap_or_default()
        );
        out!("> {}", turn.prompt);
        for call in &turn.tool_calls {
            out!("  · {}", call.summary);
        }
        out!("{}\n", turn.text.trim_end());
    }
    ExitCode::SUCCESS
}

/// `weft usage`.
#[derive(Args)]
pub(crate) struct UsageArgs {
    /// Group by.
    #[arg(long, value_enum, default_value = "day")]
    by: By,
    /// Only usage from this day on (YYYY-MM-DD, UTC).
    #[arg(long)]
    since: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum By {
    Day,
    Week,
    Month,
    Model,
    Agent,
    Account,
    Workspace,
    /// Claude's 5-hour billing blocks, with the active block's burn rate.
    Block,
}

pub(crate) async fn usage(args: UsageArgs) -> ExitCode {
    let since = match since_ms(args.since) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let by = match args.by {
        By::Day => UsageBy::Day,
        By::Week => UsageBy::Week,
        By::Month => UsageBy::Month,
        By::Model => UsageBy::Model,
        By::Agent => UsageBy::Agent,
        By::Account => UsageBy::Account,
        By::Workspace => UsageBy::Workspace,
        By::Block => UsageBy::Block,
    };
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let rows = match daemon.send(verb::Usage { by, since }).await {
        Ok(r) => r,
        Err(code) => return code,
    };
    if args.json {
        return print_json(&rows);
    }
    if rows.is_empty() {
        eprintln!("no usage recorded yet");
    }
    if matches!(by, UsageBy::Block) {
        print_blocks(&rows);
        return ExitCode::SUCCESS;
    }
    out!(
        "{:<40} {:>7} {:>12} {:>10} {:>12} {:>11} {:>10}",
        "",
        "calls",
        "input",
        "output",
        "cache read",
        "cache write",
        "cost"
    );
    for r in &rows {
        let cost = match r.cost_usd {
            Some(c) => format!("${c:.2}"),
            None => "unknown".to_string(),
        };
        let unpriced = if r.unpriced_models.is_empty() {
            String::new()
        } else {
            format!("  (no price for {})", r.unpriced_models.join(", "))
        };
        out!(
            "{:<40} {:>7} {:>12} {:>10} {:>12} {:>11} {:>10}{unpriced}",
            r.key,
            r.calls,
            r.input_tokens,
            r.output_tokens,
            r.cache_read_tokens,
            r.cache_write_tokens,
            cost
        );
    }
    ExitCode::SUCCESS
}

fn print_blocks(rows: &[UsageRow]) {
    fn cost(c: Option<f64>) -> String {
        c.map_or_else(|| "unknown".to_string(), |c| format!("${c:.2}"))
    }
    out!(
        "{:<18} {:>7} {:>14} {:>10}  status",
        "block (UTC)",
        "calls",
        "tokens",
        "cost"
    );
    for r in rows {
        let Some(b) = &r.block else { continue };
        let tokens = r.input_tokens + r.output_tokens + r.cache_read_tokens + r.cache_write_tokens;
        let status = if b.active {
            let rate = match (b.tokens_per_minute, b.cost_per_hour) {
                (Some(t), Some(c)) => format!("{t:.0} tokens/min, ${c:.2}/h"),
                (Some(t), None) => format!("{t:.0} tokens/min"),
                _ => "one call so far".to_string(),
            };
            let left = (b.end - now_ms()).max(0) / 60_000;
            let projected = match (b.projected_tokens, b.projected_cost_usd) {
                (Some(t), Some(c)) => format!("; projected {t} tokens, ${c:.2}"),
                (Some(t), None) => format!("; projected {t} tokens"),
                _ => String::new(),
            };
            format!(
                "ACTIVE, {}h{:02}m left: {rate}{projected}",
                left / 60,
                left % 60
            )
        } else {
            String::new()
        };
        out!(
            "{:<18} {:>7} {:>14} {:>10}  {status}",
            r.key,
            r.calls,
            tokens,
            cost(r.cost_usd)
        );
    }
}

/// `weft fork`.
#[derive(Args)]
pub(crate) struct ForkArgs {
    /// The session key.
    key: String,
    /// Keep turns 1 to this one (default: all).
    #[arg(long)]
    at: Option<u32>,
    /// Print the new session as JSON.
    #[arg(long)]
    json: bool,
}

pub(crate) async fn fork(args: ForkArgs) -> ExitCode {
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let forked = match daemon
        .send(verb::ForkSession {
            session_key: args.key,
            at: args.at,
        })
        .await
    {
        Ok(s) => s,
        Err(code) => return code,
    };
    if args.json {
        return print_json(&forked);
    }
    out!(
        "{}  ({} turns; continue it with `weft run --session {} PROMPT`)",
        forked.session_key,
        forked.turns,
        forked.session_key
    );
    ExitCode::SUCCESS
}
