//! Exporting a session's whole transcript as one document, Markdown or JSON.
//!
//! The turns come the way `weft history` shows them: a native session's (or a Weft
//! fork's inherited ones) from the agent's file, a managed session's from the store,
//! and an adopted session's earlier turns from its file before Weft's own. Both are
//! read a page at a time and each turn is rendered as soon as it is read, so only the
//! document grows with the session, never a list of full snapshots (tool outputs,
//! file changes) of all its turns.

use weft_protocol::{ExportFormat, LibrarySession, ToolStatus, UniversalSnapshot};

use crate::{query, Library, LibraryError};

/// Turns read per page.
const PAGE: u32 = 200;

impl Library {
    /// The session `key`'s transcript as one document in `format`.
    pub fn export(&self, key: &str, format: ExportFormat) -> Result<String, LibraryError> {
        self.flush_store();
        let managed = query::managed_session(&self.read.lock(), key)?;
        let session = match managed.clone() {
            Some(s) => s,
            None => self
                .native(key)?
                .ok_or_else(|| LibraryError::Unknown(key.to_string()))?,
        };
        let (mine, first_at) = match managed {
            Some(_) => self.managed_turns(key, format)?,
            None => (Vec::new(), None),
        };
        // An adopted session's file repeats Weft's turns once indexed again: only the
        // file's turns from before Weft's first count (as `weft history` has it).
        let from_file = match (mine.is_empty(), first_at) {
            (true, _) => self.file_turns(key, format, None)?,
            (false, Some(first)) => self.file_turns(key, format, Some(first))?,
            (false, None) => Vec::new(),
        };
        let turns = from_file.into_iter().chain(mine);
        Ok(match format {
            ExportFormat::Markdown => markdown(&session, turns),
            ExportFormat::Json => json(&session, turns)?,
        })
    }

    /// Every finished turn of a managed session, rendered, oldest first, and when the
    /// oldest started. The store pages from the newest back.
    fn managed_turns(
        &self,
        key: &str,
        format: ExportFormat,
    ) -> Result<(Vec<String>, Option<i64>), LibraryError> {
        let Some(store) = &self.store else {
            return Ok((Vec::new(), None));
        };
        let mut pages: Vec<Vec<String>> = Vec::new();
        let mut first_at = None;
        let mut before: Option<String> = None;
        loop {
            let page = store.history_page(key, Some(PAGE), before.as_deref())?;
            let Some(oldest) = page.first() else { break };
            first_at = oldest.started_at;
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
        Ok((pages.into_iter().rev().flatten().collect(), first_at))
    }

    /// The turns of the session's file (a fork's inherited ones first), rendered; with
    /// `before`, only those that started before it. None when it has no file.
    fn file_turns(
        &self,
        key: &str,
        format: ExportFormat,
        before: Option<i64>,
    ) -> Result<Vec<String>, LibraryError> {
        let mut out = Vec::new();
        let mut start = 0u32;
        loop {
            let page = match self.open_transcript(key, Some(start), Some(PAGE)) {
                Ok(p) => p,
                Err(LibraryError::Unknown(_)) => return Ok(out),
                Err(e) => return Err(e),
            };
            let n = page.turns.len() as u32;
            for t in &page.turns {
                if before.is_none_or(|b| t.started_at.is_none_or(|at| at < b)) {
                    out.push(render(format, t)?);
                }
            }
            start += n.max(1);
            if n == 0 || start >= page.total {
                return Ok(out);
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

fn json(
    session: &LibrarySession,
    turns: impl Iterator<Item = String>,
) -> Result<String, LibraryError> {
    let head = indent(&serde_json::to_string_pretty(session)?, "  ");
    let turns: Vec<String> = turns.collect();
    let body = if turns.is_empty() {
        "[]".to_string()
    } else {
        format!("[\n{}\n  ]", turns.join(",\n"))
    };
    Ok(format!(
        "{{\n  \"session\": {},\n  \"turns\": {body}\n}}\n",
        head.trim_start()
    ))
}

fn markdown(session: &LibrarySession, turns: impl Iterator<Item = String>) -> String {
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
    let mut out = format!(
        "# {}\n\n{}  \n**Session:** `{}`\n",
        one_line(title),
        facts.join(" · "),
        session.session_key
    );
    for (i, body) in turns.enumerate() {
        out.push_str(&format!("\n---\n\n## Turn {}{}\n", i + 1, body.trim_end()));
    }
    out
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
    let [y, m, d, h, min] = civil_utc(ms);
    format!("{y:04}-{m:02}-{d:02} {h:02}:{min:02} UTC")
}

/// Year, month, day, hour and minute (UTC) of a time in ms since the epoch.
pub(crate) fn civil_utc(ms: i64) -> [i64; 5] {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    [y, m, d, rem / 3600, rem % 3600 / 60]
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
        let v: serde_json::Value = ok(serde_json::from_str(&ok(json(
            &session,
            std::iter::empty(),
        ))));
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
        let v: serde_json::Value = ok(serde_json::from_str(&ok(json(&session, two.into_iter()))));
        assert_eq!(v["turns"][1]["prompt"], "a\n\nb");
        assert!(markdown_turn(&t).contains("> a\n>\n> b\n"));
    }
}
