//! Plugins: what Weft adds to every agent's spawn, whatever the agent. A plugin is
//! registered with the [`crate::LoomBuilder`] and asked, per spawn (the structured rail
//! and the PTY rail alike), for MCP servers (`tools`), a system-prompt fragment, and
//! environment / arguments; and, per snapshot, to decorate it.
//!
//! Plugins compose in registration order and deterministically: servers are
//! concatenated (the first plugin naming a server keeps it), fragments joined in
//! order, environment and arguments appended after the
//! account's (a later variable wins, as in [`AgentTurnInput::spawn_env`]). A
//! contribution lands in the spawn's own `AgentTurnInput`: the kernel's process
//! environment is never touched.

use std::any::Any;
use std::sync::Arc;

use weft_protocol::UniversalSnapshot;

use crate::driver::AgentTurnInput;
use crate::mcp::McpServer;

/// What a plugin is asked about: the spawn as it stands so far (the account's
/// environment already in `input.env`).
pub struct SpawnCx<'a> {
    /// The agent id (`claude`, `codex`, `native`, …).
    pub agent: &'a str,
    /// The spawn's input.
    pub input: &'a AgentTurnInput,
    /// True when this spawn starts a new agent session (the agent has not seen this
    /// Weft session yet: its first turn, or the first after a change of agent).
    pub is_first_turn: bool,
}

/// Environment and arguments a plugin adds to one spawn, and what must live as long
/// as the spawn's turn (a temporary file the agent reads, removed when it is dropped).
/// Its `Debug` names variables only.
#[derive(Default)]
pub struct SpawnContribution {
    /// Variables to set, after the account's.
    pub env: Vec<(String, String)>,
    /// Arguments to add.
    pub extra_args: Vec<String>,
    /// Held until the turn ends, then dropped.
    pub keep: Vec<Box<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for SpawnContribution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpawnContribution")
            .field("env", &crate::driver::EnvNames(&self.env))
            .field("extra_args", &self.extra_args)
            .field("keep", &self.keep.len())
            .finish()
    }
}

/// One plugin. Every method has a default that contributes nothing.
pub trait Plugin: Send + Sync {
    /// Its id, for messages.
    fn id(&self) -> &str;

    /// MCP servers this spawn's agent gets.
    fn tools(&self, _cx: &SpawnCx) -> Vec<McpServer> {
        Vec::new()
    }

    /// A fragment for the system prompt.
    fn prompt_fragment(&self, _cx: &SpawnCx) -> Option<String> {
        None
    }

    /// Environment and arguments for the spawn; `tools` is the composed server list
    /// (every plugin's), so a plugin can hand it to the agent in the agent's own form.
    /// An error fails the turn with that message before any process starts.
    fn contribute_spawn(
        &self,
        _cx: &SpawnCx,
        _tools: &[McpServer],
    ) -> Result<SpawnContribution, String> {
        Ok(SpawnContribution::default())
    }

    /// Adds to a session's snapshot (as a surface reads it).
    fn decorate_snapshot(&self, _session_key: &str, _snapshot: &mut UniversalSnapshot) {}
}

/// The registered plugins, composed.
#[derive(Clone, Default)]
pub struct Plugins(pub(crate) Vec<Arc<dyn Plugin>>);

impl Plugins {
    /// Plugins in this order.
    pub fn new(plugins: Vec<Arc<dyn Plugin>>) -> Self {
        Self(plugins)
    }

    /// True when none is registered.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Applies every plugin to `input` (whose `env` already holds the account's):
    /// servers into `mcp_servers`, fragments onto `system_prompt`, environment and
    /// arguments appended. Returns what must be held until the turn ends.
    pub fn apply(
        &self,
        agent: &str,
        input: &mut AgentTurnInput,
        is_first_turn: bool,
    ) -> Result<Vec<Box<dyn Any + Send + Sync>>, String> {
        if self.0.is_empty() {
            return Ok(Vec::new());
        }
        let mut servers: Vec<McpServer> = Vec::new();
        let mut fragments: Vec<String> = Vec::new();
        {
            let cx = SpawnCx {
                agent,
                input,
                is_first_turn,
            };
            for p in &self.0 {
                for s in p.tools(&cx) {
                    if !servers.iter().any(|k| k.name == s.name) {
                        servers.push(s);
                    }
                }
                if let Some(f) = p.prompt_fragment(&cx).filter(|f| !f.trim().is_empty()) {
                    fragments.push(f);
                }
            }
        }
        let mut env = Vec::new();
        let mut args = Vec::new();
        let mut keep = Vec::new();
        {
            let cx = SpawnCx {
                agent,
                input,
                is_first_turn,
            };
            for p in &self.0 {
                let c = p
                    .contribute_spawn(&cx, &servers)
                    .map_err(|e| format!("{}: {e}", p.id()))?;
                env.extend(c.env);
                args.extend(c.extra_args);
                keep.extend(c.keep);
            }
        }
        if !fragments.is_empty() {
            let mut all: Vec<String> = input.system_prompt.take().into_iter().collect();
            all.extend(fragments);
            input.system_prompt = Some(all.join("\n\n"));
        }
        input.mcp_servers.extend(servers);
        input.env.extend(env);
        input.extra_args.extend(args);
        Ok(keep)
    }

    /// The MCP servers the plugins give a spawn of `input` (what [`Self::apply`] adds
    /// to `mcp_servers`), without contributing anything else.
    pub fn servers(&self, agent: &str, input: &AgentTurnInput) -> Vec<McpServer> {
        let cx = SpawnCx {
            agent,
            input,
            is_first_turn: true,
        };
        let mut servers: Vec<McpServer> = Vec::new();
        for s in self.0.iter().flat_map(|p| p.tools(&cx)) {
            if !servers.iter().any(|k| k.name == s.name) {
                servers.push(s);
            }
        }
        servers
    }

    /// Lets every plugin decorate `snapshot`, in order.
    pub fn decorate(&self, session_key: &str, snapshot: &mut UniversalSnapshot) {
        for p in &self.0 {
            p.decorate_snapshot(session_key, snapshot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct P(&'static str, bool);

    impl Plugin for P {
        fn id(&self) -> &str {
            self.0
        }
        fn tools(&self, _: &SpawnCx) -> Vec<McpServer> {
            vec![
                McpServer {
                    name: "shared".into(),
                    command: Some(format!("{}-shared", self.0)),
                    ..Default::default()
                },
                McpServer {
                    name: self.0.into(),
                    command: Some(self.0.into()),
                    ..Default::default()
                },
            ]
        }
        fn prompt_fragment(&self, cx: &SpawnCx) -> Option<String> {
            (cx.is_first_turn || !self.1).then(|| format!("from {}", self.0))
        }
        fn contribute_spawn(
            &self,
            cx: &SpawnCx,
            tools: &[McpServer],
        ) -> Result<SpawnContribution, String> {
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            Ok(SpawnContribution {
                env: vec![
                    ("SAME".into(), self.0.into()),
                    (format!("SEEN_{}", self.0), names.join(",")),
                    (
                        "ACCOUNT_SEEN".into(),
                        cx.input.var("KEY").unwrap_or_default(),
                    ),
                ],
                extra_args: vec![format!("--{}", self.0)],
                keep: vec![Box::new(self.0)],
            })
        }
        fn decorate_snapshot(&self, _: &str, s: &mut UniversalSnapshot) {
            s.notices.push(self.0.into());
        }
    }

    #[test]
    fn plugins_merge_in_registration_order_after_the_account(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let plugins = Plugins::new(vec![Arc::new(P("one", false)), Arc::new(P("two", true))]);
        let mut input = AgentTurnInput {
            system_prompt: Some("base".into()),
            env: vec![
                ("KEY".into(), "account".into()),
                ("SAME".into(), "account".into()),
            ],
            extra_args: vec!["--account".into()],
            ..Default::default()
        };
        let keep = plugins.apply("claude", &mut input, true)?;
        assert_eq!(keep.len(), 2);
        let names: Vec<(&str, &str)> = input
            .mcp_servers
            .iter()
            .map(|s| (s.name.as_str(), s.command.as_deref().unwrap_or_default()))
            .collect();
        assert_eq!(
            names,
            [("shared", "one-shared"), ("one", "one"), ("two", "two")]
        );
        assert_eq!(
            input.system_prompt.as_deref(),
            Some("base\n\nfrom one\n\nfrom two")
        );
        assert_eq!(input.extra_args, ["--account", "--one", "--two"]);
        assert_eq!(input.var("SAME").as_deref(), Some("two"));
        assert_eq!(input.var("SEEN_one").as_deref(), Some("shared,one,two"));
        assert_eq!(input.var("ACCOUNT_SEEN").as_deref(), Some("account"));
        let env: std::collections::BTreeMap<_, _> = input.spawn_env().into_iter().collect();
        assert_eq!(env["SAME"], "two");
        assert!(
            std::env::var("SEEN_one").is_err(),
            "the process env is untouched"
        );

        let mut later = AgentTurnInput::default();
        plugins.apply("claude", &mut later, false)?;
        assert_eq!(later.system_prompt.as_deref(), Some("from one"));

        let mut snap = UniversalSnapshot::default();
        plugins.decorate("claude:1", &mut snap);
        assert_eq!(snap.notices, ["one", "two"]);
        Ok(())
    }

    #[test]
    fn a_failing_contribution_is_named() {
        struct Bad;
        impl Plugin for Bad {
            fn id(&self) -> &str {
                "bad"
            }
            fn contribute_spawn(
                &self,
                _: &SpawnCx,
                _: &[McpServer],
            ) -> Result<SpawnContribution, String> {
                Err("cannot write its file".into())
            }
        }
        let plugins = Plugins::new(vec![Arc::new(Bad)]);
        let err = plugins
            .apply("codex", &mut AgentTurnInput::default(), true)
            .err();
        assert_eq!(err.as_deref(), Some("bad: cannot write its file"));
    }
}
