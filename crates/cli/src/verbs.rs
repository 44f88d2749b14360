//! `weft wait`, `stop`, `steer`, `inbox`, `answer`: the verbs on sessions that run in
//! the daemon, from any terminal.

use std::process::ExitCode;

use weft_protocol::verb;
use weft_protocol::{AnswerRequest, InteractAction, InteractionResponse, Phase, SteerOutcome};

use crate::client;
use crate::follow::Lost;
use crate::list::print_json;

/// Waits until the session has no running or queued turn; exit 0 when its last turn
/// ended ok.
pub(crate) async fn wait(key: String, json: bool) -> ExitCode {
    let mut daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let mut followed = match daemon.follow(&key).await {
        Ok(f) => f,
        Err(code) => return code,
    };
    loop {
        let snap = &followed.snap;
        if snap.phase != Phase::Streaming && snap.queued.is_empty() {
            // A queued prompt may be about to start: the snapshot says so once it has.
            if let Err(Lost::Failed(code)) = followed.reread(&daemon.client).await {
                return code;
            }
            let snap = &followed.snap;
            if snap.phase != Phase::Streaming && snap.queued.is_empty() {
                break;
            }
        }
        match followed.next(&daemon.client, &mut daemon.events).await {
            Ok(_) => {}
            Err(Lost::Failed(code)) => return code,
            Err(Lost::Closing(reason)) => {
                eprintln!("weft: {reason}");
                return ExitCode::FAILURE;
            }
            Err(Lost::Disconnected(Some(why))) => {
                eprintln!("weft: lost the Weft daemon: {why}");
                return ExitCode::FAILURE;
            }
            Err(Lost::Disconnected(None)) => return ExitCode::FAILURE,
        }
    }
    let snap = followed.snap;
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
    match daemon.send(verb::Stop { session_key: key }).await {
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
        .send(verb::Steer {
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

pub(crate) async fn dequeue(key: String, task_id: String) -> ExitCode {
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    match daemon
        .send(verb::Dequeue {
            session_key: key,
            task_id,
        })
        .await
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}

pub(crate) async fn requeue(key: String, task_id: String, to: u32) -> ExitCode {
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    match daemon
        .send(verb::Requeue {
            session_key: key,
            task_id,
            to,
        })
        .await
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}

pub(crate) async fn inbox(json: bool) -> ExitCode {
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let items = match daemon.send(verb::Inbox {}).await {
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
        .send(AnswerRequest {
            prompt_id: prompt_id.clone(),
            response,
        })
        .await
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}
