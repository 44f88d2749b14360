//! What Weft knows about its own agent, as data.

use weft_agent_spec::spec::{
    AccountForm, AccountKind, AgentSpec, Binding, Can, EnvValue, McpForm, Need,
};
use weft_protocol::Capabilities;

/// The native agent's spec.
pub fn spec() -> AgentSpec {
    // Its `endpoint`: a base URL and protocol, a key when the server wants one (a local
    // server may not). The driver reads these (config.rs); WEFT_NATIVE_ACCOUNT makes
    // them win over providers.json.
    let mut endpoint = AccountKind::new("endpoint", false, Need::Optional, Need::Required)
        .set("WEFT_NATIVE_ACCOUNT", EnvValue::AccountId)
        .set("WEFT_NATIVE_PROTOCOL", EnvValue::Protocol)
        .set("WEFT_NATIVE_BASE_URL", EnvValue::BaseUrl)
        .set("WEFT_NATIVE_MODEL", EnvValue::FirstModel)
        .set("WEFT_NATIVE_MODELS", EnvValue::Models)
        .set("WEFT_NATIVE_API_KEY", EnvValue::Secret)
        .bound(Binding::ProtocolAndUrl);
    endpoint.protocols = [
        "anthropic-messages",
        "openai-responses",
        "openai-chat",
        "gemini",
    ]
    .map(String::from)
    .to_vec();
    let mut spec = AgentSpec::new("native", "Weft agent (native)");
    spec.accounts = AccountForm::Kinds(vec![endpoint]);
    spec.mcp = McpForm::Native;
    spec.can = Can {
        capabilities: Capabilities {
            steer: true,
            interact: true,
            resume: true,
            tui: false,
        },
        attachments: true,
        fork_at_turn: false,
        // Weft applies its changes itself, so a turn's patch can be taken back.
        undo: true,
    };
    spec.packs = vec!["coding".into(), "notes".into(), "data".into()];
    spec
}
