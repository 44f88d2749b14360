//! Where the model is: a protocol, a base URL, a credential, models.
//!
//! Read for each turn through the turn's own environment (`AgentTurnInput::var`: the
//! session's account, else the client's environment), then `<WEFT_HOME>/providers.json`:
//!
//! ```json
//! { "default": "local",
//!   "providers": {
//!     "local": { "protocol": "openai-chat", "baseUrl": "http://127.0.0.1:11434/v1",
//!                "models": ["qwen3:8b"], "contextWindow": 32768 },
//!     "anthropic": { "protocol": "anthropic-messages", "apiKeyEnv": "ANTHROPIC_API_KEY",
//!                    "models": ["claude-sonnet-4-5"] } } }
//! ```
//!
//! The file names the variable holding a key (`apiKeyEnv`), never the key: secrets stay
//! out of files. Without the file, `WEFT_NATIVE_PROTOCOL` / `WEFT_NATIVE_BASE_URL` /
//! `WEFT_NATIVE_API_KEY` / `WEFT_NATIVE_MODEL` (`WEFT_NATIVE_MODELS`, a comma list)
//! configure one endpoint — and a session's Weft account sets them with
//! `WEFT_NATIVE_ACCOUNT`, which then wins over the file — and
//! `ANTHROPIC_API_KEY` (with `ANTHROPIC_BASE_URL`), `OPENAI_API_KEY` (with
//! `OPENAI_BASE_URL`; Responses) or `GEMINI_API_KEY` (with `GOOGLE_GEMINI_BASE_URL`)
//! are used as they are.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;

use crate::model::anthropic::{AnthropicClient, Auth};
use crate::model::chat::ChatClient;
use crate::model::gemini::GeminiClient;
use crate::model::responses::ResponsesClient;
use crate::model::ModelClient;

/// A model protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// Anthropic Messages.
    AnthropicMessages,
    /// OpenAI Chat Completions (and compatible servers).
    OpenAiChat,
    /// OpenAI Responses.
    OpenAiResponses,
    /// Gemini `streamGenerateContent`.
    Gemini,
}

impl Protocol {
    /// From its name in settings.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s.trim() {
            "anthropic-messages" | "anthropic" => Ok(Self::AnthropicMessages),
            "openai-chat" | "openai-completions" | "chat" => Ok(Self::OpenAiChat),
            "openai-responses" | "responses" | "openai" => Ok(Self::OpenAiResponses),
            "gemini" | "google-generative-ai" => Ok(Self::Gemini),
            other => Err(format!(
                "unknown model protocol {other:?} (known: anthropic-messages, openai-responses, openai-chat, gemini)"
            )),
        }
    }
}

/// One endpoint as `providers.json` describes it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ProviderEntry {
    /// `anthropic-messages`, `openai-chat`, ….
    pub protocol: String,
    /// The base URL (the protocol's default when absent).
    pub base_url: Option<String>,
    /// The variable holding the key.
    pub api_key_env: Option<String>,
    /// Models offered; the first is the default.
    pub models: Vec<String>,
    /// The models' context window in tokens.
    pub context_window: Option<u64>,
}

/// `providers.json`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ProvidersFile {
    /// The provider used when none is asked for.
    pub default: Option<String>,
    /// Providers by name.
    pub providers: BTreeMap<String, ProviderEntry>,
}

/// A resolved endpoint. Its `Debug` leaves the key out.
#[derive(Clone)]
pub struct Endpoint {
    /// The provider's name.
    pub name: String,
    /// Its protocol.
    pub protocol: Protocol,
    /// Its base URL.
    pub base_url: String,
    /// The key, when one is needed.
    pub api_key: Option<String>,
    /// The model to use.
    pub model: String,
    /// Models offered.
    pub models: Vec<String>,
    /// The context window, in tokens.
    pub context_window: u64,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("name", &self.name)
            .field("protocol", &self.protocol)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("model", &self.model)
            .finish()
    }
}

impl Endpoint {
    /// The client for this endpoint.
    pub fn client(&self) -> Arc<dyn ModelClient> {
        match self.protocol {
            Protocol::AnthropicMessages => Arc::new(AnthropicClient::new(
                &self.base_url,
                self.api_key.clone().map_or(Auth::None, Auth::ApiKey),
            )),
            Protocol::OpenAiChat => Arc::new(ChatClient::new(
                &self.base_url,
                self.api_key.clone(),
                &self.name,
            )),
            Protocol::OpenAiResponses => {
                Arc::new(ResponsesClient::new(&self.base_url, self.api_key.clone()))
            }
            Protocol::Gemini => Arc::new(GeminiClient::new(&self.base_url, self.api_key.clone())),
        }
    }
}

fn default_base(p: Protocol) -> &'static str {
    match p {
        Protocol::AnthropicMessages => "https://api.anthropic.com",
        Protocol::OpenAiChat | Protocol::OpenAiResponses => "https://api.openai.com/v1",
        Protocol::Gemini => "https://generativelanguage.googleapis.com",
    }
}

fn default_model(p: Protocol) -> &'static str {
    match p {
        Protocol::AnthropicMessages => "claude-sonnet-4-5",
        Protocol::OpenAiChat | Protocol::OpenAiResponses => "gpt-5",
        Protocol::Gemini => "gemini-2.5-pro",
    }
}

/// Reads `<home>/providers.json` (none: empty; unreadable JSON: an error saying where).
pub fn providers_file(home: &Path) -> Result<ProvidersFile, String> {
    let path = home.join("providers.json");
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display())),
        Err(_) => Ok(ProvidersFile::default()),
    }
}

/// The endpoint for a turn: `var` reads the turn's environment, `home` holds
/// `providers.json`, `model` is the model the user asked for.
pub fn resolve(
    var: &dyn Fn(&str) -> Option<String>,
    home: &Path,
    model: Option<&str>,
) -> Result<Endpoint, String> {
    let nonempty = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    let file = providers_file(home)?;
    // A Weft account's endpoint (WEFT_NATIVE_ACCOUNT, set with the account's
    // WEFT_NATIVE_* by the accounts crate) is what the user picked for this session: it
    // wins over the file.
    let wanted = match nonempty("WEFT_NATIVE_ACCOUNT") {
        Some(_) => None,
        None => nonempty("WEFT_NATIVE_PROVIDER").or_else(|| file.default.clone()),
    };
    if let Some(name) = wanted.filter(|n| file.providers.contains_key(n)) {
        let e = &file.providers[&name];
        let protocol = Protocol::parse(&e.protocol)?;
        let api_key = match &e.api_key_env {
            Some(env) => Some(nonempty(env).ok_or_else(|| {
                format!("provider {name} takes its key from ${env}, which is not set")
            })?),
            None => None,
        };
        return Ok(Endpoint {
            protocol,
            base_url: e
                .base_url
                .clone()
                .unwrap_or_else(|| default_base(protocol).into()),
            api_key,
            model: model
                .map(String::from)
                .or_else(|| nonempty("WEFT_NATIVE_MODEL"))
                .or_else(|| e.models.first().cloned())
                .unwrap_or_else(|| default_model(protocol).into()),
            models: e.models.clone(),
            context_window: e.context_window.unwrap_or(200_000),
            name,
        });
    }
    let pick =
        |protocol: Protocol, name: &str, base: Option<String>, key: Option<String>| Endpoint {
            name: name.into(),
            protocol,
            base_url: base.unwrap_or_else(|| default_base(protocol).into()),
            api_key: key,
            model: model
                .map(String::from)
                .or_else(|| nonempty("WEFT_NATIVE_MODEL"))
                .unwrap_or_else(|| default_model(protocol).into()),
            models: nonempty("WEFT_NATIVE_MODELS")
                .map(|m| m.split(',').map(|s| s.trim().to_string()).collect())
                .unwrap_or_default(),
            context_window: nonempty("WEFT_NATIVE_CONTEXT_WINDOW")
                .and_then(|v| v.parse().ok())
                .unwrap_or(200_000),
        };
    if let Some(p) = nonempty("WEFT_NATIVE_PROTOCOL") {
        let protocol = Protocol::parse(&p)?;
        return Ok(pick(
            protocol,
            &p,
            nonempty("WEFT_NATIVE_BASE_URL"),
            nonempty("WEFT_NATIVE_API_KEY"),
        ));
    }
    // A provider's own key variables, in the order they are looked at.
    const KEYED: [(&str, Protocol, &str, &str); 3] = [
        (
            "ANTHROPIC_API_KEY",
            Protocol::AnthropicMessages,
            "anthropic",
            "ANTHROPIC_BASE_URL",
        ),
        (
            "OPENAI_API_KEY",
            Protocol::OpenAiResponses,
            "openai",
            "OPENAI_BASE_URL",
        ),
        (
            "GEMINI_API_KEY",
            Protocol::Gemini,
            "gemini",
            "GOOGLE_GEMINI_BASE_URL",
        ),
    ];
    for (key_var, protocol, name, url_var) in KEYED {
        if let Some(key) = nonempty(key_var) {
            return Ok(pick(protocol, name, nonempty(url_var), Some(key)));
        }
    }
    Err(format!(
        "no model endpoint is configured for the native agent: write {} or set \
         WEFT_NATIVE_PROTOCOL and WEFT_NATIVE_BASE_URL (or ANTHROPIC_API_KEY / OPENAI_API_KEY / GEMINI_API_KEY)",
        home.join("providers.json").display()
    ))
}
