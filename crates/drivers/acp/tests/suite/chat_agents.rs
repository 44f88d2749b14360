//! The conformance suite against the ACP agents that take an OpenAI-compatible base
//! URL (Qwen Code, GitHub Copilot CLI with its own provider, Hermes, Kimi CLI), each
//! pointed at the testkit's scripted Chat Completions server from an isolated HOME.
//!
//! Each agent is one [`ChatAgent`]: how its home and environment point it at the
//! server, which tool names its model is offered (shell, question, plan), and the
//! behaviours it cannot show, each with its reason.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};
use weft_acp::{AcpDriver, AcpSpec};
use weft_kernel::AgentDriver;
use weft_testkit::chat::{when, ChatServer, Script, Turn};
use weft_testkit::conformance::{self as c, Behaviour, Harness, ScriptedModel};

/// One agent's set-up for the suite.
pub struct ChatAgent {
    /// The preset id.
    pub id: &'static str,
    /// Writes the agent's settings into `home` and gives its environment, pointed at
    /// `base` (`http://127.0.0.1:PORT/v1`), asking first before commands when `ask`.
    pub setup: fn(home: &Path, base: &str, ask: bool) -> Vec<(String, String)>,
    /// The question tool's call (name, arguments) offering [`c::QUESTION_CHOICES`].
    pub question: Option<fn() -> (&'static str, Value)>,
    /// The plan tool's call (name, arguments) making [`c::PLAN_STEPS`].
    pub plan: Option<fn() -> (&'static str, Value)>,
    /// Behaviours the agent itself cannot show, with the reason.
    pub unsupported: fn(Behaviour) -> Option<&'static str>,
    /// Why a refused tool ends the turn without a model reply, when it does.
    pub deny_ends_turn: Option<&'static str>,
    /// Why the agent reports no token counts, when it does not.
    pub tokens_unreported: Option<&'static str>,
}

struct ChatModel {
    _home: tempfile::TempDir,
    env: Vec<(String, String)>,
    server: ChatServer,
}

impl ScriptedModel for ChatModel {
    fn env(&self) -> Vec<(String, String)> {
        self.env.clone()
    }

    fn requests(&self) -> Vec<String> {
        self.server.request_texts()
    }
}

/// The preset, with a short stop grace.
pub fn preset(id: &str) -> AcpSpec {
    let mut spec = weft_acp::config::presets()
        .into_iter()
        .find(|s| s.id == id)
        .unwrap_or_else(|| panic!("the {id} preset"));
    spec.stop_grace = Duration::from_secs(5);
    spec
}

#[async_trait]
impl Harness for ChatAgent {
    fn driver(&self) -> Arc<dyn AgentDriver> {
        Arc::new(AcpDriver::new(preset(self.id)))
    }

    fn driver_without_binary(&self) -> Arc<dyn AgentDriver> {
        let mut spec = preset(self.id);
        spec.command = format!("/nonexistent/weft-test/{}", self.id);
        spec.bin_env.clear();
        Arc::new(AcpDriver::new(spec))
    }

    fn binary(&self) -> Result<PathBuf, String> {
        preset(self.id).find_binary(&|n| std::env::var(n).ok())
    }

    fn deny_ends_turn(&self) -> Option<&'static str> {
        self.deny_ends_turn
    }

    fn tokens_unreported(&self) -> Option<&'static str> {
        self.tokens_unreported
    }

    fn unsupported(&self, behaviour: Behaviour) -> Option<&'static str> {
        (self.unsupported)(behaviour).or(match behaviour {
            Behaviour::Question if self.question.is_none() => {
                Some("the agent offers its model no question tool")
            }
            Behaviour::Plan if self.plan.is_none() => {
                Some("the agent offers its model no plan tool that becomes an ACP plan")
            }
            _ => None,
        })
    }

    async fn model(&self, behaviour: Behaviour) -> Box<dyn ScriptedModel> {
        let script = match behaviour {
            Behaviour::Question => {
                let (name, args) = self.question.map(|q| q()).unwrap_or(("", json!({})));
                Script::new()
                    .turn_when(
                        when::user_text_contains("Ask me"),
                        Turn::new().tool_call("call_t4", name, args),
                    )
                    .rule(
                        when::tool_output_for("call_t4"),
                        Turn::new().echo_tool_output(c::ANSWER_PREFIX),
                    )
            }
            Behaviour::Plan => {
                let (name, args) = self.plan.map(|p| p()).unwrap_or(("", json!({})));
                Script::new()
                    .turn_when(
                        when::user_text_contains("Make a plan"),
                        Turn::new().tool_call("call_t6", name, args),
                    )
                    .rule(
                        when::tool_output_for("call_t6"),
                        Turn::text_reply(c::PLAN_DONE),
                    )
            }
            other => c::common_script(other, "call_t", |id, command| {
                Turn::new().shell(id, command)
            }),
        };
        let server = ChatServer::start(script.models(&["mock-model"]))
            .await
            .expect("server");
        let home = tempfile::tempdir().expect("home");
        let ask = behaviour == Behaviour::Permission;
        let env = (self.setup)(home.path(), &server.v1_url(), ask);
        Box::new(ChatModel {
            _home: home,
            env,
            server,
        })
    }
}

fn home_env(home: &Path) -> Vec<(String, String)> {
    vec![
        ("HOME".into(), home.display().to_string()),
        (
            "XDG_CONFIG_HOME".into(),
            home.join(".config").display().to_string(),
        ),
        (
            "XDG_DATA_HOME".into(),
            home.join(".local/share").display().to_string(),
        ),
        (
            "XDG_CACHE_HOME".into(),
            home.join(".cache").display().to_string(),
        ),
        (
            "XDG_STATE_HOME".into(),
            home.join(".local/state").display().to_string(),
        ),
    ]
}

fn write(path: PathBuf, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
    std::fs::write(path, text).expect("write");
}

// ---- Qwen Code ------------------------------------------------------------------

pub(super) fn qwen_setup(home: &Path, base: &str, ask: bool) -> Vec<(String, String)> {
    write(
        home.join(".qwen/settings.json"),
        &json!({"security": {"auth": {"selectedType": "openai"}},
                "privacy": {"usageStatisticsEnabled": false}})
        .to_string(),
    );
    let mut env = home_env(home);
    env.extend([
        ("OPENAI_BASE_URL".into(), base.into()),
        ("OPENAI_API_KEY".into(), "sk-test".into()),
        ("OPENAI_MODEL".into(), "mock-model".into()),
        // The session's starting mode (the driver applies it with session/set_mode).
        (
            "WEFT_QWEN_MODE".into(),
            if ask { "default" } else { "yolo" }.into(),
        ),
    ]);
    env
}

/// Qwen Code 0.24.4.
pub const QWEN: ChatAgent = ChatAgent {
    id: "qwen",
    setup: qwen_setup,
    // Asked as a permission request carrying the questions; answered with `answers`
    // beside the outcome (see weft_acp::permission).
    question: Some(|| {
        let options: Vec<Value> = c::QUESTION_CHOICES
            .iter()
            .map(|l| json!({"label": l, "description": format!("the color {l}")}))
            .collect();
        (
            "ask_user_question",
            json!({"questions": [{"question": "Which color?", "header": "Color",
                "options": options, "multiSelect": false}]}),
        )
    }),
    plan: None,
    unsupported: |b| match b {
        Behaviour::Plan => Some(
            "Qwen Code 0.24.4 offers its model no todo tool over ACP (its tools: \
             run_shell_command, edit, exit_plan_mode, …; no ACP plan update)",
        ),
        _ => None,
    },
    deny_ends_turn: Some(
        "Qwen Code 0.24.4 (like gemini-cli) ends the turn when a tool is rejected \
         (`cancel`), without asking the model again",
    ),
    tokens_unreported: None,
};

// ---- GitHub Copilot CLI -----------------------------------------------------------

fn copilot_setup(home: &Path, base: &str, ask: bool) -> Vec<(String, String)> {
    let mut env = home_env(home);
    env.extend([
        (
            "COPILOT_HOME".into(),
            home.join(".copilot").display().to_string(),
        ),
        // Its own provider, no GitHub: no login, no telemetry, no update check.
        ("COPILOT_OFFLINE".into(), "true".into()),
        ("COPILOT_PROVIDER_BASE_URL".into(), base.into()),
        ("COPILOT_PROVIDER_API_KEY".into(), "sk-test".into()),
        ("COPILOT_MODEL".into(), "mock-model".into()),
        ("COPILOT_AUTO_UPDATE".into(), "false".into()),
    ]);
    if !ask {
        // "1" only auto-approves tools ("true" would also trust the folder's hooks).
        env.push(("COPILOT_ALLOW_ALL".into(), "1".into()));
    }
    env
}

/// GitHub Copilot CLI 1.0.102, with a model provider of its own.
pub const COPILOT: ChatAgent = ChatAgent {
    id: "copilot",
    setup: copilot_setup,
    question: None,
    plan: None,
    unsupported: |b| match b {
        // Seen: calling `ask_user` got "Tool 'ask_user' does not exist. Available tools
        // … are bash, read_bash, stop_bash, list_bash, view, create, edit, sql,
        // read_agent, list_agents, write_agent, grep, glob, task".
        Behaviour::Question => {
            Some("Copilot CLI 1.0.102 offers its model no question tool over ACP")
        }
        Behaviour::Plan => Some(
            "Copilot CLI 1.0.102 offers its model no plan/todo tool over ACP and sends \
             no ACP plan update",
        ),
        _ => None,
    },
    deny_ends_turn: Some(
        "Copilot CLI 1.0.102 ends the turn when a tool is denied (\"Info: Operation \
         cancelled by user\"), without asking the model again",
    ),
    tokens_unreported: None,
};

// ---- Hermes -----------------------------------------------------------------------

fn hermes_setup(home: &Path, base: &str, _ask: bool) -> Vec<(String, String)> {
    write(
        home.join(".hermes/config.yaml"),
        // For a custom base_url Hermes sends `model.api_key` (else "no-key-required"),
        // not OPENAI_API_KEY: seen in the requests' Authorization header.
        &format!(
            "model:\n  provider: custom\n  base_url: {base}\n  default: mock-model\n  api_key: sk-test\n"
        ),
    );
    let mut env = home_env(home);
    env.push(("OPENAI_API_KEY".into(), "sk-test".into()));
    env
}

/// Hermes Agent 0.19.0.
pub const HERMES: ChatAgent = ChatAgent {
    id: "hermes",
    setup: hermes_setup,
    // Seen: "Tool 'clarify' does not exist. Available tools: browser_*, delegate_task,
    // execute_code, memory, patch, process, read_file, search_files, session_search,
    // skill_*, terminal, todo, vision_analyze, write_file".
    question: None,
    plan: Some(|| {
        (
            "todo",
            json!({"todos": [
                {"id": "1", "content": c::PLAN_STEPS[0], "status": "in_progress"},
                {"id": "2", "content": c::PLAN_STEPS[1], "status": "pending"}]}),
        )
    }),
    unsupported: |b| match b {
        Behaviour::Question => Some("Hermes 0.19.0 offers its model no question tool over ACP"),
        // Seen: `touch …` ran at once in its default mode; its modes govern file
        // edits, and it asks only before commands it deems dangerous.
        Behaviour::Permission => Some(
            "Hermes 0.19.0 runs ordinary shell commands without asking over ACP (its \
             modes govern file edits only)",
        ),
        // Seen in 2 of about 8 runs on this machine: the session loaded in a new process
        // answered, but its request to the model carried none of the earlier turn. Not
        // proven either way until the cause is known, so not claimed.
        Behaviour::Resume => Some(
            "Hermes 0.19.0 resumed in a new process sometimes sends the model none of the \
             earlier turns (2 of ~8 runs); not proven",
        ),
        _ => None,
    },
    deny_ends_turn: None,
    tokens_unreported: None,
};

// ---- Kimi CLI ---------------------------------------------------------------------

fn kimi_setup(home: &Path, base: &str, ask: bool) -> Vec<(String, String)> {
    write(
        home.join(".kimi/config.toml"),
        &format!(
            "default_model = \"mock\"\ndefault_yolo = {}\n\
             [providers.weft]\ntype = \"openai_legacy\"\nbase_url = \"{base}\"\napi_key = \"sk-test\"\n\
             [models.mock]\nprovider = \"weft\"\nmodel = \"mock-model\"\nmax_context_size = 128000\n",
            !ask
        ),
    );
    // Kimi's ACP mode refuses session/new without a Kimi login token on file, even
    // when the model is a provider of one's own; a placeholder passes that check (the
    // provider never sees it).
    write(
        home.join(".kimi/credentials/kimi-code.json"),
        r#"{"access_token":"weft-placeholder","refresh_token":"","expires_at":4102444800,"scope":"","token_type":"Bearer"}"#,
    );
    let mut env = home_env(home);
    // Kimi sets its process title with setproctitle, which overwrites the environment
    // block (/proc/PID/environ) unless told not to: the suite finds its processes by
    // a variable there.
    env.push(("SPT_NOENV".into(), "1".into()));
    env
}

/// Kimi CLI 1.51.0.
pub const KIMI: ChatAgent = ChatAgent {
    id: "kimi",
    setup: kimi_setup,
    // Seen: `QuestionRequest is unsupported in ACP session; resolving empty answer` —
    // the model gets "User dismissed the question without answering".
    question: None,
    plan: Some(|| {
        (
            "SetTodoList",
            json!({"todos": [
                {"title": c::PLAN_STEPS[0], "status": "in_progress"},
                {"title": c::PLAN_STEPS[1], "status": "pending"}]}),
        )
    }),
    unsupported: |b| match b {
        Behaviour::Question => Some(
            "Kimi CLI 1.51.0's ACP session answers every AskUserQuestion with an empty \
             answer (QuestionRequest is unsupported in ACP)",
        ),
        _ => None,
    },
    deny_ends_turn: Some(
        "Kimi CLI 1.51.0 ends the turn when a tool is rejected, without asking the model again",
    ),
    tokens_unreported: Some("Kimi CLI 1.51.0 reports no usage over ACP"),
};

mod qwen {
    weft_testkit::conformance_tests!(super::QWEN);
}

mod copilot {
    weft_testkit::conformance_tests!(super::COPILOT);
}

mod hermes {
    weft_testkit::conformance_tests!(super::HERMES);
}

mod kimi {
    weft_testkit::conformance_tests!(super::KIMI);
}
