//! What users say, handled in order: who may speak, which room is which, and each
//! command turned into a daemon verb.
//!
//! Every event is acted on at most once: its id goes into `state.json` (written)
//! before the verb is sent. A crash between the two loses that one command rather
//! than running a prompt or an answer twice — the user sees no reply and can say it
//! again, which is the safer failure for an agent that writes files.

use std::sync::Arc;

use base64::Engine;
use matrix_sdk::ruma::api::client::room::create_room::v3::{Request as CreateRoom, RoomPreset};
use matrix_sdk::ruma::events::room::encryption::RoomEncryptionEventContent;
use matrix_sdk::ruma::events::room::member::MembershipState;
use matrix_sdk::ruma::events::room::message::{MessageType, Relation};
use matrix_sdk::ruma::events::InitialStateEvent;
use matrix_sdk::ruma::{OwnedUserId, UserId};
use matrix_sdk::Room;
use weft_protocol::{
    verb, AnswerRequest, Interaction, InteractionResponse, Phase, PromptRequest, SteerOutcome,
};

use super::links::{qualify, split};
use super::{questions, Bot, Incoming};
use crate::config::SessionRoom;
use crate::matrix;

const CONTROL_HELP: &str = "This is your Weft control room. Commands:\n\
  new AGENT PATH PROMPT…  start a session (e.g. new claude ~/src/app fix the flaky test)\n\
  new HOST:AGENT PATH …   start one on a host of `weft hosts list` (e.g. new gpu:claude ~/src/app …)\n\
  sessions                list the sessions (this machine's and those of hosts with a room)\n\
  inbox                   list what waits for an answer";

const SESSION_HELP: &str =
    "In a session's room a message is a prompt (steered into a running turn where \
the agent can, else queued). Commands: !stop, !steer TEXT, !queue TEXT, !agent NAME, !model NAME, \
!status, !terminal.";

pub async fn handle(bot: &Arc<Bot>, incoming: Incoming) {
    match incoming {
        Incoming::Invite(room, ev) => {
            invited(bot, room, &ev.sender, &ev.state_key, &ev.content.membership).await
        }
        Incoming::Message(room, ev) => {
            if !admitted(
                bot,
                &ev.sender,
                ev.origin_server_ts.0.into(),
                ev.event_id.as_str(),
            )
            .await
            {
                return;
            }
            let reply_to = match &ev.content.relates_to {
                // A user's edit of their own message is not a new command.
                Some(Relation::Replacement(_)) => return,
                Some(Relation::Reply(r)) => Some(r.in_reply_to.event_id.to_string()),
                _ => None,
            };
            match &ev.content.msgtype {
                MessageType::Text(t) => {
                    let body = strip_reply_fallback(&t.body);
                    message(bot, &room, ev.sender.as_str(), &body, reply_to, Vec::new()).await
                }
                MessageType::Image(image) => {
                    let host = room_host(bot, room.room_id().as_str()).await;
                    let path = match save_image(bot, host.as_deref(), image).await {
                        Ok(p) => p,
                        Err(e) => {
                            say(&room, &format!("⚠ The image could not be passed on: {e}")).await;
                            return;
                        }
                    };
                    let caption = image
                        .caption()
                        .unwrap_or("See the attached image.")
                        .to_string();
                    message(bot, &room, ev.sender.as_str(), &caption, None, vec![path]).await
                }
                _ => {}
            }
        }
        Incoming::Reaction(room, ev) => {
            if !admitted(
                bot,
                &ev.sender,
                ev.origin_server_ts.0.into(),
                ev.event_id.as_str(),
            )
            .await
            {
                return;
            }
            let target = ev.content.relates_to.event_id.to_string();
            let key = ev.content.relates_to.key.clone();
            reacted(bot, &room, ev.sender.as_str(), &target, &key).await;
        }
    }
}

/// Whether an event may be acted on: not the bot's own, from an allowed user, said
/// after the login, and not handled before (it is marked handled here).
async fn admitted(bot: &Bot, sender: &UserId, ts: u64, event_id: &str) -> bool {
    if sender.as_str() == bot.me {
        return false;
    }
    let config = bot.config();
    if (ts as i64) < config.since {
        return false;
    }
    if !config.is_allowed(sender.as_str()) {
        tracing::warn!(%sender, "ignored an event from a user who is not on the allow-list");
        return false;
    }
    let mut state = bot.state.lock().await;
    if !state.first_time(event_id) {
        return false;
    }
    bot.save(&state);
    true
}

/// A reply's body starts with the quoted original (`> <@u:x> …` lines) in older apps.
fn strip_reply_fallback(body: &str) -> String {
    if !body.starts_with("> ") {
        return body.trim().to_string();
    }
    body.lines()
        .skip_while(|l| l.starts_with('>'))
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

async fn say(room: &Room, text: &str) {
    if let Err(e) = matrix::send(room, matrix::text(text, None)).await {
        tracing::warn!("cannot answer in the room: {e:#}");
    }
}

async fn invited(
    bot: &Arc<Bot>,
    room: Room,
    sender: &UserId,
    target: &UserId,
    membership: &MembershipState,
) {
    if target.as_str() != bot.me || *membership != MembershipState::Invite {
        return;
    }
    if !bot.config().is_allowed(sender.as_str()) {
        tracing::warn!(%sender, room = %room.room_id(), "ignored an invitation from a user who is not on the allow-list");
        return;
    }
    if let Err(e) = room.join().await {
        tracing::warn!(room = %room.room_id(), "cannot join: {e}");
        return;
    }
    let room_id = room.room_id().to_string();
    let known = {
        let state = bot.state.lock().await;
        state.session_rooms.contains_key(&room_id) || state.is_control(&room_id)
    };
    if known {
        return;
    }
    {
        let mut state = bot.state.lock().await;
        state
            .control_rooms
            .insert(sender.to_string(), room_id.clone());
        bot.save(&state);
    }
    tracing::info!(%sender, room = %room_id, "joined a control room");
    say(&room, CONTROL_HELP).await;
}

/// Makes a control room (a direct chat) for each allowed user who has none.
pub async fn ensure_control_rooms(bot: &Arc<Bot>) {
    let config = bot.config();
    for user in &config.allowed {
        let has = bot.state.lock().await.control_rooms.contains_key(user);
        if has {
            continue;
        }
        let Ok(user_id) = OwnedUserId::try_from(user.as_str()) else {
            continue;
        };
        match bot.matrix.create_dm(&user_id).await {
            Ok(room) => {
                let mut state = bot.state.lock().await;
                state
                    .control_rooms
                    .insert(user.clone(), room.room_id().to_string());
                bot.save(&state);
                drop(state);
                tracing::info!(%user, room = %room.room_id(), "made a control room");
                say(&room, CONTROL_HELP).await;
            }
            Err(e) => tracing::warn!(%user, "cannot make a control room: {e}"),
        }
    }
}

async fn message(
    bot: &Arc<Bot>,
    room: &Room,
    sender: &str,
    body: &str,
    reply_to: Option<String>,
    attachments: Vec<String>,
) {
    let room_id = room.room_id().to_string();
    let (control, session) = {
        let state = bot.state.lock().await;
        (
            state.is_control(&room_id),
            state.session_rooms.get(&room_id).cloned(),
        )
    };
    if attachments.is_empty() {
        if let Some((prompt_id, key, interaction)) =
            open_question(bot, &room_id, reply_to.as_deref()).await
        {
            let strict = reply_to.is_none();
            if let Some(r) = questions::from_text(&interaction, body, strict) {
                answer(bot, room, sender, &key, &prompt_id, &interaction, r).await;
                return;
            }
        }
    }
    if control && attachments.is_empty() && control_command(bot, room, sender, body).await {
        return;
    }
    match session {
        Some(s) => session_message(bot, room, &s, body, attachments).await,
        None if control => say(room, CONTROL_HELP).await,
        None => {}
    }
}

/// The question a message may answer: the one it replies to, else the newest one
/// still open in the room. With its session and its interaction as the daemon has it.
async fn open_question(
    bot: &Bot,
    room_id: &str,
    reply_to: Option<&str>,
) -> Option<(String, String, Interaction)> {
    let (prompt_id, key) = {
        let state = bot.state.lock().await;
        let open = state
            .questions
            .iter()
            .filter(|(_, p)| p.room_id == room_id && !p.closed && p.answered.is_none());
        let found = match reply_to {
            Some(ev) => open.clone().find(|(_, p)| p.event_id == ev),
            None => None,
        };
        let found = found.or_else(|| open.max_by_key(|(_, p)| p.asked_at));
        found.map(|(id, p)| (id.clone(), p.session_key.clone()))?
    };
    let at = bot.snapshot(&key).await.ok()?;
    at.snapshot
        .interactions
        .into_iter()
        .find(|i| i.prompt_id == prompt_id)
        .map(|i| (prompt_id, key, i))
}

/// Answers through the inbox of the daemon session `key` runs on.
async fn answer(
    bot: &Bot,
    room: &Room,
    sender: &str,
    key: &str,
    prompt_id: &str,
    interaction: &Interaction,
    r: InteractionResponse,
) {
    let what = questions::summary(interaction, &r);
    let request = AnswerRequest {
        prompt_id: prompt_id.to_string(),
        response: r,
    };
    // Noted before it is sent: the patch that withdraws the question can reach the
    // renderer before the answer's reply reaches us, and it must not say "elsewhere".
    set_answered(bot, prompt_id, Some(format!("by {sender}: {what}"))).await;
    if let Err(e) = bot.send_on(split(key).0, request).await {
        set_answered(bot, prompt_id, None).await;
        say(room, &format!("⚠ The answer was not taken: {e}")).await;
    }
}

async fn set_answered(bot: &Bot, prompt_id: &str, how: Option<String>) {
    let mut state = bot.state.lock().await;
    if let Some(p) = state.questions.get_mut(prompt_id) {
        p.answered = how;
    }
    bot.save(&state);
}

async fn reacted(bot: &Bot, room: &Room, sender: &str, target: &str, key: &str) {
    let found = {
        let state = bot.state.lock().await;
        state
            .questions
            .iter()
            .find(|(_, p)| p.event_id == target && !p.closed && p.answered.is_none())
            .map(|(id, p)| (id.clone(), p.session_key.clone()))
    };
    let Some((prompt_id, session_key)) = found else {
        return;
    };
    let Ok(at) = bot.snapshot(&session_key).await else {
        return;
    };
    let Some(interaction) = at
        .snapshot
        .interactions
        .into_iter()
        .find(|i| i.prompt_id == prompt_id)
    else {
        return;
    };
    if let Some(r) = questions::from_reaction(&interaction, key) {
        answer(bot, room, sender, &session_key, &prompt_id, &interaction, r).await;
    }
}

/// `new`, `sessions`, `inbox`; false when `body` is none of them.
async fn control_command(bot: &Arc<Bot>, room: &Room, sender: &str, body: &str) -> bool {
    let mut words = body.split_whitespace();
    match words.next().map(str::to_lowercase).as_deref() {
        Some("new") => {
            let agent = words.next();
            let path = words.next();
            let prompt = words.collect::<Vec<_>>().join(" ");
            match (agent, path) {
                (Some(agent), Some(path)) if !prompt.is_empty() => {
                    new_session(bot, room, sender, agent, path, &prompt).await
                }
                _ => {
                    say(
                        room,
                        "Usage: new [HOST:]AGENT PATH PROMPT… (e.g. new echo ~/src/app hello)",
                    )
                    .await
                }
            }
            true
        }
        Some("sessions") => {
            say(room, &sessions(bot).await).await;
            true
        }
        Some("inbox") => {
            say(room, &inbox(bot).await).await;
            true
        }
        Some("help") | Some("!help") => {
            say(room, CONTROL_HELP).await;
            true
        }
        _ => false,
    }
}

/// The hosts of the sessions that have rooms: where `sessions` and `inbox` look
/// besides this machine (a host is not contacted for a list alone).
async fn hosts_in_rooms(bot: &Bot) -> Vec<String> {
    let state = bot.state.lock().await;
    let mut hosts: Vec<String> = state
        .session_rooms
        .values()
        .filter_map(|s| split(&s.session_key).0.map(String::from))
        .collect();
    hosts.sort();
    hosts.dedup();
    hosts
}

/// The host of the session room `room_id`'s session, if it runs on one.
async fn room_host(bot: &Bot, room_id: &str) -> Option<String> {
    let state = bot.state.lock().await;
    let s = state.session_rooms.get(room_id)?;
    split(&s.session_key).0.map(String::from)
}

/// This machine (`None`), then each host with a session room.
async fn machines(bot: &Bot) -> Vec<Option<String>> {
    std::iter::once(None)
        .chain(hosts_in_rooms(bot).await.into_iter().map(Some))
        .collect()
}

/// The line for a machine that did not answer a listing.
fn failed(host: Option<&str>, e: &weft_protocol::WireError) -> String {
    format!("⚠ {}: {e}", host.unwrap_or("this machine"))
}

/// A listing's lines, or `empty` when there are none.
fn listing(lines: Vec<String>, empty: &str) -> String {
    if lines.is_empty() {
        empty.to_string()
    } else {
        lines.join("\n")
    }
}

/// Lines for `sessions`: this machine's, then each host's (their keys qualified).
async fn sessions(bot: &Bot) -> String {
    let mut lines = Vec::new();
    for host in machines(bot).await {
        let host = host.as_deref();
        let verb = verb::ListSessions {
            workdir: None,
            archived: None,
        };
        match bot.send_on(host, verb).await {
            Ok(l) => lines.extend(l.iter().take(20).map(|s| {
                let key = qualify(host, &s.session_key);
                format!("• {key} — {:?} — {}", s.phase, s.title)
            })),
            Err(e) => lines.push(failed(host, &e)),
        }
    }
    listing(lines, "No sessions yet.")
}

/// Lines for `inbox`, across this machine and the hosts with rooms.
async fn inbox(bot: &Bot) -> String {
    let mut lines = Vec::new();
    for host in machines(bot).await {
        let host = host.as_deref();
        match bot.send_on(host, verb::Inbox {}).await {
            Ok(l) => lines.extend(l.iter().map(|i| {
                let key = qualify(host, &i.session_key);
                format!("• {} — {key} ({})", i.title, i.prompt_id)
            })),
            Err(e) => lines.push(failed(host, &e)),
        }
    }
    listing(lines, "Nothing waits for an answer.")
}

/// `~/x` and `~` under `home` (the user's here, the host's `$HOME` there); the daemon
/// takes absolute folders.
fn expand(path: &str, home: &str) -> String {
    match path.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("{home}{rest}"),
        _ => path.to_string(),
    }
}

/// Where `new HOST:AGENT PATH` runs: the host (checked against the user's list) and
/// the folder there. `~` is the host's home as first contact found it.
fn place(bot: &Bot, host: Option<&str>, path: &str) -> Result<String, String> {
    let Some(name) = host else {
        return Ok(expand(path, &std::env::var("HOME").unwrap_or_default()));
    };
    let hosts = weft_hosts::Hosts::load(&bot.home).map_err(|e| e.to_string())?;
    let found = hosts.get(name).map_err(|e| e.to_string())?;
    match found.home.as_deref() {
        Some(home) => Ok(expand(path, home)),
        None if path.starts_with('/') => Ok(path.to_string()),
        None => Err(format!(
            "the home folder of host {name} is not known yet: give an absolute path, or run `weft hosts status {name}` once"
        )),
    }
}

async fn new_session(
    bot: &Arc<Bot>,
    room: &Room,
    sender: &str,
    agent: &str,
    path: &str,
    prompt: &str,
) {
    let (host, agent) = match agent.split_once(':') {
        Some((h, a)) if h == weft_hosts::list::LOCAL => (None, a),
        Some((h, a)) => (Some(h), a),
        None => (None, agent),
    };
    let workdir = match place(bot, host, path) {
        Ok(w) => w,
        Err(e) => {
            say(room, &format!("⚠ Not started: {e}")).await;
            return;
        }
    };
    let request = PromptRequest {
        prompt: prompt.to_string(),
        agent: Some(agent.to_string()),
        workdir: Some(workdir),
        ..Default::default()
    };
    let accepted = match bot.send_on(host, request).await {
        Ok(a) => a,
        Err(e) => {
            say(room, &format!("⚠ Not started: {e}")).await;
            return;
        }
    };
    let key = qualify(host, &accepted.session_key);
    // The room's name says where the session runs.
    let label = match host {
        Some(h) => format!("{h}:{agent}"),
        None => agent.to_string(),
    };
    let target = if bot.config().room_per_session {
        match session_room(bot, room, sender, &label, prompt).await {
            Ok(r) => r,
            Err(e) => {
                say(
                    room,
                    &format!(
                        "⚠ Started {key}, but its room could not be made ({e:#}); it stays here."
                    ),
                )
                .await;
                room.clone()
            }
        }
    } else {
        room.clone()
    };
    let target_id = target.room_id().to_string();
    {
        let mut state = bot.state.lock().await;
        state.session_rooms.insert(
            target_id.clone(),
            SessionRoom {
                session_key: key.clone(),
                user: sender.to_string(),
                ..Default::default()
            },
        );
        bot.save(&state);
    }
    bot.follow(&key, &target_id).await;
    if target_id != room.room_id().as_str() {
        say(
            room,
            &format!("Started {key} in its own room (you are invited)."),
        )
        .await;
    }
}

/// A room for one session, the user invited; encrypted when the control room is.
async fn session_room(
    bot: &Bot,
    control: &Room,
    user: &str,
    agent: &str,
    prompt: &str,
) -> anyhow::Result<Room> {
    let user = OwnedUserId::try_from(user)?;
    let title: String = prompt.chars().take(40).collect();
    let mut request = CreateRoom::new();
    request.name = Some(format!("Weft · {agent}: {title}"));
    request.invite = vec![user];
    request.is_direct = true;
    request.preset = Some(RoomPreset::TrustedPrivateChat);
    if control
        .latest_encryption_state()
        .await
        .map(|s| s.is_encrypted())
        .unwrap_or(false)
    {
        request.initial_state = vec![InitialStateEvent::with_empty_state_key(
            RoomEncryptionEventContent::with_recommended_defaults(),
        )
        .to_raw_any()];
    }
    Ok(bot.matrix.create_room(request).await?)
}

async fn session_message(
    bot: &Bot,
    room: &Room,
    s: &SessionRoom,
    body: &str,
    attachments: Vec<String>,
) {
    let key = s.session_key.clone();
    if attachments.is_empty() {
        if let Some(command) = body.strip_prefix('!') {
            let (name, arg) = command
                .split_once(char::is_whitespace)
                .unwrap_or((command, ""));
            bang(bot, room, s, &name.to_lowercase(), arg.trim()).await;
            return;
        }
    }
    let phase = bot
        .snapshot(&key)
        .await
        .map(|at| at.snapshot.phase)
        .unwrap_or(Phase::Idle);
    if matches!(phase, Phase::Streaming | Phase::Queued) {
        steer(bot, room, &key, body, attachments).await;
    } else {
        prompt(bot, room, s, body, attachments).await;
    }
}

async fn prompt(bot: &Bot, room: &Room, s: &SessionRoom, body: &str, attachments: Vec<String>) {
    let (host, key) = split(&s.session_key);
    let request = PromptRequest {
        prompt: body.to_string(),
        session_key: Some(key.to_string()),
        model: s.model.clone(),
        attachments,
        ..Default::default()
    };
    if let Err(e) = bot.send_on(host, request).await {
        say(room, &format!("⚠ Not sent: {e}")).await;
    }
}

async fn steer(bot: &Bot, room: &Room, key: &str, text: &str, attachments: Vec<String>) {
    let (host, key) = split(key);
    let request = verb::Steer {
        session_key: key.to_string(),
        text: text.to_string(),
        attachments: (!attachments.is_empty()).then_some(attachments),
    };
    let said = match bot.send_on(host, request).await {
        Ok(SteerOutcome::Injected) => "↪ Steered into the running turn.".to_string(),
        Ok(SteerOutcome::Queued) => {
            "⏳ Queued: it runs when the current turn ends (this agent takes no message mid-turn)."
                .to_string()
        }
        Err(e) => format!("⚠ Not sent: {e}"),
    };
    say(room, &said).await;
}

/// `!stop`, `!steer`, `!queue`, `!agent`, `!model`, `!status`, `!terminal`.
async fn bang(bot: &Bot, room: &Room, s: &SessionRoom, name: &str, arg: &str) {
    let key = s.session_key.clone();
    let (host, local) = split(&key);
    match name {
        "stop" => {
            let stop = verb::Stop {
                session_key: local.to_string(),
            };
            let said = match bot.send_on(host, stop).await {
                Ok(()) => "⏹ Stopping the turn.".to_string(),
                Err(e) => format!("⚠ {e}"),
            };
            say(room, &said).await;
        }
        "steer" if !arg.is_empty() => steer(bot, room, &key, arg, Vec::new()).await,
        "queue" if !arg.is_empty() => {
            prompt(bot, room, s, arg, Vec::new()).await;
            say(room, "⏳ Queued behind the running turn.").await;
        }
        "agent" if !arg.is_empty() => {
            let request = verb::SwitchAgent {
                session_key: local.to_string(),
                agent: arg.to_string(),
            };
            let said = match bot.send_on(host, request).await {
                Ok(()) => format!("The next prompt runs on {arg}."),
                Err(e) => format!("⚠ {e}"),
            };
            say(room, &said).await;
        }
        "model" if !arg.is_empty() => {
            let mut state = bot.state.lock().await;
            if let Some(r) = state.session_rooms.get_mut(room.room_id().as_str()) {
                r.model = Some(arg.to_string());
            }
            bot.save(&state);
            drop(state);
            say(room, &format!("The next prompts ask for model {arg}.")).await;
        }
        "status" => {
            let text = match bot.snapshot(&key).await {
                Ok(at) => {
                    let snap = at.snapshot;
                    format!(
                        "{key}: {:?}; agent {}; model {}; {} queued; {} waiting for an answer",
                        snap.phase,
                        snap.agent,
                        snap.model.as_deref().unwrap_or("default"),
                        snap.queued.len(),
                        snap.interactions.len()
                    )
                }
                Err(e) => format!("⚠ {e}"),
            };
            say(room, &text).await;
        }
        "terminal" => {
            // Never a link: a browser link carries a token, and the homeserver (and
            // anyone who reads its database) would see it.
            let attach = match host {
                Some(h) => format!("weft --host {h} attach {local}"),
                None => format!("weft attach {local}"),
            };
            let text = format!(
                "The session's terminal is on the host: `{attach}`, the Weft window, or \
                 the browser UI that `weft serve` prints there. No link is sent here, because it \
                 would carry a token the homeserver could read."
            );
            say(room, &text).await;
        }
        _ => say(room, SESSION_HELP).await,
    }
}

/// Downloads an image sent to a room (decrypting it in an encrypted room) and hands
/// it to the daemon of the room's session (`host`'s when it runs there), which keeps it
/// where the agent can read it; its path.
async fn save_image(
    bot: &Bot,
    host: Option<&str>,
    image: &matrix_sdk::ruma::events::room::message::ImageMessageEventContent,
) -> anyhow::Result<String> {
    let bytes = bot
        .matrix
        .media()
        .get_file(image, false)
        .await?
        .ok_or_else(|| anyhow::anyhow!("the image has no file"))?;
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let name = image.filename().to_string();
    Ok(bot
        .send_on(host, verb::SaveAttachment { name, data })
        .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_fallback_is_not_part_of_the_answer() {
        assert_eq!(strip_reply_fallback("> <@a:x> question\n> more\n\n2"), "2");
        assert_eq!(strip_reply_fallback(" hello "), "hello");
        assert_eq!(expand("/abs", "/home/u"), "/abs");
        assert_eq!(expand("~/x", "/home/u"), "/home/u/x");
        assert_eq!(expand("~", "/home/u"), "/home/u");
        assert_eq!(expand("~bob/x", "/home/u"), "~bob/x");
    }
}
