//! `weft wait`, `stop`, `steer`, `inbox`, `answer`: the verbs on sessions that run in
//! the daemon, from any terminal.

use std::process::ExitCode;

use weft_client::Event;
use weft_protocol::{
    AnswerRequest, ClientRequest, InboxItem, InteractAction, InteractionResponse, Phase,
    ServerMessage, SnapshotAt, SteerOutcome,
};

use crate::client;
use crate::list::print_json;

/// Waits until the session has no running or queued turn; exit 0 when its last turn
/// ended ok.
pub(crate) async fn wait(key: String, json: bool) -> ExitCode {
    let mut daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let at: SnapshotAt = match daemon
        .call(ClientRequest::Subscribe {
            session_key: key.clone(),
        })
        .await
    {
        Ok(at) => at,
        Err(code) => return code,
    };
    let (mut snap, mut seq) = (at.snapshot, at.seq);
    loop {
        if snap.phase != Phase::Streaming && snap.queued.is_empty() {
            // A queued prompt may be about to start: the snapshot says so once it has.
            let now: SnapshotAt = match daemon
                .call(ClientRequest::GetSnapshot {
                    session_key: key.clone(),
                })
                .await
            {
                Ok(at) => at,
                Err(code) => return code,
            };
            if now.snapshot.phase != Phase::Streaming && now.snapshot.queued.is_empty() {
                snap = now.snapshot;
                break;
            }
            (snap, seq) = (now.snapshot, now.seq);
        }
        match daemon.events.recv().await {
            Some(Event::Message(ServerMessage::Patch(ev))) if ev.session_key == key => {
                if ev.seq == seq + 1 {
                    weft_protocol::apply_in_place(&mut snap, &ev.patch);
                    seq = ev.seq;
                } else if ev.seq > seq {
                    match daemon
                        .call::<SnapshotAt>(ClientRequest::GetSnapshot {
                            session_key: key.clone(),
                        })
                        .await
                    {
                        Ok(at) => (snap, seq) = (at.snapshot, at.seq),
                        Err(code) => return code,
                    }
                }
            }
            Some(Event::Message(ServerMessage::Resync { .. })) => {
                match daemon
                    .call::<SnapshotAt>(ClientRequest::GetSnapshot {
                        session_key: key.clone(),
                    })
                    .await
                {
                    Ok(at) => (snap, seq) = (at.snapshot, at.seq),
                    Err(code) => return code,
                }
            }
            Some(Event::Message(ServerMessage::Closing { reason })) => {
                eprintln!("weft: {reason}");
                return ExitCode::FAILURE;
            }
            Some(Event::Disconnected(why)) => {
                eprintln!("weft: lost the Weft daemon: {why}");
                return ExitCode::FAILURE;
            }
            None => return ExitCode::FAILURE,
            Some(_) => {}
        }
    }
    if json {
        let code = print_json(&snap);
        if code != ExitCode::SUCCESS {
            return code;
        }
    } else if let Some(error) = &snap.error {
        eprintln!("weft: the last turn failed: {error}");
    }
    if snap.error.is_some() || snap.incomplete {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

pub(crate) async fn stop(key: String) -> ExitCode {
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    match daemon
        .call::<()>(ClientRequest::Stop { session_key: key })
        .await
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}

pub(crate) async fn steer(key: String, text: Vec<String>) -> ExitCode {
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    match daemon
        .call::<SteerOutcome>(ClientRequest::Steer {
            session_key: key,
            text: text.join(" "),
        })
        .await
    {
        Ok(SteerOutcome::Injected) => {
            eprintln!("weft: sent into the running turn");
            ExitCode::SUCCESS
        }
        Ok(SteerOutcome::Queued) => {
            eprintln!("weft: queued as the next turn");
            ExitCode::SUCCESS
        }
        Err(code) => code,
    }
}

pub(crate) async fn inbox(json: bool) -> ExitCode {
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let items: Vec<InboxItem> = match daemon.call(ClientRequest::Inbox {}).await {
        Ok(items) => items,
        Err(code) => return code,
    };
    if json {
        return print_json(&items);
    }
    if items.is_empty() {
        eprintln!("nothing waits for an answer");
    }
    for item in &items {
        out!(
            "{}  {:?}  {}  ({})",
            item.prompt_id,
            item.kind,
            item.title,
            item.session_key
        );
        for q in &item.questions {
            let choices: Vec<String> = q
                .choices
                .iter()
                .map(|c| format!("{} [{}]", c.label, c.value))
                .collect();
            if !choices.is_empty() {
                out!("    {}: {}", q.text, choices.join(", "));
            }
        }
    }
    ExitCode::SUCCESS
}

pub(crate) async fn answer(
    prompt_id: String,
    select: Option<String>,
    text: Option<String>,
    cancel: bool,
) -> ExitCode {
    let response = match (select, text, cancel) {
        (Some(value), None, false) => InteractionResponse::select(value),
        (None, Some(value), false) => InteractionResponse {
            action: InteractAction::Text,
            value: Some(value),
            answers: Default::default(),
        },
        (None, None, true) => InteractionResponse::cancel(),
        _ => {
            eprintln!("weft: give exactly one of --select VALUE, --text TEXT, --cancel");
            return ExitCode::from(crate::EXIT_USAGE);
        }
    };
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    match daemon
        .call::<()>(ClientRequest::Answer(AnswerRequest {
            prompt_id: prompt_id.clone(),
            response,
        }))
        .await
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}
