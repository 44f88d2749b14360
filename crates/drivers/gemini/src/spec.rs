//! What Weft knows about the Gemini CLI, as data.

use weft_agent_spec::spec::{
    AccountForm, AccountKind, AgentSpec, Binding, Can, ConfigHome, EnvValue, Install, LoggedIn,
    McpForm, Need, OwnMcpFile, OwnMcpFormat, Probe, SkillsDir, SkillsForm,
};
use weft_protocol::Capabilities;

/// The Gemini CLI's spec.
pub fn spec() -> AgentSpec {
    let home = "GEMINI_CLI_HOME";
    let key = |id: &str, base: Need| {
        let mut kind = AccountKind::new(id, false, Need::Required, base)
            .set(home, EnvValue::AmbientHome)
            .set("GOOGLE_GEMINI_BASE_URL", EnvValue::BaseUrl)
            .set("GEMINI_API_KEY", EnvValue::Secret)
            .probed(Probe {
                default_base: "https://generativelanguage.googleapis.com".into(),
                path: "/v1beta/models".into(),
                key_header: Some("x-goog-api-key".into()),
                headers: Vec::new(),
            });
        kind.settings_auth = Some("gemini-api-key".into());
        kind
    };
    let mut vertex = AccountKind::new("vertex", false, Need::Optional, Need::Optional)
        .set(home, EnvValue::AmbientHome)
        .set("GOOGLE_GEMINI_BASE_URL", EnvValue::BaseUrl)
        .set(
            "GOOGLE_GENAI_USE_VERTEXAI",
            EnvValue::Literal("true".into()),
        )
        .set("GOOGLE_API_KEY", EnvValue::Secret);
    vertex.settings_auth = Some("vertex-ai".into());
    let mut spec = AgentSpec::new("gemini", "Gemini CLI");
    spec.install = Some(Install::npm("gemini", "@google/gemini-cli"));
    // GEMINI_CLI_HOME names the folder gemini puts its own `.gemini` in.
    spec.config_home = Some(ConfigHome {
        var: home.into(),
        default_dir: None,
        logged_in: Some(LoggedIn {
            file: ".gemini/oauth_creds.json".into(),
            oauth: None,
        }),
    });
    // Its login is its first-run dialog ("Login with Google").
    spec.login = Some(Vec::new());
    spec.offer = ["api-key", "endpoint", "login", "vertex"]
        .map(String::from)
        .to_vec();
    spec.accounts = AccountForm::Kinds(vec![
        AccountKind::new("login", true, Need::No, Need::No)
            .set(home, EnvValue::Home)
            .bound(Binding::Home),
        key("api-key", Need::Optional),
        key("endpoint", Need::Required),
        vertex,
    ]);
    spec.skills = vec![SkillsDir::Both(".gemini/skills".into())];
    spec.skills_form = SkillsForm::Shared(".gemini".into());
    spec.mcp = McpForm::GeminiSettings;
    spec.own_mcp = vec![OwnMcpFile {
        file: ".gemini/settings.json".into(),
        format: OwnMcpFormat::JsonMcpServersSseUrl,
    }];
    spec.can = Can {
        capabilities: Capabilities {
            steer: false,
            interact: true,
            resume: true,
            tui: true,
        },
        attachments: true,
        fork_at_turn: true,
        undo: false,
    };
    spec.switch_reason = Some(
        "Gemini keeps its sessions in the account's home, and the other account has another one"
            .into(),
    );
    spec
}
