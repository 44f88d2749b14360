//! Which kinds each agent takes, and what each kind puts into a spawn.
//!
//! Every spawn on a chosen account is isolated (a cleared environment plus the
//! kernel's allow-list, see `weft_kernel::kept_on_account`) and then gets exactly the
//! variables below. Checked against the installed CLIs:
//!
//! | agent  | kind          | spawn gets |
//! |--------|---------------|------------|
//! | claude | `login`       | `CLAUDE_CONFIG_DIR=<WEFT_HOME>/homes/claude/<id>` |
//! | claude | `setup-token` | `CLAUDE_CODE_OAUTH_TOKEN` (+ `ANTHROPIC_BASE_URL`) |
//! | claude | `api-key`     | `ANTHROPIC_API_KEY` (+ `ANTHROPIC_BASE_URL`) |
//! | claude | `gateway`     | `ANTHROPIC_BASE_URL`, `ANTHROPIC_AUTH_TOKEN` (Bearer), `ANTHROPIC_MODEL` |
//! | claude | `bedrock`     | `CLAUDE_CODE_USE_BEDROCK=1` (+ `AWS_BEARER_TOKEN_BEDROCK`) |
//! | claude | `vertex`      | `CLAUDE_CODE_USE_VERTEX=1` |
//! | codex  | `login`       | `CODEX_HOME=<WEFT_HOME>/homes/codex/<id>` |
//! | codex  | `api-key`, `endpoint` | a `weft` model provider (`-c model_providers.weft.*`, through the driver's `WEFT_CODEX_BASE_URL` / `WEFT_CODEX_API_KEY_ENV`) whose key is `WEFT_ACCOUNT_KEY`, kept from the model's shell by `shell_environment_policy` |
//! | gemini | `login`       | `GEMINI_CLI_HOME=<WEFT_HOME>/homes/gemini/<id>` |
//! | gemini | `api-key`, `endpoint` | `GEMINI_API_KEY` (+ `GOOGLE_GEMINI_BASE_URL`) |
//! | gemini | `vertex`      | `GOOGLE_GENAI_USE_VERTEXAI=true` (+ `GOOGLE_API_KEY`) |
//! | native | `endpoint`    | `WEFT_NATIVE_PROTOCOL`, `WEFT_NATIVE_BASE_URL`, `WEFT_NATIVE_MODEL` (the first model), `WEFT_NATIVE_API_KEY`, `WEFT_NATIVE_ACCOUNT` |
//! | any ACP agent | `env`  | its public `env`, and the secret in the variable `secret_var` names |
//!
//! Claude always gets `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB=1`, so the Bash tool, hooks and
//! MCP servers it starts do not inherit the credential. Key kinds keep the config
//! folder the client uses (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `GEMINI_CLI_HOME` when it
//! sets one, else the CLI's default under `HOME`), so a conversation started on one key
//! resumes on another; login kinds each have their own folder, made by Weft and never
//! shared, copied or symlinked. The account's public `env` comes last and wins.

use std::path::{Path, PathBuf};

use weft_protocol::AccountInfo;

use crate::secret::Secret;

/// The variable holding a codex key account's key (matches codex's own `*KEY*`
/// default exclusion from the model's shell, and is excluded explicitly too).
pub const CODEX_KEY_VAR: &str = "WEFT_ACCOUNT_KEY";

/// What a kind needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindRules {
    /// Has its own home folder the CLI logs in to.
    pub login: bool,
    /// Needs a secret.
    pub secret: Need,
    /// Takes a base URL.
    pub base_url: Need,
}

/// Required, optional or refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Must be given.
    Required,
    /// May be given.
    Optional,
    /// Must not be given.
    No,
}

const LOGIN: KindRules = KindRules {
    login: true,
    secret: Need::No,
    base_url: Need::No,
};
const KEY: KindRules = KindRules {
    login: false,
    secret: Need::Required,
    base_url: Need::Optional,
};
const ENDPOINT: KindRules = KindRules {
    login: false,
    secret: Need::Required,
    base_url: Need::Required,
};
const CLOUD: KindRules = KindRules {
    login: false,
    secret: Need::Optional,
    base_url: Need::Optional,
};

/// The agents accounts are for, with their kinds.
pub const AGENTS: &[(&str, &[&str])] = &[
    (
        "claude",
        &[
            "login",
            "setup-token",
            "api-key",
            "gateway",
            "bedrock",
            "vertex",
        ],
    ),
    ("codex", &["login", "api-key", "endpoint"]),
    ("gemini", &["login", "api-key", "endpoint", "vertex"]),
    ("native", &["endpoint"]),
];

/// Agents whose turns run in-process or are Weft's own: no `env` account for them.
const NOT_ACP: &[&str] = &["claude", "codex", "gemini", "native", "echo"];

/// The kind every ACP agent (Hermes, Kimi, Qwen, one from `acp.json`, …) takes: named
/// variables, public ones in `env` and at most one secret in `secret_var`.
const ENV: KindRules = KindRules {
    login: false,
    secret: Need::Optional,
    base_url: Need::No,
};

/// The native agent's `endpoint`: a base URL and protocol, a key when the server wants
/// one (a local server may not).
const NATIVE_ENDPOINT: KindRules = KindRules {
    login: false,
    secret: Need::Optional,
    base_url: Need::Required,
};

/// A name an ACP agent goes by (its id in Weft).
fn agent_id(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The rules of `agent`'s `kind`, or why there are none.
pub fn rules(agent: &str, kind: &str) -> Result<KindRules, String> {
    if !NOT_ACP.contains(&agent) && agent_id(agent) {
        return match kind {
            "env" => Ok(ENV),
            _ => Err(format!(
                "`{kind}` is not a kind of `{agent}` account; an ACP agent's account is `env` \
                 (named variables: --env NAME=VALUE, and --secret-var NAME for its secret)"
            )),
        };
    }
    let Some((_, kinds)) = AGENTS.iter().find(|(a, _)| *a == agent) else {
        let known: Vec<&str> = AGENTS.iter().map(|(a, _)| *a).collect();
        return Err(format!(
            "accounts are for the agents {}; `{agent}` is not one",
            known.join(", ")
        ));
    };
    if !kinds.contains(&kind) {
        return Err(format!(
            "`{kind}` is not a kind of {agent} account; it takes {}",
            kinds.join(", ")
        ));
    }
    Ok(match (agent, kind) {
        ("native", _) => NATIVE_ENDPOINT,
        (_, "login") => LOGIN,
        ("claude", "gateway") | (_, "endpoint") => ENDPOINT,
        ("claude", "bedrock") | (_, "vertex") => CLOUD,
        _ => KEY,
    })
}

/// The variable naming a login account's home for `agent`.
pub fn home_var(agent: &str) -> &'static str {
    match agent {
        "codex" => "CODEX_HOME",
        "gemini" => "GEMINI_CLI_HOME",
        _ => "CLAUDE_CONFIG_DIR",
    }
}

/// Where a login account's home lives.
pub fn home_for(state_dir: &Path, agent: &str, id: &str) -> PathBuf {
    state_dir.join("homes").join(agent).join(id)
}

/// A base URL as accepted: http(s), with a host, no credentials in it.
pub fn check_base_url(url: &str) -> Result<String, String> {
    let trimmed = url.trim();
    let parsed = url::Url::parse(trimmed).map_err(|e| format!("`{trimmed}` is not a URL: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("`{trimmed}` is not an http(s) URL"));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(format!("`{trimmed}` has no host"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(format!(
            "the URL must not carry credentials; give the secret with --secret-stdin, \
             --secret-env or --secret-command (`{}` was refused)",
            parsed.host_str().unwrap_or_default()
        ));
    }
    Ok(trimmed.trim_end_matches('/').to_string())
}

/// Everything one spawn on `account` gets: variables (the secret among them) and
/// arguments. `ambient_home` is the config folder the client's environment names for
/// this agent, kept for key kinds.
pub fn inject(
    account: &AccountInfo,
    secret: Option<&Secret>,
    ambient_home: Option<String>,
) -> (Vec<(String, String)>, Vec<String>) {
    let mut env: Vec<(String, String)> = Vec::new();
    let mut args = Vec::new();
    let mut set = |k: &str, v: &str| env.push((k.to_string(), v.to_string()));
    let key = secret.map(Secret::expose);
    let base = account.base_url.as_deref();
    let home_var = home_var(&account.agent);
    match (account.agent.as_str(), account.kind.as_str()) {
        (_, "login") => {
            if let Some(home) = &account.home_dir {
                set(home_var, home);
            }
        }
        ("claude", kind) => {
            if let Some(home) = &ambient_home {
                set(home_var, home);
            }
            if let Some(b) = base {
                let var = match kind {
                    "bedrock" => "ANTHROPIC_BEDROCK_BASE_URL",
                    "vertex" => "ANTHROPIC_VERTEX_BASE_URL",
                    _ => "ANTHROPIC_BASE_URL",
                };
                set(var, b);
            }
            match (kind, key) {
                ("setup-token", Some(k)) => set("CLAUDE_CODE_OAUTH_TOKEN", k),
                ("api-key", Some(k)) => set("ANTHROPIC_API_KEY", k),
                ("gateway", Some(k)) => set("ANTHROPIC_AUTH_TOKEN", k),
                ("bedrock", k) => {
                    set("CLAUDE_CODE_USE_BEDROCK", "1");
                    if let Some(k) = k {
                        set("AWS_BEARER_TOKEN_BEDROCK", k);
                    }
                }
                ("vertex", _) => set("CLAUDE_CODE_USE_VERTEX", "1"),
                _ => {}
            }
            if kind == "gateway" {
                if let Some(m) = account.models.first() {
                    set("ANTHROPIC_MODEL", m);
                }
            }
        }
        ("codex", _) => {
            if let Some(home) = &ambient_home {
                set(home_var, home);
            }
            set(
                "WEFT_CODEX_BASE_URL",
                base.unwrap_or("https://api.openai.com/v1"),
            );
            set("WEFT_CODEX_API_KEY_ENV", CODEX_KEY_VAR);
            if let Some(k) = key {
                set(CODEX_KEY_VAR, k);
            }
            args.extend([
                "-c".to_string(),
                format!("shell_environment_policy.exclude=[\"{CODEX_KEY_VAR}\"]"),
            ]);
        }
        ("gemini", kind) => {
            if let Some(home) = &ambient_home {
                set(home_var, home);
            }
            if let Some(b) = base {
                set("GOOGLE_GEMINI_BASE_URL", b);
            }
            match (kind, key) {
                ("vertex", k) => {
                    set("GOOGLE_GENAI_USE_VERTEXAI", "true");
                    if let Some(k) = k {
                        set("GOOGLE_API_KEY", k);
                    }
                }
                (_, Some(k)) => set("GEMINI_API_KEY", k),
                _ => {}
            }
        }
        ("native", _) => {
            // The native driver reads its endpoint from these (crates/drivers/native
            // config.rs); WEFT_NATIVE_ACCOUNT makes them win over providers.json.
            set("WEFT_NATIVE_ACCOUNT", &account.id);
            if let Some(p) = &account.protocol {
                set("WEFT_NATIVE_PROTOCOL", p);
            }
            if let Some(b) = base {
                set("WEFT_NATIVE_BASE_URL", b);
            }
            if let Some(m) = account.models.first() {
                set("WEFT_NATIVE_MODEL", m);
            }
            if !account.models.is_empty() {
                set("WEFT_NATIVE_MODELS", &account.models.join(","));
            }
            if let Some(k) = key {
                set("WEFT_NATIVE_API_KEY", k);
            }
        }
        (_, "env") => {
            if let (Some(var), Some(k)) = (&account.secret_var, key) {
                set(var, k);
            }
        }
        _ => {}
    }
    if account.agent == "claude" {
        set("CLAUDE_CODE_SUBPROCESS_ENV_SCRUB", "1");
    }
    for (k, v) in &account.env {
        set(k, v);
    }
    (env, args)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn account(agent: &str, kind: &str, base: Option<&str>) -> AccountInfo {
        AccountInfo {
            id: "acct-1".into(),
            agent: agent.into(),
            kind: kind.into(),
            base_url: base.map(str::to_string),
            home_dir: (kind == "login").then(|| "/w/homes/x".to_string()),
            ..Default::default()
        }
    }

    fn vars(env: &[(String, String)]) -> std::collections::BTreeMap<&str, &str> {
        env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
    }

    #[test]
    fn each_kind_gets_its_variables() {
        let k = Secret::new("sek");
        let (env, _) = inject(&account("claude", "api-key", None), Some(&k), None);
        let v = vars(&env);
        assert_eq!(v["ANTHROPIC_API_KEY"], "sek");
        assert_eq!(v["CLAUDE_CODE_SUBPROCESS_ENV_SCRUB"], "1");
        assert!(!v.contains_key("ANTHROPIC_BASE_URL"));

        let mut gw = account("claude", "gateway", Some("http://gw"));
        gw.models = vec!["big-model".into()];
        let (env, _) = inject(&gw, Some(&k), Some("/u/.claude".into()));
        let v = vars(&env);
        assert_eq!(v["ANTHROPIC_AUTH_TOKEN"], "sek");
        assert_eq!(v["ANTHROPIC_BASE_URL"], "http://gw");
        assert_eq!(v["ANTHROPIC_MODEL"], "big-model");
        assert_eq!(v["CLAUDE_CONFIG_DIR"], "/u/.claude");
        assert!(!v.contains_key("ANTHROPIC_API_KEY"));

        let (env, _) = inject(&account("claude", "login", None), None, Some("/u".into()));
        assert_eq!(vars(&env)["CLAUDE_CONFIG_DIR"], "/w/homes/x");

        let (env, args) = inject(
            &account("codex", "endpoint", Some("http://e/v1")),
            Some(&k),
            None,
        );
        let v = vars(&env);
        assert_eq!(v["WEFT_CODEX_BASE_URL"], "http://e/v1");
        assert_eq!(v["WEFT_CODEX_API_KEY_ENV"], CODEX_KEY_VAR);
        assert_eq!(v[CODEX_KEY_VAR], "sek");
        assert!(args.iter().any(|a| a.contains("shell_environment_policy")));
        assert!(!args.iter().any(|a| a.contains("sek")), "no secret in argv");

        let (env, _) = inject(
            &account("gemini", "api-key", Some("http://g")),
            Some(&k),
            None,
        );
        let v = vars(&env);
        assert_eq!(v["GEMINI_API_KEY"], "sek");
        assert_eq!(v["GOOGLE_GEMINI_BASE_URL"], "http://g");

        let mut native = account("native", "endpoint", Some("http://n/v1"));
        native.protocol = Some("openai-chat".into());
        native.models = vec!["m1".into(), "m2".into()];
        let (env, _) = inject(&native, Some(&k), None);
        let v = vars(&env);
        assert_eq!(v["WEFT_NATIVE_PROTOCOL"], "openai-chat");
        assert_eq!(v["WEFT_NATIVE_BASE_URL"], "http://n/v1");
        assert_eq!(v["WEFT_NATIVE_API_KEY"], "sek");
        assert_eq!(v["WEFT_NATIVE_MODEL"], "m1");
        assert_eq!(v["WEFT_NATIVE_ACCOUNT"], "acct-1");

        let mut acp = account("kimi", "env", None);
        acp.secret_var = Some("KIMI_API_KEY".into());
        acp.env.insert("KIMI_BASE_URL".into(), "http://k".into());
        let (env, _) = inject(&acp, Some(&k), None);
        let v = vars(&env);
        assert_eq!(v["KIMI_API_KEY"], "sek");
        assert_eq!(v["KIMI_BASE_URL"], "http://k");
    }

    #[test]
    fn kinds_and_urls_are_checked() {
        assert!(rules("claude", "api-key").is_ok());
        assert!(rules("codex", "gateway")
            .unwrap_err()
            .contains("login, api-key, endpoint"));
        assert!(rules("vim", "login").unwrap_err().contains("`vim`"));
        assert_eq!(rules("kimi", "env").unwrap().secret, Need::Optional);
        assert!(rules("kimi", "api-key").unwrap_err().contains("`env`"));
        assert_eq!(
            rules("native", "endpoint").unwrap().base_url,
            Need::Required
        );
        assert!(rules("echo", "env").is_err());
        assert_eq!(rules("codex", "endpoint").unwrap().base_url, Need::Required);
        assert_eq!(
            check_base_url("http://127.0.0.1:9/v1/").unwrap(),
            "http://127.0.0.1:9/v1"
        );
        assert!(check_base_url("not a url").is_err());
        assert!(check_base_url("ftp://x").is_err());
        assert!(check_base_url("http://u:p@h")
            .unwrap_err()
            .contains("credentials"));
    }
}
