//! What real ACP agents do differently from the spec, in one place.
//!
//! Each item names the agent and release it was seen from (the recorded transcripts
//! in `tests/fixtures/t_<agent>_*.jsonl` show it; the replay tests prove the handling).
//! The normalizer and the session call these; none of them is keyed on the agent's id,
//! so a quirk handled for one agent is handled for any agent that shares it.
//!
//! - **Usage in a chunk's `_meta`** (Qwen Code 0.24.4): no `usage_update` and no
//!   `usage` on the prompt reply; each model call ends with an empty
//!   `agent_message_chunk` whose `_meta.usage` holds `{inputTokens, outputTokens,
//!   cachedReadTokens, …}` for that call. [`chunk_usage`] reads it; the turn's usage is
//!   the sum over its calls.
//! - **Modes as a config option** (GitHub Copilot CLI 1.0.102): `session/new` answers no
//!   `modes`, only `configOptions` with one of `category: "mode"` whose values are URLs
//!   (`https://agentclientprotocol.com/protocol/session-modes#agent`). [`config_modes`]
//!   reads them, named by the URL's fragment.
//! - **Tool output as an object** (Copilot): `rawOutput` is `{content, detailedContent,
//!   contents}`; [`raw_output_text`] takes `content`.
//! - **A failed command reported `completed`** (Copilot): a shell call that exits 3
//!   ends `status: "completed"`; only `rawOutput.contents[{type: "shell_exit",
//!   exitCode}]` says it failed. [`failed_exit`] reads that, and the call is failed.
//! - **A refused tool ends the turn** (Qwen Code 0.24.4, Copilot 1.0.102): after a
//!   `reject_once`, the `session/prompt` reply comes at once (`end_turn`), the model is
//!   not asked again; Copilot adds the text "Info: Operation cancelled by user". The
//!   call is failed ("denied by the user"); nothing else to do.
//! - **A refused command cancels the turn** (codex-acp 0.16.0): its reject option ("No,
//!   and tell Codex what to do differently") aborts the turn, answered
//!   `stopReason: "cancelled"` although no `session/cancel` was sent. The session
//!   treats a `cancelled` nobody asked for as a turn that ended (with a notice), not as
//!   a stopped one.
//! - **No token counts** (codex-acp 0.16.0): only `usage_update` (the context window).
//! - **Questions as a permission request** (Qwen Code 0.24.4's ask_user_question): a
//!   `session/request_permission` whose call's `rawInput.questions` holds them, options
//!   Submit / Cancel, and the answers read from an `answers: {"0": label}` field beside
//!   `outcome` in the reply, outside the schema. The connection answers permission
//!   requests as raw JSON for this ([`crate::conn::PermissionAsk`]);
//!   [`crate::permission`] turns such a request into a question and its answer into
//!   that reply.
//! - **No question or plan tool over ACP** (Copilot; Hermes has no question tool;
//!   Kimi CLI answers its own AskUserQuestion empty over ACP).
//! - **Tool calls without `kind`** (Kimi CLI 1.51.0): its `tool_call` has a title
//!   (`Shell`, `Shell: echo hi`, `ReadFile: a.txt`) and no kind. [`kind_from_title`]
//!   maps the title's tool name.
//! - **`null` for an absent field** (Qwen Code 0.24.4): its `available_commands_update`
//!   gives commands without arguments `"input": null`, which the schema refuses (the
//!   whole update would be lost). An update that does not parse is parsed again
//!   [`without_nulls`].
//! - **Extension requests** (Qwen Code's `craft/drainMidTurnQueue` after each tool):
//!   a request no handler claims is answered `method_not_found` by the SDK, which the
//!   agent takes in its stride; nothing to do.

use agent_client_protocol::v1::schema::ToolKind as AcpKind;
use serde_json::{Map, Value};

/// Token figures one model call reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallUsage {
    /// Input tokens.
    pub input: Option<u64>,
    /// Output tokens.
    pub output: Option<u64>,
    /// Cached input tokens.
    pub cached: Option<u64>,
}

/// Usage carried in an update's `_meta.usage` (Qwen Code), when there is one.
pub fn chunk_usage(meta: Option<&Map<String, Value>>) -> Option<CallUsage> {
    let u = meta?.get("usage")?;
    let usage = CallUsage {
        input: u["inputTokens"].as_u64(),
        output: u["outputTokens"].as_u64(),
        cached: u["cachedReadTokens"].as_u64(),
    };
    (usage.input.is_some() || usage.output.is_some()).then_some(usage)
}

/// `(id, name)` of the modes offered as a `category: "mode"` config option, and the
/// current one (Copilot). Ids are the values as sent (the agent wants them back).
pub fn config_modes(reply: &Value) -> (Vec<(String, String)>, Option<String>) {
    for opt in reply["configOptions"].as_array().into_iter().flatten() {
        if opt["category"] == "mode" || opt["id"] == "mode" {
            let modes = opt["options"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|o| {
                    let id = o["value"].as_str()?.to_string();
                    let name = o["name"].as_str().unwrap_or(&id).to_string();
                    Some((id, name))
                })
                .collect();
            return (modes, opt["currentValue"].as_str().map(String::from));
        }
    }
    (Vec::new(), None)
}

/// A tool's raw output as text: a string as it is, Copilot's `{content: …}` object by
/// its content, anything else as JSON.
pub fn raw_output_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => match o.get("content") {
            Some(Value::String(s)) => Some(s.clone()),
            _ => Some(v.to_string()),
        },
        other => Some(other.to_string()),
    }
}

/// `v` with every object field whose value is `null` left out, at any depth.
pub fn without_nulls(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), without_nulls(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

/// The non-zero exit code a finished call's raw output reports (Copilot's
/// `contents[{type: "shell_exit", exitCode}]`).
pub fn failed_exit(raw_output: Option<&Value>) -> Option<i64> {
    raw_output?["contents"]
        .as_array()?
        .iter()
        .filter(|c| c["type"] == "shell_exit")
        .find_map(|c| c["exitCode"].as_i64())
        .filter(|code| *code != 0)
}

/// The kind a kind-less call's title implies (Kimi's `Shell: …`, `ReadFile: …`).
pub fn kind_from_title(title: &str) -> Option<AcpKind> {
    let tool = title.split(':').next().unwrap_or(title).trim();
    Some(match tool {
        "Shell" | "Bash" | "Terminal" | "terminal" => AcpKind::Execute,
        "ReadFile" | "ReadMediaFile" => AcpKind::Read,
        "WriteFile" | "StrReplaceFile" => AcpKind::Edit,
        "Glob" | "Grep" => AcpKind::Search,
        "FetchURL" | "SearchWeb" => AcpKind::Fetch,
        _ => return None,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn qwen_usage_in_meta() {
        let meta = json!({"usage": {"inputTokens": 1234, "outputTokens": 56,
            "totalTokens": 1290, "thoughtTokens": 0, "cachedReadTokens": 0}, "durationMs": 4});
        let u = chunk_usage(meta.as_object()).unwrap();
        assert_eq!(
            (u.input, u.output, u.cached),
            (Some(1234), Some(56), Some(0))
        );
        assert_eq!(chunk_usage(json!({"durationMs": 1}).as_object()), None);
        assert_eq!(chunk_usage(None), None);
    }

    #[test]
    fn copilot_modes_from_config_options() {
        let reply = json!({"configOptions": [{"type": "select", "id": "mode", "category": "mode",
            "currentValue": "https://agentclientprotocol.com/protocol/session-modes#agent",
            "options": [
                {"value": "https://agentclientprotocol.com/protocol/session-modes#agent", "name": "Agent"},
                {"value": "https://agentclientprotocol.com/protocol/session-modes#plan", "name": "Plan"}]}]});
        let (modes, current) = config_modes(&reply);
        assert_eq!(modes.len(), 2);
        assert_eq!(modes[1].1, "Plan");
        assert!(current.unwrap().ends_with("#agent"));
    }

    #[test]
    fn copilot_raw_output_object_and_kimi_titles() {
        let v = json!({"content": "hi\n<exit 0>", "detailedContent": "x"});
        assert_eq!(raw_output_text(&v).unwrap(), "hi\n<exit 0>");
        assert_eq!(raw_output_text(&json!({"a": 1})).unwrap(), r#"{"a":1}"#);
        assert_eq!(raw_output_text(&Value::Null), None);
        assert_eq!(kind_from_title("Shell: echo hi"), Some(AcpKind::Execute));
        assert_eq!(kind_from_title("Shell"), Some(AcpKind::Execute));
        assert_eq!(kind_from_title("ReadFile: a.txt"), Some(AcpKind::Read));
        assert_eq!(kind_from_title("Something"), None);
        let out = json!({"content": "x\n<shellId: 0 completed with exit code 3>",
            "contents": [{"type": "shell_exit", "shellId": "0", "exitCode": 3}]});
        assert_eq!(failed_exit(Some(&out)), Some(3));
        let ok = json!({"contents": [{"type": "shell_exit", "exitCode": 0}]});
        assert_eq!(failed_exit(Some(&ok)), None);
        assert_eq!(failed_exit(Some(&json!("text"))), None);
    }
}
