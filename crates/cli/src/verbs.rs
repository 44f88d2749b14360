//! `weft wait`, `stop`, `steer`, `inbox`, `answer`: the verbs on sessions that run in
//! the daemon, from any terminal.

use std::path::PathBuf;
use std::process::ExitCode;

use weft_protocol::verb;
use weft_protocol::{AnswerRequest, Phase, SteerOutcome};

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

pub(crate) async fn steer(key: String, text: Vec<String>, attach: Vec<PathBuf>) -> ExitCode {
    let attachments = match crate::run::absolute_attachments("steer", &attach) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    match daemon
        .send(verb::Steer {
            session_key: key,
            text: text.join(" "),
            attachments: (!attachments.is_empty()).then_some(attachments),
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
            let mut takes = Vec::new();
            if q.multiple {
                takes.push("several --select");
            }
            if q.free_text && !q.choices.is_empty() {
                takes.push("--text");
            }
            let takes = if takes.is_empty() {
                String::new()
            } else {
                format!(" (takes {})", takes.join(" and "))
            };
            let id = if item.questions.len() > 1 {
                format!("{}= ", q.id)
            } else {
                String::new()
            };
            if !choices.is_empty() {
                out!("    {id}{}: {}{takes}", q.text, choices.join(", "));
            } else if !id.is_empty() {
                out!("    {id}{}: --text", q.text);
            }
        }
    }
    ExitCode::SUCCESS
}

pub(crate) async fn answer(
    prompt_id: String,
    select: Vec<String>,
    text: Vec<String>,
    cancel: bool,
) -> ExitCode {
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    // The prompt's questions say which `QID=` prefixes name a question.
    let items = daemon.send(verb::Inbox {}).await.unwrap_or_default();
    let questions = items
        .iter()
        .find(|i| i.prompt_id == prompt_id)
        .map(|i| i.questions.as_slice());
    let response = match crate::answer::response(questions, &select, &text, cancel) {
        Ok(r) => r,
        Err(why) => {
            eprintln!("weft: {why}");
            return ExitCode::from(crate::EXIT_USAGE);
        }
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
