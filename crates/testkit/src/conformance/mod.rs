//! The one conformance suite every driver runs: the behaviours a user relies on,
//! written once, driven through the kernel (`Loom`) against the agent's
//! real binary and a scripted model server.
//!
//! # Instantiating it for a driver (Gemini, ACP, …)
//!
//! 1. In the driver crate's `tests/` (one integration binary: `tests/all.rs` +
//!    `suite/`), write a harness: a type implementing [`Harness`] (how to make the
//!    driver, where its binary is, and a [`ScriptedModel`] per [`Behaviour`]: start
//!    this crate's scripted server for your vendor with the script that behaviour's
//!    doc comment asks for, and return the spawn environment pointing the binary at
//!    it, in an isolated home).
//! 2. Instantiate: `mod conformance { use super::*; weft_testkit::conformance_tests!(MyHarness::new()); }`.
//!    Every behaviour becomes a `#[tokio::test]` named after it.
//! 3. A behaviour the driver's declared [`Capabilities`] rule out (steer, interact,
//!    resume) is skipped with a message, not failed; so is one the agent itself cannot
//!    show, named with its reason by [`Harness::unsupported`] (e.g. a CLI that offers
//!    its model no question tool). Everything else must pass.
//!    A missing binary skips the real-binary behaviours, but fails them under
//!    `CI=true`.
//!
//! The strings the scripts must use are the constants below; the suite asserts on
//! them. The suite adds its own `WEFT_CONFORMANCE_MARK` to the spawn environment and
//! uses it to find (and kill, for the crash behaviour) the agent's processes and to
//! check that none is left behind once the kernel shuts down.

// This module is a test suite: a failed expectation is a failed test, reported with
// what was expected.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod scripts;
mod world;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use weft_kernel::AgentDriver;
use weft_protocol::{
    permission, InteractionKind, PromptRequest, SteerOutcome, ToolKind, ToolStatus,
    UniversalSnapshot,
};

pub use scripts::{common_script, stall_script, text_script, tool_then};
use world::{ended, kill_all, open_loom, wait_on};
pub use world::{marked_pids, World};

/// [`Behaviour::Text`]: the reply, streamed as these separate deltas.
pub const TEXT_CHUNKS: [&str; 3] = ["Hello ", "from the ", "scripted model."];
/// [`Behaviour::ToolCall`]: the shell command to run.
pub const TOOL_COMMAND: &str = "echo weft-conformance-tool";
/// What [`TOOL_COMMAND`] prints.
pub const TOOL_MARKER: &str = "weft-conformance-tool";
/// [`Behaviour::FailingTool`]: a shell command that fails (exit code 3).
pub const FAILING_COMMAND: &str = "echo weft-conformance-fail >&2; exit 3";
/// The reply after a tool result (tool call, failing tool, permission, steer).
pub const AFTER_TOOL: &str = "The tool has finished.";
/// [`Behaviour::Permission`]: a shell command that writes [`PERMISSION_FILE`] in the
/// working folder, run in a mode where the agent asks first.
pub const PERMISSION_COMMAND: &str = "touch weft-permission-probe.txt";
/// The file [`PERMISSION_COMMAND`] makes.
pub const PERMISSION_FILE: &str = "weft-permission-probe.txt";
/// [`Behaviour::Question`]: the offered answers (labels); the suite picks the second.
pub const QUESTION_CHOICES: [&str; 2] = ["Red", "Blue"];
/// [`Behaviour::Question`]: the reply after the answer starts with this, then quotes
/// the tool result (which carries the chosen label).
pub const ANSWER_PREFIX: &str = "You picked:";
/// [`Behaviour::Steer`]: a shell command that runs long enough to steer (~3 s).
pub const SLOW_COMMAND: &str = "sleep 3; echo weft-conformance-slow";
/// The steer message the suite sends.
pub const STEER_TEXT: &str = "weft-conformance-steer: mind the gap";
/// [`Behaviour::Stop`] and [`Behaviour::Crash`]: the first request streams this, then
/// stalls forever.
pub const STALL_TEXT: &str = "Thinking about it";
/// [`Behaviour::Stop`], [`Behaviour::Crash`]: every later request gets this reply.
pub const CONTINUED: &str = "Continuing after the interruption.";
/// [`Behaviour::Resume`]: the first turn's prompt (what the model must see again).
pub const RESUME_PROMPT: &str = "Remember the word weft-conformance-otter.";
/// [`Behaviour::Resume`]: the first request's reply.
pub const RESUME_FIRST: &str = "Noted.";
/// [`Behaviour::Resume`]: every later request's reply.
pub const RESUME_SECOND: &str = "The word was otter.";
/// What the resumed session is asked.
pub const RESUMED_PROMPT: &str = "What was the word?";
/// [`Behaviour::Plan`]: the plan's steps, in order.
pub const PLAN_STEPS: [&str; 2] = ["Read the code", "Write the fix"];
/// [`Behaviour::Plan`]: the reply once the plan is made.
pub const PLAN_DONE: &str = "That is the plan.";
/// [`Behaviour::Text`]: usage figures the model reports (input, output).
pub const USAGE: (u64, u64) = (1234, 56);

/// How long one turn may take on a loaded 2-core machine.
pub const TURN_TIMEOUT: Duration = Duration::from_secs(120);

/// What the scripted model must do. Every script answers any request it does not
/// expect (an agent's side calls: titles, summaries) with a short text reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// Reply [`TEXT_CHUNKS`] as separate deltas, reporting usage [`USAGE`].
    Text,
    /// Run [`TOOL_COMMAND`] with the agent's shell tool; after its result, reply
    /// [`AFTER_TOOL`]. The agent runs tools without asking.
    ToolCall,
    /// Run [`FAILING_COMMAND`]; after its result, reply [`AFTER_TOOL`].
    FailingTool,
    /// With the agent set to ask before running commands: run [`PERMISSION_COMMAND`];
    /// after its result (allowed or refused), reply [`AFTER_TOOL`].
    Permission,
    /// Ask the user one question offering [`QUESTION_CHOICES`] (the agent's own
    /// question tool); after the answer, reply [`ANSWER_PREFIX`] and the tool result.
    Question,
    /// Run [`SLOW_COMMAND`]; after its result, reply [`AFTER_TOOL`] (the suite steers
    /// while it runs and checks the model saw [`STEER_TEXT`]).
    Steer,
    /// First request: stream [`STALL_TEXT`], then stall. Later: reply [`CONTINUED`].
    Stop,
    /// First request: reply [`RESUME_FIRST`]. Later: reply [`RESUME_SECOND`].
    Resume,
    /// Make a plan of [`PLAN_STEPS`] (the agent's plan tool or plan mode), then reply
    /// [`PLAN_DONE`].
    Plan,
    /// Like [`Behaviour::Stop`]; the suite kills the agent mid-turn instead.
    Crash,
}

/// A running scripted model for one behaviour.
pub trait ScriptedModel: Send + Sync {
    /// The spawn environment: the agent pointed at the model, in an isolated home,
    /// with whatever settings the behaviour needs.
    fn env(&self) -> Vec<(String, String)>;
    /// Everything the agent sent the model: each request's whole input as text.
    fn requests(&self) -> Vec<String>;
}

/// One agent, for the suite.
#[async_trait]
pub trait Harness: Send + Sync {
    /// A fresh driver. Each kernel gets its own (a new process world).
    fn driver(&self) -> Arc<dyn AgentDriver>;
    /// The driver pointed at a binary that does not exist.
    fn driver_without_binary(&self) -> Arc<dyn AgentDriver>;
    /// The real binary, or why it is missing.
    fn binary(&self) -> Result<PathBuf, String>;
    /// A scripted model for `behaviour`.
    async fn model(&self, behaviour: Behaviour) -> Box<dyn ScriptedModel>;

    /// Why the agent itself cannot show `behaviour` (e.g. its CLI offers the model no
    /// question tool), when a declared capability does not already say so. The suite
    /// skips the behaviour with this reason printed; keep it for real gaps of the
    /// agent, never for driver bugs.
    fn unsupported(&self, _behaviour: Behaviour) -> Option<&'static str> {
        None
    }

    /// Why a denied permission ends the agent's turn without asking the model again
    /// (Qwen Code, like gemini-cli, ends the turn on a rejected tool), when it does.
    /// [`permission_deny`] then checks everything but the model's reply after the
    /// refusal, and prints this reason.
    fn deny_ends_turn(&self) -> Option<&'static str> {
        None
    }

    /// Why the agent reports no token counts (only its context window, or nothing), when
    /// it does not. [`usage`] then checks only that the turn ended clean, and prints this.
    fn tokens_unreported(&self) -> Option<&'static str> {
        None
    }
}

/// Instantiates every behaviour of the suite as a test, for one harness expression.
#[macro_export]
macro_rules! conformance_tests {
    ($harness:expr) => {
        $crate::conformance_tests!(@each $harness; text_streaming, tool_call,
            failing_tool_call, permission_allow, permission_deny, question_answered, steer,
            stop_then_continue, resume_in_new_process, plan, usage, crash_mid_turn,
            missing_binary);
    };
    (@each $harness:expr; $($name:ident),*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                $crate::conformance::$name(&$harness).await;
            }
        )*
    };
}

fn shell_calls(s: &UniversalSnapshot) -> Vec<&weft_protocol::ToolCall> {
    s.tool_calls
        .iter()
        .filter(|c| c.kind == ToolKind::Shell)
        .collect()
}

fn first_shell_call(s: &UniversalSnapshot) -> &weft_protocol::ToolCall {
    shell_calls(s)
        .first()
        .copied()
        .unwrap_or_else(|| panic!("no shell call: {s:#?}"))
}

fn assert_clean(s: &UniversalSnapshot) {
    assert_eq!(s.error, None, "the turn failed: {s:#?}");
    assert!(!s.incomplete, "the turn is incomplete: {s:#?}");
    assert!(s.session_id.is_some(), "no session id: {s:#?}");
}

/// Text arrives in pieces (each its own patch), the turn ends clean with a session id.
pub async fn text_streaming(h: &dyn Harness) {
    let Some(w) = World::start(h, Behaviour::Text).await else {
        return;
    };
    let mut patches = w.loom.subscribe_all();
    let (key, snap) = w.turn(None, "Say hello.").await;
    assert_clean(&snap);
    assert!(
        snap.text.contains(&TEXT_CHUNKS.concat()),
        "text: {:?}",
        snap.text
    );
    let mut appends = 0;
    while let Ok(p) = patches.try_recv() {
        if p.session_key == key && p.patch.text_append.is_some() {
            appends += 1;
        }
    }
    assert!(
        appends >= 2,
        "the text came in {appends} piece(s), not streamed"
    );
    w.close().await;
}

/// A shell tool call runs to completion and the model goes on after its result.
pub async fn tool_call(h: &dyn Harness) {
    let Some(w) = World::start(h, Behaviour::ToolCall).await else {
        return;
    };
    let (_, snap) = w.turn(None, "Run the tool.").await;
    assert_clean(&snap);
    let call = first_shell_call(&snap);
    assert_eq!(call.status, ToolStatus::Done, "{call:#?}");
    assert!(
        call.result
            .as_deref()
            .unwrap_or_default()
            .contains(TOOL_MARKER),
        "{call:#?}"
    );
    assert!(
        snap.activity.contains(&call.summary),
        "activity: {:?}",
        snap.activity
    );
    assert!(snap.text.contains(AFTER_TOOL), "text: {:?}", snap.text);
    w.close().await;
}

/// A failing shell call is reported failed; the turn itself goes on and ends clean.
pub async fn failing_tool_call(h: &dyn Harness) {
    let Some(w) = World::start(h, Behaviour::FailingTool).await else {
        return;
    };
    let (_, snap) = w.turn(None, "Run the failing tool.").await;
    assert_clean(&snap);
    let call = first_shell_call(&snap);
    assert_eq!(call.status, ToolStatus::Failed, "{call:#?}");
    assert!(
        snap.activity.contains("failed"),
        "activity: {:?}",
        snap.activity
    );
    assert!(snap.text.contains(AFTER_TOOL), "text: {:?}", snap.text);
    w.close().await;
}

async fn permission(h: &dyn Harness, allow: bool) {
    let Some(w) = World::start_needing(h, Behaviour::Permission, "interact", |c| c.interact).await
    else {
        return;
    };
    let (key, task) = w.prompt(None, "Touch the probe file.").await;
    let choice = if allow {
        permission::ALLOW
    } else {
        permission::DENY
    };
    w.answer(&key, InteractionKind::Permission, |value, _| {
        value == choice
    })
    .await;
    let snap = w.finished(&key, &task).await;
    assert_clean(&snap);
    let file = w.workdir().join(PERMISSION_FILE);
    let call = first_shell_call(&snap);
    if allow {
        assert!(file.exists(), "allowed, yet {PERMISSION_FILE} was not made");
        assert_eq!(call.status, ToolStatus::Done, "{call:#?}");
    } else {
        assert!(!file.exists(), "denied, yet {PERMISSION_FILE} was made");
        assert_eq!(call.status, ToolStatus::Failed, "{call:#?}");
    }
    match h.deny_ends_turn().filter(|_| !allow) {
        Some(why) => eprintln!("SKIPPED the reply after the refusal: {why}"),
        None => assert!(snap.text.contains(AFTER_TOOL), "text: {:?}", snap.text),
    }
    assert!(
        snap.notices.iter().any(|n| n.contains("answered")),
        "the answer is not on record: {:?}",
        snap.notices
    );
    w.close().await;
}

/// A permission prompt, allowed: the tool runs.
pub async fn permission_allow(h: &dyn Harness) {
    permission(h, true).await
}

/// A permission prompt, denied: the tool does not run, the turn goes on.
pub async fn permission_deny(h: &dyn Harness) {
    permission(h, false).await
}

/// The agent's question is answered through `interact`; the model gets the answer.
pub async fn question_answered(h: &dyn Harness) {
    let Some(w) = World::start_needing(h, Behaviour::Question, "interact", |c| c.interact).await
    else {
        return;
    };
    let (key, task) = w.prompt(None, "Ask me for a color.").await;
    let pick = QUESTION_CHOICES[1];
    w.answer(&key, InteractionKind::UserInput, |value, label| {
        value == pick || label.starts_with(pick)
    })
    .await;
    let snap = w.finished(&key, &task).await;
    assert_clean(&snap);
    assert!(snap.text.contains(ANSWER_PREFIX), "text: {:?}", snap.text);
    assert!(
        snap.text.contains(pick),
        "the model did not get the answer: {:?}",
        snap.text
    );
    w.close().await;
}

/// A steer sent while a tool runs reaches the model within the same turn.
pub async fn steer(h: &dyn Harness) {
    let Some(w) = World::start_needing(h, Behaviour::Steer, "steer", |c| c.steer).await else {
        return;
    };
    let (key, task) = w.prompt(None, "Run the slow tool.").await;
    w.wait(&key, "the slow tool to start", |s| {
        s.tool_calls.iter().any(|c| c.status == ToolStatus::Running)
    })
    .await;
    let outcome = w.loom.steer(&key, STEER_TEXT.into()).await.expect("steer");
    assert_eq!(outcome, SteerOutcome::Injected);
    let snap = w.finished(&key, &task).await;
    assert_clean(&snap);
    assert!(snap.text.contains(AFTER_TOOL), "text: {:?}", snap.text);
    assert!(
        w.model.requests().iter().any(|r| r.contains(STEER_TEXT)),
        "the model never saw the steer"
    );
    w.close().await;
}

/// Starts a turn and waits until the model has streamed its first words and stalled.
async fn stalled(w: &World) -> (String, String) {
    let (key, task) = w.prompt(None, "Think for a long time.").await;
    w.wait(&key, "the first words", |s| s.text.contains(STALL_TEXT))
        .await;
    (key, task)
}

/// After an interrupted turn, the next prompt in the session works.
async fn goes_on(w: World, key: &str) {
    let (_, next) = w.turn(Some(key), "Go on.").await;
    assert_clean(&next);
    assert!(next.text.contains(CONTINUED), "text: {:?}", next.text);
    w.close().await;
}

/// Stop ends the running turn (incomplete, text kept); the next prompt works.
pub async fn stop_then_continue(h: &dyn Harness) {
    let Some(w) = World::start(h, Behaviour::Stop).await else {
        return;
    };
    let (key, task) = stalled(&w).await;
    w.loom.stop(&key).await.expect("stop");
    let snap = w.finished(&key, &task).await;
    assert!(snap.incomplete, "a stopped turn is incomplete: {snap:#?}");
    assert!(
        snap.text.contains(STALL_TEXT),
        "the text so far is kept: {snap:#?}"
    );
    goes_on(w, &key).await;
}

/// A session continues in a new kernel with a new driver (a new process): the model
/// sees the first turn again.
pub async fn resume_in_new_process(h: &dyn Harness) {
    let Some(w) = World::start_needing(h, Behaviour::Resume, "resume", |c| c.resume).await else {
        return;
    };
    let (key, first) = w.turn(None, RESUME_PROMPT).await;
    assert_clean(&first);
    assert!(first.text.contains(RESUME_FIRST));
    w.loom.shutdown().await;
    let second_loom = open_loom(w.state.path(), h.driver(), &w.env);
    let accepted = second_loom
        .prompt(PromptRequest {
            prompt: RESUMED_PROMPT.into(),
            session_key: Some(key.clone()),
            ..Default::default()
        })
        .await
        .expect("prompt in the new kernel");
    let second = wait_on(
        &second_loom,
        &key,
        "the resumed turn to end",
        TURN_TIMEOUT,
        ended(&accepted.task_id),
    )
    .await;
    second_loom.shutdown().await;
    assert_clean(&second);
    assert_eq!(
        second.session_id, first.session_id,
        "resumed a different session"
    );
    assert!(
        second.text.contains(RESUME_SECOND),
        "text: {:?}",
        second.text
    );
    // The request that carried the new prompt, not merely the last one: an agent may
    // make its own calls after the turn (Hermes, now and then).
    let requests = w.model.requests();
    let resumed = requests.iter().rev().find(|r| r.contains(RESUMED_PROMPT));
    assert!(
        resumed.is_some_and(|r| r.contains("weft-conformance-otter")),
        "the resumed request lacks the first turn: {resumed:?}"
    );
    w.close().await;
}

/// The agent's plan lands in `snapshot.plan`, steps in order.
pub async fn plan(h: &dyn Harness) {
    let Some(w) = World::start(h, Behaviour::Plan).await else {
        return;
    };
    let (_, snap) = w.turn(None, "Make a plan.").await;
    assert_clean(&snap);
    let plan = snap
        .plan
        .clone()
        .unwrap_or_else(|| panic!("no plan: {snap:#?}"));
    let texts: Vec<&str> = plan.steps.iter().map(|s| s.text.as_str()).collect();
    let at = |t: &str| texts.iter().position(|x| x.contains(t));
    let (a, b) = (at(PLAN_STEPS[0]), at(PLAN_STEPS[1]));
    assert!(a.is_some() && b.is_some() && a < b, "plan steps: {texts:?}");
    assert!(snap.text.contains(PLAN_DONE), "text: {:?}", snap.text);
    w.close().await;
}

/// Usage is reported.
pub async fn usage(h: &dyn Harness) {
    let Some(w) = World::start(h, Behaviour::Text).await else {
        return;
    };
    let (_, snap) = w.turn(None, "Say hello.").await;
    assert_clean(&snap);
    if let Some(why) = h.tokens_unreported() {
        eprintln!("SKIPPED the token counts: {why} (usage: {:?})", snap.usage);
        return w.close().await;
    }
    let u = snap
        .usage
        .clone()
        .unwrap_or_else(|| panic!("no usage: {snap:#?}"));
    assert!(u.input_tokens.unwrap_or(0) >= USAGE.0, "usage: {u:?}");
    assert!(u.output_tokens.unwrap_or(0) >= USAGE.1, "usage: {u:?}");
    w.close().await;
}

/// The agent's process dies mid-turn: the turn ends incomplete with an error and the
/// text so far; the next prompt works.
pub async fn crash_mid_turn(h: &dyn Harness) {
    let Some(w) = World::start(h, Behaviour::Crash).await else {
        return;
    };
    let (key, task) = stalled(&w).await;
    let pids = w.marked_pids();
    assert!(!pids.is_empty(), "no agent process carries the mark");
    kill_all(&pids);
    let snap = w.finished(&key, &task).await;
    assert!(snap.incomplete, "a crashed turn is incomplete: {snap:#?}");
    assert!(
        snap.error.as_deref().is_some_and(|e| !e.is_empty()),
        "a crash needs a clear error: {snap:#?}"
    );
    assert!(
        snap.text.contains(STALL_TEXT),
        "the text so far is kept: {snap:#?}"
    );
    goes_on(w, &key).await;
}

/// A missing binary: `info` says so, and a turn fails at once with a clear error.
pub async fn missing_binary(h: &dyn Harness) {
    let driver = h.driver_without_binary();
    let info = driver.info().await;
    assert!(!info.installed, "{info:?}");
    assert!(info.problem.is_some(), "{info:?}");
    let state = tempfile::tempdir().expect("state dir");
    let work = tempfile::tempdir().expect("workdir");
    let agent = driver.id().to_string();
    let loom = open_loom(state.path(), driver, &[]);
    let accepted = loom
        .prompt(PromptRequest {
            prompt: "Hello?".into(),
            agent: Some(agent),
            workdir: Some(work.path().display().to_string()),
            ..Default::default()
        })
        .await
        .expect("prompt accepted");
    let key = &accepted.session_key;
    let snap = wait_on(
        &loom,
        key,
        "the turn to end",
        Duration::from_secs(30),
        ended(&accepted.task_id),
    )
    .await;
    loom.shutdown().await;
    assert!(snap.incomplete, "{snap:#?}");
    assert!(
        snap.error.as_deref().is_some_and(|e| !e.is_empty()),
        "{snap:#?}"
    );
}
