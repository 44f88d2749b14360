//! Exporting a session's whole transcript as one document, Markdown or JSON.
//!
//! The turns come the way `weft history` shows them: a native session's (or a Weft
//! fork's inherited ones) from the agent's file, a managed session's from the store,
//! and an adopted session's earlier turns from its file before Weft's own. The file's
//! turns are read a page at a time and each is written out as soon as it is rendered,
//! so an export of a file of any size holds one page of it in memory; Weft's own turns
//! (the store pages them newest first) are rendered before the document is written.

use std::io::Write;

use weft_protocol::{ExportFormat, LibrarySession, ToolStatus, UniversalSnapshot};

use crate::{query, Library, LibraryError};

/// Turns read per page.
const PAGE: u32 = 200;

impl Library {
    /// The session `key`'s transcript as one document in `format`.
    pub fn export(&self, key: &str, format: ExportFormat) -> Result<String, LibraryError> {
        let mut out = Vec::new();
        self.export_to(key, format, &mut out)?;
        String::from_utf8(out)
            .map_err(|e| LibraryError::Invalid(format!("the export is not UTF-8: {e}")))
    }

    /// Writes the session `key`'s transcript as one document in `format` to `out`;
    /// returns the number of bytes written.
    pub fn export_to(
        &self,
        key: &str,
        format: ExportFormat,
        out: &mut dyn Write,
    ) -> Result<u64, LibraryError> {
        self.flush_store();
        let managed = query::managed_session(&self.read.lock(), key)?;
        let session = match managed.clone() {
            Some(s) => s,
            None => self
                .native(key)?
                .ok_or_else(|| LibraryError::Unknown(key.to_string()))?,
        };
        let mine = match managed {
            Some(_) => self.managed_turns(key, format)?,
            None => Vec::new(),
        };
        let mut doc = Document::start(out, format, &session)?;
        self.file_turns(key, format, &mut doc)?;
        for turn in &mine {
            doc.turn(turn)?;
        }
        doc.finish()
    }

    /// Writes the session `key`'s document to `path` (absolute; a file there is
    /// replaced) through a hidden file of a random name beside it, renamed over it
    /// once whole: a failed export leaves what was there. Readable by its owner only
    /// (0600): a transcript holds what the agent read and ran. Returns its size.
    pub fn export_file(
        &self,
        key: &str,
        format: ExportFormat,
        path: &std::path::Path,
    ) -> Result<u64, LibraryError> {
        if !path.is_absolute() {
            return Err(LibraryError::Invalid(format!(
                "the export's path must be absolute: {}",
                path.display()
            )));
        }
        let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
            return Err(LibraryError::Invalid(format!(
                "not a file's path: {}",
                path.display()
            )));
        };
        if !dir.is_dir() {
            return Err(LibraryError::Invalid(format!(
                "no such folder: {}",
                dir.display()
            )));
        }
        if path.is_dir() {
            return Err(LibraryError::Invalid(format!(
                "{} is a folder",
                path.display()
            )));
        }
        // A fresh file beside the target: an unpredictable name, created exclusively
        // (never through a link someone left under a name we would choose) and 0600
        // (the transcript is the user's); renamed over the target once whole.
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{}.", name.to_string_lossy()))
            .suffix(".part")
            .tempfile_in(dir)?;
        let mut out = std::io::BufWriter::with_capacity(1 << 20, tmp);
        let n = self.export_to(key, format, &mut out)?;
        let tmp = out.into_inner().map_err(|e| e.into_error())?;
        tmp.as_file().sync_all()?;
        // On any failure before this, dropping `tmp` removes it.
        tmp.persist(path).map_err(|e| e.error)?;
        Ok(n)
    }

    /// Every finished turn of a managed session, rendered, oldest first. The store pages
    /// from the newest back.
    fn managed_turns(&self, key: &str, format: ExportFormat) -> Result<Vec<String>, LibraryError> {
        let Some(store) = &self.store else {
            return Ok(Vec::new());
        };
        let mut pages: Vec<Vec<String>> = Vec::new();
        let mut before: Option<String> = None;
        loop {
            let page = store.history_page(key, Some(PAGE), before.as_deref())?;
            let Some(oldest) = page.first() else { break };
            let next = oldest.task_id.clone();
            let full = page.len() == PAGE as usize;
            pages.push(
                page.iter()
                    .map(|t| render(format, t))
                    .collect::<Result<_, _>>()?,
            );
            match next {
                Some(id) if full => before = Some(id),
                _ => break,
            }
        }
        Ok(pages.into_iter().rev().flatten().collect())
    }

    /// Writes the turns of the session's file from before its first in Weft (all of a
    /// native session's; a fork's inherited ones first) to `doc`, as `weft history`
    /// and the window show them: an adopted session's file repeats Weft's own turns.
    /// Nothing when it has no file.
    fn file_turns(
        &self,
        key: &str,
        format: ExportFormat,
        doc: &mut Document<'_>,
    ) -> Result<(), LibraryError> {
        let mut start = 0u32;
        loop {
            let page = match self.earlier_turns(key, Some(start), Some(PAGE)) {
                Ok(p) => p,
                Err(LibraryError::Unknown(_)) => return Ok(()),
                Err(e) => return Err(e),
            };
            let n = page.turns.len() as u32;
            for t in &page.turns {
                doc.turn(&render(format, t)?)?;
            }
            start += n.max(1);
            if n == 0 || start >= page.total {
                return Ok(());
            }
        }
    }
}

fn render(format: ExportFormat, turn: &UniversalSnapshot) -> Result<String, LibraryError> {
    Ok(match format {
        ExportFormat::Markdown => markdown_turn(turn),
        ExportFormat::Json => indent(&serde_json::to_string_pretty(turn)?, "    "),
    })
}

/// Pretty JSON nested `prefix` deeper (a JSON string never holds a raw newline, so
/// every line can be prefixed).
fn indent(pretty: &str, prefix: &str) -> String {
    pretty
        .lines()
        .map(|l| format!("{prefix}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A document being written: its head first, then each turn as it comes.
struct Document<'a> {
    out: Counted<'a>,
    format: ExportFormat,
    turns: usize,
}

impl<'a> Document<'a> {
    fn start(
        out: &'a mut dyn Write,
        format: ExportFormat,
        session: &LibrarySession,
    ) -> Result<Self, LibraryError> {
        let mut doc = Document {
            out: Counted { inner: out, n: 0 },
            format,
            turns: 0,
        };
        let head = match format {
            ExportFormat::Markdown => markdown_head(session),
            ExportFormat::Json => {
                let head = indent(&serde_json::to_string_pretty(session)?, "  ");
                format!("{{\n  \"session\": {},\n  \"turns\": [", head.trim_start())
            }
        };
        doc.out.write_all(head.as_bytes())?;
        Ok(doc)
    }

    /// One rendered turn.
    fn turn(&mut self, body: &str) -> Result<(), LibraryError> {
        self.turns += 1;
        match self.format {
            ExportFormat::Markdown => write!(
                self.out,
                "\n---\n\n## Turn {}{}\n",
                self.turns,
                body.trim_end()
            )?,
            ExportFormat::Json => {
                let sep = if self.turns == 1 { "\n" } else { ",\n" };
                write!(self.out, "{sep}{body}")?;
            }
        }
        Ok(())
    }

    /// Ends the document; the bytes written in all.
    fn finish(mut self) -> Result<u64, LibraryError> {
        if self.format == ExportFormat::Json {
            let close = if self.turns == 0 {
                "]\n}\n"
            } else {
                "\n  ]\n}\n"
            };
            self.out.write_all(close.as_bytes())?;
        }
        self.out.flush()?;
        Ok(self.out.n)
    }
}

/// A writer that counts what went through it.
struct Counted<'a> {
    inner: &'a mut dyn Write,
    n: u64,
}

impl Write for Counted<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.n += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The Markdown document's title and facts.
fn markdown_head(session: &LibrarySession) -> String {
    let title = if session.title.trim().is_empty() {
        session.session_key.as_str()
    } else {
        session.title.trim()
    };
    let mut facts = vec![format!("**Agent:** {}", session.agent)];
    if let Some(m) = &session.model {
        facts.push(format!("**Model:** {m}"));
    }
    if let Some(w) = &session.workdir {
        facts.push(format!("**Folder:** `{w}`"));
    }
    if let Some(b) = &session.git_branch {
        facts.push(format!("**Branch:** {b}"));
    }
    facts.push(format!("**Started:** {}", utc(session.created_at)));
    facts.push(format!("**Last activity:** {}", utc(session.updated_at)));
    format!(
        "# {}\n\n{}  \n**Session:** `{}`\n",
        one_line(title),
        facts.join(" · "),
        session.session_key
    )
}

/// A turn after its `## Turn N` heading: its time, the prompt, the reply, tool calls,
/// reasoning folded away, usage.
fn markdown_turn(t: &UniversalSnapshot) -> String {
    let mut out = match t.started_at {
        Some(at) => format!(" · {}\n\n", utc(at)),
        None => "\n\n".to_string(),
    };
    out.push_str("### You\n\n");
    for line in t.prompt.trim_end().lines() {
        out.push_str(if line.is_empty() { ">" } else { "> " });
        out.push_str(line);
        out.push('\n');
    }
    for a in &t.attachments {
        out.push_str(&format!(">\n> 📎 `{a}`\n"));
    }
    out.push_str(&format!("\n### {}\n\n", t.agent));
    if !t.reasoning.trim().is_empty() {
        out.push_str(&format!(
            "<details><summary>Reasoning</summary>\n\n{}\n\n</details>\n\n",
            t.reasoning.trim()
        ));
    }
    if !t.text.trim().is_empty() {
        out.push_str(t.text.trim_end());
        out.push_str("\n\n");
    }
    if !t.tool_calls.is_empty() {
        out.push_str("**Tool calls**\n\n");
        for c in &t.tool_calls {
            let status = match c.status {
                ToolStatus::Running => "not finished",
                ToolStatus::Done => "done",
                ToolStatus::Failed => "failed",
            };
            let what = if c.summary.trim().is_empty() {
                &c.name
            } else {
                &c.summary
            };
            out.push_str(&format!("- {} — {status}\n", one_line(what)));
        }
        out.push('\n');
    }
    if let Some(e) = &t.error {
        out.push_str(&format!("**Failed:** {}\n\n", one_line(e)));
    } else if t.incomplete {
        out.push_str("*This turn did not finish.*\n\n");
    }
    if let Some(u) = &t.usage {
        let mut parts = Vec::new();
        if let Some(n) = u.input_tokens {
            parts.push(format!("{n} in"));
        }
        if let Some(n) = u.output_tokens {
            parts.push(format!("{n} out"));
        }
        if let Some(c) = u.cost_usd {
            parts.push(format!("${c:.4}"));
        }
        if !parts.is_empty() {
            out.push_str(&format!("*Usage: {}*\n\n", parts.join(" · ")));
        }
    }
    out
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `YYYY-MM-DD HH:MM UTC` of a time in ms since the epoch.
fn utc(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
        .strftime("%Y-%m-%d %H:%M UTC")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(951_782_400_000 + 3_660_000), "2000-02-29 01:01 UTC");
        assert_eq!(utc(1_767_225_599_000), "2025-12-31 23:59 UTC");
    }

    fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
        r.unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn json_parses_with_its_turns_and_markdown_quotes_every_prompt_line() {
        let session: LibrarySession = ok(serde_json::from_value(serde_json::json!({
            "sessionKey": "echo:k", "origin": "managed", "agent": "echo", "sessionId": null,
            "title": "t", "workdir": null, "gitBranch": null, "model": null, "phase": null,
            "turns": 0, "messages": 0, "createdAt": 0, "updatedAt": 0, "inputTokens": 0,
            "outputTokens": 0, "cacheReadTokens": 0, "cacheWriteTokens": 0, "sourceGone": false,
            "archived": false, "pinned": false, "parentKey": null, "relation": null,
            "home": null, "account": null
        })));
        let doc = |turns: &[String]| {
            let mut out = Vec::new();
            let mut d = ok(Document::start(&mut out, ExportFormat::Json, &session));
            for t in turns {
                ok(d.turn(t));
            }
            let n = ok(d.finish());
            assert_eq!(n, out.len() as u64);
            ok(serde_json::from_slice::<serde_json::Value>(&out))
        };
        let v = doc(&[]);
        assert_eq!(v["session"]["sessionKey"], "echo:k");
        assert_eq!(v["turns"], serde_json::json!([]));
        let t = UniversalSnapshot {
            prompt: "a\n\nb".into(),
            ..Default::default()
        };
        let two = [
            ok(render(ExportFormat::Json, &t)),
            ok(render(ExportFormat::Json, &t)),
        ];
        let v = doc(&two);
        assert_eq!(v["turns"][1]["prompt"], "a\n\nb");
        assert!(markdown_turn(&t).contains("> a\n>\n> b\n"));
    }
}
