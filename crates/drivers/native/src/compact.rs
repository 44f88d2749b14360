//! Compaction: when the conversation nears the model's window (from the usage the
//! provider reported) or the provider says it is over, the older messages are
//! summarized by the model into one message and the recent user turn is kept. Only
//! the model's view shrinks; the user's transcript (the kernel's turns) is whole.
//! Attached images in the summarized part become `[image: name]` in the summary
//! request; an image in the kept user turn stays an image.

use tokio_util::sync::CancellationToken;

use crate::conversation::{Block, Message, Origin, Role};
use crate::model::{ModelClient, ModelError, ModelRequest};

const SUMMARY_PROMPT: &str = "Summarize the conversation so far for yourself, to continue \
the work from the summary alone: the user's goals and instructions, what was done (files \
read and changed, commands run and their outcomes), decisions made, and what remains. Be \
specific (paths, names, numbers); leave out pleasantries.";

/// The fraction of the window at which compaction starts.
pub const THRESHOLD: f64 = 0.85;

/// Where the kept part starts: the last user message that is the user's own words (not
/// tool results). None when there is nothing older to summarize.
fn keep_from(messages: &[Message]) -> Option<usize> {
    let is_user_words = |m: &Message| {
        m.role == Role::User
            && !m
                .blocks
                .iter()
                .any(|b| matches!(b, Block::ToolResult { .. }))
    };
    let last = messages.iter().rposition(is_user_words)?;
    if last > 0 {
        return Some(last);
    }
    // One long turn: keep its prompt, summarize the steps after it.
    (messages.len() > 2).then_some(0)
}

/// Replaces older messages with a summary. Returns false when there was nothing to
/// compact.
pub async fn compact(
    messages: &mut Vec<Message>,
    client: &dyn ModelClient,
    model: &str,
    cancel: &CancellationToken,
) -> Result<bool, ModelError> {
    let Some(cut) = keep_from(messages) else {
        return Ok(false);
    };
    let (older, kept): (Vec<Message>, Vec<Message>) = if cut == 0 {
        (messages[1..].to_vec(), vec![messages[0].clone()])
    } else {
        (messages[..cut].to_vec(), messages[cut..].to_vec())
    };
    let note = summarize(&older, client, model, cancel).await?;
    *messages = if cut == 0 {
        let mut v = kept;
        v.push(note);
        v
    } else {
        let mut v = vec![note];
        v.extend(kept);
        v
    };
    Ok(true)
}

/// Replaces the whole conversation with its summary (the user's `/compact`). Returns
/// false when there is nothing to compact.
pub async fn compact_all(
    messages: &mut Vec<Message>,
    client: &dyn ModelClient,
    model: &str,
    cancel: &CancellationToken,
) -> Result<bool, ModelError> {
    if messages.is_empty() {
        return Ok(false);
    }
    let note = summarize(messages, client, model, cancel).await?;
    *messages = vec![note];
    Ok(true)
}

/// The model's summary of `older`, as the message that stands for it.
async fn summarize(
    older: &[Message],
    client: &dyn ModelClient,
    model: &str,
    cancel: &CancellationToken,
) -> Result<Message, ModelError> {
    // Images go as their placeholders: the summary is text, the model already said
    // what it saw in them, and a request over the window because of them must not fail
    // its own compaction the same way.
    let mut ask: Vec<Message> = older.iter().map(Message::images_as_text).collect();
    crate::store::repair(&mut ask);
    ask.push(Message::user(SUMMARY_PROMPT));
    let reply = client
        .stream(
            ModelRequest {
                model,
                system: "You write concise, complete working notes.",
                messages: &ask,
                tools: &[],
                max_tokens: 4096,
                effort: None,
            },
            cancel,
            &mut |_| {},
        )
        .await?;
    let summary = reply
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    Ok(Message::user(format!(
        "[The earlier conversation was compacted; this is its summary]\n{summary}"
    ))
    .with_origin(Origin::Summary))
}
