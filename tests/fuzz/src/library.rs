//! The session library's readers (Claude, Codex and Gemini session files) fed
//! arbitrary bytes, read whole and read in two steps as the indexer reads a file that
//! grew.

use std::path::Path;

use weft_library::model::{Batch, Meta};
use weft_library::{read_file, Agent, FileRead};

/// The first byte picks the agent, the next two where the file is cut for the first
/// of two reads; the rest is the file.
///
/// Whole: the read never panics, stops at a line end, and what it found reads back as
/// transcript pages. In two steps (Claude and Codex, which the indexer reads on from
/// where it stopped; a Gemini chat is always read again whole): the first part read,
/// its summary stored and loaded as the indexer stores it (JSON), then the whole file
/// read on from where the first read stopped, gives exactly the whole read's summary,
/// excerpts, usage and turns.
pub fn library_files(data: &[u8]) {
    let [pick, hi, lo, content @ ..] = data else {
        return;
    };
    let agent = match pick % 3 {
        0 => Agent::new(weft_claude::native_sessions::ClaudeSessions),
        1 => Agent::new(weft_codex::native_sessions::CodexSessions),
        _ => Agent::new(weft_gemini::native_sessions::GeminiSessions),
    };
    let agent = &agent;
    // A chat the agent rewrites (Gemini's) is always read whole.
    let whole_only = agent.sessions().rewrites();
    // One folder per thread, the file written over for each input: making and removing
    // a folder per input was most of an execution.
    thread_local! {
        static DIR: Option<tempfile::TempDir> = tempfile::tempdir().ok();
    }
    let Some(path) = DIR.with(|d| d.as_ref().map(|d| d.path().join("session.jsonl"))) else {
        return;
    };
    let seed = Meta {
        native_id: (agent.id() == "claude").then(|| "fuzz-session".to_string()),
        ..Meta::default()
    };
    let Some(whole) = read(agent, &path, content, 0, seed.clone()) else {
        return;
    };
    let len = content.len() as u64;
    assert!(whole.consumed <= len, "read past the end");
    if whole_only {
        assert!(whole.unreadable.is_some() || whole.consumed == len);
    } else {
        assert!(
            whole.consumed == 0 || content[whole.consumed as usize - 1] == b'\n',
            "stopped at {} inside a line",
            whole.consumed
        );
    }
    pages(agent, &path, &whole);
    for d in &whole.batch.docs {
        let _ = weft_library::words::words(&d.text).count();
    }
    if whole_only {
        return;
    }

    let cut = (u64::from(u16::from_be_bytes([*hi, *lo])) * len / 0xffff) as usize;
    let Some(first) = read(agent, &path, &content[..cut], 0, seed) else {
        return;
    };
    // The indexer keeps the summary as JSON in the file's row.
    let stored = serde_json::to_string(&first.meta).unwrap_or_default();
    let carried: Meta = serde_json::from_str(&stored).unwrap_or_default();
    assert_eq!(carried, first.meta, "the summary does not survive its row");
    let Some(rest) = read(agent, &path, content, first.consumed, carried) else {
        return;
    };
    assert_eq!(rest.consumed, whole.consumed, "read on to another end");
    assert_eq!(rest.meta, whole.meta, "read in two steps: another summary");
    assert_eq!(
        first.bad + rest.bad,
        whole.bad,
        "read in two steps: other bad lines"
    );
    assert_eq!(
        facts(&first.batch, Some(&rest.batch)),
        facts(&whole.batch, None),
        "read in two steps: other excerpts, usage or turns"
    );
}

fn read(agent: &Agent, path: &Path, bytes: &[u8], from: u64, meta: Meta) -> Option<FileRead> {
    std::fs::write(path, bytes).ok()?;
    match read_file(agent, path, from, meta) {
        Ok(r) => Some(r),
        Err(e) => panic!("reading a local file failed: {e}"),
    }
}

/// Pages a client could open: all turns, and the first few turns each on its own
/// (each page opens the file: all of a long file's would make the target slow).
fn pages(agent: &Agent, path: &Path, whole: &FileRead) {
    let id = whole.meta.native_id.clone().unwrap_or_default();
    let sessions = agent.sessions();
    let _ = sessions.open_page(&id, path, 0, None);
    if sessions.rewrites() {
        return;
    }
    let offs: Vec<u64> = whole.batch.turns.iter().map(|t| t.off).collect();
    for (i, &from) in offs.iter().enumerate().take(4) {
        let until = offs.get(i + 1).copied();
        let _ = sessions.open_page(&id, path, from, until);
    }
}

type Facts = (
    Vec<(u32, u64, i64, &'static str, String)>,
    Vec<(String, i64, String, [u64; 5])>,
    Vec<(u32, u64, i64)>,
);

fn facts(a: &Batch, b: Option<&Batch>) -> Facts {
    let mut out: Facts = Default::default();
    for batch in std::iter::once(a).chain(b) {
        out.0.extend(
            batch
                .docs
                .iter()
                .map(|d| (d.turn, d.off, d.at, d.kind.as_str(), d.text.clone())),
        );
        for u in &batch.usage {
            let tokens = [u.input, u.output, u.cache_read, u.cache_write, u.reasoning];
            // As the store's upsert keeps a key: its first time, the largest count.
            match out.1.iter_mut().find(|k| k.0 == u.key) {
                Some(kept) => {
                    if u.total() > kept.3[..4].iter().sum::<u64>() {
                        kept.2 = u.model.clone();
                        kept.3 = tokens;
                    }
                }
                None => out.1.push((u.key.clone(), u.at, u.model.clone(), tokens)),
            }
        }
        out.2.extend(batch.turns.iter().map(|t| (t.n, t.off, t.at)));
    }
    out
}
