//! `weft restore`, `weft undo` and `weft diff`: a session's files put back as they were
//! before or after one of its turns, or what it changed between two of them, from the
//! checkpoints Weft takes around every turn of every agent.

use std::process::ExitCode;

use clap::Args;
use weft_protocol::{verb, RestoreSide, Restored, TurnChange, TurnDiff};

use crate::client;
use crate::list::print_json;

/// `weft restore KEY [--turn N] [--before|--after] [--yes] [--undo] [-- PATHS…]`.
#[derive(Args)]
#[command(after_help = "\
Every turn of every agent is bracketed by two checkpoints of the session's files (git \
trees on a private ref, refs/weft/checkpoints/<agent>/<id>; a folder outside git gets a \
shadow git dir under $WEFT_HOME/checkpoints). Turns count from 1 in history order, \
across agent switches (as `weft fork --at N` counts them).

A restore refuses, printing the diff and exiting 1, when the files differ from the \
session's last checkpoint (edits made since the last turn ended, which it would \
overwrite); --yes restores anyway. Every restore first checkpoints the files as they \
are, so `weft restore KEY --undo` takes it back (and a second --undo redoes it).

Files git ignores (.env, node_modules, build output) are outside checkpoints and are \
never restored or deleted; untracked files over WEFT_CHECKPOINT_MAX_FILE_SIZE are \
listed, not stored.")]
pub(crate) struct RestoreArgs {
    /// The session key (`agent:id`).
    key: String,
    /// The turn (1 is the first); default: the last one.
    #[arg(long, value_name = "N")]
    turn: Option<u32>,
    /// As the files were before the turn (the default).
    #[arg(long, conflicts_with = "after")]
    before: bool,
    /// As the turn left them.
    #[arg(long)]
    after: bool,
    /// Overwrite edits made since the session's last checkpoint.
    #[arg(long)]
    yes: bool,
    /// Undo the session's last restore instead.
    #[arg(long, conflicts_with_all = ["turn", "before", "after"])]
    undo: bool,
    /// Revert one hunk instead: the file HUNK (`-` for standard input) holds one `@@`
    /// hunk of `weft diff KEY` (its `@@` line and its lines), and the one path after
    /// `--` names its file.
    #[arg(long, value_name = "HUNK", conflicts_with_all = ["turn", "before", "after", "undo"])]
    hunk: Option<String>,
    /// Print what was done (or what would be overwritten) as JSON.
    #[arg(long)]
    json: bool,
    /// Only these files or folders (relative to the top of the repository or folder).
    #[arg(last = true, value_name = "PATHS")]
    paths: Vec<String>,
}

pub(crate) async fn restore(args: RestoreArgs) -> ExitCode {
    if let Some(file) = &args.hunk {
        return revert_hunk(&args, file).await;
    }
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let side = if args.after {
        RestoreSide::After
    } else {
        RestoreSide::Before
    };
    let request = verb::Restore {
        session_key: args.key.clone(),
        turn: args.turn,
        side,
        paths: (!args.paths.is_empty()).then_some(args.paths),
        yes: args.yes,
        undo: args.undo,
    };
    let restored = match daemon.send(request).await {
        Ok(r) => r,
        Err(code) => return code,
    };
    report(&args.key, &restored, args.json)
}

/// `weft diff KEY [--from ID] [--to ID] [--json]`.
#[derive(Args)]
#[command(after_help = "\
The checkpoint ids are the `before` and `after` of a turn's `turnDiff` (`weft history \
KEY --json`); only the session's own checkpoints are read. Without --from the diff \
starts at the session's first checkpoint (before its first turn), without --to it ends \
at its latest: the whole session.")]
pub(crate) struct DiffArgs {
    /// The session key (`agent:id`).
    key: String,
    /// From this checkpoint (default: the session's first).
    #[arg(long, value_name = "ID")]
    from: Option<String>,
    /// To this checkpoint (default: the session's latest).
    #[arg(long, value_name = "ID")]
    to: Option<String>,
    /// Print the diff as JSON (a `turnDiff`).
    #[arg(long)]
    json: bool,
}

pub(crate) async fn diff(args: DiffArgs) -> ExitCode {
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let request = verb::SessionDiff {
        session_key: args.key,
        from: args.from,
        to: args.to,
    };
    let diff = match daemon.send(request).await {
        Ok(d) => d,
        Err(code) => return code,
    };
    if args.json {
        return print_json(&diff);
    }
    if diff.files.is_empty() {
        out!("no changes");
    }
    print_diff(&diff);
    ExitCode::SUCCESS
}

/// `weft restore KEY --hunk FILE -- PATH`.
async fn revert_hunk(args: &RestoreArgs, file: &str) -> ExitCode {
    let [path] = args.paths.as_slice() else {
        eprintln!("weft restore --hunk: name the hunk's file after `--` (one path)");
        return ExitCode::from(crate::EXIT_USAGE);
    };
    let read = if file == "-" {
        std::io::read_to_string(std::io::stdin())
    } else {
        std::fs::read_to_string(file)
    };
    let hunk = match read {
        Ok(h) => h,
        Err(e) => {
            eprintln!("weft restore --hunk: cannot read {file}: {e}");
            return ExitCode::from(crate::EXIT_USAGE);
        }
    };
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let request = verb::RevertHunk {
        session_key: args.key.clone(),
        path: path.clone(),
        hunk,
    };
    match daemon.send(request).await {
        Ok(restored) => report(&args.key, &restored, args.json),
        Err(code) => code,
    }
}

/// `weft undo KEY`: the last turn's files put back as they were before it.
pub(crate) async fn undo(key: String) -> ExitCode {
    restore(RestoreArgs {
        key,
        turn: None,
        before: true,
        after: false,
        yes: false,
        undo: false,
        hunk: None,
        json: false,
        paths: Vec::new(),
    })
    .await
}

fn report(key: &str, restored: &Restored, json: bool) -> ExitCode {
    if json {
        let code = print_json(restored);
        if restored.overwrites.is_some() {
            return ExitCode::FAILURE;
        }
        return code;
    }
    if let Some(since) = &restored.overwrites {
        print_diff(since);
        eprintln!(
            "weft restore: nothing restored: the files above changed since the session's last checkpoint, and restoring would overwrite them; add --yes to restore anyway (those edits are checkpointed first, so `weft restore {key} --undo` brings them back)"
        );
        return ExitCode::FAILURE;
    }
    for path in &restored.written {
        out!("restored {path}");
    }
    for path in &restored.deleted {
        out!("deleted  {path}");
    }
    for path in &restored.kept {
        out!("kept     {path} (a file no checkpoint holds is in the way)");
    }
    if restored.written.is_empty() && restored.deleted.is_empty() {
        out!("nothing to restore: the files are already as asked");
    }
    out!("undo it with `weft restore {key} --undo`");
    ExitCode::SUCCESS
}

fn print_diff(diff: &TurnDiff) {
    for file in &diff.files {
        let change = match file.change {
            TurnChange::Added => "added",
            TurnChange::Modified => "modified",
            TurnChange::Deleted => "deleted",
            TurnChange::Renamed => "renamed",
        };
        out!("{change} {} (+{} -{})", file.path, file.added, file.removed);
        if let Some(hunks) = &file.hunks {
            out!("{}", hunks.trim_end());
        }
    }
    if let Some(cut) = &diff.cut {
        out!("({cut})");
    }
}
