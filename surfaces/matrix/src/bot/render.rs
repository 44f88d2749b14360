//! Drawing one session into its room.
//!
//! A turn's reply is one message, sent as soon as the turn starts (so the phone shows
//! at once that it was taken) and edited as text arrives — at most once per
//! `editIntervalMs`, always with the newest text, since the snapshot channel keeps
//! only the latest state. Edits notify nobody (the default push rules suppress them),
//! so what needs the user goes out as a new message: a question, and the end of the
//! turn ("done", "failed" or "stopped"), mentioning the user when the room has more
//! than two members. The final edit carries the whole text; past one message's size
//! the rest follows in new messages.
//!
//! Where a reply streams is written to `state.json` as soon as its message exists, so
//! after a restart the same message is edited on, and a turn that ended meanwhile is
//! closed from the daemon's history.

use std::time::Duration;

use matrix_sdk::ruma::OwnedEventId;
use matrix_sdk::Room;
use tokio::sync::watch;
use tokio::time::Instant;
use weft_protocol::{verb, Phase, UniversalSnapshot};

use super::{questions, Bot};
use crate::config::{Posted, Stream};
use crate::matrix::{self, BODY_MAX};

/// The reply being streamed.
struct Reply {
    task_id: String,
    event_id: OwnedEventId,
    /// The body the room shows now.
    shown: String,
    last_edit: Option<Instant>,
    /// The homeserver asked for no events before then (a 429's retry_after).
    blocked_until: Option<Instant>,
}

pub async fn run(
    bot: std::sync::Arc<Bot>,
    room_id: String,
    key: String,
    mut rx: watch::Receiver<Option<UniversalSnapshot>>,
) {
    let mut reply: Option<Reply> = None;
    let mut due: Option<Instant> = None;
    loop {
        let woke_by_timer = tokio::select! {
            changed = rx.changed() => {
                if changed.is_err() {
                    return;
                }
                false
            }
            _ = sleep_until(due) => true,
        };
        let _ = woke_by_timer;
        let Some(snap) = rx.borrow_and_update().clone() else {
            continue;
        };
        let Some(room) = bot.room(&room_id) else {
            // Not known yet (a room just made, before its first sync): try again soon.
            due = Some(Instant::now() + Duration::from_millis(500));
            continue;
        };
        questions_of(&bot, &room, &key, &snap).await;
        due = stream(&bot, &room, &room_id, &snap, &mut reply).await;
    }
}

async fn sleep_until(due: Option<Instant>) {
    match due {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Posts the questions not posted yet; edits those no longer pending to say so.
async fn questions_of(bot: &Bot, room: &Room, key: &str, snap: &UniversalSnapshot) {
    let room_id = room.room_id().to_string();
    for interaction in &snap.interactions {
        let posted = bot
            .state
            .lock()
            .await
            .questions
            .contains_key(&interaction.prompt_id);
        if posted {
            continue;
        }
        let mention = mention_of(bot, room).await;
        let body = questions::render(interaction);
        let event_id = match matrix::send(room, matrix::text(&body, mention.as_deref())).await {
            Ok(id) => id,
            Err(e) => {
                tracing::warn!("cannot post a question: {e:#}");
                continue;
            }
        };
        {
            let mut state = bot.state.lock().await;
            state.questions.insert(
                interaction.prompt_id.clone(),
                Posted {
                    room_id: room_id.clone(),
                    event_id: event_id.to_string(),
                    session_key: key.to_string(),
                    answered: None,
                    closed: false,
                    asked_at: crate::config::now_ms(),
                    title: interaction.title.clone(),
                },
            );
            bot.save(&state);
        }
        for reaction in questions::reactions(interaction) {
            if let Err(e) = matrix::react(room, &event_id, reaction).await {
                tracing::debug!("no reaction shortcut: {e:#}");
            }
        }
    }
    let pending: Vec<&str> = snap
        .interactions
        .iter()
        .map(|i| i.prompt_id.as_str())
        .collect();
    let closing: Vec<(String, Posted)> = {
        let state = bot.state.lock().await;
        state
            .questions
            .iter()
            .filter(|(id, p)| p.session_key == key && !p.closed && !pending.contains(&id.as_str()))
            .map(|(id, p)| (id.clone(), p.clone()))
            .collect()
    };
    for (prompt_id, posted) in closing {
        let Ok(event_id) = OwnedEventId::try_from(posted.event_id.as_str()) else {
            continue;
        };
        let body = match (
            &posted.answered,
            answered_elsewhere(&snap.notices, &posted.title),
        ) {
            (Some(how), _) => format!("✔ Answered {how}."),
            (None, Some(how)) => format!("✔ {how}."),
            (None, None) => {
                "✔ Answered elsewhere (in the Weft window, a browser or the CLI), or withdrawn."
                    .to_string()
            }
        };
        if let Err(e) = matrix::edit(room, &event_id, &body, true).await {
            tracing::warn!("cannot close a question: {e:#}");
            continue;
        }
        let mut state = bot.state.lock().await;
        if let Some(p) = state.questions.get_mut(&prompt_id) {
            p.closed = true;
        }
        bot.save(&state);
    }
}

/// How a question titled `title` was answered from another surface, from the kernel's
/// notice of it (`"TITLE" answered Allow (from app)`), the newest first: "Answered
/// Allow in the Weft window". None when there is no such notice (it was withdrawn).
fn answered_elsewhere(notices: &[String], title: &str) -> Option<String> {
    let head = format!("\"{title}\" ");
    notices.iter().rev().find_map(|n| {
        let rest = n.strip_prefix(&head)?;
        let (what, surface) = rest.strip_suffix(')')?.rsplit_once(" (from ")?;
        let place = match surface {
            "app" => "in the Weft window",
            "cli" => "with the weft command",
            "browser" => "in a browser",
            _ => "elsewhere",
        };
        let mut what = what.to_string();
        if let Some(first) = what.get(..1) {
            what.replace_range(..1, &first.to_uppercase());
        }
        Some(format!("{what} {place}"))
    })
}

/// The user to mention in a new message: the room's user when more than two are in it
/// (in a two-member room every message notifies already).
async fn mention_of(bot: &Bot, room: &Room) -> Option<String> {
    // The member list, not the sync summary's count: the summary is not resent on
    // every join, and a stale "2" would leave a third member unmentioned.
    let joined = match room.members(matrix_sdk::RoomMemberships::JOIN).await {
        Ok(m) => m.len() as u64,
        Err(_) => room.joined_members_count(),
    };
    if joined <= 2 {
        return None;
    }
    let state = bot.state.lock().await;
    state
        .session_rooms
        .get(room.room_id().as_str())
        .map(|s| s.user.clone())
        .filter(|u| !u.is_empty())
}

/// What the reply message shows while the turn runs.
fn streaming_body(snap: &UniversalSnapshot) -> String {
    let mut body = cut(&snap.text, BODY_MAX - 400);
    if body.trim().is_empty() {
        body = "…".into();
    }
    if let Some(plan) = plan_line(snap) {
        body.push_str(&format!("\n\n{plan}"));
    }
    if let Some(line) = snap.activity.lines().rev().find(|l| !l.trim().is_empty()) {
        body.push_str(&format!("\n\n⏳ {}", cut(line.trim(), 300)));
    }
    body
}

/// The plan in one line: how far it is, and the step being worked on (or the next).
fn plan_line(snap: &UniversalSnapshot) -> Option<String> {
    use weft_protocol::StepStatus;
    let plan = snap.plan.as_ref().filter(|p| !p.steps.is_empty())?;
    let done = plan
        .steps
        .iter()
        .filter(|s| s.status == StepStatus::Completed)
        .count();
    let now = plan
        .steps
        .iter()
        .find(|s| s.status == StepStatus::InProgress)
        .or_else(|| plan.steps.iter().find(|s| s.status == StepStatus::Pending));
    let total = plan.steps.len();
    Some(match now {
        Some(step) => format!("📋 Plan {done}/{total}: {}", cut(step.text.trim(), 200)),
        None => format!("📋 Plan {done}/{total} done"),
    })
}

/// The first `max` bytes of `text` (whole characters), with an ellipsis when cut.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// How the turn ended, as the new message that says so.
fn closing(snap: &UniversalSnapshot) -> String {
    let tools = snap.tool_calls.len();
    let mut facts = Vec::new();
    if tools > 0 {
        facts.push(format!(
            "{tools} tool call{}",
            if tools == 1 { "" } else { "s" }
        ));
    }
    if let Some(plan) = snap.plan.as_ref().filter(|p| !p.steps.is_empty()) {
        let done = plan
            .steps
            .iter()
            .filter(|s| s.status == weft_protocol::StepStatus::Completed)
            .count();
        facts.push(format!("plan {done}/{} done", plan.steps.len()));
    }
    if let Some(u) = &snap.usage {
        if let (Some(i), Some(o)) = (u.input_tokens, u.output_tokens) {
            facts.push(format!("{i} in / {o} out tokens"));
        }
    }
    let facts = if facts.is_empty() {
        String::new()
    } else {
        format!(" ({})", facts.join(", "))
    };
    match (&snap.error, snap.incomplete) {
        (Some(e), _) => format!("❌ Failed: {e}"),
        (None, true) => "⏹ Stopped: the turn did not finish; what it said is above.".into(),
        (None, false) => format!("✅ Done{facts}."),
    }
}

/// Streams the turn of `snap` into the room; when the next edit is due, if one waits.
async fn stream(
    bot: &Bot,
    room: &Room,
    room_id: &str,
    snap: &UniversalSnapshot,
    reply: &mut Option<Reply>,
) -> Option<Instant> {
    let task_id = snap.task_id.clone()?;
    if snap.phase == Phase::Idle || snap.phase == Phase::Queued {
        return None;
    }
    let record = {
        let state = bot.state.lock().await;
        state
            .session_rooms
            .get(room_id)
            .and_then(|s| s.stream.clone())
    };
    // A turn the room has not shown to its end (the bot was down when it ended):
    // close it from the history before drawing the next.
    if let Some(old) = record
        .as_ref()
        .filter(|r| !r.finished && r.task_id != task_id)
    {
        finish_from_history(bot, room, room_id, old).await;
    }
    if record
        .as_ref()
        .is_some_and(|r| r.task_id == task_id && r.finished)
    {
        return None;
    }
    if reply.as_ref().is_none_or(|r| r.task_id != task_id) {
        *reply = match record.filter(|r| r.task_id == task_id) {
            // Resumed after a restart: edit the same message on.
            Some(r) => OwnedEventId::try_from(r.event_id.as_str())
                .ok()
                .map(|event_id| Reply {
                    task_id: task_id.clone(),
                    event_id,
                    shown: String::new(),
                    last_edit: None,
                    blocked_until: None,
                }),
            None => start(bot, room, room_id, &task_id, snap).await,
        };
    }
    let r = reply.as_mut()?;
    if snap.phase == Phase::Done {
        finish(bot, room, room_id, r, snap).await;
        return None;
    }
    let body = streaming_body(snap);
    if body == r.shown {
        return None;
    }
    let interval = Duration::from_millis(bot.config.lock().edit_interval_ms);
    let next = [r.last_edit.map(|t| t + interval), r.blocked_until]
        .into_iter()
        .flatten()
        .max()
        .filter(|at| *at > Instant::now());
    if next.is_some() {
        return next;
    }
    r.last_edit = Some(Instant::now());
    match matrix::stream_edit(room, &r.event_id, &body).await {
        Ok(()) => r.shown = body,
        Err(matrix::Refused::Limited(wait)) => {
            tracing::debug!("rate-limited: no edit for {} ms", wait.as_millis());
            r.blocked_until = Some(Instant::now() + wait);
            return r.blocked_until;
        }
        Err(matrix::Refused::Failed(e)) => {
            tracing::debug!("an edit was dropped (the next carries its text): {e}")
        }
    }
    // More may have come while the edit went out.
    Some(Instant::now() + interval)
}

/// Sends the turn's reply message and records where it streams.
async fn start(
    bot: &Bot,
    room: &Room,
    room_id: &str,
    task_id: &str,
    snap: &UniversalSnapshot,
) -> Option<Reply> {
    let body = streaming_body(snap);
    let event_id = match matrix::send(room, matrix::text(&body, None)).await {
        Ok(id) => id,
        Err(e) => {
            tracing::warn!("cannot send the reply message: {e:#}");
            return None;
        }
    };
    let mut state = bot.state.lock().await;
    if let Some(s) = state.session_rooms.get_mut(room_id) {
        s.stream = Some(Stream {
            task_id: task_id.to_string(),
            event_id: event_id.to_string(),
            finished: false,
        });
    }
    bot.save(&state);
    Some(Reply {
        task_id: task_id.to_string(),
        event_id,
        shown: body,
        last_edit: Some(Instant::now()),
        blocked_until: None,
    })
}

/// The final text (all of it) and the closing message; then the stream is finished.
async fn finish(bot: &Bot, room: &Room, room_id: &str, r: &Reply, snap: &UniversalSnapshot) {
    let text = if snap.text.trim().is_empty() {
        "(no text)".to_string()
    } else {
        snap.text.clone()
    };
    let pieces = matrix::split(&text, BODY_MAX);
    // Sent the moment the homeserver takes events again, not retried into its limit.
    if let Some(at) = r.blocked_until.filter(|at| *at > Instant::now()) {
        tokio::time::sleep_until(at).await;
    }
    // Retried here too: the final text is never dropped while the homeserver is
    // reachable at all.
    for attempt in 0..5u32 {
        match matrix::edit(room, &r.event_id, pieces[0], true).await {
            Ok(()) => break,
            Err(e) => {
                tracing::warn!("the final edit failed (attempt {}): {e:#}", attempt + 1);
                tokio::time::sleep(Duration::from_secs(2 << attempt)).await;
            }
        }
    }
    for piece in &pieces[1..] {
        if let Err(e) = matrix::send(room, matrix::text(piece, None)).await {
            tracing::warn!("a part of the reply was not sent: {e:#}");
        }
    }
    upload_artifacts(bot, room, room_id, snap).await;
    let mention = mention_of(bot, room).await;
    if let Err(e) = matrix::send(room, matrix::text(&closing(snap), mention.as_deref())).await {
        tracing::warn!("the closing message was not sent: {e:#}");
    }
    let mut state = bot.state.lock().await;
    if let Some(s) = state.session_rooms.get_mut(room_id) {
        if let Some(st) = s.stream.as_mut().filter(|st| st.task_id == r.task_id) {
            st.finished = true;
        }
    }
    bot.save(&state);
}

/// The most of one file the room gets: the rest stays on the host.
const UPLOAD_MAX: u64 = 20 << 20;

/// The most of one file read from another host (what its daemon's `readFile` gives).
const REMOTE_UPLOAD_MAX: u32 = 16 << 20;

/// Sends the files the turn produced as attachments (encrypted in an encrypted room);
/// a host's files are read through its daemon.
async fn upload_artifacts(bot: &Bot, room: &Room, room_id: &str, snap: &UniversalSnapshot) {
    let host = {
        let state = bot.state.lock().await;
        state
            .session_rooms
            .get(room_id)
            .and_then(|s| super::links::split(&s.session_key).0.map(String::from))
    };
    for artifact in &snap.artifacts {
        let Some(path) = artifact.path.as_deref() else {
            continue;
        };
        let Some(bytes) = artifact_bytes(bot, host.as_deref(), path).await else {
            tracing::info!(%path, "a produced file was not uploaded (missing or too big)");
            continue;
        };
        let mime: mime::Mime = artifact
            .mime
            .as_deref()
            .and_then(|m| m.parse().ok())
            .unwrap_or(mime::APPLICATION_OCTET_STREAM);
        let sent = room
            .send_attachment(artifact.file_name.clone(), &mime, bytes, Default::default())
            .await;
        if let Err(e) = sent {
            tracing::warn!(%path, "a produced file was not uploaded: {e}");
        }
    }
}

/// The bytes of a produced file, when it is there and small enough to send.
async fn artifact_bytes(bot: &Bot, host: Option<&str>, path: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    let Some(host) = host else {
        let small = std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() <= UPLOAD_MAX);
        return std::fs::read(path).ok().filter(|_| small);
    };
    let read = verb::ReadFile {
        path: path.to_string(),
        max_bytes: Some(REMOTE_UPLOAD_MAX),
    };
    match bot.send_on(Some(host), read).await {
        Ok(f) if !f.truncated => base64::engine::general_purpose::STANDARD
            .decode(f.data)
            .ok(),
        Ok(_) => None,
        Err(e) => {
            tracing::warn!(host, %path, "cannot read a produced file there: {e}");
            None
        }
    }
}

/// Closes a turn that ended while the bot was not watching, from the daemon's history.
async fn finish_from_history(bot: &Bot, room: &Room, room_id: &str, old: &Stream) {
    let key = {
        let state = bot.state.lock().await;
        state
            .session_rooms
            .get(room_id)
            .map(|s| s.session_key.clone())
    };
    let Some(key) = key else { return };
    let (host, local) = super::links::split(&key);
    let history = bot
        .send_on(
            host,
            verb::GetHistory {
                session_key: local.to_string(),
                limit: Some(50),
                before: None,
            },
        )
        .await
        .unwrap_or_default();
    let Some(done) = history
        .into_iter()
        .rev()
        .find(|t| t.task_id.as_deref() == Some(old.task_id.as_str()))
    else {
        return;
    };
    let Ok(event_id) = OwnedEventId::try_from(old.event_id.as_str()) else {
        return;
    };
    let r = Reply {
        task_id: old.task_id.clone(),
        event_id,
        shown: String::new(),
        last_edit: None,
        blocked_until: None,
    };
    finish(bot, room, room_id, &r, &done).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closing_message_says_how_the_turn_ended() {
        let mut s = UniversalSnapshot::default();
        assert!(closing(&s).starts_with("✅ Done"));
        s.incomplete = true;
        assert!(closing(&s).starts_with("⏹ Stopped"));
        s.error = Some("boom".into());
        assert_eq!(closing(&s), "❌ Failed: boom");
    }

    #[test]
    fn the_plan_shows_in_one_line_while_streaming_and_in_the_closing_message() {
        use weft_protocol::{Plan, PlanStep, StepStatus};
        let step = |text: &str, status| PlanStep {
            text: text.into(),
            status,
        };
        let mut s = UniversalSnapshot {
            text: "Working".into(),
            plan: Some(Plan {
                explanation: None,
                steps: vec![
                    step("Read the test", StepStatus::Completed),
                    step("Fix the race", StepStatus::InProgress),
                    step("Run the suite", StepStatus::Pending),
                ],
            }),
            ..Default::default()
        };
        assert_eq!(streaming_body(&s), "Working\n\n📋 Plan 1/3: Fix the race");
        if let Some(p) = s.plan.as_mut() {
            for st in &mut p.steps {
                st.status = StepStatus::Completed;
            }
        }
        assert_eq!(streaming_body(&s), "Working\n\n📋 Plan 3/3 done");
        assert_eq!(closing(&s), "✅ Done (plan 3/3 done).");
    }

    #[test]
    fn the_streaming_body_shows_the_latest_activity_below_the_text() {
        let s = UniversalSnapshot {
            text: "Hello".into(),
            activity: "List the workspace done\nRead a.txt".into(),
            ..Default::default()
        };
        assert_eq!(streaming_body(&s), "Hello\n\n⏳ Read a.txt");
        assert_eq!(cut("ééé", 3), "é…");
    }

    #[test]
    fn a_question_answered_elsewhere_says_where_and_how() {
        let notices = vec![
            "\"Run ls?\" answered Allow (from cli)".to_string(),
            "steer sent into the running turn: x".to_string(),
            "\"Write a.txt?\" answered Deny (from app)".to_string(),
        ];
        assert_eq!(
            answered_elsewhere(&notices, "Write a.txt?").as_deref(),
            Some("Answered Deny in the Weft window")
        );
        assert_eq!(
            answered_elsewhere(&notices, "Run ls?").as_deref(),
            Some("Answered Allow with the weft command")
        );
        assert_eq!(
            answered_elsewhere(&["\"Pick\" cancelled (from browser)".into()], "Pick").as_deref(),
            Some("Cancelled in a browser")
        );
        assert_eq!(answered_elsewhere(&notices, "Other?"), None);
    }
}
