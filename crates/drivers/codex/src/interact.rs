//! The server's requests to the user, as interactions, and the answers back.
//!
//! - `item/commandExecution/requestApproval` and `item/fileChange/requestApproval`
//!   become permissions offering the decisions the server lists
//!   (`availableDecisions`): `accept` → allow, `acceptForSession` → allow for the
//!   session, `acceptWithExecpolicyAmendment` → always allow commands like this one,
//!   `decline` → deny (the turn goes on), `cancel` → deny and stop the turn. codex
//!   0.171.0 takes `decline` even when it does not list it (observed), so deny is
//!   always offered. A cancelled interaction (the turn stopped) answers `cancel`.
//! - `item/tool/requestUserInput` becomes one question per question (select when
//!   there are options, text otherwise, free text besides the options when it
//!   `isOther`); the answer goes back as `{answers: {id: {answers: [..]}}}`, the pick
//!   then the text, and a cancelled one as no answers (codex
//!   then lets the model go on with its best judgement).
//!
//! - `mcpServer/elicitation/request` marked `_meta.codex_approval_kind: "mcp_tool_call"`
//!   is codex asking before an MCP tool runs (its default approval policy asks for
//!   every MCP call): a permission for `mcp__server__tool` with the call's arguments,
//!   answered `{action: accept | decline | cancel}`; "allow for this session" is
//!   offered when codex lists `session` in `_meta.persist` and goes back as
//!   `_meta: {persist: "session"}`. Answered with an error, codex tells the model
//!   "user rejected MCP tool call" without anyone having been asked (observed).
//!   Any other elicitation is an MCP server's own form ([`crate::elicit`]).
//!
//! Any other request is answered with a JSON-RPC error at once ([`unsupported`]):
//! codex never waits on a request Weft cannot answer.

use serde_json::{json, Map, Value};
use weft_protocol::{
    permission, Choice, InteractAction, Interaction, InteractionKind, InteractionResponse,
    Question, QuestionType, ToolCall,
};

use crate::wire::{CommandApproval, FileChangeApproval, McpElicitation, UserInputRequest};

/// Value of the choice that applies codex's proposed exec-policy amendment.
pub const ALWAYS_LIKE_THIS: &str = "acceptWithExecpolicyAmendment";
/// Value of the choice that denies and stops the turn.
pub const DENY_AND_STOP: &str = "cancel";

/// A pending server request: what to ask, and how to turn the answer into the result.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The interaction to show.
    pub interaction: Interaction,
    kind: PendingKind,
}

#[derive(Debug, Clone)]
enum PendingKind {
    Approval {
        /// (choice value, decision sent) pairs.
        decisions: Vec<(String, Value)>,
    },
    Questions,
    /// An answer to an elicitation: (choice value, whole result) pairs.
    Elicitation {
        results: Vec<(String, Value)>,
    },
    /// An MCP server's form: each field and how its answer is typed.
    Form {
        fields: Vec<(String, crate::elicit::Field)>,
    },
}

impl Pending {
    /// An MCP server's form.
    pub(crate) fn form(
        interaction: Interaction,
        fields: Vec<(String, crate::elicit::Field)>,
    ) -> Self {
        Self {
            interaction,
            kind: PendingKind::Form { fields },
        }
    }

    /// The JSON-RPC result for `response`.
    pub fn result(&self, response: &InteractionResponse) -> Value {
        match &self.kind {
            PendingKind::Approval { decisions } => {
                let find = |v: &str| {
                    decisions
                        .iter()
                        .find(|(k, _)| k == v)
                        .map(|(_, d)| d.clone())
                };
                let decision = match response.action {
                    InteractAction::Select | InteractAction::Text => response
                        .picked()
                        .and_then(find)
                        .unwrap_or_else(|| json!("decline")),
                    InteractAction::Skip => json!("decline"),
                    InteractAction::Cancel => json!("cancel"),
                };
                json!({ "decision": decision })
            }
            PendingKind::Form { fields } => crate::elicit::result(fields, response),
            PendingKind::Elicitation { results } => {
                let declined = json!({"action": "decline", "content": null, "_meta": null});
                match response.action {
                    InteractAction::Select | InteractAction::Text => response
                        .picked()
                        .and_then(|v| results.iter().find(|(k, _)| k == v))
                        .map_or(declined, |(_, r)| r.clone()),
                    InteractAction::Skip => declined,
                    InteractAction::Cancel => {
                        json!({"action": "cancel", "content": null, "_meta": null})
                    }
                }
            }
            PendingKind::Questions => {
                let mut answers = Map::new();
                if matches!(
                    response.action,
                    InteractAction::Select | InteractAction::Text
                ) {
                    for q in &self.interaction.questions {
                        let given = response.given(&q.id);
                        if !given.is_empty() {
                            answers.insert(q.id.clone(), json!({ "answers": given.all() }));
                        }
                    }
                }
                json!({ "answers": answers })
            }
        }
    }
}

fn choice(label: &str, value: &str) -> Choice {
    Choice {
        label: label.into(),
        value: value.into(),
    }
}

/// The decisions offered, as (choice, decision) pairs; deny is always there.
fn decisions(available: Option<&[Value]>) -> Vec<(Choice, Value)> {
    let default = [
        json!("accept"),
        json!("acceptForSession"),
        json!("decline"),
        json!("cancel"),
    ];
    let list = available.filter(|a| !a.is_empty()).unwrap_or(&default);
    let mut out = Vec::new();
    for d in list {
        let entry = match d.as_str() {
            Some("accept") => (choice("Allow", permission::ALLOW), d.clone()),
            Some("acceptForSession") => (
                choice("Allow for this session", permission::ALLOW_SESSION),
                d.clone(),
            ),
            Some("decline") => (choice("Deny", permission::DENY), d.clone()),
            Some("cancel") => (choice("Deny and stop the turn", DENY_AND_STOP), d.clone()),
            Some(_) | None => match d.as_object().and_then(|o| o.keys().next()) {
                Some(k) if k == ALWAYS_LIKE_THIS => {
                    let prefix = d[k]["execpolicy_amendment"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(Value::as_str)
                                .collect::<Vec<_>>()
                                .join(" ")
                        })
                        .unwrap_or_default();
                    let label = format!("Always allow commands starting with `{prefix}`");
                    (choice(&label, ALWAYS_LIKE_THIS), d.clone())
                }
                Some(k) => (choice(k, k), d.clone()),
                None => continue,
            },
        };
        out.push(entry);
    }
    if !out.iter().any(|(c, _)| c.value == permission::DENY) {
        let at = out
            .iter()
            .position(|(c, _)| c.value == DENY_AND_STOP)
            .unwrap_or(out.len());
        out.insert(at, (choice("Deny", permission::DENY), json!("decline")));
    }
    out
}

/// A permission for `name` with `input`, its one question offering `choices`: what a
/// command, a file change and an MCP tool call each ask as.
fn permission(
    prompt_id: String,
    title: String,
    detail: Option<String>,
    name: String,
    input: Value,
    choices: Vec<Choice>,
) -> Interaction {
    Interaction {
        verdict: None,
        prompt_id,
        kind: InteractionKind::Permission,
        title,
        detail,
        questions: vec![Question {
            id: "permission".into(),
            text: format!("Allow {name}?"),
            kind: QuestionType::Select,
            choices,
            multiple: false,
            free_text: false,
        }],
        tool_name: Some(name),
        tool_input: Some(input),
    }
}

fn approval(
    prompt_id: String,
    title: String,
    detail: Option<String>,
    tool: Option<&ToolCall>,
    fallback_input: Value,
    available: Option<&[Value]>,
) -> Pending {
    let offered = decisions(available);
    let (name, input) = match tool {
        Some(t) => (t.name.clone(), t.input.clone()),
        None => ("command_execution".to_string(), fallback_input),
    };
    let choices = offered.iter().map(|(c, _)| c.clone()).collect();
    Pending {
        interaction: permission(prompt_id, title, detail, name, input, choices),
        kind: PendingKind::Approval {
            decisions: offered.into_iter().map(|(c, d)| (c.value, d)).collect(),
        },
    }
}

/// A command approval; `tool` is the command's call when it was already reported.
pub fn command_approval(
    prompt_id: String,
    req: &CommandApproval,
    tool: Option<&ToolCall>,
) -> Pending {
    let command = tool
        .and_then(|t| t.input["command"].as_str().map(String::from))
        .or_else(|| {
            req.command.as_deref().map(|c| {
                crate::items::readable_command(c, req.command_actions.as_deref().unwrap_or(&[]))
            })
        })
        .unwrap_or_else(|| "a command".into());
    let mut detail: Vec<String> = Vec::new();
    if let Some(r) = req.reason.as_ref().filter(|r| !r.is_empty()) {
        detail.push(r.clone());
    }
    if let Some(cwd) = &req.cwd {
        detail.push(format!("in {cwd}"));
    }
    approval(
        prompt_id,
        format!("Run `{command}`?"),
        (!detail.is_empty()).then(|| detail.join("\n")),
        tool,
        json!({"command": command, "cwd": req.cwd}),
        req.available_decisions.as_deref(),
    )
}

/// A file-change approval; `tool` is the change's call (with its diffs) when reported.
pub fn file_change_approval(
    prompt_id: String,
    req: &FileChangeApproval,
    tool: Option<&ToolCall>,
) -> Pending {
    let what = tool.map_or_else(|| "apply a patch".to_string(), |t| t.summary.clone());
    let mut detail: Vec<String> = Vec::new();
    if let Some(r) = req.reason.as_ref().filter(|r| !r.is_empty()) {
        detail.push(r.clone());
    }
    if let Some(root) = &req.grant_root {
        detail.push(format!(
            "asks to write anywhere under {root} for the rest of the session"
        ));
    }
    let mut p = approval(
        prompt_id,
        format!("Allow codex to {what}?"),
        (!detail.is_empty()).then(|| detail.join("\n")),
        tool,
        json!({}),
        req.available_decisions.as_deref(),
    );
    if tool.is_none() {
        p.interaction.tool_name = Some("apply_patch".into());
    }
    p
}

/// The tool named in codex's approval message (`… to run tool "record"?`).
pub(crate) fn quoted_tool(message: &str) -> Option<&str> {
    let rest = message.split_once("tool \"")?.1;
    rest.split_once('"')
        .map(|(t, _)| t)
        .filter(|t| !t.is_empty())
}

/// Codex asking before an MCP tool call; `tool` is the call when already reported.
pub fn mcp_tool_approval(
    prompt_id: String,
    req: &McpElicitation,
    tool: Option<&ToolCall>,
) -> Pending {
    let meta = req.meta.clone().unwrap_or(Value::Null);
    let (name, input) = match tool {
        Some(t) => (t.name.clone(), t.input.clone()),
        None => (
            format!(
                "mcp__{}__{}",
                req.server_name,
                quoted_tool(&req.message).unwrap_or("tool")
            ),
            meta.get("tool_params")
                .cloned()
                .unwrap_or_else(|| json!({})),
        ),
    };
    let persist: Vec<&str> = match &meta["persist"] {
        Value::String(s) => vec![s.as_str()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let accept = |persist: Value| json!({"action": "accept", "content": null, "_meta": persist});
    let mut offered = vec![(choice("Allow", permission::ALLOW), accept(Value::Null))];
    if persist.contains(&"session") {
        offered.push((
            choice("Allow for this session", permission::ALLOW_SESSION),
            accept(json!({"persist": "session"})),
        ));
    }
    offered.push((
        choice("Deny", permission::DENY),
        json!({"action": "decline", "content": null, "_meta": null}),
    ));
    let title = match req.message.trim() {
        "" => format!("Allow {name}?"),
        m => m.to_string(),
    };
    let detail = meta["tool_description"]
        .as_str()
        .filter(|d| !d.is_empty())
        .map(String::from);
    let choices = offered.iter().map(|(c, _)| c.clone()).collect();
    Pending {
        interaction: permission(prompt_id, title, detail, name, input, choices),
        kind: PendingKind::Elicitation {
            results: offered.into_iter().map(|(c, r)| (c.value, r)).collect(),
        },
    }
}

/// The questions of a `requestUserInput`.
pub fn user_input(prompt_id: String, req: &UserInputRequest) -> Pending {
    let questions: Vec<Question> = req
        .questions
        .iter()
        .map(|q| {
            let options = q.options.clone().unwrap_or_default();
            let text = match (q.header.trim(), q.question.trim()) {
                ("", question) => question.to_string(),
                (header, question) if question.starts_with(header) => question.to_string(),
                (header, question) => format!("{header}: {question}"),
            };
            Question {
                id: q.id.clone(),
                text,
                kind: if options.is_empty() {
                    QuestionType::Text
                } else {
                    QuestionType::Select
                },
                choices: options
                    .iter()
                    .map(|o| Choice {
                        label: match o.description.as_deref().filter(|d| !d.is_empty()) {
                            Some(d) => format!("{} ({d})", o.label),
                            None => o.label.clone(),
                        },
                        value: o.label.clone(),
                    })
                    .collect(),
                multiple: false,
                // "Other": a free answer besides the options.
                free_text: q.is_other || options.is_empty(),
            }
        })
        .collect();
    let title = match questions.as_slice() {
        [one] => one.text.clone(),
        many => format!("codex asks {} questions", many.len()),
    };
    Pending {
        interaction: Interaction {
            verdict: None,
            prompt_id,
            kind: InteractionKind::UserInput,
            title,
            detail: None,
            tool_name: Some("request_user_input".into()),
            tool_input: Some(json!({"questions": req.questions.iter().map(|q| json!({
                "id": q.id, "header": q.header, "question": q.question, "isOther": q.is_other,
                "isSecret": q.is_secret,
                "options": q.options.as_ref().map(|o| o.iter().map(|o| json!({
                    "label": o.label, "description": o.description})).collect::<Vec<_>>()),
            })).collect::<Vec<_>>()})),
            questions,
        },
        kind: PendingKind::Questions,
    }
}

/// The error a request Weft cannot answer gets.
pub fn unsupported(method: &str) -> String {
    format!("Weft does not handle `{method}` requests")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{QuestionOption, UserQuestion};

    #[test]
    fn offered_decisions_become_choices_and_deny_is_always_there() {
        let req = CommandApproval {
            item_id: "call_8".into(),
            command: Some("/bin/bash -lc 'touch x && echo touched'".into()),
            cwd: Some("/w".into()),
            available_decisions: Some(vec![
                json!("accept"),
                json!({"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["touch", "x"]}}),
                json!("cancel"),
            ]),
            ..Default::default()
        };
        let p = command_approval("p1".into(), &req, None);
        assert_eq!(p.interaction.title, "Run `touch x && echo touched`?");
        let values: Vec<&str> = p.interaction.questions[0]
            .choices
            .iter()
            .map(|c| c.value.as_str())
            .collect();
        assert_eq!(values, ["allow", ALWAYS_LIKE_THIS, "deny", "cancel"]);
        assert_eq!(
            p.result(&InteractionResponse::select("allow")),
            json!({"decision": "accept"})
        );
        assert_eq!(
            p.result(&InteractionResponse::select("deny")),
            json!({"decision": "decline"})
        );
        assert_eq!(
            p.result(&InteractionResponse::select(ALWAYS_LIKE_THIS))["decision"][ALWAYS_LIKE_THIS]
                ["execpolicy_amendment"],
            json!(["touch", "x"])
        );
        assert_eq!(
            p.result(&InteractionResponse::cancel()),
            json!({"decision": "cancel"})
        );
    }

    #[test]
    fn questions_answer_by_id_and_cancel_answers_nothing() {
        let req = UserInputRequest {
            item_id: "call_1".into(),
            questions: vec![UserQuestion {
                id: "color".into(),
                header: "Color".into(),
                question: "Which color?".into(),
                is_other: true,
                options: Some(vec![
                    QuestionOption {
                        label: "Red".into(),
                        description: Some("warm".into()),
                    },
                    QuestionOption {
                        label: "Blue".into(),
                        description: None,
                    },
                ]),
                ..Default::default()
            }],
        };
        let p = user_input("q1".into(), &req);
        let q = &p.interaction.questions[0];
        assert_eq!(q.text, "Color: Which color?");
        assert_eq!(q.kind, QuestionType::Select);
        assert_eq!(q.choices[0].label, "Red (warm)");
        assert_eq!(
            p.result(&InteractionResponse::select("Blue")),
            json!({"answers": {"color": {"answers": ["Blue"]}}})
        );
        assert_eq!(
            p.result(&InteractionResponse::cancel()),
            json!({"answers": {}})
        );
    }

    #[test]
    fn an_mcp_tool_approval_is_a_permission_answered_as_an_elicitation() {
        let req = McpElicitation {
            server_name: "rec".into(),
            mode: "form".into(),
            message: "Allow the rec MCP server to run tool \"record\"?".into(),
            meta: Some(json!({
                "codex_approval_kind": "mcp_tool_call",
                "persist": ["session", "always"],
                "tool_params": {"text": "hi"},
            })),
            ..Default::default()
        };
        assert!(req.is_tool_approval());
        let p = mcp_tool_approval("m1".into(), &req, None);
        assert_eq!(p.interaction.kind, InteractionKind::Permission);
        assert_eq!(p.interaction.tool_name.as_deref(), Some("mcp__rec__record"));
        assert_eq!(p.interaction.tool_input, Some(json!({"text": "hi"})));
        let values: Vec<&str> = p.interaction.questions[0]
            .choices
            .iter()
            .map(|c| c.value.as_str())
            .collect();
        assert_eq!(values, ["allow", "allowSession", "deny"]);
        assert_eq!(
            p.result(&InteractionResponse::select("allowSession")),
            json!({"action": "accept", "content": null, "_meta": {"persist": "session"}})
        );
        assert_eq!(
            p.result(&InteractionResponse::select("deny"))["action"],
            "decline"
        );
        assert_eq!(p.result(&InteractionResponse::cancel())["action"], "cancel");
    }
}
