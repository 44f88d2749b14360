//! One live ACP session: its connection, its id, and the turn loop.

use std::collections::VecDeque;
use std::path::Path;
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    ContentBlock, CreateElicitationResponse, ElicitationAction, ImageContent, LoadSessionRequest,
    NewSessionRequest, PromptCapabilities, PromptRequest, RequestPermissionOutcome, ResourceLink,
    SetSessionModeRequest, TextContent,
};
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use serde_json::{json, Value};
use weft_kernel::{AgentTurnInput, DriverContext};
use weft_protocol::{DriverEvent, ModelInfo, ToolStatus};

use crate::conn::{request, AcpConnection, ConnError, Incoming};
use crate::elicit;
use crate::normalize::Normalizer;
use crate::permission;

/// Models and modes an agent offered in its last `session/new` or `session/load`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Catalog {
    /// `(id, name)` of each model.
    pub models: Vec<(String, String)>,
    /// The model in use.
    pub current_model: Option<String>,
    /// `(id, name)` of each mode.
    pub modes: Vec<(String, String)>,
    /// The mode in use.
    pub current_mode: Option<String>,
}

/// Prefix of the model ids that select a mode instead of a model.
pub const MODE_PREFIX: &str = "mode:";

impl Catalog {
    /// From a `session/new` or `session/load` reply: `models` (unstable, but sent by
    /// gemini and claude-agent-acp), `modes`, and a `model` config option.
    pub fn from_reply(v: &Value) -> Self {
        let pairs = |arr: &Value, id: &str| -> Vec<(String, String)> {
            arr.as_array()
                .into_iter()
                .flatten()
                .filter_map(|m| {
                    let id = m[id].as_str()?.to_string();
                    let name = m["name"].as_str().unwrap_or(&id).to_string();
                    Some((id, name))
                })
                .collect()
        };
        let mut c = Catalog {
            models: pairs(&v["models"]["availableModels"], "modelId"),
            current_model: v["models"]["currentModelId"].as_str().map(String::from),
            modes: pairs(&v["modes"]["availableModes"], "id"),
            current_mode: v["modes"]["currentModeId"].as_str().map(String::from),
        };
        if c.modes.is_empty() {
            (c.modes, c.current_mode) = crate::quirks::config_modes(v);
        }
        if c.models.is_empty() {
            for opt in v["configOptions"].as_array().into_iter().flatten() {
                if opt["category"] == "model" || opt["id"] == "model" {
                    c.models = pairs(&opt["options"], "value");
                    c.current_model = opt["currentValue"].as_str().map(String::from);
                }
            }
        }
        c
    }

    /// As the composer lists them: models, then modes as `mode:<id>`.
    pub fn model_infos(&self) -> Vec<ModelInfo> {
        let mut out: Vec<ModelInfo> = self
            .models
            .iter()
            .map(|(id, name)| ModelInfo {
                id: id.clone(),
                label: name.clone(),
                default: self.current_model.as_deref() == Some(id.as_str()),
            })
            .collect();
        out.extend(self.modes.iter().map(|(id, name)| ModelInfo {
            id: format!("{MODE_PREFIX}{id}"),
            label: format!("Mode: {name}"),
            default: false,
        }));
        out
    }
}

/// What a live process was started with; a turn asking for something else gets a new
/// process (resuming the same session when the agent can).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Shape {
    /// The folder.
    pub workdir: std::path::PathBuf,
    /// The whole spawn environment (the client's, accounts), as a fingerprint: a turn
    /// from a client with another environment gets a new process.
    pub env: weft_agent_process::EnvFingerprint,
    /// Extra arguments.
    pub extra_args: Vec<String>,
}

impl Shape {
    /// The shape a turn asks for.
    pub fn of(input: &AgentTurnInput) -> Self {
        Self {
            workdir: input.workdir.clone(),
            env: weft_agent_process::EnvFingerprint::of(&input.spawn_env()),
            extra_args: input.extra_args.clone(),
        }
    }
}

/// A session on a live connection.
pub struct LiveSession {
    /// The connection.
    pub conn: AcpConnection,
    /// The agent's session id.
    pub session_id: String,
    /// What the process was started with.
    pub shape: Shape,
    /// Update state.
    pub norm: Normalizer,
    /// Models and modes.
    pub catalog: Catalog,
    /// True until the first prompt (the system prompt goes with it).
    pub fresh: bool,
    /// Why the session asked for could not be resumed, when this new one replaced it:
    /// the turn gives the agent Weft's handover and reports the lost context.
    pub lost: Option<String>,
    /// Just reloaded with `session/load`: the agent has its own context again.
    pub reloaded: bool,
    /// Loaded and no prompt since: text the agent sends meanwhile is its replay of the
    /// conversation (which may arrive after `session/load`'s reply, and all of it when
    /// the process was started ahead), history Weft already holds, not something the
    /// agent wrote after a turn.
    pub replaying: bool,
}

/// How a turn ended.
pub enum TurnEnd {
    /// The agent answered the prompt.
    Done {
        /// `end_turn`, `max_tokens`, `refusal`, …
        stop_reason: String,
    },
    /// Stopped; `clean` when the agent confirmed with `cancelled` in time.
    Stopped {
        /// The session can go on.
        clean: bool,
    },
    /// The agent exited or the connection broke.
    Died(String),
    /// The agent answered with an error; it lives on.
    Failed(String),
}

/// Weft's MCP servers (the turn's `mcp_servers`) as ACP's `mcpServers`: stdio ones
/// always, HTTP ones when the agent says it takes them.
pub fn acp_servers(
    servers: &[weft_kernel::mcp::McpServer],
    http: bool,
) -> Vec<agent_client_protocol::v1::schema::McpServer> {
    use agent_client_protocol::v1::schema::{
        EnvVariable, HttpHeader, McpServer, McpServerHttp, McpServerStdio,
    };
    servers
        .iter()
        .filter_map(|s| match (&s.command, &s.url) {
            (Some(cmd), _) => Some(McpServer::Stdio(
                McpServerStdio::new(s.name.clone(), cmd.clone())
                    .args(s.args.clone())
                    .env(
                        s.env
                            .iter()
                            .map(|(k, v)| EnvVariable::new(k.clone(), v.clone()))
                            .collect(),
                    ),
            )),
            (None, Some(url)) if http => Some(McpServer::Http(
                McpServerHttp::new(s.name.clone(), url.clone()).headers(
                    s.headers
                        .iter()
                        .map(|(k, v)| HttpHeader::new(k.clone(), v.clone()))
                        .collect(),
                ),
            )),
            _ => None,
        })
        .collect()
}

/// Opens a session: `session/load` of `resume` when allowed and advertised, else
/// `session/new` (with a notice when a resume was asked for and not possible).
pub async fn open(
    conn: AcpConnection,
    workdir: &Path,
    resume: Option<&str>,
    allow_load: bool,
    mcp: &[weft_kernel::mcp::McpServer],
    dirs: &[std::path::PathBuf],
    ctx: &DriverContext,
) -> Result<LiveSession, (AcpConnection, String)> {
    let mut conn = conn;
    let can_load = allow_load && conn.init.agent_capabilities.load_session;
    // Folders of Weft's for the session (its skills), to an agent that takes them.
    let dirs = if conn
        .init
        .agent_capabilities
        .session_capabilities
        .additional_directories
        .is_some()
    {
        dirs.to_vec()
    } else {
        Vec::new()
    };
    let servers = acp_servers(mcp, conn.init.agent_capabilities.mcp_capabilities.http);
    let mut lost = None;
    if let Some(id) = resume {
        if can_load {
            let req = LoadSessionRequest::new(id.to_string(), workdir.to_path_buf())
                .mcp_servers(servers.clone())
                .additional_directories(dirs.clone());
            match request(&conn.cx, "session/load", &req).await {
                Ok(reply) => {
                    // The history replay arrived before the reply: keep only what
                    // describes the session now (commands, mode).
                    let mut norm = Normalizer::new();
                    let mut sink = Vec::new();
                    while let Ok(msg) = conn.incoming.try_recv() {
                        if let Incoming::Notification { method, params } = msg {
                            norm.notification(&method, &params, &mut sink);
                        }
                    }
                    return Ok(LiveSession {
                        catalog: Catalog::from_reply(&reply),
                        conn,
                        session_id: id.to_string(),
                        shape: Shape::default(),
                        norm,
                        fresh: false,
                        lost: None,
                        reloaded: true,
                        replaying: true,
                    });
                }
                Err(e) => {
                    ctx.emit(DriverEvent::Notice {
                        text: format!(
                            "Could not resume session {id} ({e}); started a new session instead"
                        ),
                    });
                    lost = Some(format!("its session {id} could not be loaded ({e})"));
                }
            }
        } else {
            ctx.emit(DriverEvent::Notice {
                text: format!(
                    "This agent cannot resume session {id} over ACP; started a new session"
                ),
            });
            lost = Some(format!("it cannot reload its session {id} over ACP"));
        }
    }
    let req = NewSessionRequest::new(workdir.to_path_buf())
        .mcp_servers(servers)
        .additional_directories(dirs);
    match request(&conn.cx, "session/new", &req).await {
        Ok(reply) => {
            let Some(session_id) = reply["sessionId"].as_str().map(String::from) else {
                return Err((conn, "session/new answered without a sessionId".into()));
            };
            Ok(LiveSession {
                catalog: Catalog::from_reply(&reply),
                conn,
                session_id,
                shape: Shape::default(),
                norm: Normalizer::new(),
                fresh: true,
                lost,
                reloaded: false,
                replaying: false,
            })
        }
        Err(e) => {
            let msg = if conn.cx.is_incoming_closed() {
                conn.exit_error().await.to_string()
            } else {
                format!("session/new failed: {e}")
            };
            Err((conn, msg))
        }
    }
}

impl LiveSession {
    /// Switches model or mode (`mode:<id>`) when the turn asks for another one. A
    /// refusal is a notice, not a failed turn.
    pub async fn apply_model(&mut self, model: Option<&str>, ctx: &DriverContext) {
        let Some(model) = model.filter(|m| !m.is_empty() && *m != "default") else {
            return;
        };
        if let Some(mode) = model.strip_prefix(MODE_PREFIX) {
            if self.catalog.current_mode.as_deref() == Some(mode) {
                return;
            }
            let req = SetSessionModeRequest::new(self.session_id.clone(), mode.to_string());
            match request(&self.conn.cx, "session/set_mode", &req).await {
                Ok(_) => self.catalog.current_mode = Some(mode.to_string()),
                Err(e) => ctx.emit(DriverEvent::Notice {
                    text: format!("Could not switch to mode `{mode}`: {e}"),
                }),
            }
            return;
        }
        if self.catalog.current_model.as_deref() == Some(model) {
            return;
        }
        let params = json!({"sessionId": self.session_id, "modelId": model});
        match request(&self.conn.cx, "session/set_model", &params).await {
            Ok(_) => self.catalog.current_model = Some(model.to_string()),
            Err(e) => ctx.emit(DriverEvent::Notice {
                text: format!("Could not switch to model `{model}`: {e}"),
            }),
        }
    }

    /// Runs one prompt to its end.
    pub async fn prompt(
        &mut self,
        input: &AgentTurnInput,
        ctx: &DriverContext,
        stop_grace: Duration,
    ) -> TurnEnd {
        let mut early = self.between_turns(ctx);
        self.norm.begin_turn();
        let caps = &self.conn.init.agent_capabilities.prompt_capabilities;
        let blocks = prompt_blocks(input, self.fresh, caps);
        self.fresh = false;
        let cx = self.conn.cx.clone();
        let req = PromptRequest::new(self.session_id.clone(), blocks);
        let prompt = async move { request(&cx, "session/prompt", &req).await };
        tokio::pin!(prompt);
        let mut asks = FuturesUnordered::new();
        let mut forms = FuturesUnordered::new();
        let mut asked = 0usize;
        let mut deadline: Option<tokio::time::Instant> = None;
        let end = loop {
            let live_due = self.norm.live_due().map(tokio::time::Instant::from_std);
            tokio::select! {
                biased;
                msg = next_incoming(&mut early, &mut self.conn.incoming) => match msg {
                    Some(Incoming::Notification { method, params }) => {
                        self.note(&method, &params, ctx);
                    }
                    Some(Incoming::Permission(req, responder)) => {
                        if deadline.is_some() {
                            let _ = responder.respond(permission::reply(
                                RequestPermissionOutcome::Cancelled,
                                None,
                            ));
                            continue;
                        }
                        let mut out = Vec::new();
                        self.norm.ensure_tool(&req.tool_call, &mut out);
                        out.into_iter().for_each(|e| ctx.emit(e));
                        let id = req.tool_call.tool_call_id.0.to_string();
                        let name = self
                            .norm
                            .tool(&id)
                            .map(|t| t.name.clone())
                            .unwrap_or_else(|| "tool".into());
                        asked += 1;
                        let inter = permission::question_interaction(&req, format!("ask-{asked}-{id}"))
                            .unwrap_or_else(|| permission::interaction(&req, format!("perm-{asked}-{id}"), &name));
                        let ctx = ctx.clone();
                        asks.push(async move {
                            let answer = ctx.ask_user(inter).await;
                            (req, responder, answer)
                        }.boxed());
                    }
                    Some(Incoming::Elicitation(req, responder)) => {
                        asked += 1;
                        let form = elicit::form(&req, format!("ask-{asked}"));
                        match form {
                            Some(form) if deadline.is_none() => {
                                let ctx = ctx.clone();
                                forms.push(async move {
                                    let answer = ctx.ask_user(form.interaction.clone()).await;
                                    (form, responder, answer)
                                }.boxed());
                            }
                            Some(_) => {
                                let _ = responder.respond(CreateElicitationResponse::new(ElicitationAction::Cancel));
                            }
                            None => {
                                let _ = responder.respond(CreateElicitationResponse::new(ElicitationAction::Decline));
                            }
                        }
                    }
                    Some(Incoming::Closed(_)) | None => {
                        self.conn.closed = true;
                        break TurnEnd::Died(self.conn.exit_error().await.to_string());
                    }
                },
                Some((form, responder, answer)) = forms.next(), if !forms.is_empty() => {
                    let _ = responder.respond(form.response(&answer));
                }
                Some((req, responder, answer)) = asks.next(), if !asks.is_empty() => {
                    let (reply, allowed) = permission::answer(&req, &answer);
                    let _ = responder.respond(reply);
                    if !allowed {
                        let id = req.tool_call.tool_call_id.0.to_string();
                        if let Some(e) = self.norm.settle_tool(&id, ToolStatus::Failed, "denied by the user") {
                            ctx.emit(e);
                        }
                    }
                }
                reply = &mut prompt => {
                    self.drain(ctx);
                    break match reply {
                        Ok(v) => {
                            if let Some(e) = self.norm.prompt_usage(&v) {
                                ctx.emit(e);
                            }
                            let stop_reason = v["stopReason"].as_str().unwrap_or("end_turn").to_string();
                            if deadline.is_some() {
                                TurnEnd::Stopped { clean: true }
                            } else if stop_reason == "cancelled" {
                                // Nobody asked for it: the agent ended the turn itself
                                // (codex-acp does when a command is refused). A turn
                                // that ended, not a stopped one.
                                ctx.emit(DriverEvent::Notice {
                                    text: "The agent ended the turn itself (cancelled)".into(),
                                });
                                TurnEnd::Done { stop_reason }
                            } else {
                                TurnEnd::Done { stop_reason }
                            }
                        }
                        Err(e) => {
                            if self.conn.cx.is_incoming_closed() || self.conn.process.exit_status().is_some() {
                                self.conn.closed = true;
                                TurnEnd::Died(self.conn.exit_error().await.to_string())
                            } else {
                                TurnEnd::Failed(format!("session/prompt failed: {e}"))
                            }
                        }
                    };
                }
                _ = ctx.cancelled(), if deadline.is_none() => {
                    self.conn.cancel(&self.session_id);
                    deadline = Some(tokio::time::Instant::now() + stop_grace);
                }
                _ = sleep_until(deadline), if deadline.is_some() => {
                    break TurnEnd::Stopped { clean: false };
                }
                _ = sleep_until(live_due), if live_due.is_some() => {
                    let mut out = Vec::new();
                    self.norm.flush_live(std::time::Instant::now(), &mut out);
                    out.into_iter().for_each(|e| ctx.emit(e));
                }
            }
        };
        // Whatever is still asked is withdrawn: dropping a responder answers the agent.
        drop(asks);
        drop(forms);
        let note = match &end {
            TurnEnd::Done { .. } => None,
            TurnEnd::Stopped { .. } => Some("stopped"),
            TurnEnd::Died(_) | TurnEnd::Failed(_) => Some("the turn ended before a result"),
        };
        if let Some(note) = note {
            for id in self.norm.running_tools() {
                if let Some(e) = self.norm.settle_tool(&id, ToolStatus::Failed, note) {
                    ctx.emit(e);
                }
            }
        }
        end
    }

    /// What the agent sent since the last turn ended: notifications that describe the
    /// session (commands, mode) are kept, text becomes a notice rather than part of
    /// this turn, requests wait for the turn.
    fn between_turns(&mut self, ctx: &DriverContext) -> VecDeque<Incoming> {
        let mut early = VecDeque::new();
        let mut late = String::new();
        while let Ok(msg) = self.conn.incoming.try_recv() {
            match msg {
                Incoming::Notification { method, params } => {
                    let mut out = Vec::new();
                    self.norm.notification(&method, &params, &mut out);
                    for e in out {
                        match e {
                            DriverEvent::Text { delta } => late.push_str(&delta),
                            // Commands announced after the last turn ended (Gemini's
                            // come a moment after session/new) belong to this one.
                            c @ DriverEvent::Commands { .. } => ctx.emit(c),
                            _ => {}
                        }
                    }
                }
                other => early.push_back(other),
            }
        }
        if std::mem::take(&mut self.replaying) {
            late.clear();
        }
        if !late.trim().is_empty() {
            let short: String = late.chars().take(500).collect();
            ctx.emit(DriverEvent::Notice {
                text: format!("The agent wrote after the last turn had ended: {short}"),
            });
        }
        early
    }

    fn note(&mut self, method: &str, params: &Value, ctx: &DriverContext) {
        let mut out = Vec::new();
        self.norm.notification(method, params, &mut out);
        out.into_iter().for_each(|e| ctx.emit(e));
    }

    /// Folds what arrived before the prompt's reply; a late permission request is
    /// refused (the turn is over).
    fn drain(&mut self, ctx: &DriverContext) {
        while let Ok(msg) = self.conn.incoming.try_recv() {
            match msg {
                Incoming::Notification { method, params } => self.note(&method, &params, ctx),
                Incoming::Permission(_, responder) => {
                    let _ = responder
                        .respond(permission::reply(RequestPermissionOutcome::Cancelled, None));
                }
                Incoming::Elicitation(_, responder) => {
                    let _ = responder
                        .respond(CreateElicitationResponse::new(ElicitationAction::Cancel));
                }
                Incoming::Closed(_) => self.conn.closed = true,
            }
        }
    }
}

async fn next_incoming(
    early: &mut VecDeque<Incoming>,
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<Incoming>,
) -> Option<Incoming> {
    match early.pop_front() {
        Some(m) => Some(m),
        None => rx.recv().await,
    }
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// The prompt as content blocks: the system prompt first on a new session, the text,
/// then each attachment: an image as image content fitted to the vendor's limits when
/// the agent's `promptCapabilities.image` says it takes images, anything else as a
/// resource link (every ACP agent takes those).
pub fn prompt_blocks(
    input: &AgentTurnInput,
    fresh: bool,
    caps: &PromptCapabilities,
) -> Vec<ContentBlock> {
    let mut blocks = Vec::new();
    if fresh {
        if let Some(sp) = input
            .system_prompt
            .as_ref()
            .filter(|s| !s.trim().is_empty())
        {
            blocks.push(ContentBlock::Text(TextContent::new(sp.clone())));
        }
    }
    blocks.push(ContentBlock::Text(TextContent::new(input.prompt.clone())));
    let limits = match input.session_key.split(':').next() {
        Some("gemini") => weft_attachments::GEMINI,
        _ => weft_attachments::CLAUDE,
    };
    for path in &input.attachments {
        if caps.image && weft_attachments::looks_like_image(path) {
            if let Ok(img) = weft_attachments::prepare_image(path, limits) {
                let mut content = ImageContent::new(img.base64(), img.mime);
                content.uri = Some(format!("file://{}", path.display()));
                blocks.push(ContentBlock::Image(content));
                continue;
            }
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        blocks.push(ContentBlock::ResourceLink(ResourceLink::new(
            name,
            format!("file://{}", path.display()),
        )));
    }
    blocks
}

/// Turns a start-up error into the message a failed turn carries.
pub fn start_error(agent: &str, e: &ConnError) -> String {
    format!("{agent}: {e}")
}
