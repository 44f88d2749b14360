//! What a reader takes out of a transcript for the library's index: the session's summary (carried across
//! incremental reads), its turns, the excerpts to search, and usage events.

use serde::{Deserialize, Serialize};

/// The most of one message kept as a searchable excerpt.
pub const EXCERPT_BYTES: usize = 2048;
/// The most of a tool call (name + command/path) kept as an excerpt.
pub const TOOL_EXCERPT_BYTES: usize = 512;
/// The most of a title.
pub const TITLE_CHARS: usize = 100;

/// A session's summary as read so far. Stored with its file, so an appended file is read
/// on from where it stopped without re-reading what came before.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Meta {
    /// The agent's session id.
    pub native_id: Option<String>,
    /// The folder it ran in.
    pub workdir: Option<String>,
    /// Git branch.
    pub git_branch: Option<String>,
    /// Latest model seen.
    pub model: Option<String>,
    /// A title the user gave it in the agent (Claude `/rename`: custom-title).
    pub custom_title: Option<String>,
    /// The agent's generated title (Claude ai-title).
    pub ai_title: Option<String>,
    /// An older summary record.
    pub summary: Option<String>,
    /// The first prompt the user typed.
    pub first_prompt: Option<String>,
    /// First activity (ms).
    pub created_at: i64,
    /// Last activity (ms).
    pub updated_at: i64,
    /// Messages (user prompts and assistant messages).
    pub messages: u32,
    /// Turns (user prompts).
    pub turns: u32,
    /// The session it was forked or continued from (native id).
    pub parent: Option<String>,
    /// `fork`, `subagent`, …
    pub relation: Option<String>,
    /// Claude: the last assistant message id, so the blocks of one message count once.
    pub last_message_id: Option<String>,
}

impl Meta {
    /// The title by precedence: the user's, the agent's, a summary, the first prompt.
    pub fn title(&self) -> (String, &'static str) {
        for (t, src) in [
            (&self.custom_title, "custom"),
            (&self.ai_title, "ai"),
            (&self.summary, "summary"),
            (&self.first_prompt, "prompt"),
        ] {
            if let Some(t) = t.as_deref().filter(|t| !t.trim().is_empty()) {
                return (title_of(t), src);
            }
        }
        (String::new(), "none")
    }

    /// Notes an activity time.
    pub fn saw(&mut self, at: Option<i64>) {
        if let Some(at) = at {
            if self.created_at == 0 || at < self.created_at {
                self.created_at = at;
            }
            self.updated_at = self.updated_at.max(at);
        }
    }
}

/// The first line of `text`, shortened.
pub fn title_of(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or_default().trim();
    if line.chars().count() > TITLE_CHARS {
        let cut: String = line.chars().take(TITLE_CHARS).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}

/// At most `max` bytes of `text`, cut at a char boundary.
pub fn excerpt(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// What kind of text an excerpt is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocKind {
    /// What the user asked.
    Prompt,
    /// What the agent answered.
    Reply,
    /// A tool call: its name and what it ran on.
    Tool,
}

impl DocKind {
    /// Its stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            DocKind::Prompt => "prompt",
            DocKind::Reply => "reply",
            DocKind::Tool => "tool",
        }
    }
}

/// A searchable excerpt of one record.
#[derive(Debug, Clone)]
pub struct Doc {
    /// The turn it belongs to (1-based; 0 before the first prompt).
    pub turn: u32,
    /// Byte offset of its record in the file.
    pub off: u64,
    /// When (ms), if known.
    pub at: i64,
    /// Prompt, reply or tool.
    pub kind: DocKind,
    /// The excerpt.
    pub text: String,
}

/// One model call's tokens, with the key that makes repeats of it count once.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UsageEvent {
    /// Unique per model call (Claude: message id + request id).
    pub key: String,
    /// When (ms).
    pub at: i64,
    /// The model.
    pub model: String,
    /// Input tokens (not counting cache reads or writes).
    pub input: u64,
    /// Output tokens (reasoning included).
    pub output: u64,
    /// Input tokens read from cache.
    pub cache_read: u64,
    /// Input tokens written to cache.
    pub cache_write: u64,
    /// Reasoning tokens (part of output, where reported apart).
    pub reasoning: u64,
}

impl UsageEvent {
    /// Every token counted.
    pub fn total(&self) -> u64 {
        self.input + self.output + self.cache_read + self.cache_write
    }
}

/// Where a turn starts.
#[derive(Debug, Clone, Copy)]
pub struct TurnStart {
    /// Its number (1-based).
    pub n: u32,
    /// Byte offset of its prompt's record.
    pub off: u64,
    /// When (ms).
    pub at: i64,
}

/// What one read of a file produced.
#[derive(Debug, Default)]
pub struct Batch {
    /// Excerpts to index.
    pub docs: Vec<Doc>,
    /// Usage events.
    pub usage: Vec<UsageEvent>,
    /// Turn starts.
    pub turns: Vec<TurnStart>,
    /// Bytes of excerpt text held (to flush a huge file's batch part way).
    pub text_bytes: usize,
    /// The distinct words of `docs` for the vocabulary, set when the library seals
    /// the batch.
    pub words: Vec<String>,
}

impl Batch {
    /// Adds an excerpt (empty text is dropped).
    pub fn doc(&mut self, turn: u32, off: u64, at: i64, kind: DocKind, text: &str) {
        let max = match kind {
            DocKind::Tool => TOOL_EXCERPT_BYTES,
            _ => EXCERPT_BYTES,
        };
        let text = excerpt(text.trim(), max);
        if text.is_empty() {
            return;
        }
        self.text_bytes += text.len();
        self.docs.push(Doc {
            turn,
            off,
            at,
            kind,
            text: text.to_string(),
        });
    }

    /// Turn `meta.turns + 1` starts at byte `off` with the user's `text`: counted,
    /// kept as the first prompt (for the title) if none is yet, and indexed.
    pub fn prompt(&mut self, meta: &mut Meta, off: u64, at: i64, text: &str) {
        meta.turns += 1;
        meta.messages += 1;
        if meta.first_prompt.is_none() {
            meta.first_prompt = Some(excerpt(text, 400).to_string());
        }
        self.turns.push(TurnStart {
            n: meta.turns,
            off,
            at,
        });
        self.doc(meta.turns, off, at, DocKind::Prompt, text);
    }

    /// True when nothing was produced.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty() && self.usage.is_empty() && self.turns.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_prefer_the_users_then_the_agents_then_the_prompt() {
        let mut m = Meta {
            first_prompt: Some("fix the parser\nplease".into()),
            ..Default::default()
        };
        assert_eq!(m.title(), ("fix the parser".to_string(), "prompt"));
        m.ai_title = Some("Parser fix".into());
        assert_eq!(m.title().1, "ai");
        m.custom_title = Some("mine".into());
        assert_eq!(m.title(), ("mine".to_string(), "custom"));
        assert_eq!(excerpt("日本語", 4), "日");
    }
}
