//! The scripts most harnesses serve alike, in whichever vendor's wire: written once
//! on the neutral predicates, with the agent's own shell-tool call passed in where
//! the wire's turn for it differs (a Claude `Bash` tool use, a Codex shell item).

use crate::playbook::{Extra, Script};
use crate::script::{typed, when, ModelRequest, Turn};

use super::{
    Behaviour, AFTER_TOOL, CONTINUED, FAILING_COMMAND, PERMISSION_COMMAND, RESUME_FIRST,
    RESUME_SECOND, SLOW_COMMAND, STALL_TEXT, TEXT_CHUNKS, TOOL_COMMAND, USAGE,
};

/// [`Behaviour::Text`]: [`TEXT_CHUNKS`] with [`USAGE`] for the "Say hello" prompt.
pub fn text_script<Req, T, X>() -> Script<Req, T, X>
where
    Req: ModelRequest + 'static,
    T: Clone + From<Turn>,
    X: Extra<Req, T>,
{
    Script::new().turn_when(
        typed(when::user_text_contains("Say hello")),
        Turn::new()
            .text_chunks(&TEXT_CHUNKS)
            .usage(USAGE.0, USAGE.1)
            .into(),
    )
}

/// [`Behaviour::Stop`] and [`Behaviour::Crash`]: [`STALL_TEXT`] then a stall for the
/// "long time" prompt, [`CONTINUED`] for everything after.
pub fn stall_script<Req, T, X>() -> Script<Req, T, X>
where
    Req: ModelRequest + 'static,
    T: Clone + From<Turn>,
    X: Extra<Req, T>,
{
    Script::new()
        .turn_when(
            typed(when::user_text_contains("long time")),
            Turn::new().text(STALL_TEXT).then_hang().into(),
        )
        .default_reply(Turn::text_reply(CONTINUED).into())
}

/// The `call` (a shell command, identified by `id`) for `prompt`, then
/// [`AFTER_TOOL`] for every request carrying its result.
pub fn tool_then<Req, T, X>(prompt: &str, id: &str, call: T) -> Script<Req, T, X>
where
    Req: ModelRequest + 'static,
    T: Clone + From<Turn>,
    X: Extra<Req, T>,
{
    Script::new()
        .turn_when(typed(when::user_text_contains(prompt)), call)
        .rule(
            typed(when::tool_result_for(id)),
            Turn::text_reply(AFTER_TOOL).into(),
        )
}

/// The script of every behaviour but the agent-specific ones ([`Behaviour::Question`]
/// and [`Behaviour::Plan`] get no turns: a harness whose agent has those tools scripts
/// them itself). `shell(id, command)` is the wire's call of the agent's shell tool;
/// the calls are identified `{ids}1` (tool), `{ids}2` (failing), `{ids}3`
/// (permission) and `{ids}5` (steer), and the resumed session is answered by rules,
/// so a side request cannot take its reply.
pub fn common_script<Req, T, X>(
    behaviour: Behaviour,
    ids: &str,
    shell: impl Fn(&str, &str) -> T,
) -> Script<Req, T, X>
where
    Req: ModelRequest + 'static,
    T: Clone + From<Turn>,
    X: Extra<Req, T>,
{
    let tool = |prompt: &str, n: u8, command: &str| {
        let id = format!("{ids}{n}");
        tool_then(prompt, &id, shell(&id, command))
    };
    match behaviour {
        Behaviour::Text => text_script(),
        Behaviour::ToolCall => tool("Run the tool", 1, TOOL_COMMAND),
        Behaviour::FailingTool => tool("failing tool", 2, FAILING_COMMAND),
        Behaviour::Permission => tool("probe file", 3, PERMISSION_COMMAND),
        Behaviour::Steer => tool("slow tool", 5, SLOW_COMMAND),
        Behaviour::Stop | Behaviour::Crash => stall_script(),
        Behaviour::Resume => Script::new()
            .rule(
                typed(when::user_text_contains("otter")),
                Turn::text_reply(RESUME_FIRST).into(),
            )
            .default_reply(Turn::text_reply(RESUME_SECOND).into()),
        Behaviour::Question | Behaviour::Plan => Script::new(),
    }
}
