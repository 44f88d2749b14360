//! What Weft knows about Claude Code, as data.

use weft_agent_spec::spec::{
    AccountForm, AccountKind, AgentSpec, Binding, Can, ConfigHome, EnvValue, Install, LoggedIn,
    McpForm, Need, OwnMcpFile, OwnMcpFormat, Probe, SkillsDir, SkillsForm, TranscriptLayout,
};
use weft_protocol::Capabilities;

/// Claude Code's spec.
pub fn spec() -> AgentSpec {
    let home = "CLAUDE_CONFIG_DIR";
    let probe = |key_header: Option<&str>, beta: bool| {
        let mut headers = vec![("anthropic-version".into(), "2023-06-01".into())];
        if beta {
            headers.push(("anthropic-beta".into(), "oauth-2025-04-20".into()));
        }
        Probe {
            default_base: "https://api.anthropic.com".into(),
            path: "/v1/models".into(),
            key_header: key_header.map(str::to_string),
            headers,
        }
    };
    // Signatures of Claude's thinking hold across Anthropic's API, Bedrock and Vertex.
    let anthropic = || Binding::Fixed("anthropic".into());
    let key = |id: &str, secret: Need, base: Need, base_var: &str| {
        AccountKind::new(id, false, secret, base)
            .set(home, EnvValue::AmbientHome)
            .set(base_var, EnvValue::BaseUrl)
            .bound(anthropic())
    };
    let (req, opt) = (Need::Required, Need::Optional);
    let mut spec = AgentSpec::new("claude", "Claude Code");
    spec.install = Some(Install {
        // Its postinstall puts the native binary in place; npm may skip scripts.
        repair: Some(vec!["node".into(), "install.cjs".into()]),
        ..Install::npm("claude", "@anthropic-ai/claude-code")
    });
    spec.config_home = Some(ConfigHome {
        var: home.into(),
        default_dir: Some(".claude".into()),
        logged_in: Some(LoggedIn {
            file: ".credentials.json".into(),
            oauth: Some("claudeAiOauth".into()),
        }),
    });
    spec.login = Some(vec!["auth".into(), "login".into()]);
    spec.offer = [
        "api-key",
        "gateway",
        "setup-token",
        "login",
        "bedrock",
        "vertex",
    ]
    .map(String::from)
    .to_vec();
    spec.accounts = AccountForm::Kinds(vec![
        AccountKind::new("login", true, Need::No, Need::No)
            .set(home, EnvValue::Home)
            .bound(anthropic()),
        key("setup-token", req, opt, "ANTHROPIC_BASE_URL")
            .set("CLAUDE_CODE_OAUTH_TOKEN", EnvValue::Secret)
            .probed(probe(None, true)),
        key("api-key", req, opt, "ANTHROPIC_BASE_URL")
            .set("ANTHROPIC_API_KEY", EnvValue::Secret)
            .probed(probe(Some("x-api-key"), false)),
        key("gateway", req, req, "ANTHROPIC_BASE_URL")
            .set("ANTHROPIC_AUTH_TOKEN", EnvValue::Secret)
            .set("ANTHROPIC_MODEL", EnvValue::FirstModel)
            .bound(Binding::BaseUrl("gateway".into()))
            .probed(probe(None, false)),
        key("bedrock", opt, opt, "ANTHROPIC_BEDROCK_BASE_URL")
            .set("CLAUDE_CODE_USE_BEDROCK", EnvValue::Literal("1".into()))
            .set("AWS_BEARER_TOKEN_BEDROCK", EnvValue::Secret),
        key("vertex", opt, opt, "ANTHROPIC_VERTEX_BASE_URL")
            .set("CLAUDE_CODE_USE_VERTEX", EnvValue::Literal("1".into())),
    ]);
    // The Bash tool, hooks and MCP servers Claude starts do not inherit the credential.
    spec.account_env = vec![("CLAUDE_CODE_SUBPROCESS_ENV_SCRUB".into(), "1".into())];
    spec.skills = vec![SkillsDir::Both(".claude/skills".into())];
    spec.skills_form = SkillsForm::AddDir(".claude".into());
    spec.mcp = McpForm::ClaudeConfig;
    spec.own_mcp = vec![OwnMcpFile {
        file: ".claude.json".into(),
        format: OwnMcpFormat::JsonMcpServers,
    }];
    spec.transcript = Some(TranscriptLayout::ProjectsJsonl);
    spec.can = Can {
        capabilities: Capabilities {
            steer: true,
            interact: true,
            resume: true,
            tui: true,
        },
        attachments: true,
        fork_at_turn: true,
        undo: false,
    };
    spec.ambient_binding = "anthropic".into();
    spec.switch_reason = Some(
        "Claude signs its thinking for the provider it ran on, and the other account is \
         another provider"
            .into(),
    );
    spec
}
