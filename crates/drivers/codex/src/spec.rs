//! What Weft knows about Codex, as data.

use weft_agent_spec::spec::{
    AccountForm, AccountKind, AgentSpec, Binding, Can, ConfigHome, EnvValue, Install, LoggedIn,
    McpForm, Need, OwnMcpFile, OwnMcpFormat, Probe, SkillsDir, SkillsForm, TranscriptLayout,
};
use weft_protocol::Capabilities;

/// The variable holding a key account's key: codex's own `*KEY*` default keeps it out
/// of the model's shell, and the account's arguments exclude it explicitly too.
pub const KEY_VAR: &str = "WEFT_ACCOUNT_KEY";

/// Codex's spec.
pub fn spec() -> AgentSpec {
    let home = "CODEX_HOME";
    // A key or endpoint account is a `weft` model provider (`-c model_providers.weft.*`,
    // through the driver's WEFT_CODEX_BASE_URL / WEFT_CODEX_API_KEY_ENV).
    let key = |id: &str, base: Need| {
        let mut kind = AccountKind::new(id, false, Need::Required, base)
            .set(home, EnvValue::AmbientHome)
            .set(
                "WEFT_CODEX_BASE_URL",
                EnvValue::BaseUrlOr("https://api.openai.com/v1".into()),
            )
            .set("WEFT_CODEX_API_KEY_ENV", EnvValue::Literal(KEY_VAR.into()))
            .set(KEY_VAR, EnvValue::Secret)
            .bound(Binding::Account)
            .probed(Probe {
                default_base: "https://api.openai.com/v1".into(),
                path: "/models".into(),
                key_header: None,
                headers: Vec::new(),
            });
        kind.args = vec![
            "-c".into(),
            format!("shell_environment_policy.exclude=[\"{KEY_VAR}\"]"),
        ];
        kind
    };
    let mut spec = AgentSpec::new("codex", "Codex");
    spec.install = Some(Install::npm("codex", "@openai/codex"));
    spec.config_home = Some(ConfigHome {
        var: home.into(),
        default_dir: Some(".codex".into()),
        logged_in: Some(LoggedIn {
            file: "auth.json".into(),
            oauth: None,
        }),
    });
    spec.login = Some(vec!["login".into()]);
    spec.offer = ["api-key", "endpoint", "login"].map(String::from).to_vec();
    spec.accounts = AccountForm::Kinds(vec![
        AccountKind::new("login", true, Need::No, Need::No)
            .set(home, EnvValue::Home)
            .bound(Binding::Account),
        key("api-key", Need::Optional),
        key("endpoint", Need::Required).bound(Binding::BaseUrl("endpoint".into())),
    ]);
    spec.skills = vec![
        SkillsDir::Both(".agents/skills".into()),
        SkillsDir::Home(".codex/skills".into()),
    ];
    spec.skills_form = SkillsForm::Shared(".codex".into());
    spec.mcp = McpForm::CodexOverrides;
    spec.own_mcp = vec![OwnMcpFile {
        file: ".codex/config.toml".into(),
        format: OwnMcpFormat::TomlMcpServers,
    }];
    spec.transcript = Some(TranscriptLayout::DatedRollouts);
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
    spec.switch_reason = Some(
        "Codex's reasoning is encrypted for the account's organisation, which the other \
         account cannot read"
            .into(),
    );
    spec
}
